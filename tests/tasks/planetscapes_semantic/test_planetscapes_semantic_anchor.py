"""The real anchor: cityscapesScripts' evalPixelLevelSemanticLabeling on the same files.

Runs where the `cityscapesscripts` package is installed with a numpy that still has np.in1d
(< 2.4): CI's oldest-versions environment (the worker image's Python 3.7 and numpy 1.16, then
`pip install --no-deps -r requirements-anchor.txt`), where CI fails if it skips. Elsewhere it
is skipped.
Every key the anchor computes is compared: per class and per category IoU and iIoU and the four
means; a NaN of the anchor must be an absent key of ours.
"""
import math
import os

import numpy as np
import pytest

from planetscapes_util import save_16bit, write_predictions, write_reference
from scoring import engine
from scoring.registry import TASKS
from scoring.tasks.planetscapes_semantic import cityscapes_labels, labels as ps_labels

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

if not hasattr(np, "in1d"):
    pytest.skip("cityscapesScripts calls np.in1d, which numpy {} no longer has (the anchor runs "
                "in the oldest-versions environment)".format(np.__version__),
                allow_module_level=True)
ev = pytest.importorskip(
    "cityscapesscripts.evaluation.evalPixelLevelSemanticLabeling",
    reason="the anchor package cityscapesscripts is not installed (pip install -r "
           "requirements-anchor.txt installs it)")

IDS = [lab[1] for lab in cityscapes_labels.LABELS if lab[1] >= 0]
STUFF = [lab[1] for lab in cityscapes_labels.LABELS if lab[1] >= 0 and not lab[4]]
THINGS = [lab[1] for lab in cityscapes_labels.LABELS if lab[4]]


def scene(rng, h, w):
    """A Cityscapes-format (labels, instances, prediction) triple: stuff blocks, then rectangles
    of instance classes (instances k = 0.., some crowd), then a prediction with block errors,
    ignored-id and same-category confusions."""
    lab = np.zeros((h, w), dtype=np.uint8)
    for _ in range(8):
        y, x = rng.randint(0, h), rng.randint(0, w)
        lab[y:y + rng.randint(4, h), x:x + rng.randint(4, w)] = rng.choice(STUFF)
    inst = lab.astype(np.uint16)
    count = {}
    for _ in range(rng.randint(0, 12)):
        c = int(rng.choice(THINGS))
        y, x = rng.randint(0, h), rng.randint(0, w)
        sl = np.s_[y:y + rng.randint(1, h // 3), x:x + rng.randint(1, w // 3)]
        lab[sl] = c
        if rng.rand() < 0.15:
            inst[sl] = c  # crowd: the label id, no instance
        else:
            k = count.get(c, 0)
            count[c] = k + 1
            inst[sl] = c * 1000 + k  # k = 0 too: 1000 * c
    pred = lab.copy()
    for _ in range(6):
        y, x = rng.randint(0, h), rng.randint(0, w)
        pred[y:y + rng.randint(1, h // 2), x:x + rng.randint(1, w // 2)] = rng.choice(IDS)
    noise = rng.rand(h, w) < 0.05
    pred[noise] = rng.choice(IDS, size=int(noise.sum()))
    pred[(lab == 26) & (rng.rand(h, w) < 0.3)] = 29  # caravan on car
    return lab, inst, pred


def anchor(gt_files, pred_files, sizes=None):
    args = ev.args
    args.quiet, args.JSONOutput, args.evalPixelAccuracy = True, False, False
    args.evalInstLevelScore = True
    saved = dict(args.avgClassSize)
    if sizes:
        args.avgClassSize.update(sizes)
    try:
        return ev.evaluateImgLists(pred_files, gt_files, args)
    finally:
        args.avgClassSize.clear()
        args.avgClassSize.update(saved)


def ours(ref_root, res_root, labels="cityscapes"):
    """Our task through the shared engine (task interface), 2 workers."""
    task = TASKS["planetscapes-semantic"]
    config = task.configure({}, {"labels": labels})
    reference = task.open_reference(ref_root, config)
    fmt = task.submission_format(config)
    found = fmt.discover(res_root, reference.ids)
    items = [(i, p, i) for i, p in sorted(found.files.items())]
    acc = engine.evaluate(task, reference, fmt, config, items, 2)
    assert not acc.submission_log.fatal and not acc.reference_log.fatal
    return dict(task.summarize(acc.state, reference, config).scores)


def compare(theirs, mine):
    """(keys compared, max abs difference); asserts NaN <-> absent and equality."""
    pairs = [("averageScoreClasses", "iou_class"), ("averageScoreInstClasses", "iiou_class"),
             ("averageScoreCategories", "iou_category"),
             ("averageScoreInstCategories", "iiou_category")]
    for group, prefix in (("classScores", "iou_class_"), ("classInstScores", "iiou_class_"),
                          ("categoryScores", "iou_category_"),
                          ("categoryInstScores", "iiou_category_")):
        for name in theirs[group]:
            pairs.append(((group, name), prefix + ps_labels.key_name(name)))
    worst, n = 0.0, 0
    for where, key in pairs:
        value = theirs[where[0]][where[1]] if isinstance(where, tuple) else theirs[where]
        got = mine.get(key)
        if math.isnan(value):
            assert got is None, (key, got)
        else:
            assert got is not None, (key, value)
            worst = max(worst, abs(got - value))
            assert got == pytest.approx(value, rel=1e-12, abs=1e-15), key
        n += 1
    # and no key of ours that the anchor does not have
    assert {k for k, v in mine.items() if v is not None} <= {k for _, k in pairs}
    return n, worst


def write_case(tmp_path, seed, n_images=6, h=48, w=64, labels="cityscapes"):
    from PIL import Image
    rng = np.random.RandomState(seed)
    ref, res, gt = tmp_path / "ref", tmp_path / "res", tmp_path / "gt"
    os.makedirs(str(gt))
    images, preds, gt_files, pred_files = [], [], [], []
    for j in range(n_images):
        image_id = "city_%06d_%06d" % (seed, j)
        lab, inst, pred = scene(rng, h, w)
        images.append((image_id, lab, inst))
        preds.append((image_id, pred))
        stem = str(gt / image_id)
        Image.fromarray(lab).save(stem + "_gtFine_labelIds.png")
        save_16bit(inst, stem + "_gtFine_instanceIds.png")
        gt_files.append(stem + "_gtFine_labelIds.png")
        pred_files.append(str(res / (image_id + ".png")))
    write_reference(str(ref), labels, images)
    write_predictions(str(res), preds)
    return str(ref), str(res), gt_files, pred_files, images


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_every_key_equals_cityscapesscripts(tmp_path, seed):
    ref, res, gt_files, pred_files, _ = write_case(tmp_path, seed)
    n, worst = compare(anchor(gt_files, pred_files), ours(ref, res))
    assert n == 4 + 34 * 2 + 8 * 2  # every class and category the anchor lists, and the means
    print("anchor seed {}: {} keys compared, max abs difference {:.3g}".format(seed, n, worst))


def test_default_average_sizes_equal_the_anchor_given_the_mean_sizes(tmp_path):
    """Without average_instance_size, each class's average is the mean size of its instances
    over the reference: the anchor given those means (computed here, naively) agrees."""
    rows = cityscapes_labels.rows()
    ref, res, gt_files, pred_files, images = write_case(tmp_path, 9, n_images=8, labels=rows)
    sizes = {}
    for _, _, inst in images:
        for v in np.unique(inst[inst > 1000]):
            sizes.setdefault(int(v) // 1000, []).append(int((inst == v).sum()))
    names = {lab[1]: lab[0] for lab in cityscapes_labels.LABELS}
    means = {names[c]: sum(s) / float(len(s)) for c, s in sizes.items()}
    assert len(means) >= 6
    n, worst = compare(anchor(gt_files, pred_files, means), ours(ref, res, rows))
    print("anchor, default sizes: {} keys compared, max abs difference {:.3g}".format(n, worst))
