"""The real anchor: cityscapesScripts' evalInstanceLevelSemanticLabeling on the same files (the
ground truth as <id>_gtFine_instanceIds.png, the same .txt files and masks).

Runs where the `cityscapesscripts` package is installed with a numpy that still has np.in1d
(CI's oldest-versions environment); skipped elsewhere. Every key the anchor computes is
compared (1e-9): `ap`, `ap50` and per class AP and AP50; a NaN of the anchor is an absent key
of ours. Where the anchor raises IndexError (nothing matched or counted for a class with
instances and predictions), ours gives that class 0: the one departure, checked on its own.
"""
import math
import os

import numpy as np
import pytest

from instance_util import scene, write_cityscapes_gt, write_instance_reference, write_submission
from scoring import engine
from scoring.registry import TASKS
from scoring.tasks.planetscapes_semantic import labels as ps_labels

pytestmark = pytest.mark.compat

if not hasattr(np, "in1d"):
    pytest.skip("cityscapesScripts calls np.in1d, which numpy {} no longer has".format(
        np.__version__), allow_module_level=True)
ev = pytest.importorskip(
    "cityscapesscripts.evaluation.evalInstanceLevelSemanticLabeling",
    reason="the anchor package cityscapesscripts is not installed (pip install -r "
           "requirements-anchor.txt installs it)")


def ours(ref, res, workers=2):
    task = TASKS["planetscapes-instance"]
    settings = task.configure({}, {"labels": "cityscapes"})
    reference = task.open_reference(ref, settings)
    fmt = task.submission_format(settings)
    found = fmt.discover(res, reference.ids)
    items = [(i, p, i) for i, p in sorted(found.files.items())]
    acc = engine.evaluate(task, reference, fmt, settings, items, workers)
    assert not acc.submission_log.fatal and not acc.reference_log.fatal
    return dict(task.summarize(acc.state, reference, settings).scores)


def anchor(tmp, gt_files, res, ids):
    args = ev.args
    args.quiet, args.JSONOutput = True, False
    args.gtInstancesFile = os.path.join(tmp, "gtInstances.json")   # its cache: per case
    args.predictionPath = os.path.abspath(res)
    cwd = os.getcwd()
    os.chdir(tmp)   # it writes matches.json into the working folder
    try:
        return ev.evaluateImgLists([os.path.join(res, i + ".txt") for i in ids], gt_files, args)
    finally:
        os.chdir(cwd)


def compare(theirs, mine):
    pairs = [(theirs["averages"]["allAp"], "ap"), (theirs["averages"]["allAp50%"], "ap50")]
    for name, d in theirs["averages"]["classes"].items():
        pairs += [(d["ap"], "ap_" + ps_labels.key_name(name)),
                  (d["ap50%"], "ap50_" + ps_labels.key_name(name))]
    worst = 0.0
    for value, key in pairs:
        got = mine.get(key)
        if math.isnan(value):
            assert got is None, (key, got)
        else:
            assert got is not None, (key, value)
            assert abs(got - value) <= 1e-9, (key, got, value)
            worst = max(worst, abs(got - value))
    assert {k for k, v in mine.items() if v is not None} <= {k for _, k in pairs}
    return len(pairs), worst


def write_case(tmp_path, images, preds):
    """images [(id, labels, instances)], preds [(id, [(mask, label, confidence)])]."""
    ref, res, gt = str(tmp_path / "ref"), str(tmp_path / "res"), str(tmp_path / "gt")
    write_instance_reference(ref, "cityscapes", images)
    write_submission(res, preds)
    return ref, res, write_cityscapes_gt(gt, images)


def random_case(tmp_path, seed, n=5, h=48, w=64):
    rng = np.random.RandomState(seed)
    images, preds = [], []
    for j in range(n):
        image_id = "city_%06d_%06d" % (seed, j)
        lab, inst, p = scene(rng, h, w)
        images.append((image_id, lab, inst))
        preds.append((image_id, p))
    return images, preds


# Seeds whose cases the anchor scores without IndexError (most do; 7 and 17 raise).
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_every_key_equals_cityscapesscripts(tmp_path, seed):
    images, preds = random_case(tmp_path, seed)
    ref, res, gts = write_case(tmp_path, images, preds)
    n, worst = compare(anchor(str(tmp_path), gts, res, [i for i, _, _ in images]), ours(ref, res))
    assert n == 2 + 2 * 8
    print("anchor seed {}: {} keys compared, max abs difference {:.3g}".format(seed, n, worst))


def _edge_images(h=48, w=64):
    lab = np.full((h, w), 7, dtype=np.uint8)
    inst = lab.astype(np.uint16)
    lab[0:12, 0:12] = 26
    inst[0:12, 0:12] = 26000
    lab[20:32, 0:12] = 26
    inst[20:32, 0:12] = 26001
    lab[0:12, 30:45] = 24
    inst[0:12, 30:45] = 24            # person crowd
    lab[40:48, 50:64] = 29
    inst[40:48, 50:64] = 29000        # caravan: ignored class with instances
    return lab, inst


def _mask(h, w, y0, y1, x0, x1):
    m = np.zeros((h, w), dtype=bool)
    m[y0:y1, x0:x1] = True
    return m


EDGE_CASES = {
    "empty_predictions": lambda h, w: [],
    "equal_confidences": lambda h, w: [(_mask(h, w, 0, 12, 0, 12), 26, 0.5),
                                       (_mask(h, w, 20, 30, 0, 12), 26, 0.5),
                                       (_mask(h, w, 20, 32, 0, 12), 26, 0.5),
                                       (_mask(h, w, 40, 48, 0, 20), 26, 0.5)],
    "class_absent_predicted": lambda h, w: [(_mask(h, w, 0, 12, 0, 12), 26, 0.9),
                                            (_mask(h, w, 0, 12, 0, 12), 27, 0.8),
                                            (_mask(h, w, 40, 48, 50, 64), 29, 0.7),
                                            (_mask(h, w, 40, 48, 50, 64), 26, 0.6),
                                            (np.zeros((h, w), dtype=bool), 26, 0.99)],
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_equal_cityscapesscripts(tmp_path, name):
    h, w = 48, 64
    lab, inst = _edge_images(h, w)
    images = [("city_000000_000000", lab, inst), ("city_000000_000001", lab, inst)]
    preds = [(i, EDGE_CASES[name](h, w)) for i, _, _ in images]
    ref, res, gts = write_case(tmp_path, images, preds)
    compare(anchor(str(tmp_path), gts, res, [i for i, _, _ in images]), ours(ref, res))


def test_all_crowd_has_no_ap_in_either(tmp_path):
    """Crowd regions only: every class NaN in the anchor; ours refuses the reference (AP is
    undefined: the organizers' problem, exit 3), never a NaN."""
    h, w = 48, 64
    lab = np.full((h, w), 7, dtype=np.uint8)
    lab[0:20, 0:20] = 26
    inst = lab.astype(np.uint16)
    images = [("city_000000_000000", lab, inst)]
    preds = [("city_000000_000000", [(_mask(h, w, 0, 20, 0, 20), 26, 0.9)])]
    ref, res, gts = write_case(tmp_path, images, preds)
    theirs = anchor(str(tmp_path), gts, res, ["city_000000_000000"])
    assert math.isnan(theirs["averages"]["allAp"])
    from scoring.problems import BrokenReference
    with pytest.raises(BrokenReference):
        ours(ref, res)


def test_where_the_anchor_raises_indexerror_the_class_scores_zero(tmp_path):
    """A car instance and one car prediction lying on a car crowd region only: the anchor has
    no example for car (IndexError); ours gives car 0."""
    h, w = 48, 64
    lab, inst = _edge_images(h, w)
    lab[30:48, 20:40] = 26
    inst[30:48, 20:40] = 26           # car crowd
    images = [("city_000000_000000", lab, inst)]
    preds = [("city_000000_000000", [(_mask(h, w, 30, 48, 20, 40), 26, 0.9)])]
    ref, res, gts = write_case(tmp_path, images, preds)
    with pytest.raises(IndexError):
        anchor(str(tmp_path), gts, res, ["city_000000_000000"])
    mine = ours(ref, res)
    assert mine["ap_car"] == 0.0 and mine["ap50_car"] == 0.0


def _with_table(rows):
    """The anchor's label table replaced by rows of a config.yaml (it reads module globals:
    labels and id2label, in the evaluator and in instances2dict)."""
    from cityscapesscripts.evaluation import instances2dict as i2d
    from cityscapesscripts.helpers.labels import Label
    labels = [Label(r["name"], r["id"], 255, r["category"], 0, r["has_instances"],
                    r["ignore_in_eval"], (0, 0, 0)) for r in rows]
    saved = [(m, name, getattr(m, name)) for m in (ev, i2d) for name in ("labels", "id2label")]
    for m in (ev, i2d):
        m.labels = labels
        m.id2label = {lab.id: lab for lab in labels}
    return saved


def test_the_sample_equals_cityscapesscripts_with_its_table(tmp_path):
    """The committed sample (make_instance_sample.py), its EXAMPLE label table given to the
    anchor: every key equal."""
    import shutil

    import yaml
    from conftest import PLANETSCAPES
    ref = os.path.join(PLANETSCAPES, "reference_data", "semantic")  # the pixel tasks'
    sub = os.path.join(PLANETSCAPES, "starting_kit", "instance", "sample_submission")
    with open(os.path.join(ref, "config.yaml")) as f:
        rows = yaml.safe_load(f)["labels"]
    res = str(tmp_path / "res")
    shutil.copytree(sub, res)
    ids = sorted(n[:-4] for n in os.listdir(os.path.join(ref, "instances")))
    gts = []
    os.makedirs(str(tmp_path / "gt"))
    for i in ids:   # the names of Cityscapes ground truth
        gts.append(str(tmp_path / "gt" / (i + "_gtFine_instanceIds.png")))
        shutil.copy(os.path.join(ref, "instances", i + ".png"), gts[-1])
    saved = _with_table(rows)
    try:
        theirs = anchor(str(tmp_path), gts, res, ids)
    finally:
        for m, name, value in saved:
            setattr(m, name, value)
    task = TASKS["planetscapes-instance"]
    settings = task.configure({}, {"labels": rows})
    reference = task.open_reference(ref, settings)
    fmt = task.submission_format(settings)
    found = fmt.discover(res, reference.ids)
    acc = engine.evaluate(task, reference, fmt, settings,
                          [(i, p, i) for i, p in sorted(found.files.items())], 2)
    mine = dict(task.summarize(acc.state, reference, settings).scores)
    n, worst = compare(theirs, mine)
    assert n == 2 + 2 * 3
    print("anchor on the sample: {} keys compared, max abs difference {:.3g}".format(n, worst))
