"""ranking.json, ranking.csv and the stdout table; all files land in --out together or not at all.

No timestamps in the files: the same inputs give byte-identical outputs.
"""
import csv
import io
import json
import os
import shutil
import tempfile
from typing import Any, Dict, List, Sequence

from .. import __version__
from .boards import ReadBoard
from .config import Config
from .consistency import ModelResult

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
}


def format_c(value: float) -> str:
    """Six significant digits: C spans 1 down to eps (1e-12), fixed decimals would hide it."""
    return "{:.6g}".format(value)


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
    return info


def ranking_json(config: Config, boards: Sequence[ReadBoard], results: Sequence[ModelResult],
                 warnings: List[str]) -> str:
    doc = {
        "method": "MaCVi generalist consistency score",
        "rules": RULES,
        "eps": config.eps,
        "min_leaderboards": config.min_leaderboards,
        "config": {"file": config.path, "sha256": config.sha256},
        "leaderboards": [board_info(b) for b in boards],
        "models": [{
            "model": m.model,
            "consistency": m.consistency,
            "rank": m.rank,
            "leaderboards_present": m.boards_present,
            "weakest_leaderboard": m.weakest,
            "leaderboards": {name: {"rank": st.rank, "s": st.s}
                             for name, st in m.standings.items()},
        } for m in results],
        "warnings": warnings,
        "generated_by": "scoring_program/generalist.py {}".format(__version__),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def ranking_csv(boards: Sequence[ReadBoard], results: Sequence[ModelResult]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = [b.spec.name for b in boards]
    w.writerow(["rank", "model", "consistency", "leaderboards_present", "weakest_leaderboard"]
               + [h for n in names for h in ("{} rank".format(n), "{} s".format(n))])
    for m in results:
        row = ["" if m.rank is None else m.rank, m.model, repr(m.consistency), m.boards_present,
               m.weakest]
        for n in names:
            st = m.standings[n]
            row += ["" if st.rank is None else st.rank, repr(st.s)]
        w.writerow(row)
    return buf.getvalue()


def table_lines(config: Config, boards: Sequence[ReadBoard],
                results: Sequence[ModelResult]) -> List[str]:
    """The ranking for a terminal: boards as [1], [2]... with a legend below."""
    keys = ["[{}]".format(i + 1) for i in range(len(boards))]
    key_of = {b.spec.name: k for b, k in zip(boards, keys)}
    headers = ["rank", "model", "C"] + keys + ["weakest"]
    rows = []
    for m in results:
        cells = ["-" if m.rank is None else str(m.rank), m.model, format_c(m.consistency)]
        for b in boards:
            st = m.standings[b.spec.name]
            cells.append("-" if st.rank is None else "{}/{}".format(st.rank, b.board.n))
        cells.append(key_of[m.weakest])
        rows.append(cells)
    widths = [max(len(r[i]) for r in [headers] + rows) for i in range(len(headers))]
    fmt = "  ".join(("{:<%d}" if i == 1 else "{:>%d}") % w for i, w in enumerate(widths))
    out = [fmt.format(*headers).rstrip(), "  ".join("-" * w for w in widths)]
    out += [fmt.format(*r).rstrip() for r in rows]
    out.append("")
    for b, k in zip(boards, keys):
        what = ("{} ({} is better)".format(b.used_column,
                                           "higher" if b.spec.higher_is_better else "lower")
                if b.spec.score_column else "rank column {}".format(b.used_column))
        out.append("{} {}: {} entries, {}; {} ({})".format(
            k, b.spec.name, b.board.n, what, os.path.basename(b.spec.path), b.format))
    out.append("r/N: rank on the leaderboard of N entries; -: absent (counted as N+1, s = 0).")
    unranked = sum(1 for m in results if m.rank is None)
    if unranked:
        out.append("rank -: on fewer than {} leaderboards, listed but not ranked ({}).".format(
            config.min_leaderboards, unranked))
    return out


def write_atomically(out_dir: str, files: Dict[str, str]) -> None:
    """Write every file into a temporary folder beside out_dir, then move them in.

    A new out_dir is one rename; into an existing folder each file is moved with os.replace,
    so a reader never sees a half-written file, and a failure leaves nothing behind.
    """
    out_dir = os.path.abspath(out_dir)
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".generalist-", dir=parent)
    umask = os.umask(0)      # mkdtemp makes the folder private (0700); the result should not be
    os.umask(umask)
    try:
        os.chmod(tmp, 0o777 & ~umask)
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8", newline="") as f:
                f.write(text)
        if not os.path.exists(out_dir):
            os.rename(tmp, out_dir)
            tmp = ""
        else:
            for name in files:
                os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
