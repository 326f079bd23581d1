"""The real anchor: cityscapesScripts' createPanopticImgs (the reference segments, from the
instance images under Cityscapes names) and evalPanopticSemanticLabeling (PQ) on the same files
as our task, every key compared.

Runs where `cityscapesscripts` is installed with numpy < 2.4 (CI's oldest-versions
environment); skipped elsewhere. For a label table other than Cityscapes' the anchor's own
table (helpers.labels, which createPanopticImgs reads) is replaced by ours for the call.
"""
import contextlib
import io
import json
import math
import os
import shutil

import numpy as np
import pytest

import panoptic_util as pu
from panoptic_run import score_files
from planetscapes_util import save_16bit
from scoring.tasks.planetscapes_semantic import cityscapes_labels, labels as ps_labels

pytestmark = pytest.mark.compat

if not hasattr(np, "in1d"):
    pytest.skip("cityscapesScripts needs numpy < 2.4 (the anchor runs in the oldest-versions "
                "environment)", allow_module_level=True)
create = pytest.importorskip("cityscapesscripts.preparation.createPanopticImgs",
                             reason="the anchor package cityscapesscripts is not installed")
evaluate = pytest.importorskip("cityscapesscripts.evaluation.evalPanopticSemanticLabeling")
cs_labels = pytest.importorskip("cityscapesscripts.helpers.labels")

CITYSCAPES = cityscapes_labels.rows()
COLUMNS = ("pq", "sq", "rq")


@contextlib.contextmanager
def anchor_table(rows):
    """createPanopticImgs' module-level label table replaced by `rows` for the call."""
    saved = create.labels, create.id2label
    table = [cs_labels.Label(r["name"], r["id"], 255, r["category"], 0, r["has_instances"],
                             r["ignore_in_eval"], (0, 0, 0)) for r in rows]
    create.labels, create.id2label = table, {lab.id: lab for lab in table}
    try:
        yield
    finally:
        create.labels, create.id2label = saved


def anchor(tmp, rows, res):
    """The anchor's results dict: createPanopticImgs over tmp/gtFine/val/city/*_instanceIds.png,
    then evaluatePanoptic of res/predictions.json against it."""
    gt = os.path.join(tmp, "gtFine")
    out = os.path.join(tmp, "anchor")
    os.makedirs(out)
    with contextlib.redirect_stdout(io.StringIO()):
        with anchor_table(rows):
            create.convert2panoptic(gt, out, setNames=["val"])
        return evaluate.evaluatePanoptic(
            os.path.join(out, "cityscapes_panoptic_val.json"),
            os.path.join(out, "cityscapes_panoptic_val"),
            os.path.join(res, "predictions.json"), os.path.join(res, "predictions"),
            os.path.join(tmp, "anchor_results.json"))


def write_case(tmp, rows, images, preds=None):
    """images: [(id, instances)] as our reference (tmp/ref) and under Cityscapes names
    (tmp/gtFine/val/city/<id>_gtFine_instanceIds.png); preds: our submission (tmp/res)."""
    ref, res = os.path.join(tmp, "ref"), os.path.join(tmp, "res")
    pu.write_reference(ref, rows, images)
    city = os.path.join(tmp, "gtFine", "val", "city")
    os.makedirs(city)
    for image_id, inst in images:
        save_16bit(inst, os.path.join(city, image_id + "_gtFine_instanceIds.png"))
    if preds is not None:
        pu.write_submission(res, preds)
    return ref, res


def compare(theirs, mine, rows):
    """(keys compared, max abs difference): every per-class value and mean of the anchor; its
    0 for a class with TP + FP + FN = 0 is an absent key here, as is a mean over no class
    (the anchor divides by zero there: None here)."""
    names = {r["id"]: r["name"] for r in rows}
    n, worst = 0, 0.0
    expected = set()
    for label, values in theirs["per_class"].items():
        for m in COLUMNS:
            key = "{}_{}".format(m, ps_labels.key_name(names[int(label)]))
            got = mine.get(key)
            if got is None:
                assert values == {"pq": 0.0, "sq": 0.0, "rq": 0.0}, key
                continue
            expected.add(key)
            worst = max(worst, abs(got - values[m]))
            assert got == pytest.approx(values[m], abs=1e-9), key
            n += 1
    for group, suffix in (("All", ""), ("Things", "_things"), ("Stuff", "_stuff")):
        for m in COLUMNS:
            key = m + suffix
            if group not in theirs:
                assert key not in mine
                continue
            expected.add(key)
            worst = max(worst, abs(mine[key] - theirs[group][m]))
            assert mine[key] == pytest.approx(theirs[group][m], abs=1e-9), key
            n += 1
    assert set(mine) == expected
    return n, worst


def case_ids(seed, n):
    return ["city_%06d_%06d" % (seed, j) for j in range(n)]


@pytest.mark.parametrize("rows,seed", [(pu.ROWS, 1), (pu.ROWS, 2), (pu.ROWS, 3),
                                       (CITYSCAPES, 4), (CITYSCAPES, 5)])
def test_every_key_equals_cityscapesscripts_on_random_sets(tmp_path, rows, seed):
    rng = np.random.RandomState(seed)
    ids = case_ids(seed, 6)
    scenes = [pu.scene(rng, rows, 40, 56) for _ in ids]
    ref, res = write_case(str(tmp_path), rows, [(i, s[0]) for i, s in zip(ids, scenes)],
                          [(i, s[1], s[2]) for i, s in zip(ids, scenes)])
    n, worst = compare(anchor(str(tmp_path), rows, res), score_files(ref, res), rows)
    assert n >= 12
    print("anchor seed {}: {} keys, max abs difference {:.3g}".format(seed, n, worst))


def _one(tmp, rows, inst, seg, cats):
    ref, res = write_case(tmp, rows, [("city_000000_000001", inst)],
                          [("city_000000_000001", seg, cats)])
    return compare(anchor(tmp, rows, res), score_files(ref, res), rows)


def test_empty_predictions(tmp_path):
    """Every pixel void in the prediction: FN only, PQ 0 for every class present."""
    inst = np.full((20, 30), 2, dtype=np.int64)
    inst[2:9, 3:12] = 4000
    inst[10:18, 15:25] = 5001
    _one(str(tmp_path), pu.ROWS, inst, np.zeros((20, 30), dtype=np.int64), {})


def test_all_crowd_things_and_a_class_absent_from_the_reference(tmp_path):
    """Things only as crowd regions (never FN; a prediction on them mostly is no FP), stuff
    present; a class (sky) absent from the reference but predicted: FP, PQ 0."""
    inst = np.full((20, 30), 2, dtype=np.int64)
    inst[0:10, 0:10] = 4          # crowd of rock
    inst[12:20, 12:30] = 5        # crowd of rover
    seg = np.full((20, 30), 7, dtype=np.int64)
    seg[0:10, 0:10] = 11          # rock on the rock crowd: ignored
    seg[12:20, 12:30] = 12        # rock on rover crowd: FP of rock
    seg[0:4, 20:30] = 13          # sky where there is none: FP of sky
    _one(str(tmp_path), pu.ROWS, inst, seg, {7: 2, 11: 4, 12: 4, 13: 8})


def test_void_plus_crowd_over_half_and_void_out_of_the_union(tmp_path):
    """A predicted segment half on void and a quarter on its class's crowd is ignored (the two
    added); a match whose IoU exceeds 0.5 only once its void pixels leave the union."""
    inst = np.full((20, 40), 2, dtype=np.int64)
    inst[0:10, 0:8] = 0           # void (ignored label)
    inst[0:10, 8:12] = 4          # rock crowd
    inst[0:10, 12:16] = 3         # Sand Dune
    inst[12:20, 0:10] = 4001      # a rock of 80 px
    inst[12:20, 10:20] = 0        # void beside it
    seg = np.full((20, 40), 1, dtype=np.int64)
    seg[0:10, 4:16] = 21          # rock: 40 void + 40 crowd + 40 sand = 120: (40+40)/120 > 1/2
    seg[12:20, 3:20] = 22         # rock: 56 on the rock, 80 void: IoU 56/80 with void out
    _one(str(tmp_path), pu.ROWS, inst, seg, {1: 2, 21: 4, 22: 4})


def test_the_sample_equals_the_anchor(tmp_path):
    """The committed sample (competitions/planetscapes/): reference and submission."""
    from conftest import PLANETSCAPES
    import yaml
    ref = os.path.join(PLANETSCAPES, "reference_data", "semantic")  # the pixel tasks'
    res = os.path.join(PLANETSCAPES, "starting_kit", "panoptic", "sample_submission")
    with open(os.path.join(ref, "config.yaml")) as f:
        rows = yaml.safe_load(f)["labels"]
    from PIL import Image
    city = os.path.join(str(tmp_path), "gtFine", "val", "city")
    os.makedirs(city)
    ids = sorted(n[:-4] for n in os.listdir(os.path.join(ref, "instances")))
    for i in ids:
        shutil.copy(os.path.join(ref, "instances", i + ".png"),
                    os.path.join(city, i + "_gtFine_instanceIds.png"))
    # The anchor's image ids are the file names before _gtFine_instanceIds.png: ours.
    theirs = anchor(str(tmp_path), rows, res)
    n, worst = compare(theirs, score_files(ref, res), rows)
    assert Image.open(os.path.join(city, ids[0] + "_gtFine_instanceIds.png")).mode.startswith("I")
    print("sample: {} keys, max abs difference {:.3g}".format(n, worst))
    assert json.dumps(theirs)
    assert not math.isnan(theirs["All"]["pq"])
