"""Check a submission without the ground truth, as SemanticKITTI's validate_submission does.

A manifest (manifests.py) holds the public facts of the test set. Validation runs the very same
engine and submission format as scoring, against the task's stand-in reference built from the
manifest and a state that counts nothing, so the participant's local check and the worker's
checks cannot disagree.
"""
import os
from typing import Any, Dict, Optional, Tuple

from . import engine
from .problems import ProblemLog
from .registry import DEFAULT, TASKS
from .task_api import SUM, MetricState, Reference, SubmissionFormat


class Counting(MetricState):
    """The state of a check: counts the units that passed, scores nothing."""

    fields = {"units": SUM}

    def update(self, unit_id, prediction, truth) -> None:
        self.units += 1


class CheckOnly:
    """What the engine asks of a task, reduced to a check."""

    def new_state(self, settings: None) -> Counting:
        return Counting()


def open_manifest(manifest: Dict[str, Any]) -> Tuple[Reference, SubmissionFormat]:
    """The manifest's task's stand-in reference and submission format."""
    return TASKS[manifest.get("task", DEFAULT)].manifest.open(manifest)


def manifest_words(manifest: Dict[str, Any]) -> Dict[str, str]:
    """The words the manifest's task uses in problem messages (for SubmissionError)."""
    return dict(open_manifest(manifest)[1].words)


def validate_submission(res_dir: str, manifest: Dict[str, Any], workers: Optional[int] = None,
                        progress=None) -> Tuple[ProblemLog, int]:
    """(problems, number of predictions checked). Problems may be fatal or warnings.
    workers None: as many as the set is worth (engine.default_workers)."""
    reference, fmt = open_manifest(manifest)
    unit_seconds = TASKS[manifest.get("task", DEFAULT)].unit_seconds
    return check(res_dir, reference, fmt, workers or None, progress, unit_seconds)


def check(res_dir: str, reference: Reference, fmt: SubmissionFormat,
          workers: Optional[int] = None, progress=None,
          unit_seconds: Optional[float] = None) -> Tuple[ProblemLog, int]:
    """validate_submission against a task's stand-in reference and format (Manifest.open)."""
    found = fmt.discover(res_dir, reference.ids)
    items = [(i, p, os.path.relpath(p, res_dir)) for i, p in sorted(found.files.items())]
    acc = engine.evaluate(CheckOnly(), reference, fmt, None, items,
                          workers or engine.default_workers(len(items), unit_seconds), progress)
    log = found.log
    log.merge(acc.submission_log)
    return log, acc.units
