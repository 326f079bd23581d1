"""standings.py: who wins a track, decided as the rules decide it, from the platform's own files
(docs/standings.md): the final leaderboard (--leaderboard), the roster (--roster), verify.py's
verdicts (--verdict TEAM=DIR), the submissions listing (--submissions), compare.py's
comparison.json (--comparison). Writes standings.json, standings.csv and standings.html into
--out and prints the prize places and every team passed over, each with its reason in one line.

exit status: 0 written; 2 bad command line (a --verdict team not on the leaderboard...); 3 an
input is unusable (a verdict folder without verdict.json, two tracks mixed, a roster whose team
names clash...); 4 internal error.

The split of the test set (issue 35): with --split split.json --part private|public|all the
places are ranked on that part, from the comparison compare.py made with the same --split and
--part (standings.py scores nothing: a comparison of another part or split is refused); each
team's submission is the one its leaderboard row shows, its leaderboard rank beside its rank on
the part (standings/final_part.py). Without --split a comparison of one part only names it
("comparison_part").
"""
import argparse
import os
from typing import Any, Dict, List, Optional

from scoring import __version__
from scoring.commands import frame
from scoring.problems import UsageError, shown
from scoring.registry import DEFAULT, TASKS
from ..compare import leaderboard_pick, outputs as compare_outputs
from ..platform_files import listing, results_export
from ..platform_files.problems import PlatformFileProblem
from ..standings import decide, final_part, inputs, outputs, page
from ..standings.copies import near_identical
from ..teams import limits

EPILOG = """example (the README's end-of-challenge block runs it on the sample):
  standings.py --out standings --leaderboard results.csv --roster roster.csv \\
      --participants participants.json --submissions submissions.json --per-day 2 --total 20 \\
      --verdict Alpha=verdicts/Alpha --verdict Bravo=verdicts/Bravo --comparison comparison
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="standings.py", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Decide a track's prize places: the leaderboard's teams in order, each "
                    "checked (registration, one team per account, submission limits over all "
                    "its accounts, a valid final package); the first eligible ones win.")
    p.add_argument("--leaderboard", required=True, metavar="EXPORT",
                   help="the final leaderboard: Codabench's results CSV, CodaLab's Download "
                        "CSV or compare.py's leaderboard.csv")
    p.add_argument("--score-column", metavar="TITLE", help="its score column (default: the "
                                                            "first)")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--verdict", action="append", default=[], metavar="TEAM=DIR",
                   help="verify.py's --out folder for a team's final package (repeatable)")
    p.add_argument("--submissions", metavar="LISTING_OR_DOWNLOAD",
                   help="every submission of the phase: Codabench's /api/submissions/?phase=ID "
                        "as JSON or CSV (the submissions tab's 'Download as CSV'), or the bulk "
                        "download (names only: no status)")
    p.add_argument("--per-day", type=int, metavar="N", help="the rules' submissions per team "
                                                            "per UTC day (Agriculture-Vision: 2)")
    p.add_argument("--total", type=int, metavar="N", help="the rules' submissions per team in "
                                                          "total (Agriculture-Vision: 20)")
    p.add_argument("--comparison", metavar="JSON_OR_DIR",
                   help="compare.py's comparison.json of the leaderboard's submissions (run "
                        "with --leaderboard and --roster): are the places separated?")
    p.add_argument("--identical", type=float, default=0.999, metavar="SHARE",
                   help="with --comparison: list the pairs of different teams whose predictions "
                        "agree on at least this share of pixels (or answers), as evidence for "
                        "the jury, never a verdict (default 0.999)")
    p.add_argument("--split", metavar="SPLIT_JSON",
                   help="the split.json of bundle.sh --private-share: rank the places on one "
                        "part (--part), from the --comparison compare.py made with the same "
                        "--split and --part")
    p.add_argument("--part", choices=("private", "public", "all"), default=None,
                   help="with --split: the part the places are ranked on (default private: "
                        "the final ranking)")
    p.add_argument("--places", type=int, default=3, metavar="N", help="prizes (default 3)")
    p.add_argument("--track", default="", metavar="NAME", help="the track's name")
    p.add_argument("--task", choices=sorted(TASKS), default=None,
                   help="challenge (default: the verdicts' or the comparison's, else {})"
                        .format(DEFAULT))
    p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    g = p.add_argument_group("teams")
    leaderboard_pick.add_roster_options(g)
    return p


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    for name in ("places", "per_day", "total"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error("--{} must be at least 1".format(name.replace("_", "-")))
    if not 0.0 < args.identical <= 1.0:
        parser.error("--identical is a share: above 0, at most 1")
    if (args.per_day or args.total) and not args.submissions:
        parser.error("--per-day and --total count the submissions: give --submissions too")


def _task(args, verdicts: Dict[str, decide.Verdict], comparison) -> str:
    """The one task of the run: two tracks (or challenges) mixed in one run are refused."""
    seen = {v.task: "--verdict {}".format(v.team) for v in verdicts.values()}
    if comparison is not None:
        seen.setdefault(comparison["task"], "--comparison")
    if args.task:
        seen.setdefault(args.task, "--task")
    if len(seen) > 1:
        raise PlatformFileProblem("the inputs are of different challenges ({}): give one "
                                  "track's files per run".format(", ".join(
                                      "{} from {}".format(t, w) for t, w in seen.items())))
    return next(iter(seen), DEFAULT)


def _model_of(comparison: Optional[Dict[str, Any]]):
    """A team's model in the comparison: the model of its leaderboard row (comparison.json's
    leaderboard_rows, compare.py --leaderboard), else the team's name as a model's name."""
    rows = (comparison or {}).get("rows") or []
    by_row = {(r["owner"], r["submission_id"]): r["model"] for r in rows}

    def model_of(t: Dict[str, Any]) -> str:
        return by_row.get((t["row"]["owner"], t["row"]["submission_id"]), t["team"])
    return model_of


def run(args: argparse.Namespace, io: frame.Io) -> int:
    say = io.sayer(args.quiet)
    if os.path.lexists(args.out) and not os.path.isdir(args.out):
        raise UsageError("the output {} exists and is not a folder".format(shown(args.out)))
    verdict_args = [inputs.verdict_arg(v) for v in args.verdict]
    export = results_export.read(args.leaderboard, args.score_column)
    roster = leaderboard_pick.read_roster(args)
    rows = results_export.ranked(export)
    on_board = {decide.team_of(r.owner, roster) for r in rows}
    for team, _ in verdict_args:
        if team not in on_board:
            raise UsageError("--verdict {}=...: no team {} on the leaderboard {} (its teams: "
                             "{})".format(team, team, shown(args.leaderboard),
                                          ", ".join(sorted(on_board))))
    teams_given = [t for t, _ in verdict_args]
    if len(set(teams_given)) != len(teams_given):
        raise UsageError("--verdict names a team twice")
    verdicts = {team: inputs.read_verdict(team, folder) for team, folder in verdict_args}
    comparison = inputs.read_comparison(args.comparison) if args.comparison else None
    final = final_part.read(args.split, args.part, comparison)
    task = TASKS[_task(args, verdicts, comparison)]
    inputs.check_one_track(verdicts, comparison, rows, lambda o: decide.team_of(o, roster))
    submitted = listing.read(args.submissions) if args.submissions else None
    counts = limits.count(submitted, lambda o: decide.team_of(o, roster), args.per_day,
                          args.total) if submitted is not None else None
    teams = decide.decide(decide.Inputs(
        rows, roster, verdicts, counts, args.per_day, args.total, args.places,
        comparison["pairs"] if comparison else None,
        final.scores if final else None, final.part if final else ""),
        _model_of(comparison))
    key = "part_rank" if final else "leaderboard_rank"
    copies = near_identical(comparison, lambda o: decide.team_of(o, roster),
                            args.identical) if comparison else []
    owners = sorted(set(s.owner for s in submitted or []) | set(r.owner for r in rows))
    doc: Dict[str, Any] = {
        "track": args.track, "task": task.name, "task_title": task.title,
        "column": export.column.rsplit(")-", 1)[-1], "places": args.places,
        "compared": comparison is not None,
        "comparison_part": comparison["part"] if comparison else None,
        "split": final.summary() if final else None, "ranked_by": key,
        "ties": decide.ties(teams, key),
        "limits": {"per_day": args.per_day, "total": args.total, "rule": (
            "Counted as Codabench counts one account's (Phase.can_user_make_submissions), over "
            "all of a team's accounts: top-level submissions, Failed ones not counted, days in "
            "UTC; limits {} a day, {} in total.".format(args.per_day or "none",
                                                       args.total or "none"))},
        "not_checked": [name for name, given in (
            ("registration and one team per account (no --roster)", roster is not None),
            ("submission limits (no --submissions with --per-day or --total)",
             submitted is not None and bool(args.per_day or args.total)),
            ("separation of the places (no --comparison)", comparison is not None))
            if not given],
        "accounts_not_on_roster": [o for o in owners if roster is not None and
                                   not roster.teams_of(o)],
        "teams": [_public(t) for t in teams],
        "near_identical": {"threshold": args.identical, "computed": bool(
            comparison and comparison["agreement"] is not None), "pairs": copies},
        "inputs": _inputs(args, verdict_args), "scorer_version": __version__}
    os.makedirs(args.out, exist_ok=True)
    compare_outputs.write_text(args.out, "standings.json", outputs.standings_json(doc))
    compare_outputs.write_text(args.out, "standings.csv", outputs.standings_csv(doc))
    compare_outputs.write_text(args.out, "standings.html", page.render(doc))
    for line in outputs.console_lines(doc):
        say(line)
    say("Wrote {} to {}".format(", ".join(outputs.FILES), args.out))
    return frame.EXIT_OK


def _public(t: Dict[str, Any]) -> Dict[str, Any]:
    keys = ("team", "accounts", "leaderboard_rank", "score", "eligible", "reasons",
            "prize_place", "part_score", "part_rank", "tied_with", "row", "other_rows",
            "submissions", "passed_over", "next_eligible", "separation_from_next")
    return {k: t[k] for k in keys if k in t}


def _inputs(args, verdict_args) -> List[Dict[str, str]]:
    given = [("leaderboard", args.leaderboard), ("roster", args.roster),
             ("participants", args.participants), ("submissions", args.submissions),
             ("comparison", args.comparison), ("split", args.split)] + [("verdict " + team, os.path.join(
                 folder, "verdict.json")) for team, folder in verdict_args]
    return [{"role": role, "path": os.path.basename(os.path.normpath(path)) if role ==
             "submissions" else os.path.normpath(path), "sha256": inputs.sha256(path)}
            for role, path in given if path]


COMMAND = frame.Command("standings.py", build_parser, run, not_blamed="the inputs",
                        check_args=_check_args)


def main(argv: Optional[List[str]] = None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)
