"""The pair tests and Holm's adjustment (organizer/organizing/compare/pair_tests.py) on cases worked out by
hand, and the map's properties: identical submissions are never marked, a submission better
on every unit is, and a pair's resamples do not depend on the other submissions."""
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import randomization_oracle as oracle
from organizing.compare import family, pair_tests, paired
from scoring.task_api import Resampling

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def test_bootstrap_p_by_hand():
    # d = -1, 0, 1, 2: two resamples <= 0, three >= 0: p = 2 * 2 / 4, held at 1
    assert pair_tests.bootstrap_p([1, 2, 3, 4], [2, 2, 2, 2]) == 1.0
    # d = 1, 1, 1, -1: one <= 0: p = 2 * 1 / 4
    assert pair_tests.bootstrap_p([2, 2, 2, 1], [1, 1, 1, 2]) == 0.5
    assert pair_tests.bootstrap_p([3, 3], [1, 2]) == 0.0
    assert pair_tests.bootstrap_p([3, None], [1, 2]) is None


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3 * 0.01, 2 * 0.03, max(0.06, 1 * 0.04)
    assert pair_tests.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert pair_tests.holm([None, 0.02, 0.5]) == pytest.approx([None, 0.04, 0.5])
    assert pair_tests.holm([0.6, 0.9]) == [1.0, 1.0]


def test_randomization_by_hand():
    """Two questions, A right on both (numerator 30), B wrong on both: |d| = 1 unless exactly
    one is swapped (then 0). The shuffles of the stream, counted by hand: those swapping none
    or both are as extreme as the data, about half of them; after 200 shuffles
    (1 + extreme) / (1,000 + 1) is far above 0.05, so the pair stops there with
    p = (1 + extreme) / (200 + 1), not complete."""
    a, b = np.array([[30], [30]]), np.array([[0], [0]])
    rand = random.Random(2004).random
    swaps = [(rand() < 0.5, rand() < 0.5) for _ in range(200)]
    extreme = sum(1 for x, y in swaps if x == y)
    assert 80 < extreme < 120
    (p, complete), = pair_tests.randomization_tests([a, b], lambda s: [s[0] / 60])
    assert p == (1 + extreme) / 201 and not complete


def test_swap_masks_are_the_documented_stream_in_any_block_size():
    rand = random.Random(2004).random
    expected = [[float(rand() < 0.5) for _ in range(7)] for _ in range(30)]
    for rows in (0, 1, 4, 30, 100):
        blocks = list(pair_tests.swap_mask_blocks(7, 30, seed=2004, rows=rows))
        assert [start for start, _ in blocks] == list(range(0, 30, rows or 30))
        assert [m for _, masks in blocks for m in masks.tolist()] == expected


def model(values):
    n = len(values)
    return Resampling("questions", n, lambda: (list(range(n)), [(v,) for v in values]),
                      lambda sums: [sums[0] / (30 * n)])


@settings(max_examples=30, deadline=None)
@given(st.data(), st.integers(2, 30))
def test_identical_never_marked_and_better_everywhere_marked(data, n):
    values = data.draw(st.lists(st.integers(0, 29), min_size=n, max_size=n))
    other = data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    models = [model(values), model(list(values)), model([v + 1 for v in values]), model(other)]
    names = ["a", "twin", "better", "other"]
    per_resample = paired.resample_values(models, resamples=200)
    points = [m.scores([sum(r[0] for r in m.rows()[1])])[0] for m in models]
    doc = paired.analyse(names, points, per_resample)
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert pairs[("a", "twin")]["p_value"] == 1.0
    assert not pairs[("a", "twin")]["significant"] and not pairs[("twin", "a")]["significant"]
    # better on every unit: better in every resample, p = 0, marked even after Holm
    assert pairs[("better", "a")]["p_value"] == 0.0
    assert pairs[("better", "a")]["significant"] and not pairs[("a", "better")]["significant"]
    for p in doc["pairs"]:
        assert p["p_holm"] >= p["p_value"]
        assert pairs[(p["b"], p["a"])]["p_value"] == p["p_value"]


@settings(max_examples=20, deadline=None)
@given(st.data(), st.integers(70, 200))
def test_a_pairs_resamples_do_not_depend_on_a_third_submission(data, n):
    """Few distinct rows (VQA-like numerators, n >= 64 x distinct) once chose the group
    sampler for all the submissions together; now the draws depend on n and the seed only."""
    levels = st.sampled_from([0, 30])
    a = model(data.draw(st.lists(levels, min_size=n, max_size=n)))
    b = model(data.draw(st.lists(levels, min_size=n, max_size=n)))
    c = model(data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)))
    alone = paired.resample_values([a, b], resamples=100)
    beside = paired.resample_values([a, b, c], resamples=100)
    assert beside[:2] == alone


def test_a_pair_the_group_sampler_would_draw_alone_gets_the_same_resamples_beside_a_third():
    """The case the random one above reaches too rarely: a and b take 2 joint rows over 200
    units (2 x 64 <= 200: the joint sampler drew them by groups), the third takes 31 values
    (by units): the pair's resamples must not change when the third is compared too."""
    a = model([0] * 100 + [30] * 100)
    b = model([0] * 100 + [30] * 100)
    c = model([k % 31 for k in range(200)])
    alone = paired.resample_values([a, b], resamples=100)
    assert paired.resample_values([a, b, c], resamples=100)[:2] == alone


def test_the_map_marks_by_the_adjusted_p_value():
    """a against b and a against c: the difference is <= 0 in 2 of 100 resamples, p = 0.04 each
    (significant alone); b against c: p = 1. Holm over the 3 pairs: 3 x 0.04 = 0.12, no mark."""
    a = [1.0] * 100
    b = [0.0] * 98 + [2.0] * 2
    c = [0.0] * 98 + [3.0] * 2
    doc = paired.analyse(["a", "b", "c"], [1.0, 0.0, 0.0], [a, b, c])
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert pairs[("a", "b")]["p_value"] == pytest.approx(0.04)
    assert pairs[("a", "c")]["p_value"] == pytest.approx(0.04)
    assert pairs[("a", "b")]["p_holm"] == pytest.approx(0.12)
    assert not any(p["significant"] for p in doc["pairs"])
    two = paired.analyse(["a", "b"], [1.0, 0.0], [a, b])
    assert [p["significant"] for p in two["pairs"]] == [True, False]


def test_shifted_bootstrap_p_by_hand():
    # d* = 0.1, 0.3, 0.5, -0.1 about d = 0.2: |d* - d| = 0.1, 0.1, 0.3, 0.3; two are >= 0.2
    p = pair_tests.shifted_bootstrap_p([1.1, 1.3, 1.5, 0.9], [1.0] * 4, 0.2)
    assert p == pytest.approx(0.5)
    assert pair_tests.shifted_bootstrap_p([1.0, None], [1.0, 1.0], 0.0) is None


def test_shuffles_pass_holms_first_step():
    assert pair_tests.shuffles_for(1) == 1000
    assert pair_tests.shuffles_for(190) == 7600        # 20 submissions
    assert 1 / (pair_tests.shuffles_for(190) + 1) <= 0.05 / 190


def _accuracy(n):
    return lambda sums: [sums[0] / (30.0 * n)]


def _iou(sums):
    return [sums[0] / sums[1] if sums[1] else None]


@settings(max_examples=25, deadline=None)
@given(st.data(), st.integers(3, 25))
def test_early_stopping_keeps_the_full_runs_decisions(data, n):
    """Against the naive oracle written from the docs (Python's own stream, plain loops): each
    pair's (p, complete) is the oracle's exactly, early stop included; a pair stopped early
    could not have passed any Holm step, so its decision (p <= alpha) is the full run's."""
    tables = [np.array([[v] for v in data.draw(st.lists(st.integers(0, 30), min_size=n,
                                                       max_size=n))], dtype=np.int64)
              for _ in range(3)]
    tables.append(tables[0] + 0)  # a twin: p = 1, stopped at once
    tested = pair_tests.randomization_tests(tables, _accuracy(n))
    shuffles = oracle.shuffles_for(6)
    for (a, b), (p, complete) in zip(family.every_pair(4), tested):
        rows_a, rows_b = [tuple(r) for r in tables[a]], [tuple(r) for r in tables[b]]
        def score(sums):
            return sums[0] / (30.0 * n)
        assert (p, complete) == oracle.randomization(rows_a, rows_b, score, shuffles)
        full, _ = oracle.randomization(rows_a, rows_b, score, shuffles, stop=False)
        assert (p <= 0.05) == (full <= 0.05)
        if complete:
            assert p == full
    assert tested[2] == (1.0, False)   # models 0 and 3 are the same


@settings(max_examples=30, deadline=None)
@given(st.data(), st.integers(1, 12), st.integers(2, 6))
def test_the_same_results_in_any_block_size_and_pair_order(data, n, models):
    """IoU-like rows (TP, union; an empty union leaves the score undefined): the masks drawn
    in blocks of 1, 7, 200 or 1,000 shuffles, or the default, and the pairs asked in any order,
    give the same (p, complete) for every pair: the blocks bound the memory, nothing else."""
    tables = []
    for _ in range(models):
        union = data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
        tp = [data.draw(st.integers(0, u)) for u in union]
        tables.append(np.array(list(zip(tp, union)), dtype=np.int64))
    pairs = family.every_pair(models)
    order = data.draw(st.permutations(pairs))
    expected = pair_tests.randomization_tests(tables, _iou)
    by_pair = dict(zip(pairs, expected))
    for rows in (1, 7, 200, 1000):
        assert pair_tests.randomization_tests(tables, _iou, rows=rows) == expected
    shuffled = pair_tests.randomization_tests(tables, _iou, pairs=order, rows=7)
    # The family's size sets R: the same pairs in another order are the same test.
    assert shuffled == [by_pair[k] for k in order]


def test_a_pair_better_on_every_unit_by_hand():
    """12 units, A right everywhere, B wrong everywhere: a shuffle is as extreme as the data
    only when it swaps no unit or all 12; p = (1 + those shuffles) / (R + 1), complete."""
    a = np.full((12, 1), 30, dtype=np.int64)
    b = np.zeros((12, 1), dtype=np.int64)
    (p, complete), = pair_tests.randomization_tests([a, b], lambda s: [s[0] / 360.0])
    masks = oracle.masks(12, pair_tests.shuffles_for(1))
    extreme = sum(1 for m in masks if sum(m) in (0, 12))
    assert complete and p == (1 + extreme) / (len(masks) + 1)


def test_a_subset_of_pairs_is_tested_with_its_own_number_of_shuffles():
    """Only the pairs asked are tested, with R = shuffles_for(the pairs asked): one pair of
    five models is the test of those two models alone."""
    rng = np.random.RandomState(3)
    tables = [rng.randint(0, 31, size=(15, 1)).astype(np.int64) for _ in range(5)]
    score = _accuracy(15)
    alone = pair_tests.randomization_tests([tables[1], tables[3]], score)
    assert pair_tests.randomization_tests(tables, score, pairs=[(1, 3)]) == alone
    assert pair_tests.randomization_tests(tables, score, pairs=[]) == []
