#!/usr/bin/env python3
"""Measure what the default worker count rests on (issue 7 section 7).

    python3 bench/workers.py [--data DIR] [--sizes 30,60,120,240,480] [--repeat 3]

Runs the REAL command (`score.py --ref REF --res PRED --workers W --quiet`) on the first N images
of one synthetic set, for every N of --sizes, for the raw and the packed reference, with 1 worker
and with all usable CPUs (W = engine.usable_cpus()), and with the default (no --workers). Keeps
the fastest of --repeat wall times per configuration. Fits, per layout, by least squares,

    T1(N) = a + t * N                 (one process)
    TW(N) = a + S + t * N / W         (W workers: pool start-up S, then perfect sharing)

and prints t (seconds per image), S (the pool's start-up cost), the break-even N* = S / (t (1 -
1/W)) above which all CPUs win, and a Markdown table of the measured times with the default's
choice. The default must never be slower than all CPUs: engine.default_workers uses all CPUs from
the smallest N* (the slowest layout's).

Data: competitions/agriculture-vision/make_sample.py writes --data/raw and --data/pred
(max(--sizes) images; --data defaults to a folder in the system's temp dir) and
organizer/pack.py packs the reference into --data/packed; reused when present.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "scoring_program")
ORGANIZER = os.path.join(ROOT, "organizer")
sys.path.insert(0, PROGRAM)

from scoring import engine  # noqa: E402
from scoring.registry import TASKS  # noqa: E402

TASK_SECONDS = TASKS["agriculture-vision"].unit_seconds   # what the default workers rest on


def _prepare(data: str, n: int) -> None:
    if not os.path.isdir(os.path.join(data, "packed", "packed")) or \
            len(os.listdir(os.path.join(data, "pred"))) < n:
        shutil.rmtree(data, ignore_errors=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "competitions", "agriculture-vision",
                                                     "make_sample.py"), "--out",
                        os.path.join(data, "raw"), "--images", str(n), "--submission",
                        os.path.join(data, "pred")], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, os.path.join(ORGANIZER, "pack.py"), os.path.join(data, "raw"),
                        os.path.join(data, "packed")], check=True, stdout=subprocess.DEVNULL)


def _subset(data: str, layout: str, n: int, tmp: str) -> str:
    """A reference of the first n images (links to the files: cheap to build)."""
    ids = sorted(f[:-4] for f in os.listdir(os.path.join(data, "pred")))[:n]
    dst = os.path.join(tmp, "{}-{}".format(layout, n))
    if os.path.isdir(dst):
        return dst
    src = os.path.join(data, layout)
    if layout == "packed":
        import json
        os.makedirs(os.path.join(dst, "packed"))
        with open(os.path.join(src, "packed.json")) as f:
            manifest = json.load(f)
        manifest["ids"] = ids
        with open(os.path.join(dst, "packed.json"), "w") as f:
            json.dump(manifest, f)
        for i in ids:
            os.symlink(os.path.join(src, "packed", i + ".png"),
                       os.path.join(dst, "packed", i + ".png"))
    else:
        for folder, _, files in os.walk(src):
            rel = os.path.relpath(folder, src)
            os.makedirs(os.path.join(dst, rel), exist_ok=True)
            for f in files:
                if f[:-4] in ids or not f.endswith(".png"):
                    os.symlink(os.path.join(folder, f), os.path.join(dst, rel, f))
    return dst


def _time(ref: str, pred: str, workers) -> float:
    cmd = [sys.executable, os.path.join(PROGRAM, "score.py"), "--ref", ref, "--res", pred,
           "--quiet"]
    if workers:
        cmd += ["--workers", str(workers)]
    started = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - started
    if proc.returncode:
        raise SystemExit("score.py failed: " + proc.stderr)
    return seconds


def _fit(sizes, t1, tw, w):
    """Least squares for (a, t, S) over both series."""
    rows, y = [], []
    for n, a1, aw in zip(sizes, t1, tw):
        rows.append([1.0, n, 0.0])
        y.append(a1)
        rows.append([1.0, n / float(w), 1.0])
        y.append(aw)
    (a, t, s), *_ = np.linalg.lstsq(np.array(rows), np.array(y), rcond=None)
    return a, t, s


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "bench-workers-data"))
    p.add_argument("--sizes", default="30,60,120,240,480")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--layouts", default="raw,packed")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    w = engine.usable_cpus()
    if w < 2:
        raise SystemExit("needs at least 2 usable CPUs")
    _prepare(args.data, max(sizes))
    pred_all = os.path.join(args.data, "pred")
    tmp = tempfile.mkdtemp(prefix="bench-workers-")
    lines = ["| layout | images | 1 worker (s) | {} workers (s) | default: workers, s |".format(w),
             "|---|---|---|---|---|"]
    try:
        for layout in args.layouts.split(","):
            t1, tw = [], []
            for n in sizes:
                ref = _subset(args.data, layout, n, tmp)
                pred = os.path.join(tmp, "pred-{}".format(n))
                if not os.path.isdir(pred):  # copies: a link is never read as a prediction
                    os.makedirs(pred)
                    for f in sorted(os.listdir(pred_all))[:n]:
                        shutil.copyfile(os.path.join(pred_all, f), os.path.join(pred, f))
                one = min(_time(ref, pred, 1) for _ in range(args.repeat))
                many = min(_time(ref, pred, w) for _ in range(args.repeat))
                default = min(_time(ref, pred, None) for _ in range(args.repeat))
                t1.append(one)
                tw.append(many)
                lines.append("| {} | {} | {:.2f} | {:.2f} | {}, {:.2f} |".format(
                    layout, n, one, many, engine.default_workers(n, TASK_SECONDS), default))
                print(lines[-1], flush=True)
            a, t, s = _fit(sizes, t1, tw, w)
            print("{}: start {:.2f} s, {:.2f} ms per image, pool start-up S = {:.2f} s, "
                  "all CPUs win above N* = {:.0f} images".format(
                      layout, a, 1000 * t, s, s / (t * (1 - 1.0 / w))), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
