"""The mIoU's confidence interval through the real command (score.py, pack.py in subprocesses),
against the naive oracle: per-image confusion matrices walked pixel by pixel
(agrivision_oracle), resampled images from the same seed (bootstrap_oracle), each resample's
mIoU in exact fractions, its linearized variance written out, the studentized interval."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import agrivision_oracle as oracle
import bootstrap_oracle
from agrivision_data import random_image, write_reference
from conftest import ORGANIZER, run_score
from scoring import confidence
from scoring.metrics import bootstrap
from scoring.tasks.agrivision import metric
from scoring.tasks.agrivision.classes import STORM_BIT, VALID_BIT
from scoring.tasks.agrivision.task import AgricultureVision

# The intervals against the oracle (numpy's arithmetic, NaN included) are marked compat: CI runs
# them on the oldest versions too. The samplers' streams are held on every numpy version by
# tests/core/test_bootstrap.py; config.yaml's settings by tests/core/test_safe_yaml.py.

SIZE = (12, 14)


def _lists(a):
    return None if a is None else np.asarray(a).tolist()


def make_set(root, res, images, policy="background", copies=1, seed=5, extra_config="",
             absent=(), unpredicted=(), alone=()):
    """A raw reference and a submission; with copies > 1 each random image appears that many
    times under other ids; classes named in absent have no reference pixel, class ids in
    unpredicted are never predicted (background instead), and the pixels of a class named in
    alone hold no other label. Returns {image id: the oracle's 9 x 9 matrix}."""
    rng = np.random.RandomState(seed)
    os.makedirs(res, exist_ok=True)
    mats = {}
    from PIL import Image
    for k in range(images):
        b, m, labels, storm, pred = random_image(rng, *SIZE, density=0.6)
        for name in absent:
            labels[name][...] = 0
        for c in unpredicted:
            pred[pred == c] = 0
        for name in alone:
            for other in labels:
                if other != name:
                    labels[other][labels[name] == 1] = 0
        mat = oracle.confusion_one(_lists(b), _lists(m), {c: _lists(v) for c, v in labels.items()},
                                   _lists(storm), _lists(pred), policy)
        for j in range(copies):
            image_id = "FLD{:03d}_{}-{}-0-0".format(k, j, k)
            write_reference(root, image_id, b, m, labels, storm)
            Image.fromarray(pred).save(os.path.join(res, image_id + ".png"))
            mats[image_id] = mat
    with open(os.path.join(root, "config.yaml"), "w") as f:
        f.write("storm_damage: {}\n{}".format(policy, extra_config))
    return mats


def row_of(m):
    """An image's TP and union per class, from its matrix."""
    tp = [m[c][c] for c in range(9)]
    union = [sum(m[c]) + sum(m[x][c] for x in range(9)) - m[c][c] for c in range(9)]
    return tuple(tp + union)


def _miou(mats):
    total = [[0] * 9 for _ in range(9)]
    for mat in mats:
        for x in range(9):
            for y in range(9):
                total[x][y] += mat[x][y]
    return float(oracle.scores(total)[1])


def field(image_id):
    """The field of a tile id written out: everything before the last `_`."""
    return image_id[:image_id.rindex("_")]


_TERMS = {}


def _terms(ms):
    """Per class its (TP, union) over the images ms: the mIoU's ratios (each unit's worked out
    once: the resamples draw the same unit objects again and again)."""
    if id(ms) not in _TERMS:
        row = tuple(map(sum, zip(*map(row_of, ms))))
        _TERMS[id(ms)] = (ms, [(row[c], row[9 + c]) for c in range(9)])
    return _TERMS[id(ms)][1]


def oracle_interval(mats, by_field=True):
    """The studentized bootstrap interval, then the classes without a reference pixel set
    free; by_field: fields (every tile of one) are the units."""
    units = bootstrap_oracle.clusters(mats.items(), field if by_field else (lambda i: i))
    values, spreads = [], []
    for sample in bootstrap_oracle.resamples(
            units, lambda ms: tuple(map(sum, zip(*map(row_of, ms))))):
        values.append(_miou([m for ms in sample for m in ms]))
        spreads.append(bootstrap_oracle.ratio_spread(sample, _terms))
    every = [ms for _, ms in units]
    ends = bootstrap_oracle.studentized_interval(values, spreads, _miou(list(mats.values())),
                                                 bootstrap_oracle.ratio_spread(every, _terms))
    reference = [sum(m[x][c] for m in mats.values() for x in range(9)) for c in range(9)]
    union = [sum(row_of(m)[9 + c] for m in mats.values()) for c in range(9)]
    return bootstrap_oracle.opened(ends, reference, union)


def scored(ref, res, out, *extra):
    proc = run_score("--ref", ref, "--res", res, "--out", out, *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "scores.json").read_text()), proc


@pytest.mark.compat
@pytest.mark.parametrize("policy", ["background", "ignore"])
def test_interval_equals_the_oracle(tmp_path, policy):
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    mats = make_set(ref, res, 9, policy)
    scores, proc = scored(ref, res, tmp_path / "out")
    low, high = oracle_interval(mats)
    assert scores["miou_ci_low"] == pytest.approx(low, abs=1e-10)
    assert scores["miou_ci_high"] == pytest.approx(high, abs=1e-10)
    assert low < high
    assert "miou: 95% confidence interval {:.4f} to {:.4f} (bootstrap, 1,000 resamples of the " \
           "9 fields of 9 images)".format(low, high) in proc.stdout
    page = (tmp_path / "out" / "detailed_results.html").read_text()
    assert "95% CI {:.4f}\u2013{:.4f} over 9 fields".format(low, high) in page


def _core_interval(mats):
    """oracle_interval without setting any class free (to check the widening by hand)."""
    units = bootstrap_oracle.clusters(mats.items(), field)
    values, spreads = [], []
    for sample in bootstrap_oracle.resamples(
            units, lambda ms: tuple(map(sum, zip(*map(row_of, ms))))):
        values.append(_miou([m for ms in sample for m in ms]))
        spreads.append(bootstrap_oracle.ratio_spread(sample, _terms))
    return bootstrap_oracle.studentized_interval(
        values, spreads, _miou(list(mats.values())),
        bootstrap_oracle.ratio_spread([ms for _, ms in units], _terms))


@pytest.mark.compat
def test_a_class_the_reference_lacks_is_set_free_in_the_interval(tmp_path):
    """No reference pixel of water (class 6) on any image: its IoU is 0 whatever the
    predictions, and the test set says nothing of the population's. The interval lets that
    term be anything up to 1: its high end rises by 1/9, worked out by hand from the interval
    of the same resamples; never predicted either, water leaves the mean (8 terms) and joins
    the interval anywhere in [0, 1]: (8 lo / 9, (8 hi + 1) / 9)."""
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    mats = make_set(ref, res, 9, absent=("water",))
    scores, _ = scored(ref, res, tmp_path / "out")
    assert scores["iou_water"] == 0.0
    low, high = _core_interval(mats)
    assert (scores["miou_ci_low"], scores["miou_ci_high"]) == pytest.approx(
        (low, (9 * high + 1) / 9), abs=1e-10)
    assert (low, (9 * high + 1) / 9) == pytest.approx(oracle_interval(mats), abs=1e-12)

    # In the reference but never hit (never predicted, and its pixels hold no other label that
    # a prediction could hit): IoU 0 with reference pixels, nothing to set free.
    ref3, res3 = str(tmp_path / "ref3"), str(tmp_path / "res3")
    mats = make_set(ref3, res3, 9, unpredicted=(6,), alone=("water",))
    scores, _ = scored(ref3, res3, tmp_path / "out3")
    assert scores["iou_water"] == 0.0
    assert (scores["miou_ci_low"], scores["miou_ci_high"]) == pytest.approx(
        _core_interval(mats), abs=1e-10)

    ref2, res2 = str(tmp_path / "ref2"), str(tmp_path / "res2")
    mats = make_set(ref2, res2, 9, absent=("water",), unpredicted=(6,))
    scores, _ = scored(ref2, res2, tmp_path / "out2")
    assert "iou_water" not in scores or scores["iou_water"] is None
    low, high = _core_interval(mats)
    assert (scores["miou_ci_low"], scores["miou_ci_high"]) == pytest.approx(
        (8 * low / 9, (8 * high + 1) / 9), abs=1e-10)


def test_interval_of_many_identical_images_uses_the_group_sampler(tmp_path):
    """130 images, copies of two: the rows take 2 values, so the resamples are drawn as counts
    of the two groups (a binomial chain), and still equal the oracle's resampled images."""
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    mats = make_set(ref, res, 2, copies=65, extra_config="resample_by: image\n")
    assert bootstrap.uses_groups(len(mats), len({row_of(m) for m in mats.values()}))
    scores, _ = scored(ref, res, tmp_path / "out", "--workers", "2")
    low, high = oracle_interval(mats, by_field=False)
    assert (scores["miou_ci_low"], scores["miou_ci_high"]) == pytest.approx((low, high), abs=1e-10)


def test_tiles_of_a_field_are_resampled_together(tmp_path):
    """12 fields of 4 tiles each (the same pixels under 4 tile names): resampled by field, the
    interval equals the oracle's over the 12 fields and is as wide as for the 12 tiles once;
    `resample_by: image` resamples the 48 tiles, a narrower (wrong) interval."""
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    mats = make_set(ref, res, 12, copies=4)
    scores, proc = scored(ref, res, tmp_path / "out", "--workers", "2")
    low, high = oracle_interval(mats)
    assert (scores["miou_ci_low"], scores["miou_ci_high"]) == pytest.approx((low, high), abs=1e-10)
    assert "1,000 resamples of the 12 fields of 48 images" in proc.stdout
    once = {i: m for i, m in mats.items() if i.split("_")[1].startswith("0-")}
    ref1, res1 = str(tmp_path / "ref1"), str(tmp_path / "res1")
    make_set(ref1, res1, 12, copies=1)
    single, _ = scored(ref1, res1, tmp_path / "out1")
    assert len(once) == 12
    assert (single["miou_ci_low"], single["miou_ci_high"]) == pytest.approx(
        oracle_interval(once), abs=1e-10)
    assert (low, high) == pytest.approx((single["miou_ci_low"], single["miou_ci_high"]),
                                        abs=1e-10)
    with open(os.path.join(ref, "config.yaml"), "a") as f:
        f.write("resample_by: image\n")
    tiles, _ = scored(ref, res, tmp_path / "out2")
    assert (tiles["miou_ci_low"], tiles["miou_ci_high"]) == pytest.approx(
        oracle_interval(mats, by_field=False), abs=1e-10)
    assert tiles["miou_ci_high"] - tiles["miou_ci_low"] < 0.75 * (high - low)


def test_the_field_of_a_tile_id():
    """A tile id is <field>_<x1>-<y1>-<x2>-<y2>: its field is everything before the last `_`
    (a field name may hold `_` itself)."""
    from scoring.tasks.agrivision.intervals import field_of
    assert field_of("1AD76MIZB_1086-6812-1598-7324") == "1AD76MIZB"
    assert field_of("a_b_10-10-522-522") == "a_b"
    assert field_of("plain") == "plain"


@pytest.mark.parametrize("value", ["fields", "prefix 0", "prefix x", "3"])
def test_a_bad_grouping_is_the_organizers_mistake(tmp_path, value):
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    make_set(ref, res, 2, extra_config="resample_by: {}\n".format(value))
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "resample_by must be one of field, image or `prefix N`" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_packed_reference_gives_the_same_interval(tmp_path):
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    make_set(ref, res, 7, "ignore")
    packed = str(tmp_path / "packed")
    proc = subprocess.run([sys.executable, os.path.join(ORGANIZER, "pack.py"), ref, packed],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    raw, _ = scored(ref, res, tmp_path / "o1")
    assert scored(packed, res, tmp_path / "o2")[0] == raw
    assert "miou_ci_low" in raw


def test_confidence_false_writes_no_interval(tmp_path):
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    make_set(ref, res, 4, extra_config="confidence: false\n")
    scores, proc = scored(ref, res, tmp_path / "out")
    assert sorted(scores) == sorted(["miou"] + ["iou_" + c for c in oracle.CLASSES])
    assert "confidence interval" not in proc.stdout
    assert "95% CI" not in (tmp_path / "out" / "detailed_results.html").read_text()


def test_confidence_not_a_boolean_is_the_organizers_mistake(tmp_path):
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    make_set(ref, res, 2, extra_config="confidence: maybe\n")
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 3, proc.stderr
    assert "confidence must be true or false, not 'maybe'" in proc.stderr


def near_perfect_set(root, res, tiles=20, size=8, water_fp=5, seed=3):
    """tiles of size x size, each its own field, every pixel valid with exactly one label (or
    background), predicted right, except water (class 6): no reference pixel anywhere, yet
    predicted on water_fp pixels of the first tile. Returns {image id: the oracle's matrix}."""
    from PIL import Image
    rng = np.random.RandomState(seed)
    os.makedirs(res, exist_ok=True)
    ones = np.ones((size, size), np.uint8)
    mats = {}
    for k in range(tiles):
        cls = rng.randint(0, 9, size=(size, size))
        cls[cls == 6] = 0
        labels = {name: (cls == c).astype(np.uint8) for c, name in enumerate(oracle.CLASSES)
                  if c}
        pred = cls.astype(np.uint8)
        if k == 0:
            pred.flat[:water_fp] = 6
        image_id = "FLD{:03d}_0-0-{}-{}".format(k, size, size)
        write_reference(root, image_id, ones, ones, labels, 0 * ones)
        Image.fromarray(pred).save(os.path.join(res, image_id + ".png"))
        mats[image_id] = oracle.confusion_one(_lists(ones), _lists(ones),
                                              {c: _lists(v) for c, v in labels.items()},
                                              _lists(0 * ones), _lists(pred))
    return mats


def test_an_interval_with_a_class_set_free_stays_within_0_and_1(tmp_path):
    """20 tiles, mIoU 0.885 (8 classes right, water predicted on 5 pixels it never holds: IoU
    0): resamples without the first tile drop water from the mean and score about 1, so the
    interval before water is set free already ends above 8/9, and setting water free, (9 hi +
    1) / 9, would end above 1. The interval is held within [0, 1] after that step too."""
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    mats = near_perfect_set(ref, res)
    scores, proc = scored(ref, res, tmp_path / "out")
    assert 0.88 < scores["miou"] < 8 / 9 and scores["iou_water"] == 0.0
    low, high = _core_interval(mats)
    assert (9 * high + 1) / 9 > 1.0005       # what the interval ended at before it was held
    assert (scores["miou_ci_low"], scores["miou_ci_high"]) == pytest.approx(
        (low, 1.0), abs=1e-10)
    assert scores["miou_ci_high"] == 1.0
    assert (low, 1.0) == pytest.approx(oracle_interval(mats), abs=1e-12)
    text = (tmp_path / "out" / "scores.txt").read_text()
    assert "miou_ci_high: 1.0000000000\n" in text
    assert "to 1.0000 (bootstrap" in proc.stdout


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), tiles=st.integers(1, 24), per_field=st.integers(1, 3),
       size=st.integers(2, 6), wrong=st.sampled_from([0.0, 0.01, 0.1, 0.5, 1.0]),
       absent=st.sets(st.integers(1, 8), max_size=8),
       unseen=st.sets(st.integers(1, 8), max_size=3),
       policy=st.sampled_from(["background", "ignore"]),
       by=st.sampled_from(["field", "image"]))
def test_every_interval_is_within_0_and_1(seed, tiles, per_field, size, wrong, absent, unseen,
                                          policy, by):
    """Random test sets through the task's real path (its metric state, summary, resampling
    and confidence.compute): near-perfect to random predictions, classes absent from the
    reference, some of them predicted anyway (set free), storm damage either way, by field or
    by tile. Every interval lies within [0, 1], low end first."""
    task = AgricultureVision()
    config = task.configure({"storm_damage": policy}, {})
    state = task.new_state(config)
    rng = np.random.RandomState(seed)
    for k in range(tiles):
        labels = rng.randint(0, 9, size=(size, size))
        labels[np.isin(labels, list(absent))] = 0
        codes = np.where(labels > 0, 1 << np.maximum(labels - 1, 0), 0) | VALID_BIT
        codes |= np.where(rng.random_sample(labels.shape) < 0.2, STORM_BIT, 0)
        pred = labels.astype(np.uint8)
        flip = rng.random_sample(pred.shape) < wrong
        pred[flip] = rng.randint(0, 9, size=int(flip.sum()))
        pred[np.isin(pred, list(absent - unseen))] = 0
        for c in sorted(unseen & absent):
            if rng.randint(2):
                pred.flat[rng.randint(pred.size)] = c
        state.update("F{:02d}_{}-0-0-0".format(k // per_field, k), pred,
                     metric.CodedLabels(codes.astype(np.uint16), metric.IDENTITY_TABLE))
    summary = task.summarize(state, None, config)
    found = confidence.compute(task, state, summary, None, config, by, resamples=200)
    low, high = found.interval("miou")
    assert 0.0 <= low <= high <= 1.0, (low, high, dict(summary.scores)["miou"])
