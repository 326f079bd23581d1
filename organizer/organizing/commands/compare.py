"""compare.py: the organizer's view of many submissions on one test set (docs/confidence.md).

reference (opened once) -> every submission found and checked -> one pass of the process pool
over the units, each unit's reference read once for all submissions -> per submission its
scores and interval (as score.py computes them) -> a paired bootstrap over the units ->
leaderboard.csv, comparison.json, comparison.html.
"""
import argparse
import datetime
import os
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional

from scoring import __version__, confidence, engine, reference_setup
from ..compare import family, leaderboard_pick, outputs, page, paired, submissions
from ..compare.floor import floor_sentence
from scoring.metrics import bootstrap
from scoring.problems import BrokenReference, ProblemLog, Refusal, UsageError
from scoring.registry import DEFAULT, TASKS, options_of
from scoring.registry import add_options as add_task_options
from scoring.report.text_table import print_table
from scoring.commands import frame
from ..ranks import competition_ranks
from ..split import selection as split_selection, side_by_side

FILES = ("leaderboard.csv", "comparison.json", "comparison.html")


class NothingScored(Refusal):
    """Every submission was left out: nothing to compare (exit 1)."""

    exit_code = frame.EXIT_REFUSED

    def __init__(self, listing: str) -> None:
        super().__init__(listing)
        self.listing = listing

    def __reduce__(self):
        return (type(self), (self.listing,))

    def message(self) -> str:
        return "ERROR: no submission could be scored; nothing was written.\n" + self.listing

EPILOG = """\
SUBMISSION: a zip or a folder of predictions (its name is the model's name), or a folder holding
such zips or folders (as downloaded from the platform). An invalid submission is listed with its
problem and left out.

exit status: 0 written; 1 no submission could be scored; 2 bad command line; 3 the reference
data is broken; 4 internal error.

example:
  compare.py --ref reference_data --out comparison team_a.zip team_b.zip downloads/
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="compare.py", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Score many submissions on one test set and compare them: "
                    "leaderboard.csv, comparison.json and comparison.html with bootstrap "
                    "confidence intervals, a significance map and rank stability.")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    p.add_argument("--ref", required=True, metavar="DIR_OR_ZIP", help="reference data")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the three files")
    p.add_argument("--workers", type=int, metavar="N",
                   help="processes to use (default: the CPUs this process may use, once the "
                        "units times the submissions are enough for a pool to pay for its "
                        "start-up; else 1)")
    p.add_argument("--task", choices=sorted(TASKS), default=None,
                   help="challenge (default: the reference's config.yaml, else {})".format(
                       DEFAULT))
    p.add_argument("--pairs", choices=family.CHOICES, default=family.AUTO,
                   help="the pairs the significance test compares, the family Holm's "
                        "adjustment covers: all (every pair: the full map), neighbours (each "
                        "submission against the next one in the ranking and against the "
                        "leader), auto (all up to {} submissions, else neighbours; the "
                        "default)".format(family.MAP_MAX))
    p.add_argument("--split", metavar="SPLIT_JSON",
                   help="the split.json bundle.sh --private-share wrote: score each submission "
                        "on one part of the test set (--part) with the full reference, and "
                        "show the public and private rankings side by side")
    p.add_argument("--part", choices=("private", "public", "all"), default=None,
                   help="with --split: the part scored and ranked (default private: the final "
                        "ranking)")
    p.add_argument("--progress-every", type=float, default=5.0, metavar="SECONDS")
    p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    add_task_options(p)
    leaderboard_pick.add_options(p)
    return p


def _ranking_key(task, settings) -> str:
    return task.keys(settings)[0]


def compare(args: argparse.Namespace, io: frame.Io) -> int:
    started = time.monotonic()
    stdout = io.stdout
    say = io.sayer(args.quiet)
    if os.path.lexists(args.out) and not os.path.isdir(args.out):
        raise UsageError("the output {} exists and is not a folder".format(args.out))
    cleanups: List[Callable[[], None]] = []
    try:
        entries, extra = _entries(args, cleanups)
        setup = reference_setup.unpack(args.ref, cleanups, io.show_as, args.task,
                                       options_of(args))
        task = setup.task
        reference = setup.open()
        # --split: discovered against every test unit, scored on the part's (split/)
        part = split_selection.select(args.split, args.part, reference)
        fmt = task.submission_format(setup.settings)
        noun = fmt.words.get("units", "units")
        opened, more = submissions.open_all(
            entries, lambda folder: fmt.discover(folder, reference.ids), fmt.words)
        cleanups += more
        candidates = [o for o in opened if not o.error]
        if part is not None:
            full = reference
            reference = split_selection.restricted(full, part.units)
            candidates = [o._replace(files=split_selection.files_of(o.files, reference))
                          for o in candidates]
        units = len(set(u for o in candidates for u in o.files))
        workers = args.workers or engine.default_workers(units * max(1, len(candidates)),
                                                         task.unit_seconds)
        given = sum(1 for o in opened if o.submission)   # stray files are listed, not counted
        say("{} comparison {}: {:,} reference {}, {} submissions ({} left out before scoring), "
            "{} worker{}".format(task.title, __version__, len(reference.ids), noun,
                                 given, given - len(candidates), workers,
                                 "s" if workers > 1 else ""))
        progress = None if args.quiet else engine.Progress(units, stdout, args.progress_every,
                                                          noun=noun)
        scored = engine.evaluate_many(
            task, reference, fmt, setup.settings,
            [{u: (p, os.path.join(o.model, os.path.relpath(p, o.folder)))
              for u, p in o.files.items()} for o in candidates], workers, progress,
            agreement_of_pairs=bool(args.leaderboard))
        if scored.reference_log.fatal:
            raise BrokenReference(scored.reference_log)

        invalid = [dict({"model": o.model, "error": o.error},
                        **({} if o.submission else {"not_a_submission": True}))
                   for o in opened if o.error]
        valid = []  # (model, state)
        for o, state, log in zip(candidates, scored.states, scored.submission_logs):
            found = ProblemLog()
            found.merge(o.log)
            found.merge(log)
            if found.fatal:
                invalid.append({"model": o.model,
                                "error": submissions.first_problem(found, fmt.words)})
            else:
                valid.append((o.model, state))
        if not valid:
            raise NothingScored("".join("  - {}: {}\n".format(x["model"], x["error"])
                                        for x in invalid))
        agreeing = leaderboard_pick.agreement_rows(
            scored.agreement, [o.model for o in candidates], [m for m, _ in valid])
        if agreeing is not None:
            extra["agreement"] = agreeing
        other = None
        if part is not None and part.other() is not None:
            other = _other_part(setup, full, fmt, part, opened, valid, workers)
        return _report(args, stdout, say, setup, reference, valid, invalid, noun, workers,
                       started, extra, part, other)
    finally:
        for cleanup in cleanups:
            cleanup()


def _entries(args: argparse.Namespace, cleanups: List[Callable[[], None]]):
    """The submissions to compare: as given, or the leaderboard's (--leaderboard); and what
    comparison.json says of them beyond the scores (each model's leaderboard row)."""
    if not args.leaderboard:
        return submissions.expand(args.submissions), {}
    picked = leaderboard_pick.pick(args.submissions, args.leaderboard, args.score_column,
                                   leaderboard_pick.read_roster(args))
    cleanups += picked.cleanups
    return picked.entries, {"leaderboard_rows": picked.rows}


class Scored(NamedTuple):
    """The valid submissions in rank order (ties by name): each one's row of leaderboard.csv
    ({"model", "scores", "rank"}), its own interval of the ranking score, its Resampling
    (None without intervals)."""
    rows: List[Dict[str, Any]]
    own: Dict[str, Any]
    resamplings: List[Any]


def _other_part(setup, full, fmt, part, opened, valid, workers):
    """The complementary part's scores and intervals of the valid submissions (--split)."""
    files = {o.model: {u: (p, os.path.join(o.model, os.path.relpath(p, o.folder)))
                       for u, p in o.files.items()} for o in opened if not o.error}
    models = [model for model, _ in valid]
    return side_by_side.other_part(setup, full, fmt, part, models, [files[m] for m in models],
                                   workers, _ranking_key(setup.task, setup.settings))


def _report(args, stdout, say, setup, reference, valid, invalid, noun, workers,
            started, extra=None, part=None, other=None) -> int:
    task, settings = setup.task, setup.settings
    key = _ranking_key(task, settings)
    scored = _in_rank_order(_own_scores(setup, reference, valid, key), key)
    doc = _analyse(task, key, scored, len(reference.ids), noun, args.pairs)
    doc["invalid"] = invalid
    doc.update(extra or {})
    doc["confidence"] = setup.intervals.enabled
    if part is not None:
        doc["split"] = side_by_side.split_doc(part, other, scored.rows, scored.own, key)
    _write(args.out, task, settings, scored, doc, invalid,
           _facts(task, doc, scored, invalid, workers, started))
    if not args.quiet:
        _print_summary(stdout, say, key, scored, doc, invalid)
    if "kendall_tau" in doc.get("split", {}):
        tau = doc["split"]["kendall_tau"]
        say("Scored on the {} part ({}); Kendall's tau between the public and private "
            "rankings: {}.".format(doc["split"]["part"], args.split,
                                   "n/a" if tau is None else "{:.3f}".format(tau)))
    say("Wrote {} to {}".format(", ".join(FILES), args.out))
    return frame.EXIT_OK


def _own_scores(setup, reference, valid, key: str) -> Scored:
    """Per submission its scores and its own interval (what score.py writes for it), and its
    Resampling for the comparisons; in the order given."""
    task, settings = setup.task, setup.settings
    rows, own, resamplings = [], {}, []
    for model, state in valid:
        summary = task.summarize(state, reference, settings)
        res = confidence.resampling_of(task, state, summary, reference, settings,
                                       setup.intervals.by) if setup.intervals.enabled else None
        intervals = confidence.intervals_of(task, res)
        scores = dict(summary.scores)
        if intervals:
            scores.update(intervals.scores())
            own[model] = intervals.interval(key)
        rows.append({"model": model, "scores": scores})
        resamplings.append(res)
    return Scored(rows, own, resamplings)


def _in_rank_order(scored: Scored, key: str) -> Scored:
    """Rank order (ties by name), before anything is derived, so that every output lists the
    models and the pairs in that order; each row gets its rank (1-2-2-4)."""
    rows = scored.rows
    ranks = competition_ranks([r["scores"].get(key) for r in rows])
    order = sorted(range(len(rows)), key=lambda m: (ranks[m], rows[m]["model"]))
    return Scored([dict(rows[m], rank=ranks[m]) for m in order], scored.own,
                  [scored.resamplings[m] for m in order])


def _analyse(task, key: str, scored: Scored, reference_units: int, noun: str,
             pairs_kind: str) -> Dict[str, Any]:
    """comparison.json's document: the paired bootstrap of the ranking score (when the task
    resamples it), the randomization test of the family of pairs --pairs chooses, and what
    was resampled."""
    resamplings = scored.resamplings
    names = [r["model"] for r in scored.rows]
    points = [r["scores"].get(key) for r in scored.rows]
    tests = family.choose(pairs_kind, len(names))
    values = tested = None
    if confidence.interval_keys(task)[:1] == [key] and None not in resamplings:
        tables = paired.row_tables(resamplings)  # once, for both
        values = paired.resample_values(resamplings, tables=tables)
        tested = paired.randomization(resamplings, tests.pairs, tables=tables)
    doc = paired.analyse(names, points, values, tested=tested, tests=tests)
    units, unit_noun = paired.resampled_units(resamplings[0], reference_units, noun)
    return dict({"task": task.name, "key": key, "higher_is_better": True, "units": units,
                 "noun": unit_noun, "resamples": bootstrap.RESAMPLES if values else 0,
                 "seed": bootstrap.SEED, "level": bootstrap.LEVEL_PERMILLE / 1000}, **doc)


def _facts(task, doc: Dict[str, Any], scored: Scored, invalid, workers: int,
           started: float) -> List[List[Any]]:
    """The page's run information."""
    finished = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    split = doc.get("split")
    part = [["Part scored", "{} ({}, {:,} of {:,} {})".format(
        split["part"], split["file"], split["counts"][split["part"]]["units"],
        split["counts"]["all"]["units"], split.get("unit_noun") or "units")]] if split else []
    return [["Task", task.title]] + part + [["Submissions compared", len(scored.rows)],
            ["Left out", sum(1 for x in invalid if not x.get("not_a_submission"))],
            ["Not submissions (listed)", sum(1 for x in invalid if x.get("not_a_submission"))],
            ["{} per submission".format(doc["noun"].capitalize()), doc["units"]],
            ["Resamples", doc["resamples"]], ["Pairs tested", doc["family"]["tested"]],
            ["Worker processes", workers],
            ["Time taken", "{:.1f} s".format(time.monotonic() - started)],
            ["Scorer version", __version__], ["Finished", finished]]


def _write(out: str, task, settings, scored: Scored, doc: Dict[str, Any], invalid,
           facts: List[List[Any]]) -> None:
    """leaderboard.csv, comparison.json, comparison.html."""
    rows = scored.rows
    present = [k for k in task.keys(settings) if any(r["scores"].get(k) is not None
                                                     for r in rows)]
    present += [k for k in confidence.interval_score_keys(task)
                if any(r["scores"].get(k) is not None for r in rows)]
    shares = [m["rank_shares"] for m in doc["models"]] if doc["resamples"] else None
    extra = [side_by_side.section(doc["split"], doc["key"])] \
        if "rows" in doc.get("split", {}) else []
    html_page = page.render("{} - comparison of {} submissions".format(task.title, len(rows)),
                            doc, scored.own, shares, invalid, facts, extra)
    outputs.write_text(out, "leaderboard.csv", outputs.leaderboard_csv(present, rows))
    outputs.write_text(out, "comparison.json", outputs.comparison_json(doc))
    outputs.write_text(out, "comparison.html", html_page)


def _print_summary(stdout, say, key: str, scored: Scored, doc: Dict[str, Any],
                   invalid) -> None:
    """The console: the ranking with each interval, what was left out, how many pairs are
    marked."""
    table = []
    for m in doc["models"]:
        ends = scored.own.get(m["model"])
        table.append([m["model"], str(m["rank"]),
                      "n/a" if m["score"] is None else "{:.4f}".format(m["score"]),
                      "{:.4f}-{:.4f}".format(*ends) if ends else "n/a",
                      "{}-{}".format(*m["rank_ci"]) if m["rank_ci"] else "n/a"])
    stdout.write("\n")
    print_table(["model", "rank", key, "95% CI", "rank 95% CI"], table, stdout)
    stdout.write("\n")
    for title, listed in (("Left out", [x for x in invalid if not x.get("not_a_submission")]),
                          ("Not submissions", [x for x in invalid
                                               if x.get("not_a_submission")])):
        if listed:
            say("{} ({}):".format(title, len(listed)))
            for x in listed:
                say("  - {}: {}".format(x["model"], x["error"]))
    if not doc["resamples"]:
        return
    marked = len(paired.significant(doc["pairs"]))
    over = "approximate randomization over {:,} {}, Holm-adjusted p <= 0.05".format(
        doc["units"], doc["noun"])
    floor = floor_sentence(doc)   # the page says it under the map, in the same words
    if doc["family"]["pairs"] == family.ALL:
        say("{} of {} ordered pairs differ significantly ({}).{}".format(
            marked, len(doc["pairs"]), over, " " + floor if floor else ""))
    else:
        say("{} of the {} pairs tested (each submission against the next one and the leader) "
            "differ significantly ({}).{}".format(marked, doc["family"]["tested"], over,
                                                  " " + floor if floor else ""))


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.roster and not args.leaderboard:
        parser.error("--roster names the leaderboard's rows: give --leaderboard too")


COMMAND = frame.Command("compare.py", build_parser, compare, not_blamed="the submissions",
                        check_args=_check_args)


def main(argv: Optional[List[str]] = None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)
