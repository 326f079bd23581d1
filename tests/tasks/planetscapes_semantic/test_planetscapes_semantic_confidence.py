"""The intervals of iou_class and iiou_class through the real command, against the naive oracle
(planetscapes_oracle: per-pixel loops and exact fractions) applied to each resample's images,
drawn from the same seed (bootstrap_oracle), with the average instance sizes of the whole
reference held fixed."""
import json
import os

import numpy as np
import pytest
import yaml

import bootstrap_oracle
import planetscapes_oracle as oracle
import planetscapes_util as util
from conftest import run_score

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def whole_reference_sizes(images, configured):
    """Average instance size per class name: configured, else the mean over every image."""
    ignored = {r["id"] for r in util.ROWS if r["ignore_in_eval"]}
    found = {}
    for _, inst, _ in images:
        values, counts = np.unique(np.asarray(inst), return_counts=True)
        for v, n in zip(values.tolist(), counts.tolist()):
            if v > 1000 and v // 1000 not in ignored:
                found.setdefault(v // 1000, []).append(n)
    names = {r["id"]: r["name"] for r in util.ROWS}
    sizes = {names[c]: sum(s) / len(s) for c, s in found.items()}
    sizes.update(configured or {})
    return sizes


@pytest.mark.parametrize("configured", [None, {"rock": 30}])
def test_intervals_equal_the_oracle(tmp_path, configured):
    rng = np.random.RandomState(31)
    images = util.random_images(rng, util.ROWS, 6, 10, 12)
    ids = ["site%d_img%02d" % (k % 2, k) for k in range(len(images))]
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    util.write_reference(ref, util.ROWS, [(i, lab, inst) for i, (lab, inst, _) in
                                          zip(ids, images)], configured)
    util.write_predictions(res, [(i, pred) for i, (_, _, pred) in zip(ids, images)])
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((tmp_path / "out" / "scores.json").read_text())

    sizes = whole_reference_sizes(images, configured)
    values = {"iou_class": [], "iiou_class": []}
    units = [(i, img) for i, img in zip(ids, images)]
    # every image's row differs here (random images): the unit sampler; row_of only counts them
    for sample in bootstrap_oracle.resamples(units, lambda img: id(img)):
        exact = oracle.scores(util.ROWS, sample, sizes)
        for key in values:
            values[key].append(float(exact[key]))
    point = oracle.scores(util.ROWS, images, sizes)
    for key in values:
        low, high = bootstrap_oracle.basic_interval(values[key], float(point[key]))
        assert low < high
        # iIoU's weighted hits are summed in fixed point (2**-24 of an instance)
        assert scores[key + "_ci_low"] == pytest.approx(low, abs=1e-7), key
        assert scores[key + "_ci_high"] == pytest.approx(high, abs=1e-7), key
    page = (tmp_path / "out" / "detailed_results.html").read_text()
    assert "95% CI {:.4f}\u2013{:.4f} over 6 images".format(
        scores["iou_class_ci_low"], scores["iou_class_ci_high"]) in page


def test_confidence_false(tmp_path):
    rng = np.random.RandomState(2)
    images = util.random_images(rng, util.ROWS, 3, 6, 6)
    ids = ["a%d" % k for k in range(3)]
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    util.write_reference(ref, util.ROWS, [(i, lab, inst) for i, (lab, inst, _) in
                                          zip(ids, images)])
    with open(os.path.join(ref, "config.yaml")) as f:
        config = yaml.safe_load(f)
    config["confidence"] = False
    with open(os.path.join(ref, "config.yaml"), "w") as f:
        yaml.safe_dump(config, f)
    util.write_predictions(res, [(i, pred) for i, (_, _, pred) in zip(ids, images)])
    assert run_score("--ref", ref, "--res", res, "--out", tmp_path / "out").returncode == 0
    assert not [k for k in json.loads((tmp_path / "out" / "scores.json").read_text())
                if "_ci_" in k]


def test_resample_by_an_id_prefix(tmp_path):
    """resample_by: prefix 1: the images of each site (site0_..., site1_...) together."""
    rng = np.random.RandomState(33)
    images = util.random_images(rng, util.ROWS, 8, 10, 12)
    ids = ["site%d_img%02d" % (k % 3, k) for k in range(len(images))]
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    util.write_reference(ref, util.ROWS, [(i, lab, inst) for i, (lab, inst, _) in
                                          zip(ids, images)], None)
    util.write_predictions(res, [(i, pred) for i, (_, _, pred) in zip(ids, images)])
    with open(os.path.join(ref, "config.yaml"), "a") as f:
        f.write("\nresample_by: prefix 1\n")
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((tmp_path / "out" / "scores.json").read_text())
    sizes = whole_reference_sizes(images, None)
    units = bootstrap_oracle.clusters(zip(ids, images), lambda i: i.split("_")[0])
    values = []
    for sample in bootstrap_oracle.resamples(units, lambda imgs: tuple(map(id, imgs))):
        values.append(float(oracle.scores(util.ROWS, [im for g in sample for im in g],
                                          sizes)["iou_class"]))
    low, high = bootstrap_oracle.basic_interval(
        values, float(oracle.scores(util.ROWS, images, sizes)["iou_class"]))
    assert scores["iou_class_ci_low"] == pytest.approx(low, abs=1e-7)
    assert scores["iou_class_ci_high"] == pytest.approx(high, abs=1e-7)
    assert "resamples of the 3 groups of 8 images" in proc.stdout
