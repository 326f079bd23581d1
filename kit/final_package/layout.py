"""The package's structure: `submission/` holding `results/`, `code/`, `models/` and
`challenge_report.pdf` (names from the rules). Each missing part is named. A zip of a folder
(`team_final/submission/...`) is looked into; parts found at the top without `submission/` are
accepted with a warning.
"""
import os
from typing import Dict, List, NamedTuple, Optional

from scoring.folders import ignored, is_real_dir, sole_subfolder
from scoring.problems import shown
from .checks import FAIL, PASS, WARN, Check
from .params import bounds
from .rules import Rules


class Layout(NamedTuple):
    root: str                   # the folder holding the parts
    shown_root: str             # "submission/" as the package names it
    results: Optional[str]
    code: Optional[str]
    models: Optional[str]
    report: Optional[str]
    check: Check


def _files(folder: str) -> int:
    """Files under folder (hidden ones aside), folder by folder without recursion, at most
    bounds.MAX_FOLDER_DEPTH deep (the counter names what lies deeper)."""
    n = 0
    todo = [(folder, 0)]
    while todo:
        path, depth = todo.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            if ignored(entry.name):
                continue
            if is_real_dir(entry):
                if depth + 1 < bounds.MAX_FOLDER_DEPTH:
                    todo.append((entry.path, depth + 1))
            else:
                n += 1
    return n


def _has_parts(folder: str, rules: Rules) -> bool:
    return any(os.path.isdir(os.path.join(folder, p)) for p in (rules.results, rules.models,
                                                                rules.code))


def find(folder: str, rules: Rules) -> Layout:
    base, prefix = folder, ""
    if not os.path.isdir(os.path.join(base, rules.root)) and not _has_parts(base, rules):
        sub = sole_subfolder(base)
        if sub is not None:
            base, prefix = sub, shown(os.path.basename(sub)) + "/"
    warnings: List[str] = []
    if os.path.isdir(os.path.join(base, rules.root)) and \
            not os.path.islink(os.path.join(base, rules.root)):
        root, shown_root = os.path.join(base, rules.root), prefix + rules.root + "/"
    else:
        root, shown_root = base, prefix or "./"
        if _has_parts(base, rules):
            warnings.append("no {}/ folder: its parts were found at the top of the "
                            "package".format(rules.root))
    missing: List[str] = []
    evidence: List[str] = []
    parts: Dict[str, Optional[str]] = {}
    at = "" if shown_root == "./" else shown_root
    for key, label in ((rules.results, "the label predictions"),
                       (rules.code, "the training and inference code"),
                       (rules.models, "the pretrained and final models")):
        path = os.path.join(root, key)
        if not os.path.isdir(path) or os.path.islink(path):
            missing.append("{}{}/ ({}) is missing".format(at, key, label))
            parts[key] = None
            continue
        n = _files(path)
        if n == 0:
            missing.append("{}{}/ ({}) is empty".format(at, key, label))
        evidence.append("{}/: {:,} file{}".format(key, n, "" if n == 1 else "s"))
        parts[key] = path
    report = os.path.join(root, rules.report)
    if os.path.isfile(report) and not os.path.islink(report):
        evidence.append("{}: {:,} bytes".format(rules.report, os.path.getsize(report)))
        report_path: Optional[str] = report
    else:
        missing.append("{}{} (the method's report) is missing".format(at, rules.report))
        report_path = None
    if missing:
        check = Check("layout", FAIL, "; ".join(missing), missing + warnings + evidence)
    elif warnings:
        check = Check("layout", WARN, warnings[0], warnings + evidence)
    else:
        check = Check("layout", PASS, "{} holds {}/, {}/, {}/ and {}".format(
            shown_root, rules.results, rules.code, rules.models, rules.report), evidence)
    return Layout(root, shown_root, parts[rules.results], parts[rules.code],
                  parts[rules.models], report_path, check)
