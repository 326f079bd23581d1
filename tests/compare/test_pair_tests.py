"""The pair tests and Holm's adjustment (scoring/compare/pair_tests.py) on cases worked out by
hand, and the map's properties: identical submissions are never marked, a submission better
on every unit is, and a pair's resamples do not depend on the other submissions."""
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from organizing.compare import pair_tests, paired
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


def test_randomization_p_by_hand():
    """Two questions, A right on both (numerator 30), B wrong on both: |d| = 1 unless exactly
    one is swapped (then 0). Of the 4 shuffles, none and both swapped are as extreme: p = (1 +
    2) / (4 + 1)."""
    a, b = np.array([[30], [30]]), np.array([[0], [0]])
    masks = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=np.float64)
    p = pair_tests.randomization_p(a, b, lambda s: [s[0] / 60], masks)
    assert p == pytest.approx(3 / 5)


def test_swap_masks_are_the_documented_stream():
    masks = pair_tests.swap_masks(7, 3, seed=2004)
    rand = random.Random(2004).random
    assert masks.tolist() == [[float(rand() < 0.5) for _ in range(7)] for _ in range(3)]


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


@settings(max_examples=25, deadline=None)
@given(st.data(), st.integers(3, 25))
def test_early_stopping_keeps_the_full_runs_decisions(data, n):
    """A pair stopped early could not have passed any Holm step: its decision (p <= alpha) is
    the full run's, and a complete pair's p is the full run's exactly."""
    tables = [np.array([[v] for v in data.draw(st.lists(st.integers(0, 30), min_size=n,
                                                       max_size=n))], dtype=np.int64)
              for _ in range(3)]
    tables.append(tables[0] + 0)  # a twin: p = 1, stopped at once

    def scores(sums):
        return [sums[0] / (30.0 * n)]
    tested = pair_tests.randomization_tests(tables, scores)
    masks = pair_tests.swap_masks(n, pair_tests.shuffles_for(6))
    keys = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    for (a, b), (p, complete) in zip(keys, tested):
        full = pair_tests.randomization_p(tables[a], tables[b], scores, masks)
        assert (p <= 0.05) == (full <= 0.05)
        if complete:
            assert p == full
    assert tested[2] == (1.0, False)   # models 0 and 3 are the same


def test_masked_sums_are_the_same_in_any_block_size(monkeypatch):
    rng = np.random.RandomState(8)
    tables = [rng.randint(0, 50, size=(13, 3)).astype(np.int64) for _ in range(2)]
    masks = pair_tests.swap_masks(13, 40)
    expected = [np.rint(masks.dot(t.astype(np.float64))).astype(np.int64).tolist()
                for t in tables]
    for block in (1 << 19, 13 * 7, 5):   # all at once, 7 shuffles, 1 shuffle a block
        monkeypatch.setattr(pair_tests, "BLOCK_DRAWS", block)
        assert [s.tolist() for s in pair_tests.masked_sums(tables, 40)] == expected


def test_a_pair_better_on_every_unit_by_hand():
    """12 units, A right everywhere, B wrong everywhere: a shuffle is as extreme as the data
    only when it swaps no unit or all 12; p = (1 + those shuffles) / (R + 1), complete."""
    a = np.full((12, 1), 30, dtype=np.int64)
    b = np.zeros((12, 1), dtype=np.int64)
    (p, complete), = pair_tests.randomization_tests([a, b], lambda s: [s[0] / 360.0])
    masks = pair_tests.swap_masks(12, pair_tests.shuffles_for(1))
    extreme = int(((masks.sum(axis=1) == 0) | (masks.sum(axis=1) == 12)).sum())
    assert complete and p == (1 + extreme) / (len(masks) + 1)
