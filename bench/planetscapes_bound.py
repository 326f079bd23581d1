#!/usr/bin/env python3
"""A lower bound of any Planetscapes raw-layout run: the least a scorer must do, and nothing else.

    python3 bench/planetscapes_bound.py REF PRED --workers W [--decode-only]

For every image of REF (labels/<id>.png, instances/<id>.png) and PRED (<id>.png): the three
PNGs decoded with the scorer's own decoder (formats/label_png/pillow_array.py: straight into numpy, no
copy) and, unless --decode-only, one confusion count (labels * 34 + prediction, one bincount),
through the scorer's own engine (the same fork pool, chunks and freed-memory setting). No check
of the reference or of the prediction, no instance counts (iIoU), no report, no confidence
interval. Start-up (interpreter, numpy, Pillow) is included, as in the scorer's rows.

The scorer cannot take less wall time than this on the same machine: bench/planetscapes.py runs
it beside score.py, so a target below the bound is visible as such. Prints the pixels counted.
"""
import argparse
import io
import os
import sys

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scoring_program"))

from scoring import engine  # noqa: E402
from scoring.formats.label_png.pillow_array import load_array  # noqa: E402
from scoring.tasks.planetscapes_semantic.reference import keep_freed_memory  # noqa: E402

K = 34  # Cityscapes label ids 0..33


def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    with Image.open(io.BytesIO(data)) as img:
        return load_array(img)


def count(context, ids):
    keep_freed_memory()
    ref, pred = context["ref"], context["pred"]
    matrix = np.zeros(K * K, dtype=np.int64)
    for i in ids:
        labels = decode(os.path.join(ref, "labels", i + ".png"))
        decode(os.path.join(ref, "instances", i + ".png"))
        prediction = decode(os.path.join(pred, i + ".png"))
        if context["confusion"]:
            key = labels.astype(np.uint16)
            key *= K
            key += prediction
            matrix += np.bincount(key.ravel().astype(np.intp), minlength=K * K)
    return matrix


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("ref")
    p.add_argument("pred")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--decode-only", action="store_true")
    args = p.parse_args(argv)
    ids = sorted(f[:-4] for f in os.listdir(os.path.join(args.ref, "labels"))
                 if f.endswith(".png"))
    total = [np.zeros(K * K, dtype=np.int64)]

    def absorb(matrix):
        total[0] += matrix

    engine.map_chunks(count, {"ref": args.ref, "pred": args.pred,
                              "confusion": not args.decode_only},
                      engine.chunked(ids, args.workers), args.workers, absorb)
    print(int(total[0].sum()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
