"""AP of the instance task against the naive oracle (tests/support/instance_oracle.py): random
scenes, hand-made edge cases, and the properties a participant relies on: the order of lines,
of images and the worker split never change a bit."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import instance_oracle as oracle
from instance_arrays import classes_of, scores_of, void_of
from instance_util import scene
from planetscapes_util import table as ps_table
from scoring.tasks.planetscapes_instance import ap
from scoring.tasks.planetscapes_semantic import labels as ps_labels

TABLE = ps_table()
THINGS = [4, 5, 7]           # rock, rover, probe: evaluated classes with instances
IGNORED = [6]                 # lander: instances, ignored in evaluation
STUFF = [0, 1, 2, 3, 8]       # 0, 1 void


def random_scene(rng, h=30, w=40):
    return scene(rng, h, w, things=THINGS, ignored=IGNORED, stuff=STUFF, max_instances=6,
                 max_preds=10)


def expected(images):
    return oracle.scores(images, classes_of(TABLE), void_of(TABLE), key=ps_labels.key_name)


def case(seed, n=4):
    rng = np.random.RandomState(seed)
    return [(inst, preds) for _, inst, preds in (random_scene(rng) for _ in range(n))]


def assert_same(mine, theirs):
    assert set(mine) == set(theirs)
    for k in theirs:
        assert mine[k] == pytest.approx(theirs[k], abs=1e-12), k


def test_overlaps_are_the_anchors_floats():
    assert list(ap.OVERLAPS) == oracle.overlaps()
    assert list(ap.OVERLAPS) == list(np.arange(0.5, 1., 0.05))


@pytest.mark.parametrize("seed", range(6))
def test_random_scenes_equal_the_oracle(seed):
    images = case(seed)
    assert_same(scores_of(TABLE, images), expected(images))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 4))
def test_hypothesis_scenes_equal_the_oracle(seed, n):
    images = case(seed, n)
    assert_same(scores_of(TABLE, images), expected(images))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10 ** 6), st.randoms(use_true_random=False))
def test_order_of_lines_images_and_workers_changes_no_bit(seed, rnd):
    images = case(seed, 5)
    base = scores_of(TABLE, images)
    shuffled = []
    for inst, preds in images:
        preds = list(preds)
        rnd.shuffle(preds)
        shuffled.append((inst, preds))
    order = list(range(len(images)))
    rnd.shuffle(order)
    ids = ["img%03d" % i for i in order]
    again = scores_of(TABLE, [shuffled[i] for i in order], ids=ids,
                      split=[[k for k in range(5) if k % 2], [k for k in range(5) if not k % 2]])
    assert again == base


def box(h, w, y0, y1, x0, x1):
    m = np.zeros((h, w), dtype=bool)
    m[y0:y1, x0:x1] = True
    return m


def ground(h=30, w=40):
    """Two rock instances (4000: 10 x 12, 4001: 10 x 12) on ground; a rover crowd region."""
    inst = np.full((h, w), 2, dtype=np.uint16)
    inst[0:10, 0:12] = 4000
    inst[12:22, 0:12] = 4001
    inst[0:10, 20:32] = 5          # rover crowd
    inst[25:30, 30:40] = 0         # void
    return inst


def test_no_prediction_gives_zero_for_classes_with_instances_and_leaves_out_the_others():
    got = scores_of(TABLE, [(ground(), [])])
    assert got == {"ap": 0.0, "ap50": 0.0, "ap_rock": 0.0, "ap50_rock": 0.0}


def test_all_crowd_has_no_ap():
    inst = np.full((30, 40), 2, dtype=np.uint16)
    inst[0:20, 0:20] = 4
    got = scores_of(TABLE, [(inst, [(box(30, 40, 0, 20, 0, 20), 4, 0.9)])])
    assert got == {}


def test_perfect_masks_give_one_and_a_class_absent_from_the_reference_stays_absent():
    h, w = 30, 40
    preds = [(box(h, w, 0, 10, 0, 12), 4, 0.9), (box(h, w, 12, 22, 0, 12), 4, 0.8),
             (box(h, w, 0, 10, 20, 32), 7, 0.7)]   # probe: no probe in the reference
    got = scores_of(TABLE, [(ground(), preds)])
    assert got == {"ap": 1.0, "ap50": 1.0, "ap_rock": 1.0, "ap50_rock": 1.0}


def test_equal_confidences_any_order():
    h, w = 30, 40
    good, bad = box(h, w, 0, 10, 0, 12), box(h, w, 24, 30, 0, 20)
    a = scores_of(TABLE, [(ground(), [(good, 4, 0.5), (bad, 4, 0.5)])])
    b = scores_of(TABLE, [(ground(), [(bad, 4, 0.5), (good, 4, 0.5)])])
    assert a == b
    assert a == expected([(ground(), [(good, 4, 0.5), (bad, 4, 0.5)])])


def test_duplicate_match_is_a_false_positive_and_crowd_match_is_nothing():
    h, w = 30, 40
    inst = ground()
    one, two = box(h, w, 0, 10, 0, 12), box(h, w, 12, 22, 0, 12)
    crowd_pred = box(h, w, 0, 10, 20, 32)
    base = scores_of(TABLE, [(inst, [(one, 4, 0.9), (two, 4, 0.8)])])
    assert base["ap_rock"] == 1.0
    dup = [(one, 4, 0.9), (two, 4, 0.8), (one.copy(), 4, 0.95)]
    # one of the two on the first instance is a false positive: precision 2/3 at 0.8
    got = scores_of(TABLE, [(inst, dup)])
    assert got["ap_rock"] < 1.0
    assert got == expected([(inst, dup)])
    with_crowd = scores_of(TABLE, [(inst, [(one, 4, 0.9), (two, 4, 0.8), (crowd_pred, 5, 0.99)])])
    assert with_crowd == dict(base)   # rover has no counted instance: no rover AP either


def test_iou_exactly_at_a_threshold_is_no_match():
    """gt 100 px, prediction = gt + 100 px: IoU 0.5 exactly, not > 0.5."""
    h, w = 30, 40
    inst = np.full((h, w), 2, dtype=np.uint16)
    inst[0:10, 0:10] = 4000
    pred = box(h, w, 0, 10, 0, 20)
    got = scores_of(TABLE, [(inst, [(pred, 4, 0.9)])])
    assert got["ap50_rock"] == 0.0
    assert got == expected([(inst, [(pred, 4, 0.9)])])


def test_small_instances_are_not_counted_and_a_prediction_on_one_is_nothing():
    h, w = 30, 40
    inst = np.full((h, w), 2, dtype=np.uint16)
    inst[0:10, 0:10] = 4000          # 100 px: counted
    inst[20:29, 0:11] = 4001         # 99 px: not counted
    preds = [(box(h, w, 0, 10, 0, 10), 4, 0.5), (box(h, w, 20, 29, 0, 11), 4, 0.9)]
    got = scores_of(TABLE, [(inst, preds)])
    assert got["ap_rock"] == 1.0


def test_ignored_class_pixels_are_not_void_and_its_predictions_are_skipped():
    """lander (6) has instances but is ignored: its instance pixels (6000+k) are not void, so a
    rock prediction on them is a false positive; a lander prediction changes nothing."""
    h, w = 30, 40
    inst = ground()
    inst[20:30, 20:30] = 6000
    rock = box(h, w, 0, 10, 0, 12)
    on_lander = box(h, w, 20, 30, 20, 30)
    base = scores_of(TABLE, [(inst, [(rock, 4, 0.5)])])
    fp = scores_of(TABLE, [(inst, [(rock, 4, 0.5), (on_lander, 4, 0.9)])])
    skipped = scores_of(TABLE, [(inst, [(rock, 4, 0.5), (on_lander, 6, 0.9)])])
    assert fp["ap_rock"] < base["ap_rock"]
    assert skipped == base
    void_inst = inst.copy()
    void_inst[20:30, 20:30] = 1       # ego: void: the same prediction is then ignored
    assert scores_of(TABLE, [(void_inst, [(rock, 4, 0.5), (on_lander, 4, 0.9)])]) == \
        scores_of(TABLE, [(void_inst, [(rock, 4, 0.5)])])


def test_nothing_matched_or_counted_is_zero_where_the_anchor_raises():
    """rock has an instance and one prediction, which lies on a crowd region of rock only:
    no example at any overlap (the anchor: IndexError); AP 0."""
    h, w = 30, 40
    inst = np.full((h, w), 2, dtype=np.uint16)
    inst[0:10, 0:10] = 4000
    inst[20:30, 20:30] = 4
    got = scores_of(TABLE, [(inst, [(box(h, w, 20, 30, 20, 30), 4, 0.9)])])
    assert got == {"ap": 0.0, "ap50": 0.0, "ap_rock": 0.0, "ap50_rock": 0.0}


def test_a_crowd_region_under_100_px_is_counted_twice_as_ignored():
    """A prediction of 100 px with 30 on a rock crowd region of 30 px (and 70 on ground): its
    ignored share is 60/100 (crowd, and small), so at overlap 0.5 it is ignored, not a false
    positive; counted once (30/100) it would be one and AP50 would drop below 1."""
    h, w = 30, 40
    inst = np.full((h, w), 2, dtype=np.uint16)
    inst[0:10, 0:10] = 4000
    inst[20:23, 0:10] = 4            # rock crowd, 30 px
    on_crowd = box(h, w, 20, 30, 0, 10)
    images = [(inst, [(box(h, w, 0, 10, 0, 10), 4, 0.5), (on_crowd, 4, 0.9)])]
    got = scores_of(TABLE, images)
    assert got["ap50_rock"] == 1.0
    assert got["ap_rock"] < 1.0      # at 0.6 and above, 0.6 <= t: a false positive
    assert got == expected(images)
