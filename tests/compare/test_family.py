"""Which pairs compare.py tests (organizer/organizing/compare/family.py): every pair for a map a
reader can take in, else what a jury asks of a long leaderboard, each submission against the
next one and against the leader; each pair once, and the family said in words."""
import pytest

from organizing.compare import family


def test_neighbours_and_leader_by_hand():
    assert family.neighbours_and_leader(1) == []
    assert family.neighbours_and_leader(2) == [(0, 1)]
    assert family.neighbours_and_leader(5) == [(0, 1), (1, 2), (0, 2), (2, 3), (0, 3), (3, 4),
                                               (0, 4)]


@pytest.mark.parametrize("models", [2, 3, 7, 200])
def test_each_submission_is_tested_against_the_one_above_and_the_leader(models):
    pairs = family.neighbours_and_leader(models)
    assert len(pairs) == len(set(pairs)) == 2 * models - 3
    for b in range(1, models):
        assert (b - 1, b) in pairs and (0, b) in pairs
    assert all(a < b for a, b in pairs)


def test_auto_is_the_full_map_up_to_20_submissions():
    assert family.choose("auto", 20) == family.Family("all", 20, family.every_pair(20))
    assert len(family.choose("auto", 20).pairs) == 190
    assert family.choose("auto", 21).kind == "neighbours"
    assert len(family.choose("auto", 200).pairs) == 397
    assert len(family.choose("all", 200).pairs) == 19900
    assert family.choose("neighbours", 3).pairs == [(0, 1), (1, 2), (0, 2)]
    with pytest.raises(ValueError):
        family.choose("some", 3)


def test_the_pairs_listed_and_the_words():
    every = family.choose("all", 3)
    assert every.listed() == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    near = family.choose("neighbours", 3)
    assert near.listed() == [(0, 1), (1, 0), (1, 2), (2, 1), (0, 2), (2, 0)]
    assert near.as_json() == {
        "pairs": "neighbours", "tested": 3,
        "description": "each submission against the next one in the ranking and against the "
                       "leader (the first in rank order): 3 pairs; Holm's adjustment over these "
                       "pairs keeps the chance of marking any of them, among equally good "
                       "submissions, at most 5%"}
    assert every.describe().startswith("every pair of the 3 submissions: 3 pairs;")
