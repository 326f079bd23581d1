"""Find the one results file of a VQA submission.

A VQA submission is one .json file (any name), at the root of the zip or inside folders, next to
what platforms and operating systems add (Codabench's `metadata`, `__MACOSX/`, `.DS_Store`,
other hidden files: ignored silently). No .json, or two of them, is refused; other files are
listed as warnings and not scored. The walk is the shared one (submission/discovery.py): links
are never followed and special files never opened, as for the image tasks' predictions.
"""
from typing import Dict, Tuple

import os

from ...problems import ProblemLog
from ...submission import discovery
from .problems import EXTRA_FILE, NO_RESULTS, NOT_JSON, TWO_RESULTS

UNIT = "results"          # the single unit a VQA submission is scored as
SUFFIX = ".json"
# The words of the shared problem messages (SubmissionFormat.words), for the scorer and the kit.
WORDS = {"files": ".json results files", "file": ".json", "ext": ".json",
         "unit": "results file", "units": "results file",
         "zip_hint": ", holding the one results .json file"}
# Endings of JSON Lines files (one object per line), a common mistake for the results.
JSON_LINES = (".jsonl", ".ndjson")
JSON_LINES_FIX = ("JSON Lines (one object per line) is not read: write one JSON list, "
                  "[{\"question_id\": ..., \"answer\": ...}, ...] (json.dump(results, f)), to a "
                  "file whose name ends in .json")


def find_results(res_dir: str) -> Tuple[Dict[str, str], ProblemLog]:
    """({UNIT: path} if exactly one .json file, else {}; problems and warnings). Without a
    .json file, a JSON Lines file (results.jsonl) is named with what to write instead."""
    found = discovery.discover_one(res_dir, SUFFIX, UNIT, NO_RESULTS, TWO_RESULTS, EXTRA_FILE,
                                   ".json file", skip_pairs=True)
    if not found.files:
        for folder, dirs, names in os.walk(res_dir):  # links to folders are not followed
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
            for name in sorted(names):
                if name.lower().endswith(JSON_LINES) and not name.startswith("."):
                    rel = os.path.relpath(os.path.join(folder, name), res_dir)
                    found.log.add(NOT_JSON, rel.replace(os.sep, "/"), JSON_LINES_FIX)
    return found.files, found.log
