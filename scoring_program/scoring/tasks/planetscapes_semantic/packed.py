"""The packed Planetscapes reference: one 8-bit PNG per image instead of a label image and a
16-bit instance image.

    <ref>/packed.json        {"format": "planetscapes-semantic-packed", "version": 1, "ids": [...]}
    <ref>/packed/<id>.png    pixel = index into the image's code table
    <ref>/config.yaml        copied from the raw reference

What the metric needs of a pixel is its label id and its instance (the instance value if > 1000,
else none); an image has few distinct such pairs, so each PNG stores, per pixel, an index into a
table of the pairs present, kept in a tEXt chunk `ps-codes` as "label:instance" items (instance 0
= none). 8-bit when at most 256 pairs, 16-bit otherwise. Rows use PNG filter None, so the reader
inflates the data and views it as an array (Pillow reads the same files when another tool
re-encoded them). pack() reads the raw reference with every check of the raw reader: the packed
data is verified, and the scores of both layouts are identical
(tests/tasks/planetscapes_semantic/test_planetscapes_semantic_packed.py).
"""
import io
import json
import os
import shutil
import struct
import zlib
from typing import List, Optional, Tuple, Union, cast

import numpy as np
from PIL import Image

from ...packing import convert_units
from ...formats.label_png import png
from ...readers import packed_json, reference_file
from ...formats.label_png.decode_errors import Undecodable, pillow_call
from ...problems import BrokenReference
from ...task_api import Packing, Reference, ReferenceProblem
from .labels import LabelTable
from .metric import FIRST_INSTANCE, PackedTruth, Truth
from .reference import (REF_LAYOUT, REF_MISSING, REF_UNKNOWN_ID, REF_UNREADABLE, CheckSpec,
                        SemanticReference, keep_freed_memory)

FORMAT = "planetscapes-semantic-packed"
VERSION = 1
MANIFEST = "packed.json"
FOLDER = "packed"
TABLE_KEY = "ps-codes"


def encode(truth: Truth) -> bytes:
    """PNG bytes of one checked raw image, every row with filter None."""
    inst = np.where(truth.instances >= FIRST_INSTANCE, truth.instances, 0).astype(np.uint32)
    code = (truth.labels.astype(np.uint32) << 16) | inst
    table, index = np.unique(code.ravel(), return_inverse=True)
    h, w = code.shape
    depth = 8 if len(table) <= 256 else 16
    pixels = index.reshape(h, w).astype(np.uint8 if depth == 8 else ">u2")
    rows = np.zeros((h, 1 + pixels.nbytes // h), dtype=np.uint8)  # column 0: filter type 0
    rows[:, 1:] = pixels.view(np.uint8).reshape(h, -1)
    text = ",".join("{}:{}".format(int(c) >> 16, int(c) & 0xFFFF) for c in table)
    return (png.SIGNATURE + png.chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, 0, 0, 0, 0)) +
            png.chunk(b"tEXt", TABLE_KEY.encode("latin-1") + b"\0" + text.encode("ascii")) +
            png.chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + png.chunk(b"IEND", b""))


class NotPacked(Exception):
    """The image is not one this format writes (the file's fault, said in str())."""

    def __reduce__(self):
        return (type(self), self.args)


def _table(text: str) -> Tuple[np.ndarray, np.ndarray]:
    try:      # the file's text, nothing else: a malformed table is the file's fault
        pairs = [item.split(":") for item in text.split(",")]
        labels = [int(a) for a, _ in pairs]
        instances = [int(b) for _, b in pairs]
    except ValueError:
        raise NotPacked("its code table is not 'label:instance' pairs") from None
    return np.array(labels, dtype=np.int64), np.array(instances, dtype=np.int64)


def read_fast(data: bytes) -> Optional[Tuple[np.ndarray, str]]:
    """(index array, table text) of a PNG written by encode(), without Pillow; None if it is not
    of that form (then Pillow decodes it). Integrity: the CRCs of the header and the table, and
    zlib's checksum of the image data."""
    image = png.read_unfiltered(data, TABLE_KEY, (8, 16))
    if image is None:
        return None
    text = image.text.decode("ascii", "replace")
    size = image.bit_depth // 8
    rows = np.frombuffer(image.rows, dtype=np.uint8).reshape(image.height, image.width * size + 1)
    if size == 1:
        return rows[:, 1:], text
    return np.ascontiguousarray(rows[:, 1:]).view(">u2").astype(np.uint16), text


def _read_pillow(data: bytes) -> Tuple[np.ndarray, str]:
    with pillow_call():
        img = Image.open(io.BytesIO(data))
    with img:
        text = img.info.get(TABLE_KEY)
        if img.mode not in ("L", "I", "I;16") or text is None:
            raise NotPacked("not a packed reference image (mode {}, {} table)".format(
                img.mode, "a" if text else "no"))
        with pillow_call():
            img.load()
            return np.asarray(img), text


def decode(data: bytes, name: str, spec: CheckSpec) -> PackedTruth:
    """One packed image, checked against the label table (which may have changed since)."""
    try:
        index, text = read_fast(data) or _read_pillow(data)
        labels, instances = _table(text)
    except (Undecodable, NotPacked) as exc:
        raise ReferenceProblem(REF_UNREADABLE, name, str(exc).strip() or type(exc).__name__) \
            from None
    if index.size and int(index.max()) >= len(labels):
        raise ReferenceProblem(REF_UNREADABLE, name, "its pixel values exceed its code table")
    bad = sorted(set(int(v) for v in labels if not (0 <= v < spec.size and spec.allowed[v])))
    if bad:
        raise ReferenceProblem(REF_UNKNOWN_ID, name, "ids {}".format(
            ", ".join(str(v) for v in bad[:8])))
    chosen = instances >= FIRST_INSTANCE
    if (instances[chosen] // 1000 != labels[chosen]).any() or \
            not spec.instance_ok[labels[chosen]].all() or (instances > 65535).any():
        raise ReferenceProblem(REF_UNREADABLE, name, "its code table holds instances that do "
                               "not match their labels")
    return PackedTruth(index, labels.astype(np.uint8), instances.astype(np.uint16))


class PackedReference(Reference):
    layout = "packed"
    root: str

    def __init__(self, root: str, ids: List[str], table: LabelTable) -> None:
        self.root, self.ids, self.table = root, ids, table
        self.spec = CheckSpec(table)


    def read(self, unit_id: str) -> PackedTruth:
        keep_freed_memory()
        rel = "{}/{}.png".format(FOLDER, unit_id)
        data = reference_file.read(os.path.join(self.root, rel), rel, REF_UNREADABLE,
                                   missing=REF_MISSING)   # never a FIFO or a device
        return decode(data, rel, self.spec)

    def expect(self, unit_id: str, truth: PackedTruth) -> Tuple[int, int]:
        return truth.shape


def is_packed(root: str) -> bool:
    return os.path.isfile(os.path.join(root, MANIFEST))


def open_packed(root: str, table: LabelTable) -> PackedReference:
    ids = packed_json.read_ids(root, MANIFEST, FOLDER, FORMAT, VERSION, REF_LAYOUT, REF_MISSING)
    return PackedReference(root, ids, table)


def pack(raw: SemanticReference, out_root: str, workers: int, progress=None) -> Tuple[int, int]:
    """Pack a raw reference into out_root, checking every image as the scorer does. Returns
    (images, bytes of the packed images); BrokenReference if the raw reference is broken."""
    log, images, size = convert_units(raw, os.path.join(out_root, FOLDER), encode, workers,
                                      progress)
    if log.fatal:
        raise BrokenReference(log)
    shutil.copyfile(os.path.join(raw.root, "config.yaml"), os.path.join(out_root, "config.yaml"))
    with open(os.path.join(out_root, MANIFEST), "w") as f:  # last: marks the pack complete
        json.dump({"format": FORMAT, "version": VERSION, "ids": list(raw.ids)}, f, indent=0)
        f.write("\n")
    return images, size


class SemanticPacking(Packing[Union[SemanticReference, PackedReference]]):
    """The task's Packing role."""

    layout = "docs/planetscapes.md"

    def pack(self, reference: Union[SemanticReference, PackedReference], out_dir: str,
             workers: int, progress=None) -> Tuple[int, int]:
        # pack.py packs a raw layout only (it refuses any other before this call).
        return pack(cast(SemanticReference, reference), out_dir, workers, progress)
