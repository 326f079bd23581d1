"""Helpers shared by the Planetscapes tests: score arrays in-process, write reference folders."""
import os

import numpy as np
import yaml
from PIL import Image

from scoring.tasks.planetscapes_semantic import labels as ps_labels
from scoring.tasks.planetscapes_semantic import metric, reference

# A small table exercising every rule: an ignored class with instances in a category with
# instances (caravan-like), an id-less label, a category without instances, an ignored stuff class.
ROWS = [
    {"name": "void", "id": 0, "category": "void", "has_instances": False, "ignore_in_eval": True},
    {"name": "ego", "id": 1, "category": "void", "has_instances": False, "ignore_in_eval": True},
    {"name": "ground", "id": 2, "category": "flat", "has_instances": False, "ignore_in_eval": False},
    {"name": "Sand Dune", "id": 3, "category": "flat", "has_instances": False,
     "ignore_in_eval": False},
    {"name": "rock", "id": 4, "category": "object", "has_instances": True, "ignore_in_eval": False},
    {"name": "rover", "id": 5, "category": "vehicle", "has_instances": True,
     "ignore_in_eval": False},
    {"name": "lander", "id": 6, "category": "vehicle", "has_instances": True,
     "ignore_in_eval": True},
    {"name": "probe", "id": 7, "category": "vehicle", "has_instances": True,
     "ignore_in_eval": False},
    {"name": "sky", "id": 8, "category": "sky", "has_instances": False, "ignore_in_eval": False},
    {"name": "antenna", "id": -1, "category": "vehicle", "has_instances": False,
     "ignore_in_eval": True},
]


def table(rows=None, sizes=None):
    config = {"labels": ROWS if rows is None else rows}
    if sizes:
        config["average_instance_size"] = sizes
    return ps_labels.load(config)


def score_arrays(tab, images, workers_split=None):
    """Score [(labels, instances, prediction)] through check_truth + update + merge; returns
    {key: value} with undefined values absent. workers_split: list of index lists, one state per
    list, merged in that order (to test merge invariance)."""
    spec = metric.MetricSpec(tab)
    checks = reference.CheckSpec(tab)
    groups = workers_split or [list(range(len(images)))]
    total = metric.SemanticState(spec)
    for group in groups:
        state = metric.SemanticState(spec)
        for i in group:
            lab, inst, pred = images[i]
            truth = reference.check_truth(np.asarray(lab, dtype=np.uint8),
                                          np.asarray(inst, dtype=np.uint16), checks, "l", "i")
            state.update(str(i), np.asarray(pred, dtype=np.uint8), truth)
        total.merge(state)
    result = metric.summarize(total, tab)
    return {k: v for k, v in metric.score_list(result, tab) if v is not None}


def random_images(rng, rows, n, h, w, instance_prob=0.6, noise=0.3):
    """Random label/instance/prediction triples that satisfy the reference format."""
    ids = [r["id"] for r in rows if r["id"] >= 0]
    inst_classes = [r["id"] for r in rows if r["id"] >= 0 and r["has_instances"]]
    out = []
    for _ in range(n):
        lab = rng.choice(ids, size=(h, w)).astype(np.uint8)
        inst = lab.astype(np.uint16).copy()
        for c in inst_classes:
            where = lab == c
            if not where.any() or rng.rand() > instance_prob:
                continue
            # split the class's pixels into up to 3 instances, some left as crowd (value c)
            k = rng.randint(0, 4, size=where.sum())
            vals = np.where(k == 3, c, c * 1000 + k)
            inst[where] = vals
        pred = lab.copy()
        flip = rng.rand(h, w) < noise
        pred[flip] = rng.choice(ids, size=int(flip.sum()))
        out.append((lab, inst, pred))
    return out


def write_reference(root, rows_or_name, images, sizes=None, task="planetscapes-semantic"):
    """config.yaml + labels/ + instances/ for [(id, labels, instances)]."""
    os.makedirs(os.path.join(root, "labels"), exist_ok=True)
    os.makedirs(os.path.join(root, "instances"), exist_ok=True)
    config = {"task": task, "labels": rows_or_name}
    if sizes:
        config["average_instance_size"] = sizes
    with open(os.path.join(root, "config.yaml"), "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    for image_id, lab, inst in images:
        Image.fromarray(np.asarray(lab, dtype=np.uint8)).save(
            os.path.join(root, "labels", image_id + ".png"))
        save_16bit(np.asarray(inst), os.path.join(root, "instances", image_id + ".png"))


def write_case(base, rows, ids, images):
    """A raw reference (base/raw) and its submission (base/res) of [(labels, instances,
    prediction)], one per id; returns their paths."""
    raw, res = os.path.join(str(base), "raw"), os.path.join(str(base), "res")
    write_reference(raw, rows, [(i, lab, inst) for i, (lab, inst, _) in zip(ids, images)])
    write_predictions(res, [(i, pred) for i, (_, _, pred) in zip(ids, images)])
    return raw, res


def save_16bit(arr, path):
    """A 16-bit grayscale PNG (Pillow writes mode 'I;16' as bit depth 16)."""
    arr = np.ascontiguousarray(arr, dtype="<u2")
    Image.frombuffer("I;16", (arr.shape[1], arr.shape[0]), arr.tobytes(), "raw", "I;16", 0, 1).save(path)


def write_predictions(root, images):
    os.makedirs(root, exist_ok=True)
    for image_id, pred in images:
        Image.fromarray(np.asarray(pred, dtype=np.uint8)).save(os.path.join(root, image_id + ".png"))
