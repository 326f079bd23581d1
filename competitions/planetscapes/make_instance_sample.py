#!/usr/bin/env python3
"""Deterministic synthetic sample of the Planetscapes instance-level semantic labeling task.

The reference is the semantic sample's own, made by make_semantic_sample.py: one reference
folder (competitions/planetscapes/reference_data/semantic) serves the semantic, instance and
panoptic tasks (score.py --task planetscapes-instance on it; the bundle gives the instance
track its task). From its instances/<id>.png (class_id * 1000 + k on instance pixels, the label
id elsewhere; --reference DIR) this tool writes under --submission DIR (default
competitions/planetscapes/starting_kit/instance/sample_submission) per image <id>.txt, one
line `masks/<id>_<n>.png <label id> <confidence>` per predicted instance, and the binary masks
(0/255 grayscale PNGs) in masks/: the ground-truth
instances shifted, grown or shrunk, some missed, some predicted twice, some with the wrong
class, plus false positives, a prediction of the ignored class (skipped by the metric) and
confidences with ties.

    python3 competitions/planetscapes/make_instance_sample.py --force
"""
import argparse
import os
import shutil
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_semantic_sample as semantic  # noqa: E402

COMPETITION = semantic.COMPETITION
THINGS = [row[1] for row in semantic.EXAMPLE_TABLE if row[3] and not row[4]]
IGNORED_THINGS = [row[1] for row in semantic.EXAMPLE_TABLE if row[3] and row[4]]


def predict(rng, inst):
    """[(mask, label id, confidence)] for one image, from its instance image."""
    h, w = inst.shape
    out = []
    for v in np.unique(inst[inst >= 1000]):
        m = inst == v
        r = rng.rand()
        if r < 0.15:
            continue                                   # missed
        if r < 0.45:
            m = np.roll(m, rng.randint(-3, 4), axis=int(rng.randint(2)))
        label = int(v) // 1000
        if rng.rand() < 0.1:
            label = int(rng.choice(THINGS))            # wrong class
        conf = round(float(0.4 + 0.6 * rng.rand()), 2)
        out.append((m, label, conf))
        if rng.rand() < 0.15:                          # predicted twice
            out.append((np.roll(m, 1, axis=1), label, round(conf * 0.8, 2)))
    for _ in range(rng.randint(0, 4)):                 # false positives
        m = np.zeros((h, w), dtype=bool)
        y, x = rng.randint(0, h - 8), rng.randint(0, w - 8)
        m[y:y + rng.randint(6, 20), x:x + rng.randint(6, 30)] = True
        out.append((m, int(rng.choice(THINGS + IGNORED_THINGS)), round(float(rng.rand()) * 0.6, 2)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reference", default=os.path.join(COMPETITION, "reference_data", "semantic"),
                   help="the semantic sample's reference (make_semantic_sample.py)")
    p.add_argument("--submission", default=os.path.join(COMPETITION, "starting_kit", "instance",
                                                        "sample_submission"))
    p.add_argument("--images", type=int, default=12)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--force", action="store_true", help="replace an existing output folder")
    args = p.parse_args(argv)
    # The semantic generator's image names, in its order (each image's seed is its index).
    ids = ["site{:02d}_sol{:04d}_{:03d}".format(k % 3, 100 + 7 * k, k) for k in range(args.images)]
    missing = [i for i in ids if not os.path.isfile(os.path.join(args.reference, "instances",
                                                                 i + ".png"))]
    if missing:
        sys.exit("{}: no instances/{}.png: make the semantic sample first "
                 "(make_semantic_sample.py, the same --images)".format(args.reference, missing[0]))
    if os.path.exists(args.submission):
        if not args.force:
            sys.exit("{} exists (use --force to replace it)".format(args.submission))
        shutil.rmtree(args.submission)
    os.makedirs(os.path.join(args.submission, "masks"))
    for k, image_id in enumerate(ids):
        inst = np.asarray(Image.open(os.path.join(args.reference, "instances",
                                                  image_id + ".png"))).astype(np.int64)
        lines = []
        for n, (mask, label, conf) in enumerate(predict(np.random.RandomState([args.seed, k, 2]),
                                                        inst)):
            rel = "masks/{}_{}.png".format(image_id, n)
            Image.fromarray(mask.astype(np.uint8) * 255).save(os.path.join(args.submission, rel))
            lines.append("{} {} {}\n".format(rel, label, conf))
        with open(os.path.join(args.submission, image_id + ".txt"), "w") as f:
            f.writelines(lines)
    print("wrote {} images' predictions to {}".format(args.images, args.submission))


if __name__ == "__main__":
    main()
