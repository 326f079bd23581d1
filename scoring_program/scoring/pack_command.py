"""`pack.py RAW_DIR OUT_DIR`: convert a raw reference into its task's packed layout.

The task is the reference's (config.yaml `task:`, as the scorer decides it); tasks with a packed
layout provide pack() (Agriculture-Vision: docs/packed-format.md; Planetscapes VQA:
docs/vqa-packed-format.md). Every layer of every image (every annotation) is read and checked on
the way (a broken raw reference is refused with the same messages the scorer
gives), the work is spread over the usable CPUs, and the packed reference's manifest is written
last, so an interrupted run never leaves something that looks like a packed reference.
"""
import argparse
import os
import sys
import time
from typing import List, Optional

from . import engine
from .batch_run import without_cycle_collector
from .config import read_config, task_name
from .problems import ScoringError
from .registry import DEFAULT, TASKS


def folder_bytes(root: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="pack.py", description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    p.add_argument("raw", metavar="RAW_DIR", help="reference in the dataset's raw layout")
    p.add_argument("out", metavar="OUT_DIR", help="where to write the packed reference (new or empty)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes (default: the usable CPUs, {})".format(engine.usable_cpus()))
    p.add_argument("--progress-every", type=float, default=5.0, metavar="SECONDS")
    args = p.parse_args(argv)
    with without_cycle_collector():
        return _pack(args)


def _pack(args: argparse.Namespace) -> int:
    if os.path.exists(args.out) and os.listdir(args.out):
        sys.stderr.write("ERROR: {} exists and is not empty; give a new folder.\n".format(args.out))
        return 2
    started = time.monotonic()
    try:
        ref_config = read_config(args.raw)
        task = TASKS[task_name(ref_config, DEFAULT, TASKS)]
        if task is None or task.packed_layout is None:
            sys.stderr.write("ERROR: {}'s task has no packed layout; score it as it is.\n".format(
                args.raw))
            return 2
        reference = task.open_reference(args.raw, task.configure(None, ref_config))
        if reference.layout != "raw":
            sys.stderr.write("ERROR: {} is already {}.\n".format(args.raw, reference.layout))
            return 2
        total, noun = task.pack_units(reference)
        print("Packing {:,} {} from {} into {}".format(total, noun, args.raw, args.out),
              flush=True)
        units, _ = task.pack(reference, args.out, args.workers or engine.default_workers(total),
                             engine.Progress(total, sys.stdout, args.progress_every, "packed",
                                             noun))
    except ScoringError as exc:
        sys.stderr.write(exc.message())
        return exc.exit_code
    raw_bytes, packed_bytes = folder_bytes(reference.root), folder_bytes(args.out)
    print("Packed {:,} {} in {:.1f} s: raw {:,} bytes -> packed {:,} bytes ({:.1f}x smaller)"
          .format(units, noun, time.monotonic() - started, raw_bytes, packed_bytes,
                  raw_bytes / max(packed_bytes, 1)))
    return 0
