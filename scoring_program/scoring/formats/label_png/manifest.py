"""The manifest of an image test set (manifests.py): ids and [width, height] from one layer's
PNG headers, and the stand-in reference that expects those sizes."""
import os
from typing import Any, Dict

from ...manifests import MANIFEST_VERSION, ManifestReference
from . import png


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
            raise type(exc)("{}: {}".format(rel, exc)) from None   # CannotOpen stays one
        images[image_id] = [h.width, h.height]
    manifest: Dict[str, Any] = {"version": MANIFEST_VERSION, "task": task_name}
    manifest.update(extra)
    manifest["images"] = images
    return manifest


def image_sizes(manifest: Dict[str, Any]) -> ManifestReference:
    """The stand-in reference of an image manifest: expectation = (height, width)."""
    return ManifestReference({i: (int(wh[1]), int(wh[0])) for i, wh in manifest["images"].items()})
