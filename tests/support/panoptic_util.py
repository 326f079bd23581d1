"""Panoptic test data: scenes (an instance image and a predicted segment map with its
categories), written as the semantic task's reference and as a COCO panoptic submission."""
import json
import os

import numpy as np
from PIL import Image

import planetscapes_util

# A small table: two ignored labels (one with instances), stuff and things; no evaluated id 0
# (the semantic tests' table without its id-less label and its second void one).
ROWS = [r for r in planetscapes_util.ROWS if r["name"] not in ("ego", "antenna")]


def classes_of(rows):
    ids = [r["id"] for r in rows if r["id"] >= 0]
    stuff = [r["id"] for r in rows if r["id"] >= 0 and not r["has_instances"]]
    things = [r["id"] for r in rows if r["id"] >= 0 and r["has_instances"]]
    evaluated = [r["id"] for r in rows if r["id"] >= 0 and not r["ignore_in_eval"]]
    return ids, stuff, things, evaluated


def scene(rng, rows, h, w, crowd=0.2, things_max=10):
    """(instances, predicted ids, {segment id: category}) of one image: stuff blocks, thing
    rectangles (instances k = 0.., some crowd), then a prediction that copies the reference's
    segments with shifted, merged, relabelled and void parts and random segment ids."""
    ids, stuff, things, evaluated = classes_of(rows)
    inst = np.full((h, w), rng.choice(stuff), dtype=np.int64)
    for _ in range(rng.randint(0, 6)):
        y, x = rng.randint(0, h), rng.randint(0, w)
        inst[y:y + rng.randint(1, h + 1), x:x + rng.randint(1, w + 1)] = rng.choice(ids)
    count = {}
    for _ in range(rng.randint(0, things_max)):
        c = int(rng.choice(things))
        y, x = rng.randint(0, h), rng.randint(0, w)
        sl = np.s_[y:y + rng.randint(1, max(2, h // 2)), x:x + rng.randint(1, max(2, w // 2))]
        if rng.rand() < crowd:
            inst[sl] = c
        else:
            k = count.get(c, 0)
            count[c] = k + 1
            inst[sl] = c * 1000 + k
    # The prediction: each reference value becomes a predicted segment (its class, sometimes
    # another), then blocks of noise: another segment, void, a new segment.
    values = np.unique(inst)
    seg = np.zeros((h, w), dtype=np.int64)
    cats = {}
    used = set()

    def new_id():
        while True:
            s = int(rng.randint(1, 1 << 24))
            if s not in used:
                used.add(s)
                return s
    for v in values:
        lab = int(v) if v < 1000 else int(v) // 1000
        if rng.rand() < 0.1:
            continue  # left void
        s = new_id()
        seg[inst == v] = s
        cats[s] = lab if lab in evaluated and rng.rand() > 0.1 else int(rng.choice(evaluated))
    for _ in range(rng.randint(0, 5)):
        y, x = rng.randint(0, h), rng.randint(0, w)
        sl = np.s_[y:y + rng.randint(1, h + 1), x:x + rng.randint(1, w + 1)]
        r = rng.rand()
        if r < 0.3:
            seg[sl] = 0
        else:
            s = new_id()
            seg[sl] = s
            cats[s] = int(rng.choice(evaluated))
    present = set(int(v) for v in np.unique(seg)) - {0}
    cats = {s: c for s, c in cats.items() if s in present}
    return inst, seg, cats


def labels_of(inst):
    return np.where(inst < 1000, inst, inst // 1000).astype(np.uint8)


def write_reference(root, rows, images, task="planetscapes-panoptic"):
    """[(id, instances)] as the semantic task's raw layout with `task:` set."""
    planetscapes_util.write_reference(root, rows, [(i, labels_of(inst), inst)
                                                   for i, inst in images], task=task)


def id_to_rgb(seg):
    seg = np.asarray(seg, dtype=np.int64)
    return np.stack([seg % 256, seg // 256 % 256, seg // 65536 % 256], axis=2).astype(np.uint8)


def write_submission(res, preds, name="predictions"):
    """[(id, segment map, {segment id: category})] as name.json + name/<id>.png."""
    folder = os.path.join(res, name)
    os.makedirs(folder, exist_ok=True)
    anns = []
    for image_id, seg, cats in preds:
        Image.fromarray(id_to_rgb(seg), "RGB").save(os.path.join(folder, image_id + ".png"))
        anns.append({"image_id": image_id, "file_name": image_id + ".png",
                     "segments_info": [{"id": int(s), "category_id": int(c)}
                                       for s, c in sorted(cats.items())]})
    with open(os.path.join(res, name + ".json"), "w") as f:
        json.dump({"annotations": anns}, f)
    return folder
