#!/usr/bin/env python3
"""Benchmark of the Planetscapes panoptic task on Cityscapes-sized images (issue 34, section 4):
score.py against the PNG decode floor and against cityscapesScripts' own evaluator.

    python3 bench/panoptic.py [--images 48] [--workers 2] [--anchor-python PY] [--report FILE]

Writes --images synthetic 2048 x 1024 images (Cityscapes' label table: stuff regions and about
40 thing instances each, some crowd; a prediction of about 60 segments per image that shifts,
merges, relabels and drops them) as our reference and submission, and the instance images under
Cityscapes names. Rows, each a separate process, wall time, best of --repeat:

- floor: the least any scorer must do, the two PNGs of every image decoded (the prediction's
  RGB by Pillow, the 16-bit instance image by the scorer's own decoder), in --workers processes
  of the scorer's own pool (scoring/engine.py), nothing else;
- score.py --workers W: the whole scorer (checks, metric, interval, report), start-up included;
- the anchor: cityscapesScripts' createPanopticImgs (the reference's panoptic PNGs, once per
  dataset) and evalPanopticSemanticLabeling.evaluatePanoptic, which splits the images over
  multiprocessing.cpu_count() processes, in --anchor-python (numpy < 2.4, cityscapesscripts).

The scores of score.py and of the anchor are compared (the largest difference is printed).
Exit status 0, 2 bad usage.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scoring_program"))

from scoring.tasks.planetscapes_semantic import cityscapes_labels  # noqa: E402

ROWS = cityscapes_labels.rows()
STUFF = [r["id"] for r in ROWS if r["id"] >= 0 and not r["has_instances"]]
THINGS = [r["id"] for r in ROWS if r["has_instances"]]
EVALUATED = [r["id"] for r in ROWS if r["id"] >= 0 and not r["ignore_in_eval"]]


def save_16bit(arr, path):
    arr = np.ascontiguousarray(arr, dtype="<u2")
    Image.frombuffer("I;16", (arr.shape[1], arr.shape[0]), arr.tobytes(), "raw", "I;16",
                     0, 1).save(path)


def scene(rng, h, w):
    """(instance image, segment map, {segment id: category}) of one image."""
    inst = np.full((h, w), 23, dtype=np.int64)           # sky
    inst[h // 3:] = 7                                    # road
    for _ in range(14):
        y, x = rng.randint(0, h), rng.randint(0, w)
        inst[y:y + rng.randint(h // 16, h // 3), x:x + rng.randint(w // 16, w // 3)] = \
            rng.choice(STUFF)
    count = {}
    for _ in range(40):
        c = int(rng.choice(THINGS))
        y, x = rng.randint(h // 4, h), rng.randint(0, w)
        sl = np.s_[y:y + rng.randint(8, h // 5), x:x + rng.randint(8, w // 8)]
        if rng.rand() < 0.1:
            inst[sl] = c
        else:
            count[c] = count.get(c, 0) + 1
            inst[sl] = c * 1000 + count[c] - 1
    seg = np.zeros((h, w), dtype=np.int64)
    cats = {}
    for v in np.unique(inst).tolist():
        label = v if v < 1000 else v // 1000
        if label not in EVALUATED or rng.rand() < 0.05:
            continue
        s = int(rng.randint(1, 1 << 24))
        while s in cats:
            s = int(rng.randint(1, 1 << 24))
        mask = inst == v
        if v >= 1000:
            mask = np.roll(mask, (int(rng.randint(-6, 7)), int(rng.randint(-12, 13))), (0, 1))
        seg[mask] = s
        cats[s] = label if rng.rand() > 0.1 else int(rng.choice(EVALUATED))
    present = set(np.unique(seg).tolist()) - {0}
    return inst, seg, {s: c for s, c in cats.items() if s in present}


def make_data(base, n, h, w, seed):
    ref, res = os.path.join(base, "ref"), os.path.join(base, "res")
    city = os.path.join(base, "gtFine", "val", "city")
    for d in (os.path.join(ref, "labels"), os.path.join(ref, "instances"),
              os.path.join(res, "predictions"), city):
        os.makedirs(d)
    with open(os.path.join(ref, "config.yaml"), "w") as f:
        f.write("task: planetscapes-panoptic\nlabels: cityscapes\n")
    anns = []
    for k in range(n):
        image_id = "city_%06d_%06d" % (seed, k)
        inst, seg, cats = scene(np.random.RandomState([seed, k]), h, w)
        lab = np.where(inst < 1000, inst, inst // 1000).astype(np.uint8)
        Image.fromarray(lab).save(os.path.join(ref, "labels", image_id + ".png"))
        save_16bit(inst, os.path.join(ref, "instances", image_id + ".png"))
        shutil.copyfile(os.path.join(ref, "instances", image_id + ".png"),
                        os.path.join(city, image_id + "_gtFine_instanceIds.png"))
        rgb = np.stack([seg % 256, seg // 256 % 256, seg // 65536], axis=2).astype(np.uint8)
        Image.fromarray(rgb, "RGB").save(os.path.join(res, "predictions", image_id + ".png"))
        anns.append({"image_id": image_id, "file_name": image_id + ".png",
                     "segments_info": [{"id": s, "category_id": c}
                                       for s, c in sorted(cats.items())]})
    with open(os.path.join(res, "predictions.json"), "w") as f:
        json.dump({"annotations": anns}, f)
    return ref, res


FLOOR = r"""
import io, os, sys, time
started = time.time()
sys.path.insert(0, sys.argv[1])
from PIL import Image
from scoring import engine
from scoring.formats.label_png.pillow_array import load_array
from scoring.tasks.planetscapes_semantic.reference import keep_freed_memory

def decode(context, ids):
    keep_freed_memory()
    for i in ids:
        with open(os.path.join(context["res"], "predictions", i + ".png"), "rb") as f:
            with Image.open(io.BytesIO(f.read())) as img:
                img.load()
        with open(os.path.join(context["ref"], "instances", i + ".png"), "rb") as f:
            with Image.open(io.BytesIO(f.read())) as img:
                load_array(img)
    return len(ids)

ref, res, workers = sys.argv[2], sys.argv[3], int(sys.argv[4])
ids = sorted(n[:-4] for n in os.listdir(os.path.join(ref, "instances")))
done = []
engine.map_chunks(decode, {"ref": ref, "res": res}, engine.chunked(ids, workers), workers,
                  done.append)
assert sum(done) == len(ids)
"""

ANCHOR = r"""
import contextlib, io, json, os, sys, time
from cityscapesscripts.preparation import createPanopticImgs as create
from cityscapesscripts.evaluation import evalPanopticSemanticLabeling as ev
base, res = sys.argv[1], sys.argv[2]
out = os.path.join(base, "anchor")
os.makedirs(out, exist_ok=True)
t0 = time.time()
with contextlib.redirect_stdout(io.StringIO()):
    create.convert2panoptic(os.path.join(base, "gtFine"), out, setNames=["val"])
t1 = time.time()
with contextlib.redirect_stdout(io.StringIO()):
    results = ev.evaluatePanoptic(os.path.join(out, "cityscapes_panoptic_val.json"),
                                  os.path.join(out, "cityscapes_panoptic_val"),
                                  os.path.join(res, "predictions.json"),
                                  os.path.join(res, "predictions"),
                                  os.path.join(base, "anchor_results.json"))
t2 = time.time()
import multiprocessing
print(json.dumps({"create": t1 - t0, "evaluate": t2 - t1, "cpus": multiprocessing.cpu_count(),
                  "results": results}))
"""


def timed(cmd, env=None):
    started = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit("{} failed:\n{}".format(" ".join(cmd), proc.stderr[-3000:]))
    return time.time() - started, proc.stdout


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--images", type=int, default=48)
    p.add_argument("--height", type=int, default=1024)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=34)
    p.add_argument("--python", default=sys.executable, help="the scorer's Python (the worker's)")
    p.add_argument("--anchor-python", default="", help="a Python with cityscapesscripts")
    p.add_argument("--report", help="also write the Markdown report here")
    args = p.parse_args(argv)
    base = tempfile.mkdtemp(prefix="bench-panoptic-")
    lines = []

    def say(line):
        print(line, flush=True)
        lines.append(line)
    try:
        ref, res = make_data(base, args.images, args.height, args.width, args.seed)
        say("# Panoptic bench: {} images of {} x {}, {} workers".format(
            args.images, args.width, args.height, args.workers))
        say("")
        say("`python3 bench/panoptic.py {}` on {} ({} CPUs, load {}), scorer Python {}.".format(
            " ".join(sys.argv[1:] if argv is None else argv), platform.node(), os.cpu_count(),
            " ".join("{:.1f}".format(v) for v in os.getloadavg()), args.python))
        say("")
        floor, score = [], []
        out = os.path.join(base, "out")
        program = os.path.join(ROOT, "scoring_program")
        for _ in range(args.repeat):  # interleaved, so that load changes hit both alike
            floor.append(timed([args.python, "-c", FLOOR, program, ref, res,
                                str(args.workers)])[0])
            score.append(timed([args.python, os.path.join(program, "score.py"), "--ref", ref,
                                "--res", res, "--out", out, "--workers", str(args.workers),
                                "-q"])[0])
        with open(os.path.join(out, "scores.json")) as f:
            ours = json.load(f)
        say("| row | wall s (best of {}) | per image ms | / floor |".format(args.repeat))
        say("|---|---|---|---|")
        f0 = min(floor)
        say("| floor: decode both PNGs | {:.2f} | {:.0f} | 1.00 |".format(
            f0, 1000 * f0 / args.images))
        s0 = min(score)
        say("| score.py --workers {} | {:.2f} | {:.0f} | {:.2f} |".format(
            args.workers, s0, 1000 * s0 / args.images, s0 / f0))
        if args.anchor_python:
            _, text = timed([args.anchor_python, "-c", ANCHOR, base, res])
            anchor = json.loads(text.strip().splitlines()[-1])
            say("| anchor: evaluatePanoptic ({} processes) | {:.2f} | {:.0f} | {:.2f} |".format(
                anchor["cpus"], anchor["evaluate"], 1000 * anchor["evaluate"] / args.images,
                anchor["evaluate"] / f0))
            say("| anchor: createPanopticImgs (once per dataset) | {:.2f} | {:.0f} | {:.2f} |"
                .format(anchor["create"], 1000 * anchor["create"] / args.images,
                        anchor["create"] / f0))
            theirs = anchor["results"]
            worst = max(abs(ours[k] - theirs[g][k[:2]])
                        for k, g in (("pq", "All"), ("sq", "All"), ("rq", "All"),
                                     ("pq_things", "Things"), ("pq_stuff", "Stuff")))
            say("")
            say("score.py's pq {:.10f}, the anchor's {:.10f}; largest difference of the means "
                "{:.2g} (scores.json has 10 decimals).".format(ours["pq"], theirs["All"]["pq"],
                                                                worst))
        say("")
        say("All runs: floor {}; score.py {}.".format(
            ", ".join("{:.2f}".format(v) for v in floor),
            ", ".join("{:.2f}".format(v) for v in score)))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
