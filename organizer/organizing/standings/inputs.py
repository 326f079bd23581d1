"""standings.py's inputs besides the platform's files: verify.py's verdicts (`--verdict
TEAM=DIR`, a verify.py --out folder) and compare.py's comparison.json; and each input's
SHA-256, so that standings.json says exactly what it was decided from.

Bounds: a verdict.json or comparison.json at most MAX_BYTES; a folder input is hashed file by
file (names sorted, at most MAX_HASHED files), streamed in 1 MiB blocks.
"""
import hashlib
import json
import os
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Dict, List, Optional, Tuple

from scoring import regular_file
from scoring.problems import UsageError, shown
from scoring.quoting import brief
from ..platform_files.problems import PlatformFileProblem
from ..platform_files.results_export import Row
from .decide import Verdict

MAX_BYTES = 64 << 20
MAX_HASHED = 100000


def verdict_arg(text: str) -> Tuple[str, str]:
    team, sep, folder = text.partition("=")
    if not sep or not team.strip() or not folder:
        raise UsageError("--verdict {}: give TEAM=DIR, DIR being a verify.py --out folder"
                         .format(brief(text)))
    return team.strip(), folder


def _json(path: str, what: str) -> Any:
    try:
        return json.loads(regular_file.read_bytes(path, MAX_BYTES, follow_links=True))
    except (ValueError, RecursionError, regular_file.Refused) as exc:
        raise PlatformFileProblem("{} {} cannot be read: {}".format(
            what, shown(path), getattr(exc, "reason", type(exc).__name__))) from None


def read_verdict(team: str, folder: str) -> Verdict:
    path = os.path.join(folder, "verdict.json")
    if not os.path.isfile(path):
        raise PlatformFileProblem("--verdict {}={}: the folder holds no verdict.json (give the "
                                  "folder verify.py --out wrote)".format(team, shown(folder)))
    doc = _json(path, "the verdict")
    try:
        valid = {"valid": True, "invalid": False}[doc["verdict"]]
        failed = ["{}: {}".format(c["name"], c["summary"]) for c in doc["checks"]
                  if c["status"] == "fail"]
        task = str(doc["task"])
        score = doc.get("score") or {}
        claimed = score.get("claimed")
    except (KeyError, TypeError, AttributeError):
        raise PlatformFileProblem("{} is not verify.py's verdict.json".format(
            shown(path))) from None
    return Verdict(team, folder, valid, failed, task,
                   None if claimed is None else str(claimed), score.get("claimed_from"))


def _same_value(a: str, b: str) -> bool:
    try:
        return Decimal(a.strip()) == Decimal(b.strip())
    except InvalidOperation:
        return False


def check_one_track(verdicts: Dict[str, Verdict], comparison: Optional[Dict[str, Any]],
                    rows: List[Row], team_of: Callable[[str], str]) -> None:
    """Two tracks mixed in one run (both tracks have one task, so the task cannot tell them
    apart): a verdict whose claimed score is none of its team's rows on this leaderboard, or a
    comparison of submissions this leaderboard does not show, is refused (exit 3)."""
    shown_by_team: Dict[str, List[str]] = {}
    for r in rows:
        shown_by_team.setdefault(team_of(r.owner), []).append(r.shown)
    for v in verdicts.values():
        if v.claimed is None:
            continue
        mine = shown_by_team.get(v.team, [])
        if not any(_same_value(v.claimed, s) for s in mine):
            raise PlatformFileProblem(
                "--verdict {}: verify.py checked the package against the score {} ({}), but "
                "this leaderboard shows {} for {}: a verdict of another track or phase? Give "
                "one track's files per run".format(v.team, brief(v.claimed),
                                                   shown(str(v.claimed_from)),
                                                   " or ".join(mine) or "nothing", v.team))
    if comparison is not None and comparison.get("rows"):
        listed = set((r.owner, r.submission_id) for r in rows)
        strays = [c["model"] for c in comparison["rows"]
                  if (c["owner"], c["submission_id"]) not in listed]
        if strays:
            raise PlatformFileProblem(
                "the comparison {} compares submissions this leaderboard does not show ({}): "
                "a comparison of another track or phase? Give one track's files per run"
                .format(shown(comparison["path"]), shown(brief(", ".join(strays)))))


def read_comparison(path: str) -> Dict[str, Any]:
    if os.path.isdir(path):
        path = os.path.join(path, "comparison.json")
    doc = _json(path, "the comparison")
    try:
        pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
        models = [m["model"] for m in doc["models"]]
        task = str(doc["task"])
    except (KeyError, TypeError):
        raise PlatformFileProblem("{} is not compare.py's comparison.json".format(
            shown(path))) from None
    # issue 35's --split/--part: a comparison of one part of the test set says which
    # (comparison.json's "split"); its models' scores are that part's (final_part.py).
    split = doc.get("split") if isinstance(doc.get("split"), dict) else None
    scores = {m["model"]: m.get("score") for m in doc["models"]
              if isinstance(m.get("score"), (int, float)) or m.get("score") is None}
    return {"path": path, "pairs": pairs, "models": models, "task": task,
            "part": split.get("part") if split else None, "split": split, "scores": scores,
            "agreement": doc.get("agreement"), "rows": doc.get("leaderboard_rows")}


def sha256(path: str) -> str:
    h = hashlib.sha256()
    if os.path.isdir(path):
        files: List[str] = []
        for folder, dirs, names in os.walk(path):
            dirs.sort()
            files += [os.path.join(folder, n) for n in sorted(names)]
            if len(files) > MAX_HASHED:
                raise PlatformFileProblem("{} holds more than {:,} files".format(
                    shown(path), MAX_HASHED))
        for f in files:
            h.update(os.path.relpath(f, path).encode("utf-8", "surrogateescape") + b"\0")
            h.update(sha256(f).encode("ascii"))
        return h.hexdigest()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
