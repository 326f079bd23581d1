"""score.py: the worker's form and the participant's local form, one pipeline.

reference -> submission discovery -> parallel scoring with checks -> report. Errors a participant
or an organizer can fix end with a message on stderr and a distinct exit code, never a traceback
(the frame: frame.py).
"""
import argparse
import datetime
import os
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, cast

from .. import __version__, confidence, engine, public_part, reference_setup, validate, zips
from ..problems import BrokenReference, ProblemLog, SubmissionError, UsageError
from ..registry import DEFAULT, TASKS, options_of
from ..registry import add_options as add_task_options
from ..report import interval_text
from ..report import scores_file
from ..report.text_table import print_table
from ..task_api import RunFacts, Summary
from . import frame
SCORE_FILES = ("scores.txt", "scores.json")
HTML_FILE = "detailed_results.html"
# CodaLab v1 creates an empty detailed_results.html before the run and uploads it from a watcher
# (`entr -d` on output/, restarted 1 s after it exits because a new file appeared there) that the
# worker kills about 1 s after the program exits; a non-empty page is not uploaded again. So the
# scores files (new files: they restart the watcher) are written first, the page last and in
# place (the watched file), and the program then lets this many seconds pass before it exits.
# Only a run that found that pre-created empty page (CodaLab v1's worker) pays the wait.
HTML_SETTLE_SECONDS = 3.0
# A test harness that runs the CodaLab v1 worker's form many times (this repository's tests, the
# dry runs) may shorten that wait with this variable, between 0 and HTML_SETTLE_SECONDS; no
# platform sets it.
SETTLE_VARIABLE = "SCORING_HTML_SETTLE_SECONDS"


def settle_seconds() -> float:
    try:
        value = float(os.environ.get(SETTLE_VARIABLE, HTML_SETTLE_SECONDS))
    except ValueError:
        return HTML_SETTLE_SECONDS
    return value if 0 <= value <= HTML_SETTLE_SECONDS else HTML_SETTLE_SECONDS

EPILOG = """\
exit status: 0 scored; 1 the submission has problems (all listed on stderr); 2 bad command line;
3 the reference data is broken (organizers); 4 internal error of the scoring program.

examples:
  score.py --ref reference_data --res starting_kit/sample_submission
  score.py --ref reference_data --res submission.zip --out results --workers 2
  score.py INPUT OUTPUT          (as the CodaLab/Codabench worker runs it: INPUT/ref, INPUT/res)
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="score.py", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Score a submission against the reference data and write "
                    "scores.txt, scores.json and detailed_results.html.")
    p.add_argument("input", nargs="?", help="worker form: folder holding ref/ and res/")
    p.add_argument("output", nargs="?", help="worker form: folder to write the results into")
    p.add_argument("--ref", metavar="DIR_OR_ZIP", help="reference data (ground truth)")
    p.add_argument("--res", metavar="DIR_OR_ZIP",
                   help="the submission: a folder or a zip of predictions")
    p.add_argument("--out", metavar="DIR",
                   help="write scores.txt, scores.json and detailed_results.html here "
                        "(local form; default: only print the scores)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="processes to use (default: the CPUs this process may use, {}, once "
                        "the set is large enough for a pool to pay for its start-up, which "
                        "depends on the task; else 1)".format(engine.usable_cpus()))
    p.add_argument("--task", choices=sorted(TASKS), default=None,
                   help="challenge to score (default: the reference's config.yaml, else {})".format(
                       DEFAULT))
    p.add_argument("--progress-every", type=float, default=5.0, metavar="SECONDS",
                   help="seconds between progress lines on long runs (default 5)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    add_task_options(p)
    return p


def _paths(args) -> Dict[str, Optional[str]]:
    if args.input or args.output:
        if not (args.input and args.output) or args.ref or args.res:
            raise UsageError("give either INPUT OUTPUT (worker form) or --ref and --res")
        paths = {"ref": os.path.join(args.input, "ref"), "res": os.path.join(args.input, "res"),
                 "out": args.output}
    else:
        if not (args.ref and args.res):
            raise UsageError("give --ref and --res (or INPUT OUTPUT as the worker does); see "
                             "--help")
        paths = {"ref": args.ref, "res": args.res, "out": args.out}
    out = paths["out"]
    if out and os.path.lexists(out) and not os.path.isdir(out):
        raise UsageError("the output {} exists and is not a folder: give a folder (it is created "
                         "if missing)".format(out))
    return paths


def clear_outputs(out: str) -> None:
    """Remove the scores and page of an earlier run: a failed run must leave no scores behind
    (Codabench reads scores.json whatever happened). An empty page stays: CodaLab v1 creates one
    before the run for its upload watcher."""
    for name in SCORE_FILES + (HTML_FILE,):
        path = os.path.join(out, name)
        if os.path.islink(path) or (os.path.isfile(path) and (name != HTML_FILE or
                                                              os.path.getsize(path))):
            os.remove(path)


class _Scored(NamedTuple):
    """One submission scored: its state, every problem found (discovery and files), the units
    processed and the worker processes used."""

    state: Any
    log: ProblemLog
    units: int
    workers: int


def run(args: argparse.Namespace, io: frame.Io) -> int:
    started = time.monotonic()
    paths = _paths(args)
    say = io.sayer(args.quiet)
    cleanups: List[Callable[[], None]] = []
    try:
        v1_watcher = _prepare_output(paths["out"], bool(args.output))
        # _paths gives both (UsageError otherwise); only "out" may be None.
        ref_path, res_path = cast(str, paths["ref"]), cast(str, paths["res"])
        for given in (ref_path, res_path):
            zips.check_given(given)
        # Task and settings: command line, then the reference's config.yaml, then defaults.
        setup = reference_setup.unpack(ref_path, cleanups, io.show_as, args.task,
                                       options_of(args))
        reference = setup.open()
        part = public_part.read(setup, reference)
        fmt = setup.task.submission_format(setup.settings)
        units = fmt.words.get("units", "units")
        # The submission after the task: a zip that cannot be unpacked is told in its words.
        res_dir, cleanup = zips.unpack_submission(res_path, **fmt.words)
        cleanups.append(cleanup)
        io.show_as(res_dir, res_path)

        scored = _score(args, io, setup, reference, fmt, res_dir, part)
        summary = _summarize(setup, reference, scored.state)
        warnings = scored.log.summary_lines(**fmt.words)
        seconds = time.monotonic() - started
        for w in warnings:
            say("WARNING: " + w)
        if part is not None:
            say(part.line()[0].upper() + part.line()[1:] + ".")
        if not args.quiet:
            _print_results(io.stdout, setup, summary)
        if paths["out"]:
            facts = RunFacts(
                units=scored.state.units, unit_noun=units, workers=scored.workers,
                seconds=round(seconds, 2), reference_layout=reference.layout,
                scorer_version=__version__,
                finished=datetime.datetime.now(datetime.timezone.utc).strftime(
                    "%Y-%m-%d %H:%M:%S UTC"),
                task_facts=setup.task.report.run_facts(scored.state) +
                ([("Test set", part.line()[0].upper() + part.line()[1:])] if part else []),
                scored_on=part.scored_on() if part else "")
            _write_outputs(paths["out"], summary,
                           setup.task.report.page(summary, warnings, facts, setup.settings))
            say("Wrote scores.txt, scores.json and detailed_results.html to {}".format(
                paths["out"]))
            if v1_watcher:  # CodaLab v1's worker: let its watcher upload the finished page
                time.sleep(settle_seconds())
        say("Scored {:,} {} in {:.1f} s.".format(scored.units, units,
                                                 time.monotonic() - started))
        return frame.EXIT_OK
    finally:
        for cleanup in cleanups:
            cleanup()


def _prepare_output(out: Optional[str], worker_form: bool) -> bool:
    """The output folder created and emptied of an earlier run's results; True if it held the
    empty page CodaLab v1's worker creates for its upload watcher (see HTML_SETTLE_SECONDS)."""
    if not out:
        return False
    page_path = os.path.join(out, HTML_FILE)
    v1_watcher = worker_form and os.path.isfile(page_path) and \
        not os.path.islink(page_path) and os.path.getsize(page_path) == 0
    try:
        os.makedirs(out, exist_ok=True)
        clear_outputs(out)
    except OSError as exc:
        raise UsageError("cannot write into the output folder {} ({})".format(
            out, exc.strerror or type(exc).__name__)) from None
    return v1_watcher


def _score(args: argparse.Namespace, io: frame.Io, setup: reference_setup.Setup,
           reference: Any, fmt: Any, res_dir: str,
           part: Optional[public_part.PublicPart] = None) -> _Scored:
    """The submission's predictions found and scored by the engine; a broken reference unit
    ends the run as the organizers' problem (exit 3), any fatal problem of the submission as
    the participant's (exit 1), every one of them listed. With a public part (public_part.py)
    every id of the test set is expected and checked, the labelled ones scored."""
    task, units = setup.task, fmt.words.get("units", "units")
    found = fmt.discover(res_dir, part.stand_in.ids if part else reference.ids)
    items = [(i, p, os.path.relpath(p, res_dir)) for i, p in sorted(found.files.items())]
    workers = args.workers or engine.default_workers(len(items), task.unit_seconds)
    io.sayer(args.quiet)(
        "{} scoring program {}: {:,} reference {}, {:,} predictions found, {} worker{}".format(
            task.title, __version__, len(reference.ids), units, len(items), workers,
            "s" if workers > 1 else ""))
    held = set(reference.ids)
    unlabelled = [item for item in items if item[0] not in held]
    items = [item for item in items if item[0] in held]
    progress = None if args.quiet else engine.Progress(len(items), io.stdout,
                                                      args.progress_every, noun=units)
    acc = engine.evaluate(task, reference, fmt, setup.settings, items, workers, progress)
    if acc.reference_log.fatal:
        raise BrokenReference(acc.reference_log)
    log = found.log
    log.merge(acc.submission_log)
    if part is not None and unlabelled:   # checked as the kit checks them: no label needed
        # by the format that discovered them (a format may keep what discovery read: the
        # panoptic task's segments_info per PNG)
        checked = engine.evaluate(validate.CheckOnly(), part.stand_in, fmt, None,
                                  unlabelled, workers, None)
        log.merge(checked.submission_log)
    if log.fatal:
        raise SubmissionError(log, **fmt.words)
    return _Scored(acc.state, log, acc.units, workers)


def _summarize(setup: reference_setup.Setup, reference: Any, state: Any) -> Summary:
    """The task's summary, with the intervals when config.yaml leaves them on."""
    summary = setup.task.summarize(state, reference, setup.settings)
    if setup.intervals.enabled:
        summary = summary._replace(confidence=confidence.compute(
            setup.task, state, summary, reference, setup.settings, setup.intervals.by))
    return summary


def _print_results(stdout, setup: reference_setup.Setup, summary: Summary) -> None:
    """The console's results: the task's table, then the intervals' lines."""
    stdout.write("\n")
    headers, rows = setup.task.report.table(summary)
    print_table(headers, rows, stream=stdout)
    stdout.write("\n")
    if setup.intervals.enabled:
        for line in interval_text.console_lines(summary.confidence, setup.task.title):
            stdout.write(line + "\n")
        stdout.write("\n")


def _write_outputs(out: str, summary: Summary, page: str) -> None:
    """scores.txt and scores.json, then the page (see HTML_SETTLE_SECONDS), everything computed
    before anything is written. A page that cannot be written takes the scores with it."""
    scores = list(summary.scores) + (summary.confidence.scores() if summary.confidence else [])
    os.makedirs(out, exist_ok=True)
    scores_file.write(out, scores)
    try:
        with open(os.path.join(out, HTML_FILE), "w", encoding="utf-8") as f:
            f.write(page)
    except BaseException:
        clear_outputs(out)
        raise


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")


def _after_internal_error(args: Optional[argparse.Namespace], exc: BaseException) -> List[str]:
    """No scores of a failed run survive; the traceback goes to the private output (CodaLab v1
    shows private/ to organizers only); the lines that say where each platform keeps it."""
    out = (args.output or args.out) if args is not None else None
    _discard_scores(out)
    private = _write_traceback(out, exc)
    return [
        "Organizers:",
        "  - CodaLab: the full traceback is in this submission's private output "
        "(private/traceback.txt){}.".format("" if private else " - not written this time: no "
                                            "writable output folder"),
        "  - Codabench keeps no private output and uploads nothing after a failed run: download "
        "the submission and re-run it locally with SCORING_DEBUG=1 python3 score.py --ref "
        "REFERENCE --res SUBMISSION to see the traceback.",
    ]


COMMAND = frame.Command("score.py", build_parser, run, not_blamed="the submission",
                        check_args=_check_args, after_internal_error=_after_internal_error)


def main(argv: Optional[List[str]] = None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)


def _discard_scores(out: Optional[str]) -> None:
    if out and os.path.isdir(out):
        for name in SCORE_FILES:
            try:
                os.remove(os.path.join(out, name))
            except OSError:
                pass


def _write_traceback(out: Optional[str], exc: BaseException) -> bool:
    """The traceback into out/private/traceback.txt (CodaLab v1 shows private/ to organizers
    only); False if there is no output folder or it cannot be written."""
    if not out:
        return False
    try:
        os.makedirs(os.path.join(out, "private"), exist_ok=True)
        with open(os.path.join(out, "private", "traceback.txt"), "w") as f:
            f.write(frame.traceback_text(exc))
        return True
    except OSError:
        return False

