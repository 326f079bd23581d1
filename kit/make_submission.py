#!/usr/bin/env python3
"""Zip a folder of predictions the way the platform expects, after checking it.

    python3 make_submission.py my_predictions/ -o submission.zip

The folder is first checked like check_submission.py does (the scoring program's own checks,
against manifest.json). Only if it passes, the predictions are zipped as files at the root of the
zip (not inside a folder), without hidden files, macOS metadata or anything that is not a
prediction. Upload the zip it writes.

In a competition that scores every upload with several tasks (the kit's phase.json lists the
others), the zip must hold each task's files: --add FILE puts another task's file (e.g. the VQA
results file) at the root of the zip too, and without it the tool says what is still missing
instead of "Upload it."

Exit status: 0 zip written, 1 the predictions have problems (nothing written), 2 bad command line
or a package missing (the line says which and how to install it). Needs Python 3.7+, numpy and
Pillow.
"""
import argparse
import json
import os
import sys
import zipfile
from typing import Dict, List, Optional

from find_scoring import HERE, add_scoring_to_path

add_scoring_to_path()

from scoring import deps  # noqa: E402  (standard library only)

try:
    from scoring import engine  # noqa: E402
    from scoring.commands import frame  # noqa: E402
    from scoring.problems import SubmissionError, UsageError  # noqa: E402
    from scoring.manifests import load_manifest  # noqa: E402
    from scoring.validate import manifest_words, open_manifest, validate_submission  # noqa: E402
except ModuleNotFoundError as exc:   # numpy or Pillow missing: one line, the install command
    deps.exit_if_missing(exc)

DEFAULT_MANIFEST = os.path.join(HERE, "manifest.json")
PHASE_FILE = os.path.join(HERE, "phase.json")   # the built kit's (bundle.sh)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="make_submission.py",
        description="Check a folder of <image id>.png predictions, then zip them correctly.")
    p.add_argument("predictions", help="folder holding one <image id>.png per test image")
    p.add_argument("-o", "--output", default="submission.zip",
                   help="zip to write (default: submission.zip)")
    p.add_argument("--manifest", default=DEFAULT_MANIFEST,
                   help="test image names and sizes (default: manifest.json beside this script)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes for the check (default: the CPUs this process may use)")
    p.add_argument("--add", metavar="FILE", action="append", default=[],
                   help="also put FILE at the root of the zip: another task's file when one "
                        "upload is scored by several tasks (e.g. --add results.json)")
    return p


def other_tasks() -> List[Dict[str, str]]:
    """The other tasks that score every upload of this competition (a merged kit's phase.json:
    name and kit folder of each); none in a kit of one task or in the repository."""
    try:
        with open(PHASE_FILE, encoding="utf-8") as f:
            tasks = json.load(f).get("other_tasks") or []
    except (OSError, ValueError, AttributeError):
        return []
    return [t for t in tasks if isinstance(t, dict) and t.get("name")]


def counted(n: int, noun: str) -> str:
    return "{:,} {}{}".format(n, noun, "" if n == 1 else "s")


def write_zip(entries, output: str) -> None:
    """(path, name in the zip) of each file, in name order. PNGs are compressed already:
    stored."""
    tmp = output + ".part"
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for path, name in sorted(entries, key=lambda entry: entry[1]):
                zf.write(path, name)
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def check_added(added: List[str], output: str) -> None:
    """Each --add FILE: a regular file, not the zip being written, no two with one name."""
    names = {}  # type: Dict[str, str]
    for path in added:
        if not os.path.isfile(path):
            raise UsageError("--add {}: no such file".format(path))
        if os.path.realpath(path) == os.path.realpath(output):
            raise UsageError("--add {}: that is the zip being written".format(path))
        name = os.path.basename(path)
        if name in names:
            raise UsageError("--add {} and --add {}: two files named {}".format(
                names[name], path, name))
        names[name] = path


def make(folder: str, output: str, manifest_path: str, workers: Optional[int], stdout,
         stderr, added: Optional[List[str]] = None) -> int:
    added = list(added or [])
    if not os.path.isdir(folder):
        raise UsageError("{} is not a folder (give the folder of PNG predictions)".format(folder))
    check_added(added, output)
    if os.path.isdir(output) or output.endswith(("/", os.sep)):
        raise UsageError("-o {} is a folder: give the name of the zip to write, e.g. -o "
                         "submission.zip".format(output))
    if not os.path.isdir(os.path.dirname(os.path.abspath(output))):
        raise UsageError("-o {}: the folder to write it in does not exist".format(output))
    manifest = load_manifest(manifest_path)
    log, _ = validate_submission(folder, manifest, workers,
                                 engine.Progress(len(manifest["images"]), stdout, verb="checked"))
    if log.fatal:
        stderr.write(SubmissionError(log, **manifest_words(manifest)).message())
        stderr.write("\nNo zip was written: fix the problems above and run again.\n")
        return 1
    # The same discovery the scorer uses decides which files are the predictions.
    reference, fmt = open_manifest(manifest)
    found = fmt.discover(folder, reference.ids)
    out_real = os.path.realpath(output)
    entries = [(p, name) for p, name in fmt.zip_entries(found)
               if os.path.realpath(p) != out_real]
    files = list(found.files.values())
    clash = sorted({name for _, name in entries} & {os.path.basename(a) for a in added})
    if clash:
        raise UsageError("--add: {} is also the name of a prediction".format(clash[0]))
    try:
        write_zip(entries + [(a, os.path.basename(a)) for a in added], output)
    except OSError as exc:
        raise UsageError("cannot write {} ({})".format(output, exc.strerror or exc)) from None
    left_out = log.summary_lines(**fmt.words)
    if left_out:
        stdout.write("Left out of the zip:\n" + "".join("  - " + line + "\n" for line in left_out))
    stdout.write("Wrote {} ({}{} at the root of the zip, {:,} bytes). {}\n".format(
        output, counted(len(files), "prediction"),
        "".join(" and " + os.path.basename(a) for a in added), os.path.getsize(output),
        next_step(other_tasks(), added)))
    return 0


def next_step(others: List[Dict[str, str]], added: List[str]) -> str:
    """"Upload it.", or what the zip still lacks when other tasks score the same upload."""
    if not others or added:
        return "Upload it."
    names = " and ".join(t["name"] for t in others)
    kits = ", ".join("{}/".format(t.get("kit", t["name"])) for t in others)
    return ("Do not upload it yet: this competition scores every submission on {} too, and this "
            "zip holds nothing for it, so that task would fail. Check that task's file with "
            "the kit's {} tools (its README.md), then make the zip again adding it: --add "
            "FILE.".format(names, kits))


def body(args: argparse.Namespace, io: "frame.Io") -> int:   # `| head`: the zip is written
    if not os.path.isfile(args.manifest):
        raise UsageError("no manifest at {}: give --manifest".format(args.manifest))
    return make(args.predictions, args.output, args.manifest, args.workers, io.stdout, io.stderr,
                args.add)


COMMAND = frame.Command("make_submission.py", build_parser, body,
                        not_blamed="the predictions")


def main(argv=None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)


if __name__ == "__main__":
    sys.exit(main())
