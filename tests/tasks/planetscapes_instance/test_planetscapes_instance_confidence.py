"""The interval of `ap` and `ap50` by re-scoring (task_api.Rescoring): each bootstrap resample is
scored again from the images' records. The fast path every resample takes (all curves at once,
groups of weight 0 left in) gives the anchor's path's values; weights of one give the score."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from instance_arrays import state_of
from instance_util import scene
from planetscapes_util import table as ps_table
from scoring import confidence
from scoring.metrics import bootstrap
from scoring.tasks.planetscapes_instance import ap, metric
from scoring.tasks.planetscapes_instance.intervals import InstanceIntervals

TABLE = ps_table()


def images(seed, n):
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(n):
        _, inst, preds = scene(rng, 30, 40, things=[4, 5, 7], ignored=[6], stuff=[0, 1, 2, 3, 8],
                               max_instances=6, max_preds=10)
        inst[18:30, 30:40] = 4999            # a rock of 120 px in every image: AP defined
        out.append((inst, preds))
    return out


def same(a, b):
    assert (np.isnan(a) == np.isnan(b)).all()
    assert np.nan_to_num(np.abs(a - b)).max() <= 1e-12


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 6), st.integers(0, 10 ** 6))
def test_every_resample_scores_as_the_anchors_path(seed, n, draw):
    state = state_of(TABLE, images(seed, n))
    _, ex = metric.examples_of(state)
    same(ex.table_resampled(np.ones(n, dtype=int)), ex.table())
    for w in bootstrap.unit_weights(n, None, 5, draw):
        same(ex.table_resampled(w), ex.table(w))


def test_the_interval_holds_the_score_and_ignores_the_merge_order():
    data = images(3, 8)
    state = state_of(TABLE, data)
    other = state_of(TABLE, data[::-1], ids=["img%03d" % i for i in range(8)][::-1],
                     split=[[0, 1, 2], [3, 4, 5, 6, 7]])
    summaries = []
    for s in (state, other):
        result = metric.summarize(s)
        res = InstanceIntervals().resampling(s, None, None, None, "image")
        assert res.rescore([1] * 8) == [result.ap, result.ap50]
        conf = confidence.of_rescoring(["ap", "ap50"], res, resamples=200)
        summaries.append(conf.scores())
        low, high = dict(conf.scores())["ap_ci_low"], dict(conf.scores())["ap_ci_high"]
        assert 0.0 <= low <= result.ap <= high <= 1.0
    assert summaries[0] == summaries[1]


def test_a_resample_without_any_instance_is_undefined_not_nan():
    h, w = 30, 40
    inst = np.full((h, w), 2, dtype=np.uint16)
    inst[0:10, 0:10] = 4000
    empty = np.full((h, w), 2, dtype=np.uint16)
    state = state_of(TABLE, [(inst, []), (empty, [])])
    _, ex = metric.examples_of(state)
    assert ap.means(ex.table_resampled([0, 2])).ap is None
    assert ap.means(ex.table_resampled([2, 0])).ap == pytest.approx(0.0)
