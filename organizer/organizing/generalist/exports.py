"""What CodaLab and Codabench leaderboard exports look like, and how to find the table in them.

Facts from the platforms' source (details and examples: docs/generalist.md):

CodaLab Competitions, "Download CSV" of a phase's results (`CompetitionResultsDownload` in
codalab/apps/web/views.py -> `Competition.get_results_csv` in codalab/apps/web/models.py):
  - one table per leaderboard group, one after the other, each starting with the header row
    `submission_pk,User,<column label>,...`; the platform runs on Python 3, where the labels,
    passed as bytes to csv.writer, come out as `b'label'`;
  - a second row `,<sub label>,...` when a column has sub-columns (refused: see codalab_table);
  - data rows `<submission id>,<username>,<value> (<rank>),...,` with one extra empty cell at the
    end; the value is rounded to the column's numeric_format and the rank is CodaLab's own
    *dense* ranking (1, 2, 2, 3); `-` where a value or rank is missing;
  - `No data available` as the only row of an empty table; `Anonymous` for every user of an
    anonymous leaderboard (unless downloaded by the organizer).
  Older exports (Python 2 era, see codalab-competitions issue #1673) had no submission_pk
  column and a group label row before each header: `User,<label>,...`; both are read.

The project's own comparison (organizer/compare.py: many submissions on one test set),
`leaderboard.csv`: a header whose first two cells are exactly `model` and `rank`, the third the
task's ranking key (higher is better, e.g. `miou`), then further keys and `<key>_ci_low` /
`<key>_ci_high` columns; one row per valid submission, `rank` the standard competition ranking
(1-2-2-4) by the ranking key. Read by itself: model column `model`, ranks from `rank`.

Codabench, "This CSV" on the results tab (`CompetitionViewSet.results` and
`collect_leaderboard_data` in src/apps/api/views/competitions.py):
  - header `Username,fact_sheet_answers,<task name>(<task id>)-<column title>,...`;
  - one row per submission on the leaderboard: `<username>-<submission id>` (the parent
    submission's id for multi-task phases), then the raw scores as stored (DecimalField with 10
    decimal places, e.g. `0.7512000000`), empty where a task has no score;
  - rows ordered by the leaderboard's primary column; no rank column.
"""
import ast
import re
from typing import List, NamedTuple, Optional, Tuple

from scoring.quoting import brief

CODALAB_ID = "submission_pk"
CODALAB_USER = "User"
CODABENCH_USER = "Username"
CODABENCH_FACT_SHEET = "fact_sheet_answers"
COMPARE_MODEL, COMPARE_RANK = "model", "rank"
DEFAULT_MODEL_COLUMN = {"codalab": CODALAB_USER, "codabench": CODABENCH_USER,
                        "compare": COMPARE_MODEL}

Row = Tuple[int, List[str]]   # (line number in the file, cells)
# `problems` below: anything with add(line, text), e.g. boards._FileProblems.

_BYTES_REPR = re.compile(r"""^b(['"]).*\1$""", re.S)
_CODALAB_CELL = re.compile(r"^(.*?)\s*\(([^()]*)\)$", re.S)
_CODABENCH_OWNER = re.compile(r"^(.*)-\d+$", re.S)


class Table(NamedTuple):
    header_line: int
    columns: List[str]
    rows: List[Row]


def blank(cells: List[str]) -> bool:
    return not "".join(cells).strip()


def detect(rows: List[Row]) -> str:
    """The format of a file from its first non-blank row: 'codalab', 'codabench', 'compare'
    (compare.py's leaderboard.csv: exactly `model,rank,<key>,...`) or 'csv'."""
    for _, cells in rows:
        if blank(cells):
            continue
        head = [c.strip() for c in cells[:2]]
        if head == [CODALAB_ID, CODALAB_USER]:
            return "codalab"
        if head == [CODABENCH_USER, CODABENCH_FACT_SHEET]:
            return "codabench"
        if cells[:2] == [COMPARE_MODEL, COMPARE_RANK] and len(cells) > 2 and cells[2].strip():
            return "compare"
        return "csv"
    return "csv"


def unwrap_label(label: str) -> str:
    """`b'mAP'` (a bytes object written by Python 3's csv.writer) -> `mAP`; others unchanged."""
    label = label.strip()
    if _BYTES_REPR.match(label):
        try:
            value = ast.literal_eval(label)
            if isinstance(value, bytes):
                return value.decode("utf-8").strip()
        except (ValueError, SyntaxError, UnicodeDecodeError):
            pass
    return label


def codalab_cell(cell: str) -> Tuple[str, Optional[str]]:
    """`0.7512 (1)` -> ('0.7512', '1'); a cell without `(rank)` -> (cell, None)."""
    m = _CODALAB_CELL.match(cell.strip())
    if m:
        return m.group(1).strip(), m.group(2).strip()
    return cell.strip(), None


def codabench_owner(cell: str) -> str:
    """`alice-1234` (username-submission id) -> `alice`."""
    m = _CODABENCH_OWNER.match(cell.strip())
    return m.group(1) if m else cell.strip()


def plain_table(rows: List[Row], problems) -> Optional[Table]:
    """Plain CSV, Codabench and compare.py: the first non-blank row is the header."""
    rows = [r for r in rows if "".join(r[1]).strip()]     # blank(), inlined: 10^6 rows
    if not rows:
        problems.add(None, "the file holds no table (no header row)")
        return None
    line, header = rows[0]
    return Table(line, [c.strip() for c in header], rows[1:])


def codalab_table(rows: List[Row], table: Optional[int], problems) -> Optional[Table]:
    """Pick one table of a CodaLab export; its header labels unwrapped from `b'...'`."""
    starts = [i for i, (_, c) in enumerate(rows) if c and c[0].strip() == CODALAB_ID]
    older = not starts
    if older:                        # the older export: `User,...` header rows
        starts = [i for i, (_, c) in enumerate(rows) if c and c[0].strip() == CODALAB_USER]
    if not starts:
        problems.add(None, "no CodaLab header row (`submission_pk,User,...`) found")
        return None
    if table is None and len(starts) > 1:
        problems.add(None, "the export holds {} leaderboard tables (header rows on lines "
                     "{}); choose one with `table: N` in the configuration".format(
                         len(starts), ", ".join(str(rows[i][0]) for i in starts)))
        return None
    if table is not None and table > len(starts):
        problems.add(None, "table: {} asked, but the export holds {} table{}".format(
            brief(table), len(starts), "s" if len(starts) > 1 else ""))
        return None
    k = (table or 1) - 1
    begin = starts[k]
    end = starts[k + 1] if k + 1 < len(starts) else len(rows)
    header_line, header = rows[begin]
    columns = [unwrap_label(c) for c in header]
    body = [r for r in rows[begin + 1:end] if not blank(r[1])]
    if body and body[0][1][0].strip() == "":
        # Sub-column labels. get_results_csv writes them shifted and only for the columns that
        # have sub-columns, and writes every sub-column's value of a group into one cell, so
        # the cells no longer line up with the header: refuse rather than guess.
        problems.add(body[0][0], "this CodaLab export has sub-columns, whose values CodaLab "
                     "writes out of line with the header; copy the leaderboard into a plain CSV")
        return None
    if older and body and len([c for c in body[-1][1] if c.strip()]) == 1 \
            and end < len(rows):
        body.pop()                                  # the next group's label row
    return Table(header_line, columns, body)


def codabench_column(columns: List[str], wanted: str) -> List[int]:
    """Columns `<task>(<id>)-<wanted>`: lets a config name a Codabench column by its title."""
    suffix = re.compile(r"^.*\(\d+\)-" + re.escape(wanted) + "$", re.S)
    return [j for j, c in enumerate(columns) if suffix.match(c)]
