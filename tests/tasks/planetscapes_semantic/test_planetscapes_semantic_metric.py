"""Every Planetscapes score equals the naive oracle's, on hand-made and generated cases."""
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import planetscapes_oracle as oracle
from planetscapes_util import ROWS, random_images, score_arrays, table

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def assert_same(got, want):
    assert sorted(got) == sorted(want), (sorted(set(got) ^ set(want)))
    for k, v in want.items():
        assert math.isfinite(got[k]) and 0 <= got[k] <= 1
        assert got[k] == pytest.approx(float(v), rel=1e-12, abs=0), k


def check(images, rows=ROWS, sizes=None):
    got = score_arrays(table(rows, sizes), images)
    want = oracle.scores(rows, images, sizes)
    assert_same(got, want)
    return got


def test_perfect_prediction():
    lab = [[2, 3, 4, 4], [5, 5, 8, 8]]
    inst = [[2, 3, 4001, 4001], [5001, 5002, 8, 8]]
    got = check([(lab, inst, lab)])
    assert got["iou_class"] == 1 and got["iiou_class"] == 1
    assert got["iou_category"] == 1 and got["iiou_category"] == 1


def test_ignored_id_prediction_is_a_false_negative():
    # A ground pixel predicted as the ignored 'void': FN for ground, FP for nobody.
    lab = [[2, 2, 3, 3]]
    pred = [[0, 2, 3, 3]]
    got = check([(lab, lab, pred)])
    assert got["iou_class_ground"] == 0.5
    assert got["iou_class_sand_dune"] == 1
    # ignored reference pixels never count, whatever is predicted there
    got = check([([[0, 0, 2]], [[0, 0, 2]], [[2, 3, 2]])])
    assert got["iou_class_ground"] == 1 and "iou_class_sand_dune" not in got


def test_class_predicted_but_absent_from_reference_gets_zero():
    got = check([([[2, 2]], [[2, 2]], [[2, 8]])])
    assert got["iou_class_sky"] == 0
    assert "iou_class_rock" not in got  # TP + FP + FN = 0: absent, not 0


def test_instance_value_1000_is_not_an_instance():
    # class 1 (ego, ignored) at 1000; make a table where class 1 has instances and is evaluated
    rows = [dict(r) for r in ROWS]
    rows[1].update(has_instances=True, ignore_in_eval=False, category="vehicle")
    lab = [[1, 1, 1, 1]]
    inst = [[1000, 1000, 1001, 1001]]
    pred = [[1, 2, 1, 1]]
    got = check([(lab, inst, pred)], rows=rows)
    # only 1001 is an instance (fully hit): iTP = avg * 1, iFN = 0; the miss on 1000 is no iFN
    assert got["iiou_class_ego"] == 1
    assert got["iou_class_ego"] == 0.75


def test_caravan_on_car_is_a_category_iiou_hit_but_a_category_iou_miss():
    # rover (5) instance predicted as the ignored lander (6) of the same category
    lab = [[5, 5, 2, 2]]
    inst = [[5001, 5001, 2, 2]]
    pred = [[6, 6, 2, 2]]
    got = check([(lab, inst, pred)])
    assert "iou_category_vehicle" not in got or got["iou_category_vehicle"] == 0
    assert got["iou_category_vehicle"] == 0  # FN 2, TP 0
    assert got["iiou_category_vehicle"] == 1  # lander counts for the category's instances
    assert got["iiou_class_rover"] == 0


def test_category_iiou_fp_counts_ignored_member_columns():
    # a ground pixel predicted lander: no category-IoU FP (lander is not a member there) but a
    # category-iIoU FP (all classes of the category count there), as in the anchor
    lab = [[5, 5, 2, 2]]
    inst = [[5001, 5001, 2, 2]]
    pred = [[5, 5, 6, 2]]
    got = check([(lab, inst, pred)])
    assert got["iou_category_vehicle"] == 1
    assert got["iiou_category_vehicle"] == pytest.approx(2 / 3)


def test_instances_of_ignored_classes_are_skipped():
    lab = [[6, 6, 5, 5]]
    inst = [[6001, 6001, 5001, 5001]]
    pred = [[2, 2, 5, 5]]
    got = check([(lab, inst, pred)])
    assert got["iiou_category_vehicle"] == 1


def test_weighting_by_average_size():
    # two rock instances: 1 px fully missed, 3 px fully hit; avg = 2 (default: mean size)
    lab = [[4, 4, 4, 4]]
    inst = [[4001, 4002, 4002, 4002]]
    pred = [[2, 4, 4, 4]]
    got = check([(lab, inst, pred)])
    # iTP = 2 * 3/3 = 2, iFN = 2 * 1/1 = 2, FP = 0
    assert got["iiou_class_rock"] == 0.5
    assert got["iou_class_rock"] == 0.75
    got = check([(lab, inst, pred)], sizes={"rock": 10})
    assert got["iiou_class_rock"] == 0.5  # both weighted sums scale with avg
    # FP is unweighted: with an FP pixel the configured size matters
    lab2 = [[4, 4, 4, 4, 2]]
    inst2 = [[4001, 4002, 4002, 4002, 2]]
    pred2 = [[2, 4, 4, 4, 4]]
    a = check([(lab2, inst2, pred2)], sizes={"rock": 10})
    b = check([(lab2, inst2, pred2)], sizes={"rock": 1})
    assert a["iiou_class_rock"] == pytest.approx(10 / 21)
    assert b["iiou_class_rock"] == pytest.approx(1 / 3)


def test_class_with_instances_but_none_in_reference():
    # probe has instances in the table but none in the images: FP only -> iIoU 0
    got = check([([[2, 2]], [[2, 2]], [[7, 2]])])
    assert got["iiou_class_probe"] == 0 and got["iou_class_probe"] == 0
    assert "iiou_class_rover" not in got


def test_crowd_pixels_count_for_iou_only():
    # rover pixels without an instance id (value 5) count for IoU, not for iIoU
    lab = [[5, 5, 5]]
    inst = [[5, 5001, 5001]]
    pred = [[2, 5, 5]]
    got = check([(lab, inst, pred)])
    assert got["iiou_class_rover"] == 1
    assert got["iou_class_rover"] == pytest.approx(2 / 3)


def test_merge_and_order_invariance():
    rng = np.random.RandomState(5)
    images = random_images(rng, ROWS, 9, 7, 9)
    tab = table()
    whole = score_arrays(tab, images)
    for seed in range(4):
        order = list(range(9))
        random.Random(seed).shuffle(order)
        cut = [order[:2], order[2:3], order[3:]]
        assert score_arrays(tab, images, cut) == whole  # bit-identical
    assert_same(whole, oracle.scores(ROWS, images))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(1, 4), h=st.integers(1, 6),
       w=st.integers(1, 7), noise=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
       configured=st.booleans())
def test_random_cases_equal_the_oracle(seed, n, h, w, noise, configured):
    rng = np.random.RandomState(seed)
    images = random_images(rng, ROWS, n, h, w, noise=noise)
    sizes = {"rock": 3.5, "rover": 2.25} if configured else None
    check(images, sizes=sizes)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_random_tables_equal_the_oracle(seed):
    rng = np.random.RandomState(seed)
    k = rng.randint(2, 7)
    ids = sorted(rng.choice(np.arange(0, 40), size=k, replace=False).tolist())
    rows = [{"name": "c%d" % i, "id": i, "category": "k%d" % rng.randint(0, 3),
             "has_instances": bool(rng.rand() < 0.6), "ignore_in_eval": bool(rng.rand() < 0.3)}
            for i in ids]
    rows[0]["ignore_in_eval"] = False
    images = random_images(rng, rows, 3, 5, 6, noise=rng.choice([0.2, 0.7]))
    check(images, rows=rows)
