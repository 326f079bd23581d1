"""The roster: the registration form's export, a CSV with one member per row (columns `team` and
`member` unless told otherwise), each member a platform username or an email; emails become
usernames through the platform's participants list (platform_files/participants.py).

The platform knows accounts, the rules know teams: this is the only map between them. An account
on two teams is kept (each team lists it) and reported; two team names equal after normalization
(case, spaces) are refused, since no one can tell which one a row means.

Bounds: MAX_BYTES, read once.
"""
import csv
import io
import re
from typing import Dict, List, NamedTuple, Optional

from scoring import regular_file
from scoring.problems import shown
from scoring.quoting import brief
from ..platform_files.problems import PlatformFileProblem

MAX_BYTES = 16 << 20


def normalized(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip().casefold()


class Roster(NamedTuple):
    path: str
    teams: Dict[str, List[str]]        # team -> its accounts (usernames, or unmatched emails)
    team_of: Dict[str, List[str]]      # account (casefolded) -> its teams, roster order
    unmatched_emails: List[str]        # emails the participants list does not hold

    def teams_of(self, account: str) -> List[str]:
        return self.team_of.get(account.casefold(), [])

    def on_two_teams(self) -> Dict[str, List[str]]:
        return {a: t for a, t in self.team_of.items() if len(t) > 1}


def read(path: str, team_column: str = "team", member_column: str = "member",
         emails: Optional[Dict[str, str]] = None) -> Roster:
    try:
        raw = regular_file.read_bytes(path, MAX_BYTES, follow_links=True)
    except regular_file.Refused as exc:
        raise PlatformFileProblem("the roster {} cannot be read: {}".format(
            shown(path), exc.reason)) from None
    try:
        rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig", "replace"))))
    except csv.Error as exc:
        raise PlatformFileProblem("the roster {} is not a CSV file: {}".format(
            shown(path), exc)) from None
    header = [c.strip().casefold() for c in rows[0]] if rows else []
    try:
        t, m = header.index(team_column.casefold()), header.index(member_column.casefold())
    except ValueError:
        raise PlatformFileProblem(
            "the roster {} has no column {} and {} (its header: {}); name them with "
            "--team-column and --member-column".format(
                shown(path), brief(team_column), brief(member_column),
                shown(brief(",".join(rows[0]) if rows else "")))) from None
    teams: Dict[str, List[str]] = {}
    spelled: Dict[str, str] = {}
    team_of: Dict[str, List[str]] = {}
    unmatched: List[str] = []
    for number, cells in enumerate(rows[1:], 2):
        if not "".join(cells).strip():
            continue
        cells = cells + [""] * (len(header) - len(cells))
        team, member = re.sub(r"\s+", " ", cells[t]).strip(), cells[m].strip()
        if not team or not member:
            raise PlatformFileProblem("the roster {} line {}: a row needs a team and a member"
                                      .format(shown(path), number))
        first = spelled.setdefault(normalized(team), team)
        if first != team:
            raise PlatformFileProblem(
                "the roster {} line {}: the team names {} and {} are one name once case and "
                "spaces are set aside: write it one way".format(
                    shown(path), number, brief(first), brief(team)))
        account = member
        if "@" in member:
            account = (emails or {}).get(member.casefold(), member)
            if account == member:
                unmatched.append(member)
        teams.setdefault(team, [])
        if account not in teams[team]:
            teams[team].append(account)
        listed = team_of.setdefault(account.casefold(), [])
        if team not in listed:
            listed.append(team)
    return Roster(path, teams, team_of, unmatched)
