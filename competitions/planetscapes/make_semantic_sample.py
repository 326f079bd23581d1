#!/usr/bin/env python3
"""Deterministic synthetic sample of the Planetscapes pixel-level semantic labeling task.

Writes, under --out DIR (default competitions/planetscapes/reference_data/semantic):

    config.yaml             task: planetscapes-semantic and an EXAMPLE label table
    labels/<id>.png         8-bit label ids
    instances/<id>.png      16-bit: class_id * 1000 + k on instance pixels, the label id elsewhere

and under --submission DIR (default competitions/planetscapes/starting_kit/semantic/
sample_submission) an imperfect prediction <id>.png per image (8-bit label ids) made by
degrading the ground truth.

The label table is an EXAMPLE made up for this sample (planetary-looking classes chosen to
exercise every rule of the metric: ignored labels, classes with and without instances, an ignored
class with instances inside a category with instances). The real Planetscapes table is the
organizers'; put it in config.yaml.

Every image comes from its own numpy RandomState seeded with (seed, index), and the geometry uses
integer arithmetic only, so the same seed gives the same files with numpy 1.16 and 2.x.
Needs Python 3.7+, numpy and Pillow.

    python3 competitions/planetscapes/make_semantic_sample.py --force
"""
import argparse
import os
import shutil
import sys

import numpy as np
from PIL import Image

COMPETITION = os.path.dirname(os.path.abspath(__file__))

# name, id, category, has_instances, ignore_in_eval
EXAMPLE_TABLE = [
    ("unlabeled", 0, "void", False, True),
    ("out of view", 1, "void", False, True),
    ("shadow", 2, "void", False, True),
    ("regolith", 3, "ground", False, False),
    ("bedrock", 4, "ground", False, False),
    ("sand", 5, "ground", False, False),
    ("crater", 6, "landform", False, False),
    ("ridge", 7, "landform", False, False),
    ("sky", 8, "sky", False, False),
    ("rock", 9, "object", True, False),
    ("boulder", 10, "object", True, False),
    ("rover", 11, "hardware", True, False),
    ("lander", 12, "hardware", True, True),
]

CONFIG_HEAD = """\
# Planetscapes pixel-level semantic labeling: SAMPLE reference made by
# competitions/planetscapes/make_semantic_sample.py.
#
# THE LABEL TABLE BELOW IS AN EXAMPLE, made up for this synthetic sample. The real Planetscapes
# label table is the organizers': replace it with theirs (same fields), or write
# `labels: cityscapes` to score Cityscapes itself.
#
# Fields: name, id (the value in label images), category, has_instances, ignore_in_eval;
# trainId and color are optional and unused. Optional `average_instance_size: {name: pixels}`;
# without it each class's average is the mean size of its instances in this reference.
task: planetscapes-semantic
labels:
"""

GROUND = [3, 4, 5]
THINGS = {"rock": 9, "boulder": 10, "rover": 11, "lander": 12}


def ellipse(h, w, cy, cx, ry, rx):
    """Boolean mask of an axis-aligned ellipse, integer arithmetic only."""
    y, x = np.ogrid[:h, :w]
    dy, dx = (y - cy).astype(np.int64), (x - cx).astype(np.int64)
    return dy * dy * (rx * rx) + dx * dx * (ry * ry) <= (rx * rx) * (ry * ry)


def draw_scene(rng, h, w, stuff, things, sky=None, ridge=None, max_things=14, crowd=0.15):
    """(labels uint8, instances uint16) of one scene: a horizon with sky and a ridge, ground
    patches, stuff ellipses, then things (ellipses or boxes), each an instance k = 0, 1, ... of
    its class or, with probability `crowd`, unlabelled crowd (the class id, no instance).
    stuff: ids for the ground; things: {class id: (min, max) radius as a fraction of h}."""
    lab = np.full((h, w), stuff[0], dtype=np.uint8)
    horizon = int(h * (0.2 + 0.2 * rng.rand()))
    if sky is not None:
        lab[:horizon] = sky
    if ridge is not None:
        cols = np.arange(w)
        period = max(8, int(w * (0.2 + 0.3 * rng.rand())))
        tri = np.abs((cols % period) - period // 2)
        top = horizon - (tri * int(h * 0.12) // max(1, period // 2))
        rows = np.arange(h)[:, None]
        lab[(rows >= top[None, :]) & (rows < horizon + h // 20)] = ridge
    for _ in range(rng.randint(3, 8)):
        cy, cx = rng.randint(horizon, h), rng.randint(0, w)
        ry, rx = rng.randint(max(2, h // 20), max(3, h // 4)), rng.randint(max(2, w // 20), max(3, w // 4))
        lab[ellipse(h, w, cy, cx, ry, rx) & (np.arange(h)[:, None] >= horizon)] = \
            stuff[rng.randint(0, len(stuff))]
    inst = lab.astype(np.uint16)
    count = {}
    ids = sorted(things)
    for _ in range(rng.randint(0, max_things + 1)):
        c = ids[rng.randint(0, len(ids))]
        lo, hi = things[c]
        r = max(1, int(h * (lo + (hi - lo) * rng.rand())))
        cy, cx = rng.randint(horizon, h), rng.randint(0, w)
        if rng.rand() < 0.5:
            mask = ellipse(h, w, cy, cx, r, max(1, r * rng.randint(2, 5) // 2))
        else:
            mask = np.zeros((h, w), dtype=bool)
            mask[max(0, cy - r):cy + r, max(0, cx - 2 * r):cx + 2 * r] = True
        lab[mask] = c
        if rng.rand() < crowd:
            inst[mask] = c
        else:
            k = count.get(c, 0)
            count[c] = k + 1
            inst[mask] = c * 1000 + k
    return lab, inst


def degrade(rng, lab, ids, confusions, ignored_id):
    """A plausible imperfect prediction: shifted boundaries, confused patches, class swaps,
    some pixels predicted as an ignored id."""
    h, w = lab.shape
    pred = lab.copy()
    dy, dx = rng.randint(-2, 3), rng.randint(-3, 4)
    pred = np.roll(np.roll(pred, dy, axis=0), dx, axis=1)
    for a, b in confusions:
        if rng.rand() < 0.5:
            pred[(lab == a) & (np.arange(w)[None, :] < rng.randint(0, w))] = b
    for _ in range(rng.randint(1, 5)):
        y, x = rng.randint(0, h), rng.randint(0, w)
        pred[y:y + rng.randint(2, max(3, h // 6)), x:x + rng.randint(2, max(3, w // 6))] = \
            ids[rng.randint(0, len(ids))]
    y, x = rng.randint(0, h), rng.randint(0, w)
    pred[y:y + h // 10, x:x + w // 12] = ignored_id
    return pred


def save_16bit(arr, path):
    arr = np.ascontiguousarray(arr, dtype="<u2")
    Image.frombuffer("I;16", (arr.shape[1], arr.shape[0]), arr.tobytes(), "raw", "I;16",
                     0, 1).save(path)


def config_text():
    rows = []
    for name, i, cat, inst, ign in EXAMPLE_TABLE:
        rows.append("  - {{name: {}, id: {}, category: {}, has_instances: {}, "
                    "ignore_in_eval: {}}}".format(name, i, cat, str(inst).lower(),
                                                  str(ign).lower()))
    return CONFIG_HEAD + "\n".join(rows) + "\n"


def sample_scene(rng, h, w):
    sizes = {THINGS["rock"]: (0.02, 0.06), THINGS["boulder"]: (0.06, 0.12),
             THINGS["rover"]: (0.08, 0.14), THINGS["lander"]: (0.12, 0.2)}
    lab, inst = draw_scene(rng, h, w, GROUND + [6], sizes, sky=8, ridge=7)
    shadow = (np.roll(lab, 3, axis=1) == THINGS["boulder"]) & (lab != THINGS["boulder"])
    lab[shadow] = 2
    inst[shadow] = 2
    return lab, inst


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # The defaults are the repository's sample folders, wherever the tool is run from.
    p.add_argument("--out", default=os.path.join(COMPETITION, "reference_data", "semantic"))
    p.add_argument("--submission", default=os.path.join(COMPETITION, "starting_kit", "semantic",
                                                        "sample_submission"))
    p.add_argument("--images", type=int, default=12)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--height", type=int, default=128)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--force", action="store_true", help="replace existing output folders")
    args = p.parse_args(argv)
    for folder in (args.out, args.submission):
        if os.path.exists(folder):
            if not args.force:
                sys.exit("{} exists (use --force to replace it)".format(folder))
            shutil.rmtree(folder)
    for folder in (os.path.join(args.out, "labels"), os.path.join(args.out, "instances"),
                   args.submission):
        os.makedirs(folder)
    with open(os.path.join(args.out, "config.yaml"), "w") as f:
        f.write(config_text())
    ids = [row[1] for row in EXAMPLE_TABLE]
    confusions = [(9, 10), (10, 9), (5, 3), (11, 12), (4, 3)]
    for k in range(args.images):
        image_id = "site{:02d}_sol{:04d}_{:03d}".format(k % 3, 100 + 7 * k, k)
        lab, inst = sample_scene(np.random.RandomState([args.seed, k, 0]), args.height,
                                 args.width)
        pred = degrade(np.random.RandomState([args.seed, k, 1]), lab, ids, confusions, 0)
        Image.fromarray(lab).save(os.path.join(args.out, "labels", image_id + ".png"))
        save_16bit(inst, os.path.join(args.out, "instances", image_id + ".png"))
        Image.fromarray(pred).save(os.path.join(args.submission, image_id + ".png"))
    print("wrote {} images to {} and {}".format(args.images, args.out, args.submission))


if __name__ == "__main__":
    main()
