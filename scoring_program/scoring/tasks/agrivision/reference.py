"""Readers of the Agriculture-Vision ground truth. Each yields, per image, its CodedLabels
(metric.py: per pixel an index into a table of the image's codes, see classes.py): the only
thing the metric needs, whatever the layout on disk."""
import os
from typing import List, Tuple

import numpy as np

from ... import folders
from ...readers import reference_file
from ...formats.label_png.decode_errors import Undecodable
from ...problems import BrokenReference, ProblemLog
from ...task_api import Reference, ReferenceProblem
from .problems import REF_LAYOUT, REF_MISSING, REF_UNREADABLE, REF_WRONG_SIZE
from .classes import N_CLASSES, PATTERNS, STORM, STORM_BIT, VALID_BIT
from .layers import Layer, LayerReader, WrongMode
from .metric import IDENTITY_TABLE, CodedLabels

REF_MODES = ("1", "L", "P")
# read() sets pattern k-1 at bit k-1 and storm_damage right after the patterns.
assert STORM_BIT == 1 << len(PATTERNS) and VALID_BIT == STORM_BIT << 1


def read_layer(reader: LayerReader, path: str, name: str) -> Layer:
    """One single-channel reference layer (non-zero = set), uniform ones as a single value."""
    data = reference_file.read(path, name, REF_UNREADABLE)   # never a FIFO or a device
    try:
        return reader.read(data, REF_MODES)
    except (Undecodable, WrongMode) as exc:
        raise ReferenceProblem(REF_UNREADABLE, name, str(exc)) from None


class CodedReference(Reference):
    """An Agriculture-Vision reference in any layout: read() gives CodedLabels."""

    root: str  # a folder, in every layout (the label-free check's stand-in is not one of these)

    def expect(self, unit_id: str, truth: CodedLabels) -> Tuple[int, int]:
        """A prediction must have the image's (height, width)."""
        return truth.shape[:2]


class RawReference(CodedReference):
    """The dataset's own layout: boundaries/, masks/, labels/<class>/ (storm_damage optional)."""

    layout = "raw"

    def __init__(self, root: str, ids: List[str], has_storm: bool) -> None:
        self.root = root
        self.ids = ids
        self.has_storm = has_storm
        self.layers = LayerReader()


    def _layers(self, image_id: str):
        name = image_id + ".png"
        yield "boundaries/" + name
        yield "masks/" + name
        for cls in PATTERNS:
            yield "labels/{}/{}".format(cls, name)
        if self.has_storm:
            yield "labels/{}/{}".format(STORM, name)

    def read(self, image_id: str) -> CodedLabels:
        """uint16 code per pixel (identity table); ReferenceProblem if a layer is unreadable or
        mis-sized."""
        names = list(self._layers(image_id))
        boundary = read_layer(self.layers, os.path.join(self.root, names[0]), names[0])
        shape = boundary.shape

        def layer(rel: str) -> Layer:
            got = read_layer(self.layers, os.path.join(self.root, rel), rel)
            if got.shape != shape:
                raise ReferenceProblem(REF_WRONG_SIZE, rel, "{} x {}, its boundary is {} x {}".format(
                    got.shape[1], got.shape[0], shape[1], shape[0]))
            return got

        mask = layer(names[1])
        const = VALID_BIT          # code bits set on every pixel
        varying = []               # (code bit, bool array) of the layers that vary
        for part in (boundary, mask):
            if part.array is not None:
                varying.append((VALID_BIT, part.array != 0))
            elif part.value == 0:
                const = 0
        for bit, rel in enumerate(names[2:]):
            # bits 0..7: the patterns in class order; bit 8: storm_damage when present.
            got = layer(rel)  # read even when nothing is valid: a broken reference must show
            if got.array is not None:
                varying.append((1 << bit, got.array != 0))
            elif got.value:
                const |= 1 << bit
        if not const & VALID_BIT:  # no valid pixel: nothing to count
            return CodedLabels(np.zeros(shape, dtype=np.uint8), np.zeros(1, dtype=np.uint16))
        validity = [arr for b, arr in varying if b == VALID_BIT]
        if validity:  # validity varies: it is a varying bit, not a constant one
            const &= ~VALID_BIT
            varying = [(VALID_BIT, np.logical_and.reduce(validity))] + varying[len(validity):]
        return _code(shape, const, varying)


def _code(shape: Tuple[int, int], const: int, varying: List[Tuple[int, np.ndarray]]) -> CodedLabels:
    """Code image from the constant bits and the varying layers.

    With few varying layers (the usual case) each pixel gets a compact byte index into a table of
    the 2^n possible codes, which keeps the metric's keys within a byte; otherwise the uint16 code
    itself (identity table). The caller merged a validity that varies in both boundary and mask
    into one array and left it out of const, so all bits here are distinct and so are the
    table's codes.
    """
    if N_CLASSES << len(varying) <= 256:
        index = np.zeros(shape, dtype=np.uint8)
        for j, (_, arr) in enumerate(varying):
            np.bitwise_or(index, np.uint8(1 << j), out=index, where=arr)
        table = np.array([const | sum(b for j, (b, _) in enumerate(varying) if i >> j & 1)
                          for i in range(1 << len(varying))], dtype=np.uint16)
        return CodedLabels(index, table)
    code = np.full(shape, const, dtype=np.uint16)
    for b, arr in varying:
        np.bitwise_or(code, np.uint16(b), out=code, where=arr)
    return CodedLabels(code, IDENTITY_TABLE)


def _is_reference(folder: str) -> bool:
    # boundaries/ marks the raw layout, packed.json the packed one (see packed.py).
    return (os.path.isdir(os.path.join(folder, "boundaries")) or
            os.path.isfile(os.path.join(folder, "packed.json")))


def find_root(ref_dir: str) -> str:
    """The reference folder: ref_dir itself or its single sub-folder (a zip of a folder)."""
    root = folders.find_root(ref_dir, _is_reference)
    if root is not None:
        return root
    log = ProblemLog()
    log.add(REF_LAYOUT, ref_dir, "neither boundaries/ (raw layout) nor packed.json (packed) in it")
    raise BrokenReference(log)


def open_raw(root: str) -> RawReference:
    """Check the listing (every layer of every image present) and return the reader."""
    log = ProblemLog()
    ids = sorted(folders.png_stems(os.path.join(root, "boundaries")) or ())
    if not ids:
        log.add(REF_LAYOUT, "boundaries/", "it holds no PNG file")
        raise BrokenReference(log)
    layer_folders = ["masks"] + ["labels/" + c for c in PATTERNS]
    has_storm = os.path.isdir(os.path.join(root, "labels", STORM))
    if has_storm:
        layer_folders.append("labels/" + STORM)
    for folder in layer_folders:  # one folder's names at a time: 19,708 x 10 names add up
        listed = folders.png_stems(os.path.join(root, folder)) or set()
        for image_id in ids:
            if image_id not in listed:
                log.add(REF_MISSING, "{}/{}.png".format(folder, image_id))
    if log.fatal:
        raise BrokenReference(log)
    return RawReference(root, ids, has_storm)
