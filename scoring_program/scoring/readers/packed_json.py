"""What every task's packed reference shares: its packed.json (format, version; for the image
tasks the ids, beside a folder of one PNG per image), which is not the participants' manifest
(manifests.py). Reading it checks them, so a half-written or foreign
pack is the organizers' error with the file named, whatever the task."""
import os
from typing import Any, Dict, List

from .. import regular_file
from ..folders import png_stems
from ..quoting import brief
from . import bounded_json
from ..problems import BrokenReference, Kind, ProblemLog


def read_manifest(root: str, manifest: str, fmt: str, version: int,
                  layout_kind: Kind) -> Dict[str, Any]:
    """The manifest's JSON object; BrokenReference if it is unreadable or not this format and
    version (a half-written pack has none: the manifest is written last)."""
    try:
        # A regular file (a link to one is followed: the organizers' own data), never a FIFO
        # or a device; integers of at most 4,300 digits on every Python.
        data = bounded_json.load_file(os.path.join(root, manifest), follow_links=True)
    except regular_file.Refused as exc:
        raise _not_manifest(manifest, fmt, version, layout_kind, exc.detail()) from None
    except (ValueError, RecursionError, bounded_json.LongInteger) as exc:  # JSON, UTF-8
        raise _not_manifest(manifest, fmt, version, layout_kind, exc) from None
    if not isinstance(data, dict) or data.get("format") != fmt or data.get("version") != version:
        found = data if isinstance(data, dict) else {}
        raise _not_manifest(manifest, fmt, version, layout_kind, "format {} version {}".format(
            brief(found.get("format")), brief(found.get("version"))))
    return data


def _not_manifest(manifest: str, fmt: str, version: int, layout_kind: Kind,
                  exc: object) -> BrokenReference:
    log = ProblemLog()
    log.add(layout_kind, manifest, "not a {} v{} manifest ({})".format(fmt, version, exc))
    return BrokenReference(log)


def read_ids(root: str, manifest: str, folder: str, fmt: str, version: int,
             layout_kind: Kind, missing_kind: Kind) -> List[str]:
    """The manifest's sorted ids; BrokenReference if the manifest is not this format's, lists no
    image, or names an image whose PNG is not in the folder."""
    data = read_manifest(root, manifest, fmt, version, layout_kind)
    ids = data.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise _not_manifest(manifest, fmt, version, layout_kind, "'ids' is not a list of names")
    ids = sorted(ids)
    log = ProblemLog()
    present = png_stems(os.path.join(root, folder)) or set()
    for image_id in ids:
        if image_id not in present:
            log.add(missing_kind, "{}/{}.png".format(folder, image_id))
    if not ids:
        log.add(layout_kind, manifest, "it lists no image")
    if log.fatal:
        raise BrokenReference(log)
    return ids
