"""The organizer's YAML configuration: loaded with line numbers, validated, every problem named.

PyYAML reads `1e-12` (no dot) as a string under YAML 1.1, so numbers given as strings are parsed
here. Duplicate keys, which PyYAML would silently collapse to the last, are refused.
"""
import hashlib
import math
import os
from typing import Any, Dict, List, NamedTuple, Optional

from .consistency import EPS_DEFAULT
from .problems import Collector

TOP_KEYS = ("eps", "min_leaderboards", "aliases", "leaderboards")
BOARD_KEYS = ("name", "file", "format", "table", "model_column", "score_column",
              "higher_is_better", "rank_column")
FORMATS = ("csv", "codalab", "codabench")


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
    rank_column: Optional[str]


class Config(NamedTuple):
    path: str
    sha256: str
    eps: float
    min_leaderboards: int
    aliases: Dict[str, str]
    boards: List[BoardSpec]


def _located(loader, node, path: str, problems: Collector) -> Y:
    import yaml
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: Dict[Any, Y] = {}
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                problems.add(path, knode.start_mark.line + 1, "a key must be plain text")
                continue
            key = loader.construct_object(knode)
            if key in out:
                problems.add(path, knode.start_mark.line + 1,
                             "key {!r} appears twice in one mapping".format(key))
                continue
            out[key] = _located(loader, vnode, path, problems)
        return Y(out, line)
    if isinstance(node, yaml.SequenceNode):
        return Y([_located(loader, c, path, problems) for c in node.value], line)
    return Y(loader.construct_object(node), line)


def _read_yaml(path: str, raw: bytes, problems: Collector) -> Optional[Y]:
    import yaml
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.add(path, None, "not UTF-8 text (byte {})".format(exc.start))
        return None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            problems.add(path, None, "the file is empty")
            return None
        return _located(loader, node, path, problems)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.add(path, mark.line + 1 if mark else None, "not valid YAML: {}".format(what))
        return None
    finally:
        loader.dispose()


def _text(y: Y, what: str, path: str, problems: Collector) -> Optional[str]:
    if not isinstance(y.value, str) or not y.value.strip():
        problems.add(path, y.line, "{} must be non-empty text, not {!r}".format(what, y.value))
        return None
    return y.value.strip()


def _number(y: Y) -> Optional[float]:
    if isinstance(y.value, bool):
        return None
    if isinstance(y.value, (int, float)):
        return float(y.value)
    if isinstance(y.value, str):
        try:
            return float(y.value.strip())
        except ValueError:
            return None
    return None


def _board(y: Y, config_dir: str, path: str, problems: Collector) -> Optional[BoardSpec]:
    if not isinstance(y.value, dict):
        problems.add(path, y.line, "each leaderboard must be a mapping (name:, file:, ...)")
        return None
    d = y.value
    ok = True
    for key in d:
        if key not in BOARD_KEYS:
            problems.add(path, d[key].line, "unknown key {!r} in a leaderboard (known: {})".format(
                key, ", ".join(BOARD_KEYS)))
            ok = False
    fields: Dict[str, Any] = {}
    for key in ("name", "file"):
        if key not in d:
            problems.add(path, y.line, "this leaderboard has no {!r}".format(key))
            ok = False
        else:
            fields[key] = _text(d[key], key, path, problems)
            ok = ok and fields[key] is not None
    for key in ("model_column", "score_column", "rank_column"):
        fields[key] = _text(d[key], key, path, problems) if key in d else None
        ok = ok and (key not in d or fields[key] is not None)
    fmt = None
    if "format" in d:
        fmt = d["format"].value
        if fmt not in FORMATS:
            problems.add(path, d["format"].line, "format must be one of {}, not {!r}".format(
                ", ".join(FORMATS), fmt))
            ok = False
    table = None
    if "table" in d:
        table = d["table"].value
        if isinstance(table, bool) or not isinstance(table, int) or table < 1:
            problems.add(path, d["table"].line,
                         "table must be a positive integer, not {!r}".format(table))
            ok = False
    if ("score_column" in d) == ("rank_column" in d):
        problems.add(path, y.line, "give either score_column (with higher_is_better) or "
                                   "rank_column, not {}".format(
                                       "both" if "score_column" in d else "neither"))
        ok = False
    hib = None
    if "score_column" in d and "rank_column" not in d:
        if "higher_is_better" not in d:
            problems.add(path, y.line, "score_column needs higher_is_better: true or false")
            ok = False
        elif not isinstance(d["higher_is_better"].value, bool):
            problems.add(path, d["higher_is_better"].line, "higher_is_better must be true or "
                         "false, not {!r}".format(d["higher_is_better"].value))
            ok = False
        else:
            hib = d["higher_is_better"].value
    elif "higher_is_better" in d and "score_column" not in d:
        problems.add(path, d["higher_is_better"].line,
                     "higher_is_better only goes with score_column (a rank column is used as it "
                     "stands)")
        ok = False
    if not ok:
        return None
    return BoardSpec(fields["name"], os.path.normpath(os.path.join(config_dir, fields["file"])),
                     y.line, fmt, table, fields["model_column"], fields["score_column"], hib,
                     fields["rank_column"])


def load(path: str) -> Config:
    """Read and validate the configuration; raises InputProblems listing every problem."""
    problems = Collector()
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        problems.add(path, None, "cannot read the configuration ({})".format(exc.strerror))
        problems.raise_if_any()
    root = _read_yaml(path, raw, problems)
    problems.raise_if_any()
    if not isinstance(root.value, dict):
        problems.add(path, root.line, "the configuration must be a mapping with leaderboards:")
        problems.raise_if_any()
    top = root.value
    for key in top:
        if key not in TOP_KEYS:
            problems.add(path, top[key].line, "unknown key {!r} (known: {})".format(
                key, ", ".join(TOP_KEYS)))

    eps = EPS_DEFAULT
    if "eps" in top:
        value = _number(top["eps"])
        if value is None or not math.isfinite(value) or not 0 < value < 1:
            problems.add(path, top["eps"].line,
                         "eps must be a number with 0 < eps < 1, not {!r}".format(top["eps"].value))
        else:
            eps = value

    aliases: Dict[str, str] = {}
    if "aliases" in top:
        y = top["aliases"]
        if not isinstance(y.value, dict):
            problems.add(path, y.line, "aliases must be a mapping of name: joined name")
        else:
            for key, target in y.value.items():
                if not isinstance(key, str) or not key.strip():
                    problems.add(path, target.line, "alias {!r} must be text".format(key))
                    continue
                joined = _text(target, "the alias of {!r}".format(key), path, problems)
                if joined is not None:
                    aliases[key.strip()] = joined
            for key, joined in sorted(aliases.items()):
                if joined in aliases and aliases[joined] != joined:
                    problems.add(path, y.value[key].line if key in y.value else y.line,
                                 "alias {!r} -> {!r} leads to another alias ({!r} -> {!r}); map "
                                 "every name directly to its final name".format(
                                     key, joined, joined, aliases[joined]))

    boards: List[BoardSpec] = []
    if "leaderboards" not in top:
        problems.add(path, None, "no leaderboards: give a list of leaderboards")
    elif not isinstance(top["leaderboards"].value, list) or not top["leaderboards"].value:
        problems.add(path, top["leaderboards"].line, "leaderboards must be a non-empty list")
    else:
        config_dir = os.path.dirname(path)
        first_line: Dict[str, int] = {}
        for item in top["leaderboards"].value:
            spec = _board(item, config_dir, path, problems)
            if spec is None:
                continue
            if spec.name in first_line:
                problems.add(path, spec.line, "two leaderboards are named {!r} (the other starts "
                             "on line {})".format(spec.name, first_line[spec.name]))
                continue
            first_line[spec.name] = spec.line
            boards.append(spec)

    min_lb = 2
    if "min_leaderboards" in top:
        y = top["min_leaderboards"]
        if isinstance(y.value, bool) or not isinstance(y.value, int) or y.value < 1:
            problems.add(path, y.line,
                         "min_leaderboards must be a positive integer, not {!r}".format(y.value))
        else:
            min_lb = y.value
    n_boards = len(top["leaderboards"].value) if "leaderboards" in top and isinstance(
        top["leaderboards"].value, list) else 0
    if n_boards and min_lb > n_boards:
        problems.add(path, top["min_leaderboards"].line if "min_leaderboards" in top else None,
                     "min_leaderboards is {} but there are only {} leaderboards: nobody could be "
                     "ranked".format(min_lb, n_boards))
    problems.raise_if_any()
    return Config(path, hashlib.sha256(raw).hexdigest(), eps, min_lb, aliases, boards)
