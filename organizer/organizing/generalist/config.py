"""The organizer's YAML configuration: loaded with line numbers, validated, every problem named.

Read through scoring/safe_yaml.py (a regular file of at most 1 MiB, no alias bombs, recursive
aliases, absurd nesting, integers beyond 4,300 digits or keys given twice). PyYAML reads `1e-12`
(no dot) as a string under YAML 1.1, so numbers given as strings are parsed here. Values quoted
in messages are shortened (quoting.brief).
"""
import hashlib
import math
import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from scoring.quoting import brief
from scoring import safe_yaml
from .consistency import EPS_DEFAULT
from .problems import Collector

TOP_KEYS = ("eps", "min_leaderboards", "aliases", "leaderboards")
BOARD_KEYS = ("name", "file", "format", "table", "model_column", "score_column",
              "higher_is_better", "rank_column", "duplicates", "missing")
FORMATS = ("csv", "codalab", "codabench", "compare")
DUPLICATES = ("error", "best")      # a model on several rows of one board
MISSING = ("error", "absent")       # a row with an empty or `-` score or rank


class Y(NamedTuple):
    """A YAML value with the 1-based line it starts on."""
    value: Any
    line: int


class BoardSpec(NamedTuple):
    name: str
    path: str                   # as shown in messages: the config's folder joined with `file`
    line: int                   # where the entry starts in the config
    format: Optional[str]       # None: detected from the file
    table: Optional[int]        # CodaLab exports with several tables: which one (1-based)
    model_column: Optional[str]
    score_column: Optional[str]
    higher_is_better: Optional[bool]
    rank_column: Optional[str]      # neither score nor rank column: compare.py's leaderboard.csv
    duplicates: str = "error"       # "best": keep each model's best row
    missing: str = "error"          # "absent": a row without a value is no entry


class Config(NamedTuple):
    path: str
    sha256: str
    eps: float
    min_leaderboards: int
    aliases: Dict[str, str]
    boards: List[BoardSpec]
    # Entries with a problem whose file can still be read for its own problems (never ranked).
    broken_boards: Sequence[BoardSpec] = ()


def _located(node, path: str, problems: Collector) -> Y:
    """The checked node graph as Y values (with lines); scalars constructed as PyYAML would."""
    from yaml import MappingNode, ScalarNode, SequenceNode
    line = node.start_mark.line + 1
    if isinstance(node, MappingNode):
        out: Dict[Any, Y] = {}
        for knode, vnode in node.value:
            if not isinstance(knode, ScalarNode):
                problems.add(path, knode.start_mark.line + 1, "a key must be plain text")
                continue
            out[safe_yaml.construct(knode)] = _located(vnode, path, problems)
        return Y(out, line)
    if isinstance(node, SequenceNode):
        return Y([_located(c, path, problems) for c in node.value], line)
    return Y(safe_yaml.construct(node), line)


def _read_yaml(path: str, problems: Collector):
    """(root as Y, the file's bytes), or (None, bytes or None) after adding the problem."""
    raw = None
    try:
        raw = safe_yaml.read_file(path)
        node = safe_yaml.compose_text(safe_yaml.decode(raw))
        if node is None:
            problems.add(path, None, "the file is empty")
            return None, raw
        return _located(node, path, problems), raw
    except safe_yaml.YamlError as exc:
        problems.add(path, exc.line, exc.problem if raw is not None else
                     "cannot read the configuration: {}".format(exc.problem))
        return None, raw


def _plain(value: Any) -> Any:
    """A value without its Y wrappers, to quote it in a message (bounded by safe_yaml's caps)."""
    if isinstance(value, Y):
        return _plain(value.value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _shown(y: Y) -> str:
    return brief(_plain(y))


def _text(y: Y, what: str, path: str, problems: Collector) -> Optional[str]:
    if not isinstance(y.value, str) or not y.value.strip():
        problems.add(path, y.line, "{} must be non-empty text, not {}".format(what, _shown(y)))
        return None
    return y.value.strip()


def _number(y: Y) -> Optional[float]:
    if isinstance(y.value, bool):
        return None
    try:
        if isinstance(y.value, (int, float)):
            return float(y.value)
        if isinstance(y.value, str) and len(y.value) <= 100:
            return float(y.value.strip())
    except (ValueError, OverflowError):       # an int too large for a float, text
        pass
    return None


def _choice(d: Dict[str, Y], key: str, choices, path: str, problems: Collector) -> Optional[str]:
    """d[key] if it is one of choices (the first choice when absent), else None (a problem)."""
    if key not in d:
        return choices[0]
    if d[key].value in choices and isinstance(d[key].value, str):
        return d[key].value
    problems.add(path, d[key].line, "{} must be one of {}, not {}".format(
        key, ", ".join(choices), _shown(d[key])))
    return None


def _board(y: Y, config_dir: str, path: str,
           problems: Collector) -> Tuple[Optional[BoardSpec], bool]:
    """(spec, ok): ok False after a problem of the entry, with a spec still when its name and
    file are usable (None otherwise)."""
    if not isinstance(y.value, dict):
        problems.add(path, y.line, "each leaderboard must be a mapping (name:, file:, ...)")
        return None, False
    d = y.value
    ok = _known_keys(d, BOARD_KEYS, "a leaderboard", path, problems)
    fields, texts_ok = _board_texts(d, y.line, path, problems)
    fmt = _choice(d, "format", FORMATS, path, problems) if "format" in d else None
    duplicates = _choice(d, "duplicates", DUPLICATES, path, problems)
    missing = _choice(d, "missing", MISSING, path, problems)
    table, table_ok = _table_number(d, path, problems)
    columns_ok = _one_column(d, y.line, fmt, path, problems)
    hib, hib_ok = _direction(d, y.line, path, problems)
    ok = ok and texts_ok and ("format" not in d or fmt is not None) and \
        duplicates is not None and missing is not None and table_ok and columns_ok and hib_ok
    if fields.get("name") is None or fields.get("file") is None:
        return None, False
    # A broken entry that still names its file gives a spec to read that file with, so that the
    # file's own problems are reported in the same run (the board is never ranked: a problem
    # in the configuration stops the run before anything is written).
    score_column = fields["score_column"]
    if not ok:  # read as what it most likely means: a rank column wins, higher is better
        score_column = None if fields["rank_column"] else score_column
        hib = True if hib is None and score_column else hib
    return BoardSpec(fields["name"], os.path.normpath(os.path.join(config_dir, fields["file"])),
                     y.line, fmt, table, fields["model_column"], score_column, hib,
                     fields["rank_column"], duplicates or DUPLICATES[0],
                     missing or MISSING[0]), ok


def _known_keys(d: Dict[str, Y], known: Sequence[str], where: str, path: str,
                problems: Collector) -> bool:
    """False after naming each key not in known."""
    ok = True
    for key in d:
        if key not in known:
            problems.add(path, d[key].line, "unknown key {}{} (known: {})".format(
                brief(key), " in " + where if where else "", ", ".join(known)))
            ok = False
    return ok


def _board_texts(d: Dict[str, Y], line: int, path: str,
                 problems: Collector) -> Tuple[Dict[str, Any], bool]:
    """The entry's texts: name and file (required), model, score and rank columns (None when
    not given); ok False after a problem."""
    ok = True
    fields: Dict[str, Any] = {}
    for key in ("name", "file"):
        if key not in d:
            problems.add(path, line, "this leaderboard has no {!r}".format(key))
            ok = False
        else:
            fields[key] = _text(d[key], key, path, problems)
            ok = ok and fields[key] is not None
    for key in ("model_column", "score_column", "rank_column"):
        fields[key] = _text(d[key], key, path, problems) if key in d else None
        ok = ok and (key not in d or fields[key] is not None)
    return fields, ok


def _table_number(d: Dict[str, Y], path: str, problems: Collector) -> Tuple[Optional[int], bool]:
    """The entry's `table:` (which table of a CodaLab export), None when not given."""
    if "table" not in d:
        return None, True
    table = d["table"].value
    if isinstance(table, bool) or not isinstance(table, int) or table < 1:
        problems.add(path, d["table"].line,
                     "table must be a positive integer, not {}".format(_shown(d["table"])))
        return None, False
    return table, True


def _one_column(d: Dict[str, Y], line: int, fmt: Optional[str], path: str,
                problems: Collector) -> bool:
    """A score column or a rank column, not both; neither only for compare.py's file."""
    if "score_column" in d and "rank_column" in d:
        problems.add(path, line, "give either score_column (with higher_is_better) or "
                                 "rank_column, not both")
        return False
    if "score_column" not in d and "rank_column" not in d and fmt not in (None, "compare"):
        # Without format:, the file decides: only compare.py's leaderboard.csv needs neither.
        problems.add(path, line, "give either score_column (with higher_is_better) or "
                                 "rank_column, not neither (only compare.py's "
                                 "leaderboard.csv needs neither)")
        return False
    return True


def _direction(d: Dict[str, Y], line: int, path: str,
               problems: Collector) -> Tuple[Optional[bool], bool]:
    """higher_is_better: required with a score column alone, refused with a rank column."""
    if "score_column" in d and "rank_column" not in d:
        if "higher_is_better" not in d:
            problems.add(path, line, "score_column needs higher_is_better: true or false")
            return None, False
        if not isinstance(d["higher_is_better"].value, bool):
            problems.add(path, d["higher_is_better"].line, "higher_is_better must be true or "
                         "false, not {}".format(_shown(d["higher_is_better"])))
            return None, False
        return d["higher_is_better"].value, True
    if "higher_is_better" in d and "score_column" not in d:
        problems.add(path, d["higher_is_better"].line,
                     "higher_is_better only goes with score_column (a rank column is used as it "
                     "stands)")
        return None, False
    return None, True


def _aliases(y: Y, path: str, problems: Collector) -> Dict[str, str]:
    aliases: Dict[str, str] = {}
    if not isinstance(y.value, dict):
        problems.add(path, y.line, "aliases must be a mapping of name: joined name")
        return aliases
    for key, target in y.value.items():
        if not isinstance(key, str) or not key.strip():
            problems.add(path, target.line, "alias {} must be text".format(brief(key)))
            continue
        joined = _text(target, "the alias of {}".format(brief(key)), path, problems)
        if joined is not None:
            aliases[key.strip()] = joined
    for key, joined in sorted(aliases.items()):
        if joined in aliases and aliases[joined] != joined:
            problems.add(path, y.value[key].line if key in y.value else y.line,
                         "alias {} -> {} leads to another alias ({} -> {}); map every name "
                         "directly to its final name".format(
                             brief(key), brief(joined), brief(joined), brief(aliases[joined])))
    return aliases


def load(path: str, problems: Optional[Collector] = None) -> Config:
    """Read and validate the configuration; raises InputProblems listing every problem. Given a
    collector, the problems of its entries are added to it instead, and the configuration is
    returned with the entries it can still read (broken_boards: read them too, for the files'
    own problems, then raise): every problem at once. Problems that leave nothing to read (a
    file that is not YAML, not a mapping) still raise at once."""
    raise_at_end = problems is None
    if problems is None:
        problems = Collector()
    root, raw = _read_yaml(path, problems)
    problems.raise_if_any()
    if not isinstance(root.value, dict):
        problems.add(path, root.line, "the configuration must be a mapping with leaderboards:")
        problems.raise_if_any()
    top = root.value
    _known_keys(top, TOP_KEYS, "", path, problems)
    eps = _eps(top, path, problems)
    aliases = _aliases(top["aliases"], path, problems) if "aliases" in top else {}
    boards, broken = _boards(top, path, problems)
    min_lb = _min_leaderboards(top, path, problems)
    if raise_at_end:
        problems.raise_if_any()
    return Config(path, hashlib.sha256(raw).hexdigest(), eps, min_lb, aliases, boards, broken)


def _eps(top: Dict[str, Y], path: str, problems: Collector) -> float:
    """eps: (0 < eps < 1), EPS_DEFAULT when not given or after naming a bad one."""
    if "eps" not in top:
        return EPS_DEFAULT
    value = _number(top["eps"])
    if value is None or not math.isfinite(value) or not 0 < value < 1:
        problems.add(path, top["eps"].line, "eps must be a number with 0 < eps < 1, not "
                     "{}".format(_shown(top["eps"])))
        return EPS_DEFAULT
    return value


def _boards(top: Dict[str, Y], path: str,
            problems: Collector) -> Tuple[List[BoardSpec], List[BoardSpec]]:
    """(the leaderboards' entries, those with a problem but a file to read), each name once."""
    boards: List[BoardSpec] = []
    broken: List[BoardSpec] = []
    if "leaderboards" not in top:
        problems.add(path, None, "no leaderboards: give a list of leaderboards")
        return boards, broken
    if not isinstance(top["leaderboards"].value, list) or not top["leaderboards"].value:
        problems.add(path, top["leaderboards"].line, "leaderboards must be a non-empty list")
        return boards, broken
    config_dir = os.path.dirname(path)
    first_line: Dict[str, int] = {}
    for item in top["leaderboards"].value:
        spec, ok = _board(item, config_dir, path, problems)
        if spec is None:
            continue
        if spec.name in first_line:
            problems.add(path, spec.line, "two leaderboards are named {} (the other starts "
                         "on line {})".format(brief(spec.name), first_line[spec.name]))
            continue
        first_line[spec.name] = spec.line
        (boards if ok else broken).append(spec)
    return boards, broken


def _min_leaderboards(top: Dict[str, Y], path: str, problems: Collector) -> int:
    """min_leaderboards: a positive integer (2 when not given), at most the leaderboards."""
    min_lb = 2
    if "min_leaderboards" in top:
        y = top["min_leaderboards"]
        if isinstance(y.value, bool) or not isinstance(y.value, int) or y.value < 1:
            problems.add(path, y.line, "min_leaderboards must be a positive integer, not "
                         "{}".format(_shown(y)))
        else:
            min_lb = y.value
    n_boards = len(top["leaderboards"].value) if "leaderboards" in top and isinstance(
        top["leaderboards"].value, list) else 0
    if n_boards and min_lb > n_boards:
        problems.add(path, top["min_leaderboards"].line if "min_leaderboards" in top else None,
                     "min_leaderboards is {} but there are only {} leaderboards: nobody could be "
                     "ranked".format(brief(min_lb), n_boards))
    return min_lb
