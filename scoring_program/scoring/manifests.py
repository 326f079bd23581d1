"""Public manifests: the label-free facts of a test set (ids, image sizes...; never labels) that
let a participant check a submission without the ground truth (validate.py).

A task's Manifest role (task_api.py) writes its manifest (make) and builds a stand-in reference
from it (open); the helpers here serve tasks whose units are images.
"""
import json
from typing import Any, Dict

from . import regular_file
from .problems import UsageError
from .task_api import Reference

MANIFEST_VERSION = 1
# A manifest holds about 50 bytes an image: 19,708 test images take 1 MB.
MAX_MANIFEST_BYTES = 64 << 20


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


def load_manifest(path: str) -> Dict[str, Any]:
    """A manifest file as the starting kit ships it; UsageError if it is not one."""
    try:   # the kit's own file, yet never a FIFO or a device (regular_file.py)
        manifest = json.loads(regular_file.read_bytes(path, MAX_MANIFEST_BYTES, follow_links=True))
        if not isinstance(manifest, dict) or not isinstance(manifest.get("images"), dict):
            raise ValueError("no 'images' table")
        return manifest
    except (OSError, ValueError, regular_file.Refused) as exc:
        raise UsageError("{} is not a readable manifest ({}): re-download the starting kit".format(
            path, getattr(exc, "strerror", None) or exc)) from None
