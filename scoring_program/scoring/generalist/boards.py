"""Read one leaderboard file into ranks: plain CSV, a CodaLab export or a Codabench export.

Scores are parsed as exact decimals (no float rounding can merge or split a tie), NaN and
infinities refused; ranks from scores follow standard competition ranking; a rank column is used
as it stands. Names are stripped of surrounding whitespace, then joined through the aliases.
"""
import csv
import hashlib
import io
import re
from decimal import Decimal
from typing import Dict, List, NamedTuple, Optional

from . import exports
from .config import BoardSpec
from .consistency import Board, competition_ranks
from .problems import Collector

MAX_PER_FILE = 10          # problems listed per file before "... and N more"
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_NON_FINITE = re.compile(r"^[+-]?(nan|inf|infinity)$", re.I)
_RANK = re.compile(r"^\+?\d+$")


class ReadBoard(NamedTuple):
    spec: BoardSpec
    format: str
    board: Board               # name, N, model -> rank
    sha256: str
    model_column: str
    used_column: str           # the score or rank column as found in the file
    raw_names: frozenset       # names as written, before the aliases (to spot unused aliases)


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
    rows = []
    try:
        for cells in reader:
            rows.append((reader.line_num, cells))
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
        fp.add(table.header_line, "no {} column {!r}; the columns are: {}".format(
            role, wanted, ", ".join(repr(c) for c in table.columns)))
    else:
        fp.add(table.header_line, "{} column {!r} is ambiguous: it matches columns {}".format(
            role, wanted, ", ".join("{} ({!r})".format(j + 1, table.columns[j]) for j in hits)))
    return None


def _score(cell: str, column: str, fp: _FileProblems, line: int) -> Optional[Decimal]:
    if not cell:
        fp.add(line, "missing score in column {!r}".format(column))
        return None
    if _NON_FINITE.match(cell):
        fp.add(line, "score {!r} in column {!r} is not a finite number".format(cell, column))
        return None
    if not _NUMBER.match(cell):
        fp.add(line, "score {!r} in column {!r} is not a number".format(cell, column))
        return None
    return Decimal(cell)


def _rank(cell: str, column: str, fp: _FileProblems, line: int) -> Optional[int]:
    if not _RANK.match(cell) or int(cell) < 1:
        fp.add(line, "rank {!r} in column {!r} is not a positive integer".format(cell, column))
        return None
    return int(cell)


def read(spec: BoardSpec, aliases: Dict[str, str], problems: Collector,
         config_path: str = "") -> Optional[ReadBoard]:
    """One board, or None after adding its problems to `problems`."""
    fp = _FileProblems(spec.path, problems)
    try:
        result = _read(spec, aliases, fp, config_path)
    finally:
        fp.close()
    return result if fp.count == 0 else None


def _read(spec: BoardSpec, aliases: Dict[str, str], fp: _FileProblems,
          config_path: str) -> Optional[ReadBoard]:
    try:
        with open(spec.path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        # Named where the organizer can fix it: the configuration's entry for this board.
        fp.add_in(config_path, spec.line, "leaderboard {!r}: cannot read {} ({})".format(
            spec.name, spec.path, exc.strerror))
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
    rows = _rows(text, fp)
    if rows is None:
        return None
    fmt = spec.format or exports.detect(rows)
    if spec.table is not None and fmt != "codalab":
        fp.add_in(config_path, spec.line, "leaderboard {!r}: `table:` is for CodaLab "
                  "exports; {} is read as {}".format(spec.name, spec.path, fmt))
        return None
    if fmt == "codalab":
        table = exports.codalab_table(rows, spec.table, fp)
    else:
        table = exports.plain_table(rows, fp)
    if table is None:
        return None
    model_col_name = spec.model_column or exports.DEFAULT_MODEL_COLUMN.get(fmt)
    if model_col_name is None:
        fp.add_in(config_path, spec.line, "leaderboard {!r}: a plain CSV needs "
                  "model_column:".format(spec.name))
        return None
    mcol = _find_column(table, model_col_name, fmt, "model", fp)
    wanted = spec.score_column or spec.rank_column
    vcol = _find_column(table, wanted, fmt, "score" if spec.score_column else "rank", fp)
    if mcol is None or vcol is None:
        return None

    models: List[str] = []
    raw_names = set()
    lines: List[int] = []
    values: list = []
    first_line: Dict[str, int] = {}
    for line, cells in table.rows:
        if fmt == "codalab" and len(cells) == 1 and cells[0].strip() == "No data available":
            continue
        if fmt == "codalab" and cells and cells[0].strip() == "Exception parsing scores!":
            fp.add(line, "CodaLab could not export this table (it wrote 'Exception parsing "
                         "scores!'): download it again")
            continue
        extra = [c for c in cells[len(table.columns):] if c.strip()]
        if extra:
            fp.add(line, "the row has {} cells but the header has {} (a name with an unquoted "
                         "comma?)".format(len(cells), len(table.columns)))
            continue
        raw_name = cells[mcol].strip() if mcol < len(cells) else ""
        if fmt == "codabench":
            raw_name = exports.codabench_owner(raw_name)
        if not raw_name:
            fp.add(line, "no model name in column {!r}".format(table.columns[mcol]))
            continue
        raw_names.add(raw_name)
        name = aliases.get(raw_name, raw_name)
        if name in first_line:
            via = "" if name == raw_name else " (as {!r}, joined by the aliases)".format(raw_name)
            hint = ""
            if fmt == "codalab" and name == "Anonymous":
                hint = "; an anonymous leaderboard: download the CSV as the organizer"
            elif fmt == "codabench":
                hint = "; the export lists every submission on the leaderboard: keep one per model"
            fp.add(line, "model {!r}{} is already on this leaderboard (line {}){}".format(
                name, via, first_line[name], hint))
            continue
        first_line[name] = line
        cell = cells[vcol].strip() if vcol < len(cells) else ""
        if fmt == "codalab":
            value_part, rank_part = exports.codalab_cell(cell)
            cell = value_part if spec.score_column else (rank_part or "")
            if cell == "-":
                cell = ""
        column = table.columns[vcol]
        value = (_score(cell, column, fp, line) if spec.score_column
                 else (_rank(cell, column, fp, line) if cell else None))
        if spec.rank_column and not cell:
            fp.add(line, "missing rank in column {!r}".format(column))
        if value is None:
            continue
        models.append(name)
        lines.append(line)
        values.append(value)
    if fp.count:
        return None
    if len(models) < 2:
        fp.add(table.header_line, "leaderboard {!r} has {} entr{} below this header; a "
               "leaderboard needs at least 2".format(
            spec.name, len(models), "y" if len(models) == 1 else "ies"))
        return None
    if spec.score_column:
        ranks = competition_ranks(values, bool(spec.higher_is_better))
    else:
        ranks = values
    board = Board(spec.name, len(models), dict(zip(models, ranks)))
    return ReadBoard(spec, fmt, board, hashlib.sha256(raw).hexdigest(),
                     table.columns[mcol], table.columns[vcol], frozenset(raw_names))
