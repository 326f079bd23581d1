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

from find_scoring import HERE, add_scoring_to_path

add_scoring_to_path()

from scoring import deps  # noqa: E402  (standard library only)

try:
    from scoring import zips  # noqa: E402
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
    p.add_argument("results", help="results .json file, or the submission folder or zip")
    p.add_argument("--questions", default=DEFAULT_QUESTIONS,
                   help="the test questions.json (default: questions.json beside this script)")
    return p


def check(results: str, questions_path: str, stdout, stderr) -> int:
    folder, name = os.path.split(os.path.abspath(questions_path))
    try:
        ids = frozenset(read_questions(folder, name))
    except BrokenReference as exc:
        stderr.write(exc.message().replace("the REFERENCE data (the organizers' ground truth) is "
                                           "broken; this is not a problem with the submission. "
                                           "Organizers: fix the reference data and re-run.",
                                           "{} cannot be used:".format(questions_path)))
        return 2
    if os.path.isfile(results) and results.lower().endswith(".json"):
        path, shown, log = results, os.path.basename(results), None
        cleanup = None
    else:
        try:
            res_dir, cleanup = zips.unpack_submission(results, **WORDS)
        except SubmissionError as exc:   # the scorer's message for a zip it cannot unpack
            stderr.write(exc.message())
            return 1
        try:
            files, log = find_results(res_dir)
        except OSError as exc:
            cleanup()
            stderr.write(unlistable(res_dir, exc))
            return 1
        path = files.get(UNIT)
        shown = os.path.relpath(path, res_dir) if path else ""
    try:
        if log is not None and log.fatal:
            stderr.write(SubmissionError(log).message())
            return 1
        try:
            # A file named on the command line is the participant's own choice: a link to it is
            # followed; inside a submission folder nothing is (log is that folder's listing).
            answers = read_results(path, shown, ids, follow_links=log is None)
        except ResultsProblems as exc:
            if log is not None:
                exc.log.merge(log)
            stderr.write(SubmissionError(exc.log).message())
            stderr.write("\n{} checked against {} ({:,} questions).\n".format(
                results, questions_path, len(ids)))
            return 1
    finally:
        if cleanup:
            cleanup()
    for line in (log.summary_lines() if log is not None else []):
        stdout.write("WARNING: " + line + "\n")
    stdout.write("OK: {} passes every check of the scoring program: one answer (a string) for "
                 "each of the {:,} question{} of {}, no unknown or repeated question id, {:,} "
                 "bytes at most.\n".format(shown, len(answers), "" if len(answers) == 1 else "s",
                                           questions_path, size_cap(len(ids))))
    return 0


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
