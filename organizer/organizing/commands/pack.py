"""`pack.py RAW_DIR OUT_DIR`: convert a raw reference into its task's packed layout.

The task is the reference's (config.yaml `task:`, as the scorer decides it); tasks with a packed
layout have a Packing role (task_api.py; Agriculture-Vision: docs/packed-format.md; Planetscapes semantic
labeling: docs/planetscapes.md; Planetscapes VQA: docs/vqa-packed-format.md). Every layer of
every image (every annotation) is read and checked on the way (a broken raw reference is refused
with the same messages the scorer gives), the work is spread over the usable CPUs (VQA: one
process), and the packed reference's manifest is written last, so an interrupted run never
leaves something that looks like a packed reference.

Exit status, as score.py's: 0 packed; 2 bad command line (RAW_DIR not a folder, OUT_DIR not a
new or empty folder or not writable, a task without a packed layout, a reference already packed;
also a missing package); 3 the raw reference is broken (the scorer's message); 4 internal error.
A reader of the output that goes away (`pack.py ... | head -1`) does not stop the packing.
"""
import argparse
import os
import stat
import tempfile
import time
from typing import List, Optional, cast

from scoring import engine, reference_setup
from scoring.problems import UsageError, shown
from scoring.commands import frame


def folder_bytes(root: str) -> int:
    """Bytes of the regular files under root (links are neither followed nor counted)."""
    total = 0
    for d, _, files in os.walk(root):
        for f in files:
            try:
                st = os.lstat(os.path.join(d, f))
            except OSError:
                continue
            total += st.st_size if stat.S_ISREG(st.st_mode) else 0
    return total


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pack.py",
                                description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    p.add_argument("raw", metavar="RAW_DIR", help="reference in the dataset's raw layout")
    p.add_argument("out", metavar="OUT_DIR", help="where to write the packed reference (new or empty)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes (default: the usable CPUs, {})".format(engine.usable_cpus()))
    p.add_argument("--progress-every", type=float, default=5.0, metavar="SECONDS")
    return p


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")


def run(args: argparse.Namespace, io: frame.Io) -> int:
    created = not os.path.lexists(args.out)
    try:
        code = _pack(args, io.stdout)
        created = False
        return code
    finally:
        if created:       # made by this run, which failed: leave nothing behind
            _remove_if_empty(args.out)


COMMAND = frame.Command("pack.py", build_parser, run, not_blamed="the reference",
                        check_args=_check_args)


def main(argv: Optional[List[str]] = None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)


def _remove_if_empty(folder: str) -> None:
    try:
        os.rmdir(folder)
    except OSError:       # not empty (a failed pack's files, without packed.json), or gone
        pass


def _check_paths(raw: str, out: str) -> None:
    """Usage errors, found before any work: RAW_DIR a folder; OUT_DIR a new or empty folder,
    created here, in which a file can be written."""
    if not os.path.isdir(raw):
        raise UsageError("RAW_DIR {} {}: give the folder of the raw reference".format(
            shown(raw), "is not a folder" if os.path.lexists(raw) else "does not exist"))
    if os.path.lexists(out) and not os.path.isdir(out):
        raise UsageError("OUT_DIR {} exists and is not a folder; give a new folder".format(
            shown(out)))
    try:
        if os.path.isdir(out) and os.listdir(out):
            raise UsageError("OUT_DIR {} exists and is not empty; give a new folder".format(
                shown(out)))
        os.makedirs(out, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise UsageError("cannot write into OUT_DIR {} ({})".format(
            shown(out), exc.strerror or type(exc).__name__)) from None


def _pack(args: argparse.Namespace, stdout) -> int:
    _check_paths(args.raw, args.out)
    started = time.monotonic()
    setup = reference_setup.configure(args.raw)
    task = setup.task
    if task.packing is None:
        raise UsageError("{}'s task has no packed layout; score it as it is".format(
            shown(args.raw)))
    reference = setup.open()
    if reference.layout != "raw":
        raise UsageError("{} is already {}".format(shown(args.raw), reference.layout))
    total, noun = reference.size()
    stdout.write("Packing {:,} {} from {} into {}\n".format(total, noun, shown(args.raw),
                                                           shown(args.out)))
    stdout.flush()
    workers = args.workers or engine.default_workers(total, task.unit_seconds)
    units, _ = task.packing.pack(reference, args.out, workers,
                                 engine.Progress(total, stdout, args.progress_every, "packed",
                                                 noun))
    # A reference opened from a folder has its root (None is the label-free check's stand-in).
    raw_bytes, packed_bytes = folder_bytes(cast(str, reference.root)), folder_bytes(args.out)
    stdout.write("Packed {:,} {} in {:.1f} s: raw {:,} bytes -> packed {:,} bytes ({:.1f}x "
                 "smaller). The layout: {}\n".format(
                     units, noun, time.monotonic() - started, raw_bytes, packed_bytes,
                     raw_bytes / max(packed_bytes, 1), task.packing.layout))
    return frame.EXIT_OK
