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

# The intervals against the oracle (numpy's arithmetic, NaN included) are marked compat: CI runs
# them on the oldest versions too.


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


def image_terms(image, sizes):
    """One image's (numerator, denominator) per class of each mean, pixel by pixel: IoU's TP
    and TP + FP + FN; iIoU's sum of TP_i avg / size_i over its instances and avg N + FP (the
    instances' weighted TP + FN is avg each). Also per class its reference count (pixels;
    instances)."""
    lab, inst, pred = (np.asarray(a).tolist() for a in image)
    valid = [r for r in util.ROWS if r["id"] >= 0 and not r["ignore_in_eval"]]
    ids = [r["id"] for r in valid]
    iou, iiou, ref, ref_inst = [], [], [], []
    fps = {}
    for r in valid:
        c = r["id"]
        tp = fn = fp = 0
        for y in range(len(lab)):
            for x in range(len(lab[y])):
                if lab[y][x] == c:
                    tp += pred[y][x] == c
                    fn += pred[y][x] != c
                elif lab[y][x] in ids and pred[y][x] == c:
                    fp += 1
        fps[c] = fp
        iou.append((tp, tp + fp + fn))
        ref.append(tp + fn)
    for r in valid:
        if not r["has_instances"]:
            continue
        c, avg = r["id"], float(sizes.get(r["name"], 0.0))
        pixels = {}
        for y in range(len(inst)):
            for x in range(len(inst[y])):
                if inst[y][x] > 1000 and inst[y][x] // 1000 == c:
                    pixels.setdefault(inst[y][x], []).append(pred[y][x] == c)
        num = sum(sum(hits) * avg / len(hits) for hits in pixels.values())
        iiou.append((num, avg * len(pixels) + fps[c]))
        ref_inst.append(len(pixels))
    return {"iou_class": iou, "iiou_class": iiou}, {"iou_class": ref, "iiou_class": ref_inst}


def oracle_intervals(units, images, sizes, keys=("iou_class", "iiou_class")):
    """Per key the studentized interval over the units ([(unit key, [images])] or [(id,
    image)]), the classes the test set does not show set free."""
    terms = {id(img): image_terms(img, sizes)[0] for img in images}

    def unit_terms(key):
        def of(stat):
            imgs = stat if isinstance(stat, list) else [stat]
            parts = [terms[id(im)][key] for im in imgs]
            return [tuple(map(sum, zip(*col))) for col in zip(*parts)]
        return of

    values = {k: [] for k in keys}
    spreads = {k: [] for k in keys}
    for sample in bootstrap_oracle.resamples(
            units, lambda st: tuple(map(id, st)) if isinstance(st, list) else id(st)):
        flat = [im for st in sample for im in (st if isinstance(st, list) else [st])]
        exact = oracle.scores(util.ROWS, flat, sizes)
        for k in keys:
            values[k].append(float(exact[k]))
            spreads[k].append(bootstrap_oracle.ratio_spread(sample, unit_terms(k)))
    point = oracle.scores(util.ROWS, images, sizes)
    every = [st for _, st in units]
    out = {}
    for k in keys:
        ends = bootstrap_oracle.studentized_interval(
            values[k], spreads[k], float(point[k]),
            bootstrap_oracle.ratio_spread(every, unit_terms(k)))
        whole = [tuple(map(sum, zip(*col))) for col in zip(*[terms[id(im)][k] for im in images])]
        reference = [sum(col) for col in zip(*[image_terms(im, sizes)[1][k] for im in images])]
        out[k] = bootstrap_oracle.opened(ends, reference, [d for _, d in whole])
    return out


@pytest.mark.compat
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
    # every image's row differs here (random images): the unit sampler
    intervals = oracle_intervals([(i, img) for i, img in zip(ids, images)], images, sizes)
    for key, (low, high) in intervals.items():
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
    low, high = oracle_intervals(units, images, sizes, keys=("iou_class",))["iou_class"]
    assert scores["iou_class_ci_low"] == pytest.approx(low, abs=1e-7)
    assert scores["iou_class_ci_high"] == pytest.approx(high, abs=1e-7)
    assert "resamples of the 3 groups of 8 images" in proc.stdout


@pytest.mark.compat
def test_a_class_the_reference_lacks_is_set_free(tmp_path):
    """No rover (class 5) in any reference image, though the predictions have some: its IoU
    and iIoU are 0 whatever the predictions. Both intervals let that term be up to 1, so each
    spans more than that term's share: 1/6 of IoU's 6 evaluated classes, 1/3 of iIoU's 3."""
    rng = np.random.RandomState(41)
    images = []
    for lab, inst, pred in util.random_images(rng, util.ROWS, 6, 10, 12):
        inst = np.where(lab == 5, 2, inst).astype(inst.dtype)
        lab = np.where(lab == 5, 2, lab).astype(lab.dtype)
        images.append((lab, inst, pred))
    assert all((pred == 5).any() for _, _, pred in images)
    ids = ["img%02d" % k for k in range(len(images))]
    ref, res = str(tmp_path / "ref"), str(tmp_path / "res")
    util.write_reference(ref, util.ROWS, [(i, lab, inst) for i, (lab, inst, _) in
                                          zip(ids, images)], None)
    util.write_predictions(res, [(i, pred) for i, (_, _, pred) in zip(ids, images)])
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((tmp_path / "out" / "scores.json").read_text())
    sizes = whole_reference_sizes(images, None)
    intervals = oracle_intervals([(i, img) for i, img in zip(ids, images)], images, sizes)
    for key, terms in (("iou_class", 6), ("iiou_class", 3)):
        low, high = intervals[key]
        assert scores[key + "_ci_low"] == pytest.approx(low, abs=1e-7), key
        assert scores[key + "_ci_high"] == pytest.approx(high, abs=1e-7), key
        assert high > low + 1 / terms  # the freed term alone spans 1 / terms
