#!/usr/bin/env python3
"""Check a Planetscapes VQA results file before uploading it, with the public questions.json.

    python3 check_results.py results.json --questions questions.json
    python3 check_results.py submission.zip                  (the zip you will upload)
    python3 check_results.py my_submission_folder/

Every check is the scoring program's own (the same code runs on the platform): exactly one .json
file in the submission; valid JSON; a list of {"question_id": <int>, "answer": <string>}; every
question of questions.json answered exactly once; no unknown question id; the size limit. What it
cannot tell you without the hidden answers is your score.

--questions defaults to questions.json beside this script. Exit status: 0 the file passes every
check, 1 it would be refused (every problem is listed), 2 bad command line or unreadable
questions.json. Needs Python 3.7+ only.
"""
import argparse
import os
import sys
import zipfile
from typing import FrozenSet, Optional

from find_scoring import HERE, add_scoring_to_path

add_scoring_to_path()

from scoring import deps  # noqa: E402  (standard library only)

try:
    from scoring import validate, zips  # noqa: E402
    from scoring.registry import TASKS  # noqa: E402
    from scoring.commands import frame  # noqa: E402
    from scoring.problems import BrokenReference, SubmissionError, UsageError  # noqa: E402
    from scoring.tasks.planetscapes_vqa.files import UNIT, WORDS, find_results  # noqa: E402
    from scoring.tasks.planetscapes_vqa.reference import read_questions  # noqa: E402
    from scoring.tasks.planetscapes_vqa.results import (ResultsProblems, read_results,  # noqa: E402
                                                        size_cap)
except ModuleNotFoundError as exc:   # a package the scorer needs: one line, the install command
    deps.exit_if_missing(exc)

DEFAULT_QUESTIONS = os.path.join(HERE, "questions.json")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="check_results.py",
        description="Check a VQA results file (or the folder or zip holding it) against the "
                    "public questions.json, with the scoring program's own checks.")
    p.add_argument("results", help="results .json file, or the submission folder or zip (a "
                                    "file that is not a zip is checked as the results)")
    p.add_argument("--questions", default=DEFAULT_QUESTIONS,
                   help="the test questions.json (default: questions.json beside this script)")
    return p


def public_ids(questions_path: str, stderr) -> Optional[FrozenSet[int]]:
    """The question ids of questions.json, or None (said on stderr) if it cannot be used."""
    folder, name = os.path.split(os.path.abspath(questions_path))
    try:
        return frozenset(read_questions(folder, name))
    except BrokenReference as exc:
        stderr.write(exc.message(preamble="ERROR: {} cannot be used (re-download the starting "
                                          "kit, or give --questions):".format(questions_path)))
        return None


def checked_against(results: str, questions_path: str, ids: FrozenSet[int]) -> str:
    return "\n{} checked against {} ({:,} questions).\n".format(results, questions_path, len(ids))


def check_file(results: str, questions_path: str, ids: FrozenSet[int], stderr) -> Optional[str]:
    """A results file named on the command line: the name it is shown by, or None if it is
    refused (said on stderr)."""
    shown = os.path.basename(results)
    try:
        # A file named on the command line is the participant's own choice: a link to it is
        # followed (inside a submission folder nothing is).
        read_results(results, shown, ids, follow_links=True)
    except ResultsProblems as exc:
        stderr.write(SubmissionError(exc.log, **WORDS).message())
        if not results.lower().endswith(".json"):
            stderr.write("\n" + misnamed_text(shown) + "\n")
        stderr.write(checked_against(results, questions_path, ids))
        return None
    return shown


def check_submission(results: str, questions_path: str, ids: FrozenSet[int], stderr):
    """A submission folder or zip, checked as the kits' validate.py does: (the results file's
    name in it, the problem log), or None if it is refused (said on stderr)."""
    try:
        res_dir, cleanup = zips.unpack_submission(results, **WORDS)
    except SubmissionError as exc:   # the scorer's message for a zip it cannot unpack
        stderr.write(exc.message())
        return None
    try:
        # The same validation as every kit's (validate.py): the scorer's discovery and
        # reading, through its engine, against the stand-in of the public question ids.
        reference, fmt = TASKS["planetscapes-vqa"].manifest.open(
            {"task": "planetscapes-vqa", "question_ids": sorted(ids)})
        log, _ = validate.check(res_dir, reference, fmt, workers=1)
        found = find_results(res_dir)[0].get(UNIT)
    except OSError as exc:
        stderr.write(unlistable(res_dir, exc))
        return None
    finally:
        cleanup()
    if log.fatal:
        stderr.write(SubmissionError(log, **WORDS).message())
        stderr.write(checked_against(results, questions_path, ids))
        return None
    return (os.path.relpath(found, res_dir) if found else ""), log


def check(results: str, questions_path: str, stdout, stderr) -> int:
    ids = public_ids(questions_path, stderr)
    if ids is None:
        return 2
    # A file that is not a zip is read as the results whatever its name (a results.jsonl
    # gets the JSON Lines hint); the platforms read only a name ending in .json, said below.
    misnamed, log = False, None
    if os.path.isfile(results) and (results.lower().endswith(".json") or
                                    not zipfile.is_zipfile(results)):
        misnamed = not results.lower().endswith(".json")
        shown = check_file(results, questions_path, ids, stderr)
        if shown is None:
            return 1
    else:
        checked = check_submission(results, questions_path, ids, stderr)
        if checked is None:
            return 1
        shown, log = checked
    if misnamed:
        stderr.write("ERROR: {} passes every check of its content, but it would not be scored: "
                     "{}\n".format(shown, misnamed_text(shown)))
        return 1
    for line in (log.summary_lines(**WORDS) if log is not None else []):
        stdout.write("WARNING: " + line + "\n")
    # Valid: every question of questions.json answered exactly once.
    stdout.write("OK: {} passes every check of the scoring program: one answer (a string) for "
                 "each of the {:,} question{} of {}, no unknown or repeated question id, {:,} "
                 "bytes at most.\n".format(shown, len(ids), "" if len(ids) == 1 else "s",
                                           questions_path, size_cap(len(ids))))
    return 0


def misnamed_text(shown: str) -> str:
    """What to do with a results file whose name does not end in .json."""
    stem = os.path.splitext(shown)[0] or shown
    return ("the platforms read only a results file whose name ends in .json. Fix: name it {}.json "
            "and give this tool that file, or the folder or zip you will upload.".format(stem))


def unlistable(res_dir: str, exc: OSError) -> str:
    """A submission folder that cannot be walked (a link that loops...): the participant's to
    fix, said in a line, not a traceback."""
    name = os.path.relpath(exc.filename, res_dir) if exc.filename else res_dir
    return ("ERROR: the submission cannot be read: {} ({}). Fix: give the results .json file, or "
            "a folder or zip without links.\n".format(name, exc.strerror or exc))


def body(args: argparse.Namespace, io: "frame.Io") -> int:
    if not os.path.isfile(args.questions):
        raise UsageError("no questions file at {}: give --questions".format(args.questions))
    return check(args.results, args.questions, io.stdout, io.stderr)


COMMAND = frame.Command("check_results.py", build_parser, body, not_blamed="the results")


def main(argv=None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)


if __name__ == "__main__":
    sys.exit(main())
