"""compare.py --leaderboard EXPORT: exactly the submissions the leaderboard shows, one per row,
picked from the platform's bulk download (platform_files/) and named after the row's owner, or
its team with --roster.

A Codabench row names its submission (`{owner}-{id}`), the download's names carry the same id;
CodaLab's export and our leaderboard.csv name owners only, and CodaLab's download holds one
submission per leaderboard entry, so those are joined by owner (CodaLab names the file after
"Team <name>" when the account set a team name: joined through the roster's team then). A row
whose submission is not in the download, a download no row names, and any other file are
listed with the reason, in the entries compare.py shows as left out: nothing is dropped
silently.
"""
import argparse
import os
from typing import Any, Callable, Dict, List, NamedTuple, Optional

from scoring.problems import UsageError, shown
from ..platform_files import downloads, participants, results_export
from ..teams import roster as roster_file
from .submissions import Entry


def add_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the leaderboard's submissions (docs/standings.md)")
    g.add_argument("--leaderboard", metavar="EXPORT",
                   help="the phase's results CSV (Codabench's results, CodaLab's Download CSV, "
                        "or compare.py's leaderboard.csv): compare exactly the submissions it "
                        "shows, one per row, from the SUBMISSION arguments, which are the "
                        "platform's bulk download (the folder or its zip)")
    g.add_argument("--score-column", metavar="TITLE",
                   help="the export's score column (default: its first)")
    add_roster_options(g)


def add_roster_options(g) -> None:
    g.add_argument("--roster", metavar="CSV",
                   help="the teams: a CSV with one member (username or email) per row; each "
                        "row is then named after its owner's team")
    g.add_argument("--team-column", default="team", metavar="NAME")
    g.add_argument("--member-column", default="member", metavar="NAME")
    g.add_argument("--participants", metavar="JSON_OR_CSV",
                   help="Codabench's /api/participants/?competition=ID JSON, or the "
                        "participants tab's 'Download all participants' CSV (maps emails to "
                        "usernames)")


def read_roster(args) -> Optional[roster_file.Roster]:
    if not getattr(args, "roster", None):
        return None
    emails = participants.emails_to_usernames(args.participants) if args.participants else None
    return roster_file.read(args.roster, args.team_column, args.member_column, emails)


class Picked(NamedTuple):
    entries: List[Entry]
    cleanups: List[Callable[[], None]]
    format: str
    rows: List[Dict[str, Any]]    # per leaderboard row: model, owner, submission_id, line


def _downloads(paths: List[str], cleanups) -> List[downloads.Bulk]:
    out = []
    for path in paths:
        if not os.path.exists(path):
            raise UsageError("no such file or folder: {}".format(shown(path)))
        bulk = downloads.open_bulk(path)
        cleanups.append(bulk.cleanup)
        if not bulk.files:
            raise UsageError("{} is not the platform's bulk download: no file in it is named as "
                             "the platform names a submission (docs/standings.md)".format(
                                 shown(path)))
        out.append(bulk)
    return out


def name_of(owner: str, roster: Optional[roster_file.Roster]) -> str:
    if roster is None:
        return owner
    teams = roster.teams_of(owner)
    return teams[0] if teams else "{} (not on the roster)".format(owner)


def pick(paths: List[str], export_path: str, score_column: Optional[str],
         roster: Optional[roster_file.Roster]) -> Picked:
    export = results_export.read(export_path, score_column)
    cleanups: List[Callable[[], None]] = []
    try:
        bulks = _downloads(paths, cleanups)
    except Exception:
        for c in cleanups:
            c()
        raise
    files = [f for b in bulks for f in b.files]
    by_id: Dict[int, downloads.File] = {f.facts.submission_id: f for f in files
                                        if f.facts.submission_id is not None}
    by_owner: Dict[str, List[downloads.File]] = {}
    for f in files:
        by_owner.setdefault(f.facts.owner.casefold(), []).append(f)
    chosen = []   # (row, file or None, reason)
    for row in export.rows:
        if row.submission_id is not None and export.format == "codabench":
            found = by_id.get(row.submission_id)
            reason = "" if found else "on the leaderboard ({} line {}: {}-{}) but not in the " \
                "download".format(os.path.basename(export_path), row.line, row.owner,
                                  row.submission_id)
        else:
            mine = by_owner.get(row.owner.casefold(), [])
            if not mine and roster is not None and roster.teams_of(row.owner):
                # CodaLab names the download "Team <name>" when the account set a team name,
                # while its CSV names the username: joined through the roster's team
                mine = by_owner.get("team " + roster.teams_of(row.owner)[0].casefold(), [])
            found = mine[0] if len(mine) == 1 else None
            reason = "" if found else (
                "on the leaderboard ({} line {}) but no download is {}'s".format(
                    os.path.basename(export_path), row.line, row.owner) if not mine else
                "{} downloads are {}'s and the export names no submission id: download only "
                "the leaderboard's one".format(len(mine), row.owner))
        chosen.append((row, found, reason))
    names = [name_of(row.owner, roster) for row, _, _ in chosen]
    entries, rows = [], []
    for (row, found, reason), name in zip(chosen, names):
        if names.count(name) > 1:     # two rows of one owner or of one team's accounts
            name = "{} ({})".format(name, row.submission_id if row.submission_id is not None
                                    else row.line)
        entries.append(Entry(shown(name), found.path if found else "", reason))
        rows.append({"model": shown(name), "owner": row.owner,
                     "submission_id": row.submission_id, "line": row.line})
    used = set(id(f) for _, f, _ in chosen if f is not None)
    for f in files:
        if id(f) not in used:
            entries.append(Entry(shown(os.path.basename(f.path)), f.path,
                                 "in the download, but no row of the leaderboard export names "
                                 "it (submission {} by {})".format(
                                     f.facts.submission_id or f.facts.number, f.facts.owner)))
    for b in bulks:
        for name, why in b.others:
            entries.append(Entry(name, os.path.join(b.folder, name), why))
    return Picked(entries, cleanups, export.format, rows)


def agreement_rows(pairs, models: List[str], valid: List[str]) -> Optional[List[dict]]:
    """comparison.json's `agreement` (with --leaderboard): per pair of valid submissions, the
    share of identical pixels (or answers) over what both predicted, highest first; evidence
    of near-identical predictions for the jury, never a verdict."""
    if pairs is None:
        return None
    keep = set(valid)
    rows = []
    for (i, j), (same, size) in pairs.items():
        if models[i] in keep and models[j] in keep and size:
            rows.append({"a": models[i], "b": models[j], "identical": same, "compared": size,
                         "share": round(same / size, 6)})
    return sorted(rows, key=lambda r: (-r["identical"] * 1.0 / r["compared"], r["a"], r["b"]))
