"""Check a submission without the ground truth, as SemanticKITTI's validate_submission does.

A manifest lists the test images' ids and sizes (no labels). Validation runs the very same engine
as scoring, against a reference that knows only those sizes and a state that counts nothing, so
the participant's local check and the worker's checks cannot disagree.
"""
import json
import os
from typing import Dict, List, Optional, Tuple

import numpy as np

from . import engine, png, submission
from .problems import ProblemLog, UsageError

MANIFEST_VERSION = 1


class ManifestReference:
    """Stands in for a reference: every image is an all-zero array of the manifest's size."""

    layout = "manifest"

    def __init__(self, sizes: Dict[str, Tuple[int, int]]) -> None:
        self.sizes = sizes  # id -> (height, width)
        self.ids = sorted(sizes)

    def read(self, image_id: str) -> np.ndarray:
        # A broadcast view: the shape without the memory.
        return np.broadcast_to(np.uint16(0), self.sizes[image_id])


class _NoState:
    images = 0

    def update(self, pred, ref) -> None:
        self.images += 1

    def merge(self, other: "_NoState") -> "_NoState":
        self.images += other.images
        return self


class _CheckOnly:
    """The engine's task interface reduced to the checks."""

    class ReferenceProblem(Exception):
        pass

    def __init__(self, max_id: int) -> None:
        self.max_id = max_id

    def new_state(self) -> _NoState:
        return _NoState()


def make_manifest(task_name: str, max_id: int, ref_root: str, ids: List[str],
                  size_layer: str = "boundaries") -> dict:
    """Manifest from a raw reference: ids and sizes read from one layer's PNG headers."""
    images = {}
    for image_id in ids:
        h = png.read_header(os.path.join(ref_root, size_layer, image_id + ".png"))
        images[image_id] = [h.width, h.height]
    return {"version": MANIFEST_VERSION, "task": task_name, "max_id": max_id, "images": images}


def load_manifest(path: str) -> dict:
    try:
        with open(path) as f:
            manifest = json.load(f)
        if not isinstance(manifest, dict) or not isinstance(manifest.get("images"), dict):
            raise ValueError("no 'images' table")
        return manifest
    except (OSError, ValueError) as exc:
        raise UsageError("{} is not a readable manifest ({}): re-download the starting kit".format(
            path, getattr(exc, "strerror", None) or exc)) from None


def validate_submission(res_dir: str, manifest: dict, workers: Optional[int] = None,
                        progress=None) -> Tuple[ProblemLog, int]:
    """(problems, number of predictions checked). Problems may be fatal or warnings.
    workers None: as many as the set is worth (engine.default_workers)."""
    sizes = {i: (int(wh[1]), int(wh[0])) for i, wh in manifest["images"].items()}
    reference = ManifestReference(sizes)
    found = submission.discover(res_dir, reference.ids)
    items = [(i, p, os.path.relpath(p, res_dir)) for i, p in sorted(found.files.items())]
    acc = engine.evaluate(_CheckOnly(int(manifest["max_id"])), reference, items,
                          workers or engine.default_workers(len(items)), progress)
    log = found.log
    log.merge(acc.submission_log)
    return log, acc.images
