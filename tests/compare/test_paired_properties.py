"""Properties of the paired bootstrap (scoring/compare/paired.py), on any rows hypothesis finds.

"Never significantly different" is exact here: p_a_better counts resamples in which a scores
STRICTLY higher, so two identical models get p = 0 in both directions (and a zero difference in
every resample); a model better on every unit is better in every resample, p = 1."""
import numpy as np
from hypothesis import given, settings, strategies as st

from organizing.compare import paired
from organizing.ranks import competition_ranks
from scoring.task_api import Resampling
import pytest

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def accuracy_model(values):
    """A VQA-like model: per unit (question) its numerator 0..30; score = mean / 30."""
    n = len(values)
    return Resampling("questions", n, lambda: (list(range(n)), [(v,) for v in values]),
                      lambda sums: [sums[0] / (30 * n)])


def iou_model(tp, union):
    """An IoU-like model on array rows (one class): score = sum tp / sum union."""
    rows = np.array([[t, u] for t, u in zip(tp, union)], dtype=np.int64)
    return Resampling("images", len(tp), lambda: (list(range(len(tp))), rows),
                      lambda sums: [sums[0] / sums[1] if sums[1] else None])


units = st.integers(1, 40)


@settings(max_examples=40, deadline=None)
@given(st.data(), units)
def test_identical_models_are_never_better_than_each_other(data, n):
    values = data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    other = data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    models = [accuracy_model(values), accuracy_model(other), accuracy_model(list(values))]
    per_resample = paired.resample_values(models, resamples=200, seed=data.draw(st.integers(0, 99)))
    points = [m.scores([sum(r[0] for r in m.rows()[1])])[0] for m in models]
    doc = paired.analyse(["a", "other", "a_again"], points, per_resample)
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    for a, b in (("a", "a_again"), ("a_again", "a")):
        assert pairs[(a, b)]["p_a_better"] == 0.0
        assert pairs[(a, b)]["diff_ci"] == [0.0, 0.0]
    for p in doc["pairs"]:
        assert 0.0 <= p["p_a_better"] + pairs[(p["b"], p["a"])]["p_a_better"] <= 1.0
    assert [m["rank_ci"][0] <= m["rank_ci"][1] for m in doc["models"]] == [True] * 3
    assert all(1 <= m["rank_ci"][0] and m["rank_ci"][1] <= 3 for m in doc["models"])


@settings(max_examples=40, deadline=None)
@given(st.data(), units)
def test_better_on_every_unit_is_better_with_p_1(data, n):
    worse = data.draw(st.lists(st.integers(0, 29), min_size=n, max_size=n))
    better = [v + data.draw(st.integers(1, 30 - v)) for v in worse]
    per_resample = paired.resample_values([accuracy_model(better), accuracy_model(worse)],
                                          resamples=200)
    doc = paired.analyse(["better", "worse"], [1.0, 0.0], per_resample)
    p = {(x["a"], x["b"]): x["p_a_better"] for x in doc["pairs"]}
    assert p[("better", "worse")] == 1.0 and p[("worse", "better")] == 0.0
    assert doc["models"][0]["rank_ci"] == [1, 1]


@settings(max_examples=30, deadline=None)
@given(st.data(), units)
def test_ratio_scores_better_on_every_unit(data, n):
    """IoU-like: more true positives and a smaller union on every image gives a higher IoU in
    every resample."""
    union = data.draw(st.lists(st.integers(2, 50), min_size=n, max_size=n))
    tp = [data.draw(st.integers(0, u - 2)) for u in union]
    better = iou_model([t + 1 for t in tp], [u - 1 for u in union])
    per_resample = paired.resample_values([better, iou_model(tp, union)], resamples=200)
    assert all(x > y for x, y in zip(*per_resample))


def test_competition_ranking_is_1_2_2_4():
    assert competition_ranks([0.9, 0.5, 0.5, 0.1]) == [1, 2, 2, 4]
    assert competition_ranks([None, 0.2, 0.2]) == [3, 1, 1]
    assert competition_ranks([0.9, None, 0.5, 0.5], higher_is_better=False) == [3, 4, 1, 1]


@given(st.lists(st.one_of(st.none(), st.integers(-3, 3)), max_size=20), st.booleans())
def test_competition_ranks_count_the_strictly_better(values, higher):
    """Rank = 1 + the entries strictly better; an undefined score (None) is worse than every
    number in either direction, and ties with the other undefined ones."""
    def better(w, v):
        if w is None:
            return False
        return v is None or (w > v if higher else w < v)
    assert competition_ranks(values, higher) == \
        [1 + sum(1 for w in values if better(w, v)) for v in values]


def test_identical_and_dominating_models_with_the_group_sampler():
    """400 questions whose numerators take 2 values: the models' rows side by side take at most
    4, so the resamples are drawn as group counts; the same two properties hold."""
    rng = np.random.RandomState(8)
    a = [int(v) for v in rng.choice([0, 30], 400)]
    b = [int(v) for v in rng.choice([0, 30], 400)]
    worse = [max(v - 1, 0) if v else 0 for v in a]
    models = [accuracy_model(a), accuracy_model(list(a)), accuracy_model(b)]
    from scoring.metrics import bootstrap
    assert bootstrap.uses_groups(400, 4)
    values = paired.resample_values(models)
    doc = paired.analyse(["a", "a2", "b"], [0.5, 0.5, 0.5], values)
    p = {(x["a"], x["b"]): x["p_a_better"] for x in doc["pairs"]}
    assert p[("a", "a2")] == p[("a2", "a")] == 0.0
    assert 0.0 < p[("a", "b")] < 1.0
    values = paired.resample_values([accuracy_model([v + 1 for v in worse]),
                                     accuracy_model(worse)])
    assert all(x > y for x, y in zip(*values))
