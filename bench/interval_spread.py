#!/usr/bin/env python3
"""What the studentized interval costs over the basic one (docs/confidence.md, "What it
costs"): confidence.of_resampling on Agriculture-Vision-shaped rows (TP and union of 9 classes
per tile, synthetic), resampled by tile and by field, with and without each resample's standard
error (Resampling.gradient), CPU seconds of this process, best of --repeat.

    python3 bench/interval_spread.py                       # 19,708 tiles, 20 per field
    python3 bench/interval_spread.py --tiles 2000 --report bench/results-interval.md

Exit status: 0 measured; 2 bad usage.
"""
import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scoring_program"))

from scoring import confidence  # noqa: E402
from scoring.tasks.agrivision.intervals import field_of  # noqa: E402
from scoring.task_api import Resampling  # noqa: E402
from scoring.tasks.agrivision import metric  # noqa: E402


def rows_of(tiles: int, seed: int = 0):
    """(tile ids, rows): per tile TP and union of 9 classes, pixel counts of a 512 x 512 tile."""
    rng = np.random.RandomState(seed)
    area = rng.randint(0, 40000, size=(tiles, 9))
    area[:, 0] = 150000
    tp = (area * rng.uniform(0.3, 0.95, size=(tiles, 9))).astype(np.int64)
    union = area + rng.randint(0, 5000, size=(tiles, 9))
    return tp, union


def measure(tiles: int, per_field: int, repeat: int):
    tp, union = rows_of(tiles)
    rows = np.concatenate([tp, union], axis=1).astype(np.int64)
    ids = ["F{:05d}_{}".format(i // per_field, i) for i in range(tiles)]
    out = []
    for grouped in (False, True):
        for gradient in (None, metric.miou_gradient):
            res = Resampling("images", tiles, lambda: (ids, rows),
                             lambda s: [metric.miou_of_sums(s)],
                             group=field_of if grouped else None,
                             gradient=gradient)
            best = None
            for _ in range(repeat):
                started = time.process_time()
                conf = confidence.of_resampling(["miou"], res)
                seconds = time.process_time() - started
                best = seconds if best is None else min(best, seconds)
            out.append(("by field ({:,} fields)".format(conf.units) if grouped else
                        "by tile", "studentized" if gradient else "basic", best,
                        conf.intervals[0][1]))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tiles", type=int, default=19708)
    p.add_argument("--per-field", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--report", help="also write the Markdown table here")
    args = p.parse_args(argv)
    if args.tiles < 2 or args.per_field < 1 or args.repeat < 1:
        p.error("--tiles must be >= 2, --per-field and --repeat >= 1")
    lines = ["# The studentized interval's cost", "",
             "`python3 bench/interval_spread.py {}` on {} (Python {}, numpy {}), {}; {:,} "
             "tiles, {} per field, 1,000 resamples, best of {}.".format(
                 " ".join(argv if argv is not None else sys.argv[1:]), platform.node() or "?",
                 platform.python_version(), np.__version__,
                 datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 args.tiles, args.per_field, args.repeat), "",
             "| resampled | interval | CPU s | interval of the mIoU |", "|---|---|---|---|"]
    for unit, kind, seconds, ends in measure(args.tiles, args.per_field, args.repeat):
        lines.append("| {} | {} | {:.2f} | {:.4f} - {:.4f} |".format(unit, kind, seconds, *ends))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
