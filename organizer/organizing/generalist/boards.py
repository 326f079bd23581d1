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
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Tuple, cast

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
    del loaded
    rows = _rows(text, fp)
    del text
    if rows is None:
        return None
    found = _table(spec, rows, fp, config_path)
    del rows
    if found is None:
        return None
    fmt, table = found
    columns = _columns(spec, fmt, table, fp, config_path)
    if columns is None:
        return None
    result = _entries(spec, fmt, table, columns.model, columns.value, columns.shown, aliases,
                      fp)
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
    board = Board(spec.name, len(names), dict(zip(names, _ranks(spec, values, dropped))))
    return ReadBoard(spec, fmt, board, sha256, table.columns[columns.model],
                     table.columns[columns.value], frozenset(used),
                     dict(zip(names, shown_values)) if columns.shown is not None else {},
                     columns.shown_name, columns.direction, dropped, absent)


def _table(spec: BoardSpec, rows: list, fp: _FileProblems, config_path: str):
    """(its format, its table) of the board's CSV rows, or None after naming the problem."""
    fmt = spec.format or exports.detect(rows)
    if spec.table is not None and fmt != "codalab":
        fp.add_in(config_path, spec.line, "leaderboard {}: `table:` is for CodaLab "
                  "exports; {} is read as {}".format(brief(spec.name), shown(spec.path), fmt))
        return None
    if fmt == "codalab":
        table = exports.codalab_table(rows, spec.table, fp)
    else:
        table = exports.plain_table(rows, fp)
    return None if table is None else (fmt, table)


class _Columns(NamedTuple):
    model: int
    value: int                    # the score or rank column read
    shown: Optional[int]          # the column of the value the page shows beside each rank
    shown_name: Optional[str]
    direction: Optional[bool]     # higher is better, of the value shown


def _columns(spec: BoardSpec, fmt: str, table: exports.Table, fp: _FileProblems,
             config_path: str) -> Optional[_Columns]:
    """The board's model column, the column it is ranked by, and what the page shows beside
    each rank: the score as written; for compare.py's file its ranking key (the third column,
    higher is better). None after naming the problem."""
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
    if score_column:
        return _Columns(mcol, vcol, vcol, table.columns[vcol], spec.higher_is_better)
    if fmt == "compare" and spec.rank_column is None:
        return _Columns(mcol, vcol, 2, table.columns[2], True)
    return _Columns(mcol, vcol, None, None, None)


def _ranks(spec: BoardSpec, values: list, dropped: int) -> List[int]:
    """The board's ranks from its values: competition ranks of the scores; the ranks as given,
    unless rows were dropped as duplicates (the given ranks counted them: the kept rows are
    ranked by them)."""
    if spec.score_column:
        return competition_ranks(exact_scores(values), bool(spec.higher_is_better))
    if dropped:
        return competition_ranks(values, False)
    return values


def _entries(spec: BoardSpec, fmt: str, table: exports.Table, mcol: int, vcol: int,
             show_col: Optional[int], aliases: Dict[str, str], fp: _FileProblems):
    """The board's rows as (names, values, values as written, aliases used, rows dropped as
    duplicates, rows counted as absent), or None after naming the problems."""
    rows = _Rows(spec, fmt, table, mcol, vcol, show_col, aliases, fp)
    for line, cells in table.rows:
        rows.read(line, cells)
    if fp.count:
        return None
    return rows.names, rows.values, rows.shown_values, rows.used, rows.dropped, rows.absent


class _Rows:
    """A board's entries as its rows are read, one row at a time (read): is it an entry at all,
    the model's name, its value, and whether it is kept (a new model, or a duplicate).

    read runs once per row of every board (a million rows at scale): the usual row takes the
    inline path, anything unusual the helpers that name the problem."""

    def __init__(self, spec: BoardSpec, fmt: str, table: exports.Table, mcol: int, vcol: int,
                 show_col: Optional[int], aliases: Dict[str, str], fp: _FileProblems) -> None:
        self.fmt, self.mcol, self.vcol, self.aliases, self.fp = fmt, mcol, vcol, aliases, fp
        self.is_codalab, self.is_codabench = fmt == "codalab", fmt == "codabench"
        self.want_score = spec.score_column is not None
        self.higher = bool(spec.higher_is_better)
        self.best = spec.duplicates == "best"
        self.absent_ok = spec.missing == "absent"
        self.ncols = len(table.columns)
        self.model_column = table.columns[mcol]
        self.column = table.columns[vcol]
        self.show_other = show_col is not None and show_col != vcol  # compare.py: its key
        self.keep_shown = show_col is not None
        self.show_at = vcol if show_col is None else show_col   # = show_col where it is read
        self.index: Dict[str, int] = {}       # model -> its position in the lists below
        self.names: List[str] = []
        self.lines: List[int] = []
        self.values: list = []                # scores: the text or a Decimal; ranks: ints
        self.shown_values: List[str] = []
        self.used: set = set()                # the aliases used
        self.dropped = self.absent = 0

    def read(self, line: int, cells: List[str]) -> None:
        n_cells = len(cells)
        if (self.is_codalab and cells) or n_cells > self.ncols:
            if not self._is_entry(line, cells):
                return
        named = self._name(line, cells)
        if named is None:
            return
        name, raw_name = named
        cell = cells[self.vcol].strip() if self.vcol < n_cells else ""
        if self.is_codalab:  # `0.5123 (12)`: the score, or the rank, is the value written
            value_part, rank_part = exports.codalab_cell(cell)
            cell = value_part if self.want_score else (rank_part or "")
        value = self._value(line, cell)
        if value is None:
            return
        written = ""
        if self.keep_shown:
            written = (cells[self.show_at].strip() if self.show_at < n_cells else "") \
                if self.show_other else cell
        k = self.index.get(name)
        if k is None:
            self.index[name] = len(self.names)
            self.names.append(name)
            self.lines.append(line)
            self.values.append(value)
            if self.keep_shown:
                self.shown_values.append(written)
        else:
            self._again(line, k, name, raw_name, value, written)

    def _is_entry(self, line: int, cells: List[str]) -> bool:
        """False for CodaLab's rows that hold no entry, and for a row longer than the header
        (its problem named)."""
        fp = self.fp
        if self.is_codalab and cells:
            first = cells[0].strip()
            if len(cells) == 1 and first == "No data available":
                return False
            if first == "Exception parsing scores!":
                fp.add(line, "CodaLab could not export this table (it wrote 'Exception parsing "
                             "scores!'): download it again")
                return False
        if len(cells) > self.ncols and "".join(cells[self.ncols:]).strip():
            fp.add(line, "the row has {} cells but the header has {} (a name with an unquoted "
                         "comma?)".format(len(cells), self.ncols))
            return False
        return True

    def _name(self, line: int, cells: List[str]) -> Optional[Tuple[str, str]]:
        """(the model's name through the aliases, as written); None after naming a missing
        one."""
        raw_name = cells[self.mcol].strip() if self.mcol < len(cells) else ""
        if self.is_codabench:
            raw_name = exports.codabench_owner(raw_name)
        if not raw_name:
            self.fp.add(line, "no model name in column {}".format(brief(self.model_column)))
            return None
        name = self.aliases.get(raw_name)
        if name is None:
            return raw_name, raw_name
        self.used.add(raw_name)
        return name, raw_name

    def _value(self, line: int, cell: str) -> Any:
        """The score (its text, checked; or a Decimal) or the rank (an int) of the cell; None
        for a missing value (counted as absent, or named) or one that is not a number."""
        if cell in _MISSING:
            if self.absent_ok:
                self.absent += 1
                return None
            self.fp.add(line, "missing {} in column {} (a failed run? `missing: absent` in the "
                              "configuration counts the model as absent from this "
                              "leaderboard)".format("score" if self.want_score else "rank",
                                                    brief(self.column)))
            return None
        if self.want_score:
            # Kept as the text, checked here, made exact numbers once per board (exact_scores);
            # 1e999 (no float) goes the slow way, and so does anything that is not a number.
            return cell if _is_number(cell) else _score(cell, self.column, self.fp, line)
        if cell.isdecimal() and len(cell) <= MAX_RANK_DIGITS:
            value = int(cell)
            if value:
                return value
        return _rank(cell, self.column, self.fp, line)     # 0, +3, too long, text...

    def _again(self, line: int, k: int, name: str, raw_name: str, value: Any,
               written: str) -> None:
        """A model already on the board: with `duplicates: best` its better row is kept (never
        for CodaLab's 'Anonymous', different participants), else the duplicate is named."""
        anonymous = self.is_codalab and name == "Anonymous"
        if self.best and not anonymous:
            new, kept = (Decimal(value), Decimal(self.values[k])) if self.want_score \
                else (value, self.values[k])
            if (new > kept if self.want_score and self.higher else new < kept):
                self.values[k], self.lines[k] = value, line
                if self.keep_shown:
                    self.shown_values[k] = written
            self.dropped += 1
            return
        _duplicate(self.fp, line, name, raw_name, self.lines[k], self.fmt, anonymous)


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
