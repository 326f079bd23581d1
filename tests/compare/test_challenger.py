"""challengeR's analysis (scoring/compare/challenger.py) on cases worked out by hand, as the
package's R sources define it (testThenRank, cor(method = "kendall"), quantile type 7,
consensus(method = "euclidean"))."""
import pytest
from hypothesis import given, settings, strategies as st

from organizing.compare import challenger


def test_test_then_rank_by_hand():
    # wins: a beats b and c; b beats c; d beats c -> 2, 1, 0, 1 of 3 -> ranks 1, 2, 4, 2
    out = challenger.test_then_rank(["a", "b", "c", "d"],
                                    [("a", "b"), ("a", "c"), ("b", "c"), ("d", "c")])
    assert [x["wins"] for x in out] == [2, 1, 0, 1]
    assert [x["prop_significance"] for x in out] == pytest.approx([2 / 3, 1 / 3, 0, 1 / 3])
    assert [x["rank"] for x in out] == [1, 2, 4, 2]
    assert [x["rank"] for x in challenger.test_then_rank(["a", "b"], [])] == [1, 1]


def test_kendall_tau_b_by_hand():
    assert challenger.kendall_tau_b([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert challenger.kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # 6 pairs: 5 concordant, 1 tied in x only: 5 / sqrt((6 - 1) (6 - 0))
    assert challenger.kendall_tau_b([1, 2, 2, 4], [1, 3, 2, 4]) == pytest.approx(5 / 30 ** 0.5)
    assert challenger.kendall_tau_b([1, 2, 3], [1, 1, 1]) is None


def test_quantile_type_7_by_hand():
    assert challenger.quantile7([4, 1, 3, 2], 0.25) == 1.75   # R: quantile(1:4, .25)
    assert challenger.quantile7([1, 2, 3, 4], 0.5) == 2.5
    assert challenger.quantile7([7], 0.75) == 7


def test_kendall_summary_by_hand():
    # taus: 1 (same ranking), 1/3 (the first two swapped: 1 discordant, 2 concordant pairs),
    # none (all tied)
    out = challenger.kendall_summary([1, 2, 3], [[1, 2, 3], [2, 1, 3], [1, 1, 1]])
    assert out["resamples"] == 3 and out["undefined"] == 1
    assert out["mean"] == pytest.approx(2 / 3) and out["median"] == pytest.approx(2 / 3)
    assert out["q25"] == pytest.approx(0.5) and out["q75"] == pytest.approx(5 / 6)
    expected = [0] * 20
    expected[13] = expected[19] = 1   # (1/3 + 1) / 2 * 20 = 13.3; 1 in the last, closed bin
    assert out["histogram"] == expected


def test_consensus_by_hand():
    out = challenger.consensus({"semantic": {"a": 1, "b": 2, "c": 3},
                                "vqa": {"a": 2, "b": 1, "c": 3, "d": 4}})
    assert [(r["model"], r["mean_rank"], r["rank"]) for r in out["ranking"]] == \
        [("a", 1.5, 1), ("b", 1.5, 1), ("c", 3.0, 3)]
    assert out["left_out"] == ["d"] and out["tasks"] == ["semantic", "vqa"]
    assert out["ranking"][0]["ranks"] == {"semantic": 1, "vqa": 2}


def test_the_map_says_when_it_cannot_mark_any_cell():
    from organizing.compare import page_challenger
    doc = {"models": [{}] * 8, "units": 10, "noun": "fields"}
    # 2 / 2**10 = 0.00195 > 0.05 / 28 = 0.00179
    assert "With 10 resampled fields no pair can reach a p-value below 0.002" in \
        page_challenger.floor_note(doc)
    assert page_challenger.floor_note(dict(doc, models=[{}] * 7)) == ""   # 0.05 / 21 = 0.0024
    assert page_challenger.floor_note(dict(doc, units=11)) == ""


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 12), st.integers(1, 30), st.sampled_from([1, 100, 1 << 21]))
def test_kendall_taus_of_many_resamples_are_kendall_tau_b_of_each(data, n, resamples, block):
    """The resamples' taus, counted a block at a time with numpy (blocks of one resample, a
    few, all), are the one-pair-at-a-time definition's, bit for bit (ties in either ranking,
    every submission tied included)."""
    challenger.TAU_BLOCK_PAIRS = block
    ranks = data.draw(st.lists(st.integers(1, max(n, 1)), min_size=n, max_size=n))
    per_resample = [data.draw(st.lists(st.integers(1, max(n, 1)), min_size=n, max_size=n))
                    for _ in range(resamples)]
    try:
        assert challenger.kendall_taus(ranks, per_resample) == \
            [challenger.kendall_tau_b(ranks, r) for r in per_resample]
    finally:
        challenger.TAU_BLOCK_PAIRS = 1 << 21
