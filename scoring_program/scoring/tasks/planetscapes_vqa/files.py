"""Find the one results file of a VQA submission.

A VQA submission is one .json file (any name), at the root of the zip or inside folders, next to
what platforms and operating systems add (Codabench's `metadata`, `__MACOSX/`, `.DS_Store`,
other hidden files: ignored silently). No .json, or two of them, is refused; other files are
listed as warnings and not scored. The walk is the shared one (submission/discovery.py): links
are never followed and special files never opened, as for the image tasks' predictions.
"""
from typing import Dict, Tuple

from ...problems import ProblemLog
from ...submission import discovery
from .problems import EXTRA_FILE, NO_RESULTS, TWO_RESULTS

UNIT = "results"          # the single unit a VQA submission is scored as
SUFFIX = ".json"
# The words of the shared problem messages (SubmissionFormat.words), for the scorer and the kit.
WORDS = {"files": ".json results files", "file": ".json", "ext": ".json",
         "unit": "results file", "units": "results file",
         "zip_hint": ", holding the one results .json file"}


def find_results(res_dir: str) -> Tuple[Dict[str, str], ProblemLog]:
    """({UNIT: path} if exactly one .json file, else {}; problems and warnings)."""
    found = discovery.discover_one(res_dir, SUFFIX, UNIT, NO_RESULTS, TWO_RESULTS, EXTRA_FILE,
                                   ".json file")
    return found.files, found.log
