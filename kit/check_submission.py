#!/usr/bin/env python3
"""Check a submission before uploading it, without the hidden test labels.

    python3 check_submission.py my_predictions/          (a folder)
    python3 check_submission.py submission.zip           (or the zip you will upload)

Every check the scoring program makes on a submission, it makes here with the same code
(scoring.validate.validate_submission): file names against the test image list, sizes, single
channel, pixel values (the task's label ids), duplicates, stray folders. What it cannot know
without the labels is your score: for that, see dry_run.py on the validation labels.

manifest.json (beside this script) lists the test images' names and sizes; it holds no labels.
Exit status: 0 the submission passes every check (warnings may be printed), 1 it would be
refused, 2 bad command line or a package missing (the line says which and how to install it).
Needs Python 3.7+, numpy and Pillow.
"""
import argparse
import os
import sys
from typing import Optional

from find_scoring import HERE, add_scoring_to_path

add_scoring_to_path()

from scoring import deps  # noqa: E402  (standard library only)

try:
    from scoring import engine, zips  # noqa: E402
    from scoring.commands import frame  # noqa: E402
    from scoring.problems import SubmissionError, UsageError  # noqa: E402
    from scoring.manifests import load_manifest  # noqa: E402
    from scoring.validate import manifest_words, validate_submission  # noqa: E402
except ModuleNotFoundError as exc:   # numpy or Pillow missing: one line, the install command
    deps.exit_if_missing(exc)

DEFAULT_MANIFEST = os.path.join(HERE, "manifest.json")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="check_submission.py",
        description="Check a submission (folder or zip) against the test image list, without "
                    "the labels, using the scoring program's own checks.")
    p.add_argument("submission", help="folder of <image id>.png predictions, or the zip")
    p.add_argument("--manifest", default=DEFAULT_MANIFEST,
                   help="test image names and sizes (default: manifest.json beside this script)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes (default: the CPUs this process may use)")
    return p


def check(path: str, manifest_path: str, workers: Optional[int], stdout, stderr) -> int:
    manifest = load_manifest(manifest_path)
    try:
        res_dir, cleanup = zips.unpack_submission(path, **manifest_words(manifest))
    except SubmissionError as exc:  # the very message the scorer gives for this zip
        stderr.write(exc.message())
        return 1
    try:
        total = len(manifest["images"])
        progress = engine.Progress(total, stdout, verb="checked")
        log, checked = validate_submission(res_dir, manifest, workers, progress)
    finally:
        cleanup()
    if log.fatal:
        stderr.write(SubmissionError(log, **manifest_words(manifest)).message())
        stderr.write("\n{} checked against {} ({} test images).\n".format(
            path, os.path.basename(manifest_path), total))
        return 1
    for line in log.summary_lines(**manifest_words(manifest)):
        stdout.write("WARNING: " + line + "\n")
    # The format's own words: "a class id from 0 to 8" (Agriculture-Vision), the label table's
    # ids for Planetscapes; a manifest has no max_id of its own.
    # A format may say what its checks cover ("checked"; the panoptic JSON and RGB PNGs).
    words = manifest_words(manifest)
    covered = words.get("checked") or "names, sizes, single channel, every pixel {}".format(
        words.get("allowed_values", "a valid value"))
    stdout.write("OK: {} passes every check of the scoring program: {:,} prediction{} for the "
                 "{:,} test image{} in {} ({}).\n"
                 .format(path, checked, "" if checked == 1 else "s", total,
                         "" if total == 1 else "s", os.path.basename(manifest_path), covered))
    return 0


def body(args: argparse.Namespace, io: "frame.Io") -> int:
    if not os.path.isfile(args.manifest):
        raise UsageError("no manifest at {}: give --manifest".format(args.manifest))
    return check(args.submission, args.manifest, args.workers, io.stdout, io.stderr)


COMMAND = frame.Command("check_submission.py", build_parser, body,
                        not_blamed="the submission")


def main(argv=None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)


if __name__ == "__main__":
    sys.exit(main())
