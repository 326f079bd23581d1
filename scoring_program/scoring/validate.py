"""Check a submission without the ground truth, as SemanticKITTI's validate_submission does.

A manifest holds the public facts of the test set (ids, image sizes...; never labels), written by
the task (Task.make_manifest). Validation runs the very same engine and submission format as
scoring, against a stand-in reference built from the manifest and a state that counts nothing,
so the participant's local check and the worker's checks cannot disagree.
"""
import json
import os
from typing import Any, Dict, Optional, Tuple

from . import engine, png
from .problems import ProblemLog
from .task_api import MetricState, Reference, SubmissionFormat

MANIFEST_VERSION = 1


class ManifestReference(Reference):
    """Stands in for a reference: knows each unit's expectation, holds no truth."""

    layout = "manifest"

    def __init__(self, expectations: Dict[str, Any]) -> None:
        self.expectations = expectations
        self.ids = sorted(expectations)

    def read(self, unit_id: str) -> None:
        return None

    def expect(self, unit_id: str, truth: None) -> Any:
        return self.expectations[unit_id]


class Counting(MetricState):
    """The state of a check: counts the units that passed, scores nothing."""

    def update(self, prediction, truth) -> None:
        self.units += 1

    def merge(self, other: "Counting") -> "Counting":
        self.units += other.units
        return self


class _CheckOnly:
    """What the engine asks of a task, reduced to a check."""

    def new_state(self, config: dict) -> Counting:
        return Counting()


# --- manifests of image tasks: ids and sizes ------------------------------------------------

def image_manifest(task_name: str, ref_root: str, ids, size_layer: str,
                   **extra: Any) -> dict:
    """Manifest of an image task: ids and [width, height] read from one layer's PNG headers."""
    images = {}
    for image_id in ids:
        h = png.read_header(os.path.join(ref_root, size_layer, image_id + ".png"))
        images[image_id] = [h.width, h.height]
    manifest = {"version": MANIFEST_VERSION, "task": task_name}
    manifest.update(extra)
    manifest["images"] = images
    return manifest


def image_sizes(manifest: dict) -> ManifestReference:
    """The stand-in reference of an image manifest: expectation = (height, width)."""
    return ManifestReference({i: (int(wh[1]), int(wh[0])) for i, wh in manifest["images"].items()})


# --- checking -------------------------------------------------------------------------------

def load_manifest(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def open_manifest(manifest: dict) -> Tuple[Reference, SubmissionFormat]:
    """The manifest's task's stand-in reference and submission format."""
    from .tasks import DEFAULT, TASKS
    return TASKS[manifest.get("task", DEFAULT)].open_manifest(manifest)


def manifest_words(manifest: dict) -> Dict[str, str]:
    """The words the manifest's task uses in problem messages (for SubmissionError)."""
    return dict(open_manifest(manifest)[1].words)


def validate_submission(res_dir: str, manifest: dict, workers: Optional[int] = None,
                        progress=None) -> Tuple[ProblemLog, int]:
    """(problems, number of predictions checked). Problems may be fatal or warnings.
    workers None: as many as the set is worth (engine.default_workers)."""
    reference, fmt = open_manifest(manifest)
    found = fmt.discover(res_dir, reference.ids)
    items = [(i, p, os.path.relpath(p, res_dir)) for i, p in sorted(found.files.items())]
    acc = engine.evaluate(_CheckOnly(), reference, fmt, {}, items,
                          workers or engine.default_workers(len(items)), progress)
    log = found.log
    log.merge(acc.submission_log)
    return log, acc.units
