"""Read one leaderboard file into ranks: plain CSV, a CodaLab or Codabench export, or the
leaderboard.csv of compare.py.

The file is read only if it is a regular file (a symbolic link to one is followed: it is the
organizer's own file) of at most MAX_BOARD_BYTES. Scores are parsed as exact decimals (no float
rounding can merge or split a tie), NaN and infinities refused; ranks from scores follow
standard competition ranking; a rank column is used as it stands. Names are stripped of
surrounding whitespace, then joined through the aliases. Per board, `missing: absent` drops the
rows without a value (the model is then absent there) and `duplicates: best` keeps each model's
best row; both default to refusing such rows.
"""
import csv
import hashlib
import io
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, cast

from scoring import regular_file
from scoring.problems import shown
from scoring.quoting import brief
from ..ranks import competition_ranks
from . import exports
from .config import BoardSpec
from .consistency import Board
from .problems import Collector

MAX_PER_FILE = 10            # problems listed per file before "... and N more"
MAX_BOARD_BYTES = 64 << 20   # 64 MiB: about three million rows
MAX_RANK_DIGITS = 15         # a rank with more digits is refused, not converted
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_NON_FINITE = re.compile(r"^[+-]?(nan|inf|infinity)$", re.I)
_RANK = re.compile(r"^\+?\d+$")
_MISSING = ("", "-")         # an empty cell, or CodaLab's `-` for no value


class ReadBoard(NamedTuple):
    spec: BoardSpec
    format: str
    board: Board               # name, N, model -> rank
    sha256: str
    model_column: str
    used_column: str           # the score or rank column as found in the file
    aliases_used: FrozenSet[str]   # alias names (as written) found on this board
    values: Dict[str, str]     # model -> its score as written (empty for a rank column, except
    value_column: Optional[str]    # compare.py's file: its ranking key's value and column)
    higher_is_better: Optional[bool]   # the direction of `values`
    dropped_duplicates: int    # rows dropped by `duplicates: best`
    absent_rows: int           # rows without a value dropped by `missing: absent`

    def describe(self) -> str:
        """For the legend: `mAP (higher is better)`, `rank column Rank`."""
        if self.value_column is not None:
            return "{} ({} is better)".format(self.value_column,
                                              "higher" if self.higher_is_better else "lower")
        return "rank column {}".format(self.used_column)


class _FileProblems:
    """Per-file cap, so a systematically broken file gives ten lines and a count, not 10,000."""

    def __init__(self, path: str, problems: Collector) -> None:
        self.path, self.problems, self.count = path, problems, 0

    def add(self, line: Optional[int], text: str) -> None:
        self.count += 1
        if self.count <= MAX_PER_FILE:
            self.problems.add(self.path, line, text)

    def add_in(self, path: str, line: Optional[int], text: str) -> None:
        """A problem of this board that is fixed in another file (the configuration)."""
        self.count += 1
        self.problems.add(path, line, text)

    def close(self) -> None:
        if self.count > MAX_PER_FILE:
            self.problems.add(self.path, None, "... and {} more problems in this file".format(
                self.count - MAX_PER_FILE))


def _rows(text: str, fp: _FileProblems) -> Optional[List[exports.Row]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        # line_num is read after each row is parsed: the row's last line, as in messages.
        rows = [(reader.line_num, cells) for cells in reader]
    except csv.Error as exc:
        fp.add(max(1, reader.line_num), "not readable as CSV ({})".format(exc))
        return None
    return rows


def _find_column(table: exports.Table, wanted: str, fmt: str, role: str,
                 fp: _FileProblems) -> Optional[int]:
    hits = [j for j, c in enumerate(table.columns) if c == wanted]
    if not hits and fmt == "codabench":
        hits = exports.codabench_column(table.columns, wanted)
    if len(hits) == 1:
        return hits[0]
    if not hits:
        fp.add(table.header_line, "no {} column {}; the columns are: {}".format(
            role, brief(wanted), brief(", ".join(repr(c) for c in table.columns), 300)))
    else:
        fp.add(table.header_line, "{} column {} is ambiguous: it matches columns {}".format(
            role, brief(wanted), ", ".join("{} ({})".format(j + 1, brief(table.columns[j]))
                                           for j in hits[:10])))
    return None


def _score(cell: str, column: str, fp: _FileProblems, line: int) -> Optional[Decimal]:
    """cell as an exact decimal, or None after naming the problem. Decimal reads what _NUMBER
    describes, and also NaN, Infinity and 1_000: those are refused."""
    try:
        value = Decimal(cell)
        if value.is_finite() and "_" not in cell:
            return value
    except InvalidOperation:
        if _NUMBER.match(cell):       # an exponent beyond what Decimal holds (1e999999999999)
            fp.add(line, "score {} in column {} is not a number this program can compare (its "
                         "exponent is out of range)".format(brief(cell), brief(column)))
            return None
    if _NON_FINITE.match(cell):
        fp.add(line, "score {} in column {} is not a finite number".format(brief(cell),
                                                                           brief(column)))
    else:
        fp.add(line, "score {} in column {} is not a number".format(brief(cell), brief(column)))
    return None


def _is_number(cell: str) -> bool:
    """A decimal number (as _NUMBER describes it) within the range of a float: what float()
    reads and Decimal reads alike, less NaN, infinities and 1_000 (tests check it against
    _NUMBER)."""
    try:
        number = float(cell)
    except ValueError:
        return False
    return number - number == 0 and "_" not in cell


def exact_scores(values: List) -> List:
    """Scores (checked texts, or Decimals for the odd ones) as numbers that compare exactly.

    When every score is a plain decimal of at most 15 characters (so at most 15 significant
    digits, no exponent), floats do: such decimals convert to distinct doubles, in the same
    order, and equal ones to equal doubles (15 = DBL_DIG). Comparing floats is three times
    faster than Decimals, and that is most boards (Codabench's 0.6120000000 has 12). Otherwise
    every score is an exact Decimal."""
    texts = [v for v in values if isinstance(v, str)]
    if len(texts) == len(values) and max(map(len, texts), default=0) <= 15:
        joined = "".join(texts)
        if "e" not in joined and "E" not in joined:
            return list(map(float, texts))
    return [Decimal(v) if isinstance(v, str) else v for v in values]


def _rank(cell: str, column: str, fp: _FileProblems, line: int) -> Optional[int]:
    if _RANK.match(cell):
        digits = cell.lstrip("+").lstrip("0")
        if len(digits) > MAX_RANK_DIGITS:    # never int() it: Python 3.11+ refuses 4,300 digits
            fp.add(line, "rank {} in column {} is too large ({:,} digits; a rank has at most "
                         "{})".format(brief(cell, 30), brief(column), len(digits),
                                      MAX_RANK_DIGITS))
            return None
        if digits:
            return int(digits)
    fp.add(line, "rank {} in column {} is not a positive integer".format(brief(cell),
                                                                         brief(column)))
    return None


def read(spec: BoardSpec, aliases: Dict[str, str], problems: Collector,
         config_path: str = "") -> Optional[ReadBoard]:
    """One board, or None after adding its problems to `problems`."""
    fp = _FileProblems(spec.path, problems)
    try:
        result = _read(spec, aliases, fp, config_path)
    finally:
        fp.close()
    return result if fp.count == 0 else None


def _load_text(spec: BoardSpec, fp: _FileProblems, config_path: str):
    """(text, sha256) of the board file, or None after naming the problem."""
    try:
        raw = regular_file.read_bytes(spec.path, MAX_BOARD_BYTES, follow_links=True)
    except regular_file.Refused as exc:
        # Named where the organizer can fix it: the configuration's entry for this board.
        fp.add_in(config_path, spec.line, "leaderboard {}: {} {}{}".format(
            brief(spec.name), shown(spec.path),
            "" if exc.kind == regular_file.UNREADABLE else "is ", exc.reason))
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        fp.add(raw[:exc.start].count(b"\n") + 1, "not UTF-8 text (byte {})".format(exc.start))
        return None
    if "\x00" in text:        # Python 3.7's csv refuses it, 3.11's reads it: refuse it on both
        fp.add(text[:text.index("\x00")].count("\n") + 1,
               "a NUL byte: this is not a text CSV file")
        return None
    return text, hashlib.sha256(raw).hexdigest()


def _read(spec: BoardSpec, aliases: Dict[str, str], fp: _FileProblems,
          config_path: str) -> Optional[ReadBoard]:
    loaded = _load_text(spec, fp, config_path)
    if loaded is None:
        return None
    text, sha256 = loaded
    rows = _rows(text, fp)
    del text
    if rows is None:
        return None
    fmt = spec.format or exports.detect(rows)
    if spec.table is not None and fmt != "codalab":
        fp.add_in(config_path, spec.line, "leaderboard {}: `table:` is for CodaLab "
                  "exports; {} is read as {}".format(brief(spec.name), shown(spec.path), fmt))
        return None
    if fmt == "codalab":
        table = exports.codalab_table(rows, spec.table, fp)
    else:
        table = exports.plain_table(rows, fp)
    del rows
    if table is None:
        return None
    score_column, rank_column = spec.score_column, spec.rank_column
    if score_column is None and rank_column is None:
        if fmt != "compare":
            fp.add_in(config_path, spec.line, "leaderboard {}: give either score_column (with "
                      "higher_is_better) or rank_column, not neither ({} is read as {}; only "
                      "compare.py's leaderboard.csv, whose header starts `model,rank,<key>`, "
                      "needs neither)".format(brief(spec.name), shown(spec.path), fmt))
            return None
        rank_column = exports.COMPARE_RANK
    model_col_name = spec.model_column or exports.DEFAULT_MODEL_COLUMN.get(fmt)
    if model_col_name is None:
        fp.add_in(config_path, spec.line, "leaderboard {}: a plain CSV needs "
                  "model_column:".format(brief(spec.name)))
        return None
    mcol = _find_column(table, model_col_name, fmt, "model", fp)
    # rank_column is set above when both are None
    vcol = _find_column(table, cast(str, score_column or rank_column), fmt,
                        "score" if score_column else "rank", fp)
    if mcol is None or vcol is None:
        return None
    # What the page shows next to each rank: the score as written; for compare.py's file its
    # ranking key (the third column, higher is better).
    if score_column:
        show_col, show_name, direction = vcol, table.columns[vcol], spec.higher_is_better
    elif fmt == "compare" and spec.rank_column is None:
        show_col, show_name, direction = 2, table.columns[2], True
    else:
        show_col, show_name, direction = None, None, None
    result = _entries(spec, fmt, table, mcol, vcol, show_col, aliases, fp)
    if result is None:
        return None
    names, values, shown_values, used, dropped, absent = result
    if len(names) < 2:
        fp.add(table.header_line, "leaderboard {} has {} entr{} below this header{}; a "
               "leaderboard needs at least 2".format(
                   brief(spec.name), len(names), "y" if len(names) == 1 else "ies",
                   " ({} rows without a value counted as absent)".format(absent)
                   if absent else ""))
        return None
    if score_column:
        ranks = competition_ranks(exact_scores(values), bool(spec.higher_is_better))
    elif dropped:
        # The given ranks counted the rows dropped as duplicates: rank the kept rows by them.
        ranks = competition_ranks(values, False)
    else:
        ranks = values
    board = Board(spec.name, len(names), dict(zip(names, ranks)))
    return ReadBoard(spec, fmt, board, sha256, table.columns[mcol], table.columns[vcol],
                     frozenset(used), dict(zip(names, shown_values)) if show_col is not None
                     else {}, show_name, direction, dropped, absent)


def _entries(spec: BoardSpec, fmt: str, table: exports.Table, mcol: int, vcol: int,
             show_col: Optional[int], aliases: Dict[str, str], fp: _FileProblems):
    """The board's rows as (names, values, values as written, aliases used, rows dropped as
    duplicates, rows counted as absent), or None after naming the problems."""
    is_codalab, is_codabench = fmt == "codalab", fmt == "codabench"
    want_score = spec.score_column is not None
    higher = bool(spec.higher_is_better)
    best = spec.duplicates == "best"
    absent_ok = spec.missing == "absent"
    ncols = len(table.columns)
    column = table.columns[vcol]
    kind = "score" if want_score else "rank"
    index: Dict[str, int] = {}       # model -> its position in the lists below
    names: List[str] = []
    lines: List[int] = []
    values: list = []
    shown_values: List[str] = []
    used = set()
    dropped = absent = 0
    # The loop runs once per row of every board (a million rows at scale): the usual case is
    # handled inline, anything unusual by the helpers that name the problem.
    show_other = show_col is not None and show_col != vcol    # compare.py: the key column
    keep_shown = show_col is not None
    show_at = vcol if show_col is None else show_col        # = show_col where it is read
    for line, cells in table.rows:
        n_cells = len(cells)
        if is_codalab and cells:
            first = cells[0].strip()
            if n_cells == 1 and first == "No data available":
                continue
            if first == "Exception parsing scores!":
                fp.add(line, "CodaLab could not export this table (it wrote 'Exception parsing "
                             "scores!'): download it again")
                continue
        if n_cells > ncols and "".join(cells[ncols:]).strip():
            fp.add(line, "the row has {} cells but the header has {} (a name with an unquoted "
                         "comma?)".format(n_cells, ncols))
            continue
        raw_name = cells[mcol].strip() if mcol < n_cells else ""
        if is_codabench:
            raw_name = exports.codabench_owner(raw_name)
        if not raw_name:
            fp.add(line, "no model name in column {}".format(brief(table.columns[mcol])))
            continue
        name = aliases.get(raw_name)
        if name is None:
            name = raw_name
        else:
            used.add(raw_name)
        cell = cells[vcol].strip() if vcol < n_cells else ""
        if is_codalab:
            value_part, rank_part = exports.codalab_cell(cell)
            cell = value_part if want_score else (rank_part or "")
        if cell in _MISSING:
            if absent_ok:
                absent += 1
                continue
            fp.add(line, "missing {} in column {} (a failed run? `missing: absent` in the "
                         "configuration counts the model as absent from this leaderboard)".format(
                             kind, brief(column)))
            continue
        value: Any = None          # scores: the text or a Decimal; ranks: an int
        if want_score:
            # Kept as the text, checked here, made exact numbers once per board (exact_scores);
            # 1e999 (no float) goes the slow way, and so does anything that is not a number.
            value = cell if _is_number(cell) else _score(cell, column, fp, line)
            if value is None:
                continue
        else:
            if cell.isdecimal() and len(cell) <= MAX_RANK_DIGITS:
                value = int(cell)
            if not value:                                  # 0, +3, too long, text...
                value = _rank(cell, column, fp, line)
                if value is None:
                    continue
        if keep_shown:
            written = (cells[show_at].strip() if show_at < n_cells else "") if show_other \
                else cell
        k = index.get(name)
        if k is not None:
            anonymous = is_codalab and name == "Anonymous"
            if best and not anonymous:
                new, kept = (Decimal(value), Decimal(values[k])) if want_score \
                    else (value, values[k])
                if (new > kept if want_score and higher else new < kept):
                    values[k], lines[k] = value, line
                    if keep_shown:
                        shown_values[k] = written
                dropped += 1
                continue
            _duplicate(fp, line, name, raw_name, lines[k], fmt, anonymous)
            continue
        index[name] = len(names)
        names.append(name)
        lines.append(line)
        values.append(value)
        if keep_shown:
            shown_values.append(written)
    if fp.count:
        return None
    return names, values, shown_values, used, dropped, absent


def _duplicate(fp: _FileProblems, line: int, name: str, raw_name: str, first: int, fmt: str,
               anonymous: bool) -> None:
    via = "" if name == raw_name else " (as {}, joined by the aliases)".format(brief(raw_name))
    if anonymous:
        hint = ("; an anonymous leaderboard (these are different participants): download the "
                "CSV as the organizer")
    elif fmt == "codabench":
        hint = ("; the export lists every submission on the leaderboard: keep one per model, or "
                "set `duplicates: best` for this leaderboard to keep each model's best row")
    else:
        hint = "; `duplicates: best` for this leaderboard keeps each model's best row"
    fp.add(line, "model {}{} is already on this leaderboard (line {}){}".format(
        brief(name), via, first, hint))
