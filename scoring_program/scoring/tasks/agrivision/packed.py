"""The packed reference: one small 8-bit PNG per image instead of 11-12 layer PNGs.

Layout (docs/packed-format.md has the full description):

    <ref>/packed.json           {"format": "agriculture-vision-packed", "version": 1, ...}
    <ref>/packed/<id>.png       8-bit grayscale; pixel = index into the image's code table
    <ref>/config.yaml           copied from the raw reference when present

Each PNG carries its code table in a tEXt chunk `av-codes` (decimal codes, comma-separated, at
most 256). A code is the raw reader's 10-bit value: bits 0-7 the eight patterns (class id - 1),
bit 8 storm_damage, bit 9 valid (boundary and mask). Invalid pixels are all stored as code 0:
their labels matter to neither storm_damage policy. In the unlikely case of more than 256 distinct
codes in one image, the PNG is 16-bit grayscale holding the codes themselves and has no table.

One decode per image gives everything the metric needs, with Pillow and numpy alone.
"""
import json
import os
import shutil
from typing import List, Optional, Tuple

import numpy as np
from PIL import Image, PngImagePlugin

from ... import engine
from ...problems import REF_LAYOUT, REF_MISSING, BrokenReference, ProblemLog
from .classes import VALID_BIT
from .metric import IDENTITY_TABLE, CodedLabels
from .reference import REF_UNREADABLE, RawReference, ReferenceProblem, find_root, open_raw

FORMAT = "agriculture-vision-packed"
VERSION = 1
MANIFEST = "packed.json"
FOLDER = "packed"
TABLE_KEY = "av-codes"


def encode(code: np.ndarray) -> Tuple[Image.Image, Optional[PngImagePlugin.PngInfo]]:
    """Image (and PNG text info) storing a raw code array losslessly for the metric."""
    code = np.where(code & VALID_BIT, code, 0).astype(np.uint16)  # canonical invalid code
    table, index = np.unique(code, return_inverse=True)
    if len(table) > 256:
        return Image.frombytes("I;16", code.shape[::-1], code.astype("<u2").tobytes()), None
    info = PngImagePlugin.PngInfo()
    info.add_text(TABLE_KEY, ",".join(str(int(c)) for c in table))
    return Image.fromarray(index.reshape(code.shape).astype(np.uint8), "L"), info


def decode(path: str, name: str) -> CodedLabels:
    try:
        with Image.open(path) as img:
            text = img.info.get(TABLE_KEY)
            img.load()
            arr = np.asarray(img)
            mode = img.mode
    except Exception as exc:
        raise ReferenceProblem(REF_UNREADABLE, name, str(exc).strip() or type(exc).__name__) from None
    if mode == "L" and text is not None:
        table = np.array([int(c) for c in text.split(",")], dtype=np.uint16)
        if int(arr.max()) >= len(table):
            raise ReferenceProblem(REF_UNREADABLE, name, "index beyond its code table")
        return CodedLabels(arr, table)
    if mode in ("I", "I;16") and text is None:
        if int(arr.max()) >= len(IDENTITY_TABLE) or int(arr.min()) < 0:
            raise ReferenceProblem(REF_UNREADABLE, name, "code out of range")
        return CodedLabels(arr.astype(np.uint16), IDENTITY_TABLE)
    raise ReferenceProblem(REF_UNREADABLE, name, "not a packed reference image")


class PackedReference:
    layout = "packed"

    def __init__(self, root: str, ids: List[str]) -> None:
        self.root = root
        self.ids = ids

    def read(self, image_id: str) -> CodedLabels:
        rel = "{}/{}.png".format(FOLDER, image_id)
        return decode(os.path.join(self.root, rel), rel)


def is_packed(root: str) -> bool:
    return os.path.isfile(os.path.join(root, MANIFEST))


def open_packed(root: str) -> PackedReference:
    log = ProblemLog()
    try:
        with open(os.path.join(root, MANIFEST)) as f:
            manifest = json.load(f)
        if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
            raise ValueError("format {!r} version {!r}".format(manifest.get("format"),
                                                              manifest.get("version")))
        ids = sorted(manifest["ids"])
    except Exception as exc:
        log.add(REF_LAYOUT, MANIFEST, "not a {} v{} manifest ({})".format(FORMAT, VERSION, exc))
        raise BrokenReference(log) from None
    present = {n[:-4] for n in os.listdir(os.path.join(root, FOLDER)) if n.endswith(".png")} \
        if os.path.isdir(os.path.join(root, FOLDER)) else set()
    for image_id in ids:
        if image_id not in present:
            log.add(REF_MISSING, "{}/{}.png".format(FOLDER, image_id))
    if log.fatal or not ids:
        if not ids:
            log.add(REF_LAYOUT, MANIFEST, "it lists no image")
        raise BrokenReference(log)
    return PackedReference(root, ids)


def pack_one(raw: RawReference, out_root: str, image_id: str) -> int:
    """Pack one image; returns the bytes written."""
    image, info = encode(raw.read(image_id).labels)
    path = os.path.join(out_root, FOLDER, image_id + ".png")
    image.save(path, "PNG", pnginfo=info, compress_level=9)
    return os.path.getsize(path)


def write_manifest(raw: RawReference, out_root: str) -> None:
    with open(os.path.join(out_root, MANIFEST), "w") as f:
        json.dump({"format": FORMAT, "version": VERSION, "ids": raw.ids,
                   "storm_damage_present": raw.has_storm}, f, indent=0)
        f.write("\n")
    config = os.path.join(raw.root, "config.yaml")
    if os.path.isfile(config):
        shutil.copyfile(config, os.path.join(out_root, "config.yaml"))


def _pack_chunk(ids: List[str]):
    raw, out_root = engine._CONTEXT["raw"], engine._CONTEXT["out"]
    log, size = ProblemLog(), 0
    for image_id in ids:
        try:
            size += pack_one(raw, out_root, image_id)
        except ReferenceProblem as exc:
            log.add(exc.kind, exc.name, exc.detail)
    return log, size, len(ids)


def pack(raw_dir: str, out_root: str, workers: int, progress=None) -> Tuple[int, int]:
    """Pack the raw reference at raw_dir into out_root, checking every layer on the way.
    Returns (images, bytes of the packed images); BrokenReference if the raw one is broken."""
    raw = open_raw(find_root(raw_dir))
    os.makedirs(os.path.join(out_root, FOLDER), exist_ok=True)
    log, totals = ProblemLog(), [0, 0]

    def absorb(result) -> None:
        chunk_log, size, n = result
        log.merge(chunk_log)
        totals[0] += n
        totals[1] += size
        if progress:
            progress(totals[0])

    engine.map_chunks(_pack_chunk, {"raw": raw, "out": out_root},
                      engine.chunked(raw.ids, workers), workers, absorb)
    if log.fatal:
        raise BrokenReference(log)
    write_manifest(raw, out_root)  # last: a half-written pack is never taken for a packed one
    return totals[0], totals[1]
