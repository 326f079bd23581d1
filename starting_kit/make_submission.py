#!/usr/bin/env python3
"""Zip a folder of predictions the way the platform expects, after checking it.

    python3 make_submission.py my_predictions/ -o submission.zip

The folder is first checked like check_submission.py does (the scoring program's own checks,
against manifest.json). Only if it passes, the predictions are zipped as files at the root of the
zip (not inside a folder), without hidden files, macOS metadata or anything that is not a
prediction. Upload the zip it writes.

Exit status: 0 zip written, 1 the predictions have problems (nothing written), 2 bad command line.
Needs Python 3.7+, numpy and Pillow.
"""
import argparse
import os
import sys
import zipfile
from typing import Optional

from find_scoring import HERE, add_scoring_to_path

add_scoring_to_path()

from scoring import engine  # noqa: E402
from scoring.problems import SubmissionError, UsageError  # noqa: E402
from scoring.manifests import load_manifest  # noqa: E402
from scoring.validate import manifest_words, open_manifest, validate_submission  # noqa: E402

DEFAULT_MANIFEST = os.path.join(HERE, "manifest.json")


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
    return p


def write_zip(files, output: str) -> None:
    """Predictions at the zip's root, in name order. PNGs are compressed already: stored."""
    tmp = output + ".part"
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for path in sorted(files, key=os.path.basename):
                zf.write(path, os.path.basename(path))
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def make(folder: str, output: str, manifest_path: str, workers: Optional[int], stdout,
         stderr) -> int:
    if not os.path.isdir(folder):
        raise UsageError("{} is not a folder (give the folder of PNG predictions)".format(folder))
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
    files = [p for p in found.files.values() if os.path.realpath(p) != out_real]
    try:
        write_zip(files, output)
    except OSError as exc:
        raise UsageError("cannot write {} ({})".format(output, exc.strerror or exc)) from None
    left_out = log.summary_lines(**fmt.words)
    if left_out:
        stdout.write("Left out of the zip:\n" + "".join("  - " + line + "\n" for line in left_out))
    stdout.write("Wrote {} ({:,} predictions at the root of the zip, {:,} bytes). Upload it.\n"
                 .format(output, len(files), os.path.getsize(output)))
    return 0


def main(argv=None, stdout=None, stderr=None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        if not os.path.isfile(args.manifest):
            raise UsageError("no manifest at {}: give --manifest".format(args.manifest))
        return make(args.predictions, args.output, args.manifest,
                    args.workers, stdout, stderr)
    except UsageError as exc:
        stderr.write("ERROR: {}\n".format(exc))
        return 2


if __name__ == "__main__":
    sys.exit(main())
