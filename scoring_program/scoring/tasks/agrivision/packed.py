"""The packed reference: one small 8-bit PNG per image instead of 10-11 layer PNGs.

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
import io
import json
import os
import re
import shutil
import struct
import zlib
from typing import List, Optional, Tuple, cast

import numpy as np
from PIL import Image

from ...packing import convert_units
from ...formats.label_png import png
from ...readers import packed_json, reference_file
from ...formats.label_png.decode_errors import Undecodable, pillow_call
from ...problems import BrokenReference
from ...task_api import Packing
from .classes import N_SETS, VALID_BIT
from .metric import IDENTITY_TABLE, CodedLabels
from .problems import REF_LAYOUT, REF_MISSING, REF_UNREADABLE
from .reference import CodedReference, RawReference, ReferenceProblem

FORMAT = "agriculture-vision-packed"
VERSION = 1
MANIFEST = "packed.json"
FOLDER = "packed"
TABLE_KEY = "av-codes"


def encode(code: np.ndarray) -> bytes:
    """PNG bytes storing a raw code array losslessly for the metric.

    Written by hand rather than by Pillow so that every row uses PNG filter type 0 (None): the
    reader can then inflate the data and view it as an array without unfiltering (see
    read_fast). The file remains an ordinary PNG that Pillow and any viewer decode.
    """
    code = np.where(code & VALID_BIT, code, 0).astype(np.uint16)  # canonical invalid code
    table, index = np.unique(code, return_inverse=True)
    h, w = code.shape
    if len(table) > 256:  # 16-bit fallback: the codes themselves, no table
        buf = io.BytesIO()
        Image.frombytes("I;16", (w, h), code.astype("<u2").tobytes()).save(buf, "PNG")
        return buf.getvalue()
    rows = np.zeros((h, w + 1), dtype=np.uint8)  # column 0: the filter type byte, 0 = None
    rows[:, 1:] = index.reshape(h, w)
    text = TABLE_KEY.encode("latin-1") + b"\0" + ",".join(str(int(c)) for c in table).encode()
    return (png.SIGNATURE + png.chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            png.chunk(b"tEXt", text) + png.chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)) +
            png.chunk(b"IEND", b""))


def read_fast(data: bytes) -> Optional[CodedLabels]:
    """Decode a packed PNG written by encode() without Pillow; None if it is not of that form
    (then decode() takes the general path). Integrity: the chunk CRCs of the header and the
    table, and zlib's own checksum of the image data."""
    image = png.read_unfiltered(data, TABLE_KEY, (8,))
    if image is None:
        return None
    rows = np.frombuffer(image.rows, dtype=np.uint8).reshape(image.height, image.width + 1)
    return CodedLabels(rows[:, 1:], parse_table(image.text.decode("latin-1")))


class BadTable(ValueError):
    """The av-codes text is not what the format says."""


# 1 to 256 decimal codes, comma-separated (checked by one regular expression, in C).
_TABLE_TEXT = re.compile(r"[0-9]{1,5}(?:,[0-9]{1,5}){0,255}", re.ASCII)


def parse_table(text: str) -> np.ndarray:
    """The code table of an av-codes text, checked against docs/packed-format.md: 1 to 256
    decimal codes, each a 10-bit code (below 1024), strictly ascending. Distinctness matters: the
    metric adds a table's columns by fancy indexing, which would drop a repeated code's counts."""
    if not _TABLE_TEXT.fullmatch(text):
        raise BadTable("its av-codes table is not 1 to 256 comma-separated decimal codes")
    codes = [int(c) for c in text.split(",")]  # a few codes: plain Python is fastest
    if codes[-1] >= 2 * N_SETS or max(codes) >= 2 * N_SETS:
        raise BadTable("its av-codes table holds code {}, above the largest code {}".format(
            max(codes), 2 * N_SETS - 1))
    if any(a >= b for a, b in zip(codes, codes[1:])):
        raise BadTable("its av-codes table is not strictly ascending")
    return np.array(codes, dtype=np.uint16)


def decode(path: str, name: str) -> CodedLabels:
    """One packed image, checked: its indices must stay within its table."""
    data = reference_file.read(path, name, REF_UNREADABLE)   # never a FIFO or a device
    try:
        coded = read_fast(data) or _decode_pillow(data, name)
    except BadTable as exc:
        raise ReferenceProblem(REF_UNREADABLE, name, str(exc)) from None
    if coded.labels.size and int(coded.labels.max()) >= len(coded.table):
        raise ReferenceProblem(REF_UNREADABLE, name, "its pixel values exceed its code table")
    return coded


def _decode_pillow(data: bytes, name: str) -> CodedLabels:
    try:
        with pillow_call():            # nothing but Pillow's calls inside
            with Image.open(io.BytesIO(data)) as img:
                text = img.info.get(TABLE_KEY)
                img.load()
                arr = np.asarray(img)
                mode = img.mode
    except Undecodable as exc:
        raise ReferenceProblem(REF_UNREADABLE, name, str(exc)) from None
    if mode == "L" and text is not None:
        return CodedLabels(arr, parse_table(text))
    if mode in ("I", "I;16") and text is None:
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= len(IDENTITY_TABLE)):
            raise ReferenceProblem(REF_UNREADABLE, name, "its 16-bit codes are not 10-bit codes")
        return CodedLabels(arr.astype(np.uint16), IDENTITY_TABLE)
    raise ReferenceProblem(REF_UNREADABLE, name, "not a packed reference image")


class PackedReference(CodedReference):
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
    ids = packed_json.read_ids(root, MANIFEST, FOLDER, FORMAT, VERSION, REF_LAYOUT, REF_MISSING)
    return PackedReference(root, ids)


def encode_truth(coded: CodedLabels) -> bytes:
    """A raw image's packed PNG."""
    return encode(coded.table[coded.labels])


def write_manifest(raw: RawReference, out_root: str) -> None:
    with open(os.path.join(out_root, MANIFEST), "w") as f:
        json.dump({"format": FORMAT, "version": VERSION, "ids": raw.ids,
                   "storm_damage_present": raw.has_storm}, f, indent=0)
        f.write("\n")
    config = os.path.join(raw.root, "config.yaml")
    if os.path.isfile(config):
        shutil.copyfile(config, os.path.join(out_root, "config.yaml"))


def pack(raw: RawReference, out_root: str, workers: int, progress=None) -> Tuple[int, int]:
    """Pack the raw reference into out_root, checking every layer on the way. Returns (images,
    bytes of the packed images); BrokenReference if the raw one is broken."""
    log, images, size = convert_units(raw, os.path.join(out_root, FOLDER), encode_truth, workers,
                                      progress)
    if log.fatal:
        raise BrokenReference(log)
    write_manifest(raw, out_root)  # last: a half-written pack is never taken for a packed one
    return images, size


class AVPacking(Packing[CodedReference]):
    """The task's Packing role."""

    layout = "docs/packed-format.md"

    def pack(self, reference: CodedReference, out_dir: str, workers: int,
             progress=None) -> Tuple[int, int]:
        # pack.py packs a raw layout only (it refuses any other before this call).
        return pack(cast(RawReference, reference), out_dir, workers, progress)
