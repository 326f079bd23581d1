"""PQ, SQ and RQ against the deliberately naive oracle (tests/support/panoptic_oracle.py), each
quirk of the anchor on a hand-made image, and the same bits for any split of the images."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import panoptic_util as pu
from panoptic_oracle import oracle
from panoptic_run import score_arrays

ROCK, ROVER, GROUND, SAND, SKY = 4, 5, 2, 3, 8


def equal(ours, expected):
    assert set(ours) == set(expected)
    for k, v in expected.items():
        assert ours[k] == pytest.approx(v, rel=1e-12, abs=1e-15), k


def counts(state, class_id):
    k = [r["id"] for r in pu.ROWS if not r["ignore_in_eval"]].index(class_id)
    return int(state.tp[k]), int(state.fp[k]), int(state.fn[k])


@pytest.mark.compat
@pytest.mark.parametrize("seed", range(8))
def test_random_sets_equal_the_oracle(seed):
    rng = np.random.RandomState(seed)
    images = [pu.scene(rng, pu.ROWS, 10 + seed, 14) for _ in range(4)]
    equal(score_arrays(pu.ROWS, images)[1], oracle(pu.ROWS, images))


@pytest.mark.parametrize("seed", range(4))
def test_pairs_counted_by_sorting_equal_the_oracle(seed, monkeypatch):
    """An image whose reference values times predicted segments exceed the dense count's bins
    has its pairs counted by sorting its pieces: the same scores."""
    from scoring.tasks.planetscapes_panoptic import metric
    monkeypatch.setattr(metric, "DENSE_PAIRS", 0)
    rng = np.random.RandomState(100 + seed)
    images = [pu.scene(rng, pu.ROWS, 9 + seed, 13) for _ in range(4)]
    equal(score_arrays(pu.ROWS, images)[1], oracle(pu.ROWS, images))


@settings(max_examples=40)
@given(st.integers(0, 2 ** 31 - 1), st.integers(1, 4), st.integers(2, 12), st.integers(2, 12))
def test_any_scene_equals_the_oracle(seed, n, h, w):
    rng = np.random.RandomState(seed)
    images = [pu.scene(rng, pu.ROWS, h, w) for _ in range(n)]
    equal(score_arrays(pu.ROWS, images)[1], oracle(pu.ROWS, images))


@settings(max_examples=25)
@given(st.integers(0, 2 ** 31 - 1), st.data())
def test_the_same_bits_for_any_split_and_order(seed, data):
    rng = np.random.RandomState(seed)
    images = [pu.scene(rng, pu.ROWS, 9, 11) for _ in range(6)]
    order = data.draw(st.permutations(range(6)))
    cut = data.draw(st.integers(0, 6))
    whole_state, whole = score_arrays(pu.ROWS, images)
    split_state, split = score_arrays(pu.ROWS, images, [list(order[:cut]), list(order[cut:])])
    assert whole == split  # the floats themselves, not approximately
    assert whole_state.iou == split_state.iou


def one(inst, seg, cats):
    return score_arrays(pu.ROWS, [(np.asarray(inst), np.asarray(seg), cats)])


def test_void_pixels_leave_the_union():
    """A rock of 8 px predicted as 12 px, 4 of them on void: IoU 8/8 = 1 with void out (and 8/12
    would still match; with 8 more void, 8/20 would not)."""
    inst = np.full((4, 10), GROUND)
    inst[0:2, 0:4] = 4001
    inst[0:2, 4:10] = 0
    seg = np.full((4, 10), 1)
    seg[0:2, 0:10] = 2
    state, scores = one(inst, seg, {1: GROUND, 2: ROCK})
    assert counts(state, ROCK) == (1, 0, 0)
    assert scores["sq_rock"] == 1.0


def test_iou_exactly_one_half_is_no_match():
    inst = np.full((2, 8), GROUND)
    inst[0, 0:4] = 4001
    seg = np.full((2, 8), 1)
    seg[0, 2:6] = 2             # 2 of 4 + 2 = 6 union: 1/3; then exactly 1/2 below
    seg2 = np.full((2, 8), 1)
    seg2[0, 0:4] = 2
    seg2[1, 0:4] = 2            # 4 of (8 + 4 - 4) = 8: exactly 0.5
    state, _ = one(inst, seg2, {1: GROUND, 2: ROCK})
    assert counts(state, ROCK) == (0, 1, 1)


def test_void_and_crowd_are_added_to_ignore_a_segment():
    """A rock segment of 10 px: 3 on void and 3 on the rock crowd (each alone under half, the
    two added over half) is not a false positive; on another class's crowd it is one."""
    inst = np.full((2, 10), GROUND)
    inst[0, 0:3] = 0            # void
    inst[0, 3:6] = ROCK         # crowd of rock
    inst[0, 6:8] = ROVER        # crowd of rover
    seg = np.full((2, 10), 1)
    seg[0, 0:10] = 2
    state, _ = one(inst, seg, {1: GROUND, 2: ROCK})
    assert counts(state, ROCK) == (0, 0, 0)
    seg[0, 0:10] = 3
    state, _ = one(inst, seg, {1: GROUND, 3: ROVER})
    assert counts(state, ROVER) == (0, 1, 0)  # 3 void + 2 rover crowd of 10: not over half


def test_a_class_without_tp_fp_fn_is_absent_and_tp_0_gives_sq_0_counted():
    """Sand appears nowhere: no key. Sky is predicted where there is none: PQ, SQ, RQ 0, and
    SQ 0 counts in the mean SQ (the anchor's `iou / tp if tp != 0 else 0`)."""
    inst = np.full((4, 6), GROUND)
    seg = np.full((4, 6), 1)
    seg[0, :] = 2
    state, scores = one(inst, seg, {1: GROUND, 2: SKY})
    assert "pq_sand_dune" not in scores and "sq_sand_dune" not in scores
    assert (scores["pq_sky"], scores["sq_sky"], scores["rq_sky"]) == (0.0, 0.0, 0.0)
    assert scores["sq_stuff"] == pytest.approx(scores["sq_ground"] / 2)
    assert "pq_things" not in scores   # no thing at all: a mean over nothing


def test_crowd_regions_are_never_false_negatives_nor_matched():
    inst = np.full((4, 6), GROUND)
    inst[0:2, 0:3] = ROCK
    seg = np.full((4, 6), 1)
    seg[0:2, 0:3] = 2
    state, _ = one(inst, seg, {1: GROUND, 2: ROCK})
    assert counts(state, ROCK) == (0, 0, 0)


def test_ignored_labels_are_void_and_their_instances_too():
    """lander (ignored, with instances) is void, instance values included."""
    inst = np.full((4, 6), GROUND)
    inst[0:2, 0:3] = 6001
    seg = np.full((4, 6), 1)
    state, scores = one(inst, seg, {1: GROUND})
    # ground: 18 px against a segment of 24 with 6 void: IoU 18 / 18.
    assert counts(state, GROUND) == (1, 0, 0)
    assert scores["sq_ground"] == 1.0
