"""A phase's leaderboard as the platform exports it, one row per leaderboard submission, in the
file's order; the format is told from the header (generalist/exports.py knows all three):

- Codabench results CSV (src/apps/api/views/competitions.py, `results`): `Username` =
  `{owner}-{parent or submission id}`, then `fact_sheet_answers` (twice when the competition has
  a fact sheet: the header adds it to the first row's keys, which hold it already), then
  `{task name}({task id})-{column title}`; raw scores, empty for a failed run;
- CodaLab's "Download CSV": `submission_pk,User,b'<label>',...`, cells `0.6855 (2)`;
- compare.py's leaderboard.csv: `model,rank,<key>,...`, the model being the owner or the team.

Bounds: at most MAX_BYTES, read once; rows and cells linear in the file.
"""
import csv
import io
import math
import re
from typing import List, NamedTuple, Optional

from scoring.problems import shown
from scoring.quoting import brief
from ..generalist import exports
from .file_text import read_text
from .problems import PlatformFileProblem

MAX_BYTES = 64 << 20
_OWNER_ID = re.compile(r"^(.*)-([0-9]{1,18})$", re.S)
_ID = re.compile(r"^[0-9]{1,18}$")              # not str.isdigit: '²' is a digit to it
_TASK_COLUMN = re.compile(r"^.*\(\d+\)-", re.S)    # {task name}({task id})-{column title}


class Row(NamedTuple):
    line: int
    owner: str                      # the account (compare.py: the model's name)
    submission_id: Optional[int]    # Codabench: the id in Username; CodaLab: submission_pk
    score: Optional[float]          # None: no score (a failed run)
    shown: str                      # the score as the file writes it


class Export(NamedTuple):
    path: str
    format: str        # codabench, codalab, compare
    column: str        # the score column used
    rows: List[Row]    # in the file's order


class _Raise:
    def __init__(self, path: str) -> None:
        self.path = path

    def add(self, line, text: str) -> None:
        raise PlatformFileProblem("the leaderboard export {}{}: {}".format(
            shown(self.path), " line {}".format(line) if line else "", text))


def _number(text: str, path: str, line: int) -> Optional[float]:
    text = text.strip()
    if text in ("", "-"):
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise PlatformFileProblem("the leaderboard export {} line {}: the score {} is not a "
                                  "number".format(shown(path), line, brief(text)))
    return value


def _pick(columns: List[str], wanted: Optional[str], candidates: List[int], path: str) -> int:
    if wanted:
        exact = [j for j, c in enumerate(columns) if c == wanted]
        found = exact or exports.codabench_column(columns, wanted) or \
            [j for j, c in enumerate(columns) if c.casefold() == wanted.casefold()]
        if len(found) == 1:
            return found[0]
        raise PlatformFileProblem("the leaderboard export {} has {} column {} (columns: {}); "
                                  "give --score-column as the header names it".format(
                                      shown(path), "no" if not found else "more than one",
                                      brief(wanted), shown(brief(", ".join(columns)))))
    if not candidates:
        raise PlatformFileProblem("the leaderboard export {} has no score column".format(
            shown(path)))
    return candidates[0]


def read(path: str, score_column: Optional[str] = None, table: Optional[int] = None) -> Export:
    """The export's rows; PlatformFileProblem naming the file and the fix otherwise."""
    content = read_text(path, MAX_BYTES, "the leaderboard export")
    try:
        rows = [(n + 1, cells) for n, cells in enumerate(csv.reader(io.StringIO(content)))]
    except csv.Error as exc:
        raise PlatformFileProblem("the leaderboard export {} is not a CSV file: {}".format(
            shown(path), exc)) from None
    fmt = exports.detect(rows)
    problems = _Raise(path)
    if fmt == "codalab":
        found = exports.codalab_table(rows, table, problems)
    elif fmt in ("codabench", "compare"):
        found = exports.plain_table(rows, problems)
    else:
        raise PlatformFileProblem(
            "{} is not a leaderboard export this command reads: its header starts neither "
            "`Username,fact_sheet_answers` (Codabench's results CSV), nor `submission_pk,User` "
            "(CodaLab's Download CSV), nor `model,rank` (compare.py's leaderboard.csv)".format(
                shown(path)))
    assert found is not None        # _Raise raised otherwise
    columns = found.columns
    if fmt == "codabench":
        scores = [j for j, c in enumerate(columns) if _TASK_COLUMN.match(c)]
    elif fmt == "codalab":
        scores = list(range(2, len([c for c in columns if c.strip()])))
    else:
        scores = [2]
    col = _pick(columns, score_column, scores, path)
    out = []
    sid: Optional[int]
    for line, cells in found.rows:
        cells = cells + [""] * (len(columns) - len(cells))
        if fmt == "codabench":
            m = _OWNER_ID.match(cells[0].strip())
            if not m:
                raise PlatformFileProblem("the leaderboard export {} line {}: {} is not "
                                          "`{{owner}}-{{submission id}}`".format(
                                              shown(path), line, brief(cells[0])))
            owner, sid = m.group(1), int(m.group(2))
            value = cells[col]
        elif fmt == "codalab":
            owner = cells[1].strip()
            sid = int(cells[0]) if _ID.match(cells[0].strip()) else None
            value = exports.codalab_cell(cells[col])[0]
        else:
            owner, sid, value = cells[0].strip(), None, cells[col]
        out.append(Row(line, owner, sid, _number(value, path, line), value.strip()))
    return Export(path, fmt, columns[col], out)


def ranked(export: Export) -> List[Row]:
    """The rows best first (higher is better; no score last; ties in the file's order)."""
    return sorted(export.rows, key=lambda r: (r.score is None, -(r.score or 0.0)))
