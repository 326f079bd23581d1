"""The team's claimed score: its row in a leaderboard export (CodaLab "Download CSV", Codabench
"results.csv", compare.py's leaderboard.csv or a plain CSV, read by the generalist ranking's own
reader, organizer/organizing/generalist/boards.py), or --claimed; and the rule that says whether the
rescored results match it.

The rule: the platform shows what score.py wrote (rounded to scores_file.DECIMALS = 10
decimals), rounded to the leaderboard's precision. So the rescored value, rounded to 10
decimals and then to as many decimals as the claimed value shows, must equal the claimed value:
a claimed 0.6133 matches a rescored 0.61328837 (0.6133), not 0.61324 (0.6132).
"""
import csv
import io
import re
from decimal import Decimal, InvalidOperation
from typing import List, NamedTuple, Optional

from ..generalist import boards
from ..generalist.config import BoardSpec
from ..generalist.problems import Collector
from scoring import regular_file
from scoring.problems import shown
from scoring.quoting import brief
from scoring.report.scores_file import DECIMALS

_PLAIN = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)$")


class LeaderboardProblem(Exception):
    """The organizer's leaderboard file or team name is unusable (exit 3): str() says why."""


class Claim(NamedTuple):
    text: str        # the value as the leaderboard shows it
    source: str      # "leaderboard.csv, team alice (CodaLab export, column mIoU)" or "--claimed"


def decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def claimed_value(text: str) -> Claim:
    value = text.strip()
    if not _PLAIN.match(value):
        raise ValueError("--claimed {}: give the score as the leaderboard shows it, a plain "
                         "decimal such as 0.6133".format(brief(text)))
    return Claim(value, "--claimed")


# A plain CSV names its teams in one of these columns (case-insensitive), in this order of
# preference; the exports' own columns are the generalist reader's (exports.py).
TEAM_COLUMNS = ("team", "team name", "user", "username", "participant", "model", "name")
_PLAIN_NEEDS_MODEL = "a plain CSV needs model_column"


def _team_column(path: str) -> str:
    """The team column of a plain CSV, from its header row."""
    try:
        raw = regular_file.read_bytes(path, boards.MAX_BOARD_BYTES, follow_links=True)
    except regular_file.Refused as exc:
        raise LeaderboardProblem("the leaderboard file {} cannot be read: {}".format(
            shown(path), exc.reason)) from None
    text = raw.decode("utf-8-sig", "replace")
    header = next(csv.reader(io.StringIO(text)), [])
    by_name = {cell.strip().casefold(): cell for cell in header}
    for name in TEAM_COLUMNS:
        if name in by_name:
            return by_name[name]
    raise LeaderboardProblem("the leaderboard file {} is a plain CSV whose header names no team "
                             "column (one of {}): {}".format(
                                 shown(path), ", ".join(TEAM_COLUMNS),
                                 shown(brief(",".join(header)))))


def read_claim(path: str, team: str, columns: List[str], table: Optional[int] = None) -> Claim:
    """The team's best row's score; LeaderboardProblem naming the file's problem otherwise.
    table: which table of a CodaLab export with several (one per leaderboard group)."""
    problems: List[str] = []
    for column in columns:
        spec = BoardSpec(name="leaderboard", path=path, line=0, format=None, table=table,
                         model_column=None, score_column=column, higher_is_better=True,
                         rank_column=None, duplicates="best", missing="absent")
        found = Collector()
        board = boards.read(spec, {}, found, config_path=path)
        if board is None and any(_PLAIN_NEEDS_MODEL in text for _, _, text in found.problems):
            # No platform's export: the teams are in a column the header names.
            spec = spec._replace(model_column=_team_column(path))
            found = Collector()
            board = boards.read(spec, {}, found, config_path=path)
        if board is not None:
            return _team(board, path, team, column)
        # The generalist's words for its configuration, in this command's terms.
        texts = ["{}{}".format("line {}: ".format(line) if line else "", text.replace(
            "choose one with `table: N` in the configuration", "choose one with --table N")
            .replace("`table:` is for CodaLab exports", "--table is for CodaLab exports"))
            for _, line, text in found.problems]
        if not any("no score column" in t for t in texts):
            raise LeaderboardProblem("the leaderboard file {} cannot be read: {}".format(
                shown(path), shown("; ".join(texts))))
        problems = texts
    raise LeaderboardProblem("the leaderboard file {} has no score column {}: {} (give "
                             "--score-column)".format(shown(path), " or ".join(
                                 repr(c) for c in columns), shown("; ".join(problems)[:300])))


def _team(board, path: str, team: str, column: str) -> Claim:
    values = board.values
    name = team if team in values else None
    if name is None:
        folded = [n for n in values if n.casefold() == team.casefold()]
        name = folded[0] if len(folded) == 1 else None
    if name is None:
        listed = sorted(values)
        raise LeaderboardProblem("team {} is not on the leaderboard {} ({} entries: {}{})".format(
            brief(team), shown(path), len(listed), ", ".join(brief(n) for n in listed[:10]),
            " ..." if len(listed) > 10 else ""))
    return Claim(values[name], "{}, team {} ({} export, column {})".format(
        shown(path), shown(name), board.format, shown(board.used_column)))


class Match(NamedTuple):
    match: Optional[bool]
    rescored_shown: str     # the rescored value at the claimed precision
    rule: str


def compare(score: Optional[float], claim: Claim) -> Match:
    d = decimals(claim.text)
    if score is None:
        return Match(None, "n/a", "the results have no score to compare")
    written = round(float(score), DECIMALS)
    at = "{:.{}f}".format(written, min(d, DECIMALS)) if d <= DECIMALS else repr(written)
    try:
        equal = Decimal(at) == Decimal(claim.text)
    except InvalidOperation:
        equal = False
    rule = ("the rescored value {} rounded to the claimed value's {} decimal{} is {}; the "
            "claimed value is {}".format(repr(written), d, "" if d == 1 else "s", at,
                                         claim.text))
    if not equal and Decimal(claim.text) > 1 and written <= 1:
        rule += " (a percentage? the leaderboard shows fractions)"
    return Match(equal, at, rule)
