"""Find the one results file of a VQA submission.

A VQA submission is one .json file (any name), at the root of the zip or inside folders, next to
what platforms and operating systems add (Codabench's `metadata`, `__MACOSX/`, `.DS_Store`,
other hidden files: ignored silently). No .json, or two of them, is refused; other files are
listed as warnings and not scored.
"""
import os
from typing import Dict, List, Tuple

from ...folders import ignored
from ...problems import ProblemLog
from .problems import EXTRA_FILE, NO_RESULTS, TWO_RESULTS

UNIT = "results"          # the single unit a VQA submission is scored as
PLATFORM_FILES = ("metadata",)


def _listing(res_dir: str) -> Tuple[List[str], List[str]]:
    """(json files, other files) under res_dir as paths relative to it, '/'-separated, sorted."""
    found: List[str] = []
    others: List[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = sorted(os.scandir(os.path.join(res_dir, rel)), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if ignored(e.name):
                continue
            path = rel + "/" + e.name if rel else e.name
            if e.is_dir():
                stack.append(path)
            elif e.name.lower().endswith(".json"):
                found.append(path)
            elif not (rel == "" and e.name in PLATFORM_FILES):
                others.append(path)
    return sorted(found), sorted(others)


def find_results(res_dir: str) -> Tuple[Dict[str, str], ProblemLog]:
    """({UNIT: path} if exactly one .json file, else {}; problems and warnings)."""
    log = ProblemLog()
    found, others = _listing(res_dir)
    for o in others:
        log.add(EXTRA_FILE, o)
    if not found:
        zips = [o for o in others if o.lower().endswith(".zip")]
        log.add(NO_RESULTS, "submission", "it contains another zip ({}): zip the .json file, not "
                "a zip".format(", ".join(zips[:3])) if zips else
                "found {} other files".format(len(others)))
        return {}, log
    if len(found) > 1:
        for f in found:
            log.add(TWO_RESULTS, f)
        return {}, log
    return {UNIT: os.path.join(res_dir, *found[0].split("/"))}, log
