#!/usr/bin/env python3
"""Deterministic synthetic sample of the Planetscapes panoptic segmentation task.

The panoptic task scores the semantic task's reference (one reference folder for the pixel
tasks: competitions/planetscapes/reference_data/semantic, made by make_semantic_sample.py;
score.py --task planetscapes-panoptic on it, and the bundle gives the panoptic track its task).
From that reference (--semantic DIR) this tool writes under --submission DIR (default
competitions/planetscapes/starting_kit/panoptic/sample_submission) an imperfect prediction in
COCO's panoptic format:

    predictions.json        {"annotations": [{"image_id", "file_name", "segments_info"}, ...]}
    predictions/<id>.png    8-bit RGB, segment id = R + 256 G + 256^2 B (0: void)

made from the reference's segments: some shifted, some relabelled (rock and boulder confused),
some left void, some split, plus a few false segments. Each image's numpy RandomState is seeded
with (seed, index): the same files with numpy 1.16 and 2.x. Needs Python 3.7+, numpy, Pillow.

    python3 competitions/planetscapes/make_panoptic_sample.py --force
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
from PIL import Image

COMPETITION = os.path.dirname(os.path.abspath(__file__))
SEMANTIC = os.path.join(COMPETITION, "reference_data", "semantic")
CONFUSIONS = {9: 10, 10: 9, 5: 3}


def table(config_text):
    """(evaluated ids, thing ids, ignored ids) from the semantic sample's label rows."""
    import yaml
    rows = yaml.safe_load(config_text)["labels"]
    evaluated = [r["id"] for r in rows if r["id"] >= 0 and not r["ignore_in_eval"]]
    things = [r["id"] for r in rows if r["has_instances"]]
    ignored = [r["id"] for r in rows if r["id"] >= 0 and r["ignore_in_eval"]]
    return evaluated, things, ignored


def predict(rng, inst, evaluated, ignored):
    """(segment map, {segment id: category}) degrading the reference segments."""
    h, w = inst.shape
    seg = np.zeros((h, w), dtype=np.int64)
    cats = {}
    next_id = [int(rng.randint(1, 1 << 20))]

    def new(cat):
        next_id[0] += int(rng.randint(1, 4096))
        cats[next_id[0]] = cat
        return next_id[0]
    for v in np.unique(inst).tolist():
        label = v if v < 1000 else v // 1000
        if label in ignored or rng.rand() < 0.08:
            continue                       # void in the prediction
        mask = inst == v
        cat = CONFUSIONS.get(label, label) if rng.rand() < 0.15 else label
        if cat not in evaluated:
            continue
        if v >= 1000 and rng.rand() < 0.4:  # a shifted instance
            mask = np.roll(mask, (int(rng.randint(-3, 4)), int(rng.randint(-6, 7))), axis=(0, 1))
        seg[mask] = new(cat)
        if v < 1000 and rng.rand() < 0.3:   # a stuff region split in two
            ys = np.flatnonzero(mask.any(axis=1))
            if ys.size > 4:
                cut = int(ys[ys.size // 2])
                lower = mask.copy()
                lower[:cut] = False
                seg[lower] = new(cat)
    for _ in range(int(rng.randint(0, 4))):  # false segments
        y, x = int(rng.randint(0, h - 8)), int(rng.randint(0, w - 8))
        seg[y:y + int(rng.randint(4, 16)), x:x + int(rng.randint(4, 24))] = \
            new(int(rng.choice(evaluated)))
    present = set(np.unique(seg).tolist()) - {0}
    return seg, {s: c for s, c in cats.items() if s in present}


def rgb(seg):
    return np.stack([seg % 256, seg // 256 % 256, seg // 65536 % 256], axis=2).astype(np.uint8)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--semantic", default=SEMANTIC, help="the semantic sample's reference")
    p.add_argument("--submission", default=os.path.join(COMPETITION, "starting_kit", "panoptic",
                                                        "sample_submission"))
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--force", action="store_true", help="replace an existing output folder")
    args = p.parse_args(argv)
    if os.path.exists(args.submission):
        if not args.force:
            sys.exit("{} exists (use --force to replace it)".format(args.submission))
        shutil.rmtree(args.submission)
    with open(os.path.join(args.semantic, "config.yaml")) as f:
        config = f.read()
    evaluated, _, ignored = table(config)
    folder = os.path.join(args.submission, "predictions")
    os.makedirs(folder)
    ids = sorted(n[:-4] for n in os.listdir(os.path.join(args.semantic, "instances"))
                 if n.endswith(".png"))
    annotations = []
    for k, image_id in enumerate(ids):
        inst = np.asarray(Image.open(os.path.join(args.semantic, "instances", image_id + ".png")))
        seg, cats = predict(np.random.RandomState([args.seed, k, 2]), inst.astype(np.int64),
                            evaluated, ignored)
        Image.fromarray(rgb(seg), "RGB").save(os.path.join(folder, image_id + ".png"))
        annotations.append({"image_id": image_id, "file_name": image_id + ".png",
                            "segments_info": [{"id": s, "category_id": c}
                                              for s, c in sorted(cats.items())]})
    with open(os.path.join(args.submission, "predictions.json"), "w") as f:
        json.dump({"annotations": annotations}, f, indent=1)
    print("wrote {} images' predictions to {}".format(len(ids), args.submission))


if __name__ == "__main__":
    main()
