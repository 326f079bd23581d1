"""Command line: the worker's form and the participant's local form, one pipeline.

reference -> submission discovery -> parallel scoring with checks -> report. Errors a participant
or an organizer can fix end with a message on stderr and a distinct exit code, never a traceback.
"""
import argparse
import datetime
import os
import sys
import time
import traceback
from typing import Any, Dict, List, Optional

from . import __version__, engine, submission
from .problems import REF_CONFIG, BrokenReference, ProblemLog, ScoringError, SubmissionError, \
    UsageError
from .report import scores_file
from .tasks import DEFAULT, TASKS

EXIT_OK, EXIT_SUBMISSION, EXIT_USAGE, EXIT_REFERENCE, EXIT_INTERNAL = 0, 1, 2, 3, 4
CONFIG_FILE = "config.yaml"

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
                   help="processes to use (default: the CPUs this process may use, {}, or "
                        "fewer for small sets: one per {} images)".format(
                            engine.usable_cpus(), engine.MIN_IMAGES_PER_WORKER))
    p.add_argument("--task", choices=sorted(TASKS), default=None,
                   help="challenge to score (default: the reference's config.yaml, else {})".format(
                       DEFAULT))
    p.add_argument("--progress-every", type=float, default=5.0, metavar="SECONDS",
                   help="seconds between progress lines on long runs (default 5)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    for task in TASKS.values():
        task.add_options(p)
    return p


def _paths(args) -> Dict[str, Optional[str]]:
    if args.input or args.output:
        if not (args.input and args.output) or args.ref or args.res:
            raise UsageError("give either INPUT OUTPUT (worker form) or --ref and --res")
        return {"ref": os.path.join(args.input, "ref"), "res": os.path.join(args.input, "res"),
                "out": args.output}
    if not (args.ref and args.res):
        raise UsageError("give --ref and --res (or INPUT OUTPUT as the worker does); see --help")
    return {"ref": args.ref, "res": args.res, "out": args.out}


def read_config(ref_dir: str) -> Dict[str, Any]:
    """The reference's config.yaml, in ref_dir or in its single sub-folder; {} if none."""
    path = os.path.join(ref_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        sub = submission.sole_subfolder(ref_dir)
        if sub is None or not os.path.isfile(os.path.join(sub, CONFIG_FILE)):
            return {}
        path = os.path.join(sub, CONFIG_FILE)
    try:
        import yaml
        with open(path) as f:
            config = yaml.safe_load(f) or {}
        if not isinstance(config, dict):
            raise ValueError("it is not a mapping")
        return config
    except Exception as exc:
        log = ProblemLog()
        log.add(REF_CONFIG, CONFIG_FILE, "unreadable YAML ({})".format(exc))
        raise BrokenReference(log) from None


def print_table(headers: List[str], rows: List[List[str]], stream) -> None:
    widths = [max(len(r[i]) for r in [headers] + rows) for i in range(len(headers))]
    fmt = "  ".join(("{:<%d}" if i == 0 else "{:>%d}") % w for i, w in enumerate(widths))
    stream.write(fmt.format(*headers) + "\n")
    stream.write("  ".join("-" * w for w in widths) + "\n")
    for r in rows:
        stream.write(fmt.format(*r).rstrip() + "\n")


def run(args, stdout) -> int:
    started = time.monotonic()
    paths = _paths(args)
    say = (lambda s: None) if args.quiet else (lambda s: (stdout.write(s + "\n"), stdout.flush()))
    cleanups = []
    try:
        ref_dir, cleanup = submission.unpack_if_zip(paths["ref"])
        cleanups.append(cleanup)
        res_dir, cleanup = submission.unpack_if_zip(paths["res"])
        cleanups.append(cleanup)

        # Task and options: command line, then the reference's config.yaml, then defaults.
        ref_config = read_config(ref_dir)
        task_name = args.task or ref_config.get("task", DEFAULT)
        if task_name not in TASKS:
            log = ProblemLog()
            log.add(REF_CONFIG, CONFIG_FILE, "unknown task {!r}".format(task_name))
            raise BrokenReference(log)
        task = TASKS[task_name]
        config = task.configure(args, ref_config)
        reference = task.open_reference(ref_dir, config)
        fmt = task.submission_format(config)
        units = fmt.words.get("units", "units")

        found = fmt.discover(res_dir, reference.ids)
        items = [(i, p, os.path.relpath(p, res_dir)) for i, p in sorted(found.files.items())]
        workers = args.workers or engine.default_workers(len(items))
        say("{} scoring program {}: {:,} reference {}, {:,} predictions found, {} worker{}".format(
            task.title, __version__, len(reference.ids), units, len(items), workers,
            "s" if workers > 1 else ""))
        progress = None if args.quiet else engine.Progress(len(items), stdout,
                                                          args.progress_every, noun=units)
        acc = engine.evaluate(task, reference, fmt, config, items, workers, progress)
        if acc.reference_log.fatal:
            raise BrokenReference(acc.reference_log)
        log = found.log
        log.merge(acc.submission_log)
        if log.fatal:
            raise SubmissionError(log, **fmt.words)

        summary = task.summarize(acc.state, reference, config)
        warnings = log.summary_lines(**fmt.words)
        seconds = time.monotonic() - started
        for w in warnings:
            say("WARNING: " + w)
        if not args.quiet:
            stdout.write("\n")
            print_table(*task.table(summary), stream=stdout)
            stdout.write("\n")
        if paths["out"]:
            run_info = {units: acc.state.units}
            run_info.update(task.run_facts(acc.state))
            run_info.update({
                "workers": workers,
                "seconds": round(seconds, 2), "reference_layout": reference.layout,
                "scorer_version": __version__,
                "finished": datetime.datetime.now(datetime.timezone.utc).strftime(
                    "%Y-%m-%d %H:%M:%S UTC"),
            })
            run_info.update(config)
            scores_file.write(paths["out"], summary["scores"])
            with open(os.path.join(paths["out"], "detailed_results.html"), "w",
                      encoding="utf-8") as f:
                f.write(task.render_html(summary, warnings, run_info))
            say("Wrote scores.txt, scores.json and detailed_results.html to {}".format(
                paths["out"]))
        say("Scored {:,} {} in {:.1f} s.".format(acc.units, units, time.monotonic() - started))
        return EXIT_OK
    finally:
        for cleanup in cleanups:
            cleanup()


def main(argv: Optional[List[str]] = None, stdout=None, stderr=None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    try:
        return run(args, stdout)
    except ScoringError as exc:
        stderr.write(exc.message())
        return exc.exit_code
    except UsageError as exc:
        stderr.write("ERROR: {}\n".format(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        stderr.write("Interrupted.\n")
        return 130
    except Exception:
        # A bug of ours: the participant sees a short message; the traceback goes to the
        # organizers' private output (CodaLab v1 keeps $output/private/ for them only).
        stderr.write("INTERNAL ERROR in the scoring program (not a problem with the submission). "
                     "Organizers: see private/traceback.txt in the output.\n")
        out = args.output or args.out
        if out:
            try:
                os.makedirs(os.path.join(out, "private"), exist_ok=True)
                with open(os.path.join(out, "private", "traceback.txt"), "w") as f:
                    traceback.print_exc(file=f)
            except OSError:
                pass
        if os.environ.get("SCORING_DEBUG"):
            traceback.print_exc(file=stderr)
        return EXIT_INTERNAL
