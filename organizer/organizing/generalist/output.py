"""ranking.json, ranking.csv and the stdout table; all files land in --out together or not at all.

No timestamps in the files: the same inputs give byte-identical outputs. Both files are written
as streams, one model at a time (50 boards x 20,000 models is a 100 MB JSON document: never one
string in memory). C is shown the same way everywhere a person reads it (format_c: stdout, page,
the CSV's rounded column); the files also hold it in full.
"""
import csv
import io
import json
import os
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO, Tuple, Union

from scoring import __version__
from scoring.problems import shown
from scoring.quoting import spreadsheet_safe
from .boards import ReadBoard
from .config import Config
from .consistency import ModelResult, s_table, table_index

RULES = {
    "r": "the model's rank on the leaderboard if present, else N + 1",
    "s": "max(0, 1 - (r - 1) / (N - 1))",
    "C": "exp(mean over all leaderboards of log(max(eps, s))), logs summed with math.fsum",
    "N": "the number of entries on the leaderboard, tied or not",
    "ties_on_a_leaderboard": "equal scores share the best rank (standard competition ranking, "
                             "1-2-2-4), scores compared exactly; a rank column is used as it "
                             "stands",
    "names": "matched exactly after stripping surrounding whitespace, then joined by the aliases",
    "ties_in_C": "equal C share a rank (1-2-2-4); inside a tie the order is by name",
    "unranked": "models on fewer leaderboards than min_leaderboards are listed after the ranked "
                "ones with rank null",
    "rank_range": "[best, worst] rank over the M rankings computed with one leaderboard left "
                  "out (same eps and min_leaderboards); worst null: unranked in at least one of "
                  "them; rank_range null: the model is unranked, or M - 1 < min_leaderboards",
}

Writer = Callable[[TextIO], None]


def format_c(value: float) -> str:
    """C with 4 significant digits, in the same style in every row: fixed notation from 0.001
    up (0.7937, 0.001235, 1.000), scientific below (9.086e-05, 1.000e-12). C spans 1 down to
    eps (1e-12): fixed decimals would show most models as 0."""
    sci = "{:.3e}".format(value)
    exponent = int(sci.partition("e")[2])          # after rounding: 0.00099996 -> 1.000e-03
    if exponent >= -3:
        return "{:.{}f}".format(value, 3 - exponent)
    return sci


def format_s(value: float) -> str:
    return "{:.3f}".format(value)


def format_range(span: Optional[Tuple[int, Optional[int]]]) -> str:
    """`2-5`, `3` (the same either way), `1-unranked`; empty for none."""
    if span is None:
        return ""
    best, worst = span
    if worst is None:
        return "{}-unranked".format(best)
    return str(best) if best == worst else "{}-{}".format(best, worst)


def board_info(b: ReadBoard) -> Dict[str, Any]:
    info: Dict[str, Any] = {
        "name": b.spec.name, "file": b.spec.path, "format": b.format,
        "entries": b.board.n, "model_column": b.model_column, "sha256": b.sha256,
    }
    if b.spec.score_column:
        info["score_column"] = b.used_column
        info["higher_is_better"] = b.spec.higher_is_better
    else:
        info["rank_column"] = b.used_column
        if b.value_column is not None:            # compare.py's file: its ranking key
            info["ranking_key"] = b.value_column
            info["higher_is_better"] = b.higher_is_better
    info["duplicates"] = b.spec.duplicates
    info["missing"] = b.spec.missing
    if b.spec.duplicates == "best":
        info["rows_dropped_as_duplicates"] = b.dropped_duplicates
    if b.spec.missing == "absent":
        info["rows_without_value"] = b.absent_rows
    return info


def aliases_used(config: Config, boards: Sequence[ReadBoard]) -> List[Dict[str, Any]]:
    """Each alias found on some board: {alias, name, leaderboards}, sorted by alias."""
    out = []
    for alias in sorted(config.aliases):
        where = [b.spec.name for b in boards if alias in b.aliases_used]
        if where:
            out.append({"alias": alias, "name": config.aliases[alias], "leaderboards": where})
    return out


def _board_fragments(boards: Sequence[ReadBoard]) -> List[Dict[Optional[int], str]]:
    """Per board, rank (None: absent) -> the JSON text `"<board>": {"rank": r, "s": s}`, made
    once per rank: a model's line is then a join of M strings, not M dicts to encode. A finite
    float's repr is its JSON form (json.dumps writes floats with float.__repr__)."""
    out = []
    for b in boards:
        n, table = b.board.n, s_table(b.board.n)
        key = json.dumps(b.spec.name, ensure_ascii=False)
        frag: Dict[Optional[int], str] = {
            None: '{}: {{"rank": null, "s": {!r}}}'.format(key, table[n + 1])}
        for r in set(b.board.ranks.values()):
            frag[r] = '{}: {{"rank": {:d}, "s": {!r}}}'.format(key, r, table[table_index(r, n)])
        out.append(frag)
    return out


def _board_cells(results: Sequence[ModelResult], tables: List[Dict[Optional[int], str]]):
    """Per model (in order), the tuple of its texts on every board: tables[i][its rank on i].

    Looked up one board at a time (that board's table stays in the CPU cache), then turned
    into rows: about three times faster than per model at 20,000 x 50."""
    if not results:
        return iter(())
    columns = zip(*(m.ranks for m in results))
    return zip(*[list(map(t.__getitem__, column)) for t, column in zip(tables, columns)])


def write_json(f: TextIO, config: Config, boards: Sequence[ReadBoard],
               results: Sequence[ModelResult], warnings: List[str],
               leave_one_out: bool) -> None:
    """ranking.json: the document's head indented, then one line per model."""
    head = {
        "method": "MaCVi generalist consistency score",
        "rules": RULES,
        "eps": config.eps,
        "min_leaderboards": config.min_leaderboards,
        "leave_one_out": leave_one_out,
        "config": {"file": config.path, "sha256": config.sha256},
        "leaderboards": [board_info(b) for b in boards],
        "aliases_used": aliases_used(config, boards),
        "warnings": warnings,
        "generated_by": "organizer/generalist.py {}".format(__version__),
    }
    text = json.dumps(head, indent=2, ensure_ascii=False, allow_nan=False)
    f.write(text[:-2] + ',\n  "models": [\n')        # text ends with "\n}"
    names = [b.spec.name for b in boards]
    fragments = _board_fragments(boards)
    separator = ""
    for m, cells in zip(results, _board_cells(results, fragments)):
        fields = json.dumps({
            "model": m.model,
            "consistency": m.consistency,
            "rank": m.rank,
            "rank_range": None if m.rank_range is None else list(m.rank_range),
            "leaderboards_present": m.boards_present,
            "weakest_leaderboard": names[m.weakest[0]],
            "weakest_leaderboards": [names[i] for i in m.weakest],
        }, ensure_ascii=False, allow_nan=False)
        f.write("{}    {}, \"leaderboards\": {{{}}}}}".format(
            separator, fields[:-1], ", ".join(cells)))
        separator = ",\n"
    f.write("\n  ]\n}\n")


def write_csv(f: TextIO, boards: Sequence[ReadBoard], results: Sequence[ModelResult]) -> None:
    """ranking.csv: values rounded as the page shows them, C also in full; every text cell that
    a spreadsheet would run as a formula is neutralised (quoting.spreadsheet_safe)."""
    names = [b.spec.name for b in boards]
    csv.writer(f, lineterminator="\n").writerow(
        ["rank", "model", "consistency", "consistency_exact", "leaderboards_present",
         "weakest_leaderboard", "rank_best_leave_one_out", "rank_worst_leave_one_out"]
        + [spreadsheet_safe("{} {}".format(n, h)) for n in names for h in ("rank", "s")])
    safe_names = [spreadsheet_safe(n) for n in names]
    # Per board, rank -> the text of its two cells (`3,0.750`; absent: `,0.000`), made once
    # per rank: numbers need no CSV quoting, so a row is a join of M strings. The text cells
    # before them go through the csv module.
    pairs = []
    for b in boards:
        table = s_table(b.board.n)
        texts: Dict[Optional[int], str] = {None: "," + format_s(0.0)}
        for r in set(b.board.ranks.values()):
            texts[r] = "{},{}".format(r, format_s(table[table_index(r, b.board.n)]))
        pairs.append(texts)
    head = io.StringIO()
    # "\n" as the line end: the csv module quotes a cell holding a line-end character, and
    # with lineterminator="" a name with a newline would go out unquoted.
    w = csv.writer(head, lineterminator="\n")
    for m, cells in zip(results, _board_cells(results, pairs)):
        span = m.rank_range
        w.writerow(["" if m.rank is None else m.rank, spreadsheet_safe(m.model),
                    format_c(m.consistency), repr(m.consistency), m.boards_present,
                    safe_names[m.weakest[0]],
                    "" if span is None else span[0],
                    "" if span is None else ("unranked" if span[1] is None else span[1])])
        f.write("{},{}\n".format(head.getvalue()[:-1], ",".join(cells)))
        head.seek(0)
        head.truncate()


def table_lines(config: Config, boards: Sequence[ReadBoard], results: Sequence[ModelResult],
                leave_one_out: bool) -> List[str]:
    """The ranking for a terminal: boards as [1], [2]... with a legend below. Names are shown
    escaped (problems.shown): no name can break a row or send escape sequences."""
    keys = ["[{}]".format(i + 1) for i in range(len(boards))]
    # Per board, rank -> its `r/N` cell, made once per rank and already padded to the column's
    # width (a million cells at scale: no per-cell formatting).
    cell_of = []
    for b, key in zip(boards, keys):
        texts: Dict[Optional[int], str] = {None: "-"}
        for r in set(b.board.ranks.values()):
            texts[r] = "{}/{}".format(r, b.board.n)
        width = max([len(key)] + [len(t) for t in texts.values()])
        cell_of.append({r: t.rjust(width) for r, t in texts.items()})
    head, tail = [], []
    for m in results:
        head.append(("-" if m.rank is None else str(m.rank), shown(m.model),
                     format_c(m.consistency)))
        tail.append(((format_range(m.rank_range).replace("-unranked", "-u") or "-",)
                     if leave_one_out else ()) + ("".join(keys[i] for i in m.weakest),))
    heads = ["rank", "model", "C"]
    tails = (["w/o 1"] if leave_one_out else []) + ["weakest"]
    hw = [max([len(h)] + [len(r[i]) for r in head]) for i, h in enumerate(heads)]
    tw = [max([len(h)] + [len(r[i]) for r in tail]) for i, h in enumerate(tails)]
    bw = [len(next(iter(t.values()))) for t in cell_of]

    def line(first, boards_part, last):
        cells = [first[0].rjust(hw[0]), first[1].ljust(hw[1]), first[2].rjust(hw[2])]
        cells += boards_part
        cells += [t.rjust(w) for t, w in zip(last, tw)]
        return "  ".join(cells).rstrip()

    out = [line(heads, [k.rjust(w) for k, w in zip(keys, bw)], tails),
           "  ".join("-" * w for w in hw + bw + tw)]
    out += [line(h, list(cells), t)
            for h, t, cells in zip(head, tail, _board_cells(results, cell_of))]
    out.append("")
    for b, k in zip(boards, keys):
        out.append("{} {}: {} entries, {}; {} ({}){}".format(
            k, shown(b.spec.name), b.board.n, shown(b.describe()),
            shown(os.path.basename(b.spec.path)), b.format,
            "; " + options_note(b) if options_note(b) else ""))
    out.append("r/N: rank on the leaderboard of N entries; -: absent (counted as N+1, s = 0).")
    if leave_one_out:
        out.append("w/o 1: best-worst rank when any one leaderboard is left out (u: unranked "
                   "without one of them).")
    unranked = sum(1 for m in results if m.rank is None)
    if unranked:
        out.append("rank -: on fewer than {} leaderboards, listed but not ranked ({}).".format(
            config.min_leaderboards, unranked))
    used = aliases_used(config, boards)
    if used:
        key_of = {b.spec.name: k for b, k in zip(boards, keys)}
        out.append("Aliases used: {}.".format("; ".join(
            "{} -> {} ({})".format(shown(a["alias"]), shown(a["name"]),
                                   "".join(key_of[n] for n in a["leaderboards"]))
            for a in used)))
    return out


def options_note(b: ReadBoard) -> str:
    """The board's non-default options and what they did, e.g. `duplicates: best, 3 rows
    dropped`; empty when it has none."""
    notes = []
    if b.spec.duplicates == "best":
        notes.append("duplicates: best, {} row{} dropped".format(
            b.dropped_duplicates, "" if b.dropped_duplicates == 1 else "s"))
    if b.spec.missing == "absent":
        notes.append("missing: absent, {} row{} without a value".format(
            b.absent_rows, "" if b.absent_rows == 1 else "s"))
    return "; ".join(notes)


class OutFolder:
    """The outputs, written into a temporary folder beside out_dir and moved in together.

    Created at the start of a run, so that an --out that cannot be written fails at once (an
    OSError for the caller), before any work. commit(): a new out_dir is one rename; into an
    existing folder each file is moved with os.replace, so a reader never sees a half-written
    file. discard(): removes the temporary folder and any parent this run created.
    """

    def __init__(self, out_dir: str) -> None:
        self.out_dir = os.path.abspath(out_dir)
        self.created: List[str] = []
        self.names: List[str] = []
        self.tmp = ""
        parent = os.path.dirname(self.out_dir)
        missing = []
        while parent and not os.path.isdir(parent) and not os.path.lexists(parent):
            missing.append(parent)
            parent = os.path.dirname(parent)
        try:
            for folder in reversed(missing):
                os.mkdir(folder)
                self.created.append(folder)
            self.tmp = tempfile.mkdtemp(prefix=".generalist-", dir=os.path.dirname(self.out_dir))
            umask = os.umask(0)     # mkdtemp makes the folder private (0700); the result is not
            os.umask(umask)
            os.chmod(self.tmp, 0o777 & ~umask)
        except BaseException:
            self.discard()
            raise

    def write(self, name: str, content: Union[str, Writer]) -> None:
        with open(os.path.join(self.tmp, name), "w", encoding="utf-8", newline="") as f:
            if isinstance(content, str):
                f.write(content)
            else:
                content(f)
        self.names.append(name)

    def commit(self) -> None:
        if not os.path.exists(self.out_dir):
            os.rename(self.tmp, self.out_dir)
        else:
            for name in self.names:
                os.replace(os.path.join(self.tmp, name), os.path.join(self.out_dir, name))
            shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp = ""
        self.created = []

    def discard(self) -> None:
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = ""
        for folder in reversed(self.created):
            try:
                os.rmdir(folder)
            except OSError:
                break
        self.created = []
