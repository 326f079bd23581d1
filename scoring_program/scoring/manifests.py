"""Public manifests: the label-free facts of a test set (ids, image sizes...; never labels) that
let a participant check a submission without the ground truth (validate.py).

A task writes its manifest (Task.make_manifest) and builds a stand-in reference from it
(Task.open_manifest); the helpers here serve tasks whose units are images.
"""
import json
import os
from typing import Any, Dict

from . import regular_file
from .readers import png
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


def image_manifest(task_name: str, ref_root: str, ids, size_layer: str,
                   **extra: Any) -> Dict[str, Any]:
    """Manifest of an image task: ids and [width, height] read from one layer's PNG headers
    (size_layer: the reference's folder of one PNG per image); png.NotPNG naming the file if
    one is not a PNG (or is a FIFO, a device: never opened)."""
    images = {}
    for image_id in ids:
        rel = "{}/{}.png".format(size_layer, image_id)
        try:
            h = png.read_header(os.path.join(ref_root, rel))
        except png.NotPNG as exc:
            raise png.NotPNG("{}: {}".format(rel, exc)) from None
        images[image_id] = [h.width, h.height]
    manifest = {"version": MANIFEST_VERSION, "task": task_name}  # type: Dict[str, Any]
    manifest.update(extra)
    manifest["images"] = images
    return manifest


def image_sizes(manifest: Dict[str, Any]) -> ManifestReference:
    """The stand-in reference of an image manifest: expectation = (height, width)."""
    return ManifestReference({i: (int(wh[1]), int(wh[0])) for i, wh in manifest["images"].items()})


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
