"""The panoptic ground truth, derived from the semantic task's reference exactly as
cityscapesScripts' preparation/createPanopticImgs.py derives it from *_instanceIds.png.

One reference folder serves the three pixel tasks (labels/<id>.png, instances/<id>.png,
config.yaml's label table); this task reads instances/<id>.png only, as the anchor does. Each
value v of the instance image present in the image is one segment: v < 1000 is label v (a crowd
region when the label has instances, else the label's one stuff segment), v >= 1000 an instance
of label v // 1000. Segments of labels ignored in evaluation are void (the anchor leaves their
pixels black, id 0). isthing = has_instances.
"""
import io
import os
from typing import List, NamedTuple, Optional, Tuple

import numpy as np
from PIL import Image

from ...formats.label_png.decode_errors import Undecodable, pillow_call
from ...formats.label_png.pillow_array import load_array
from ...problems import BrokenReference, ProblemLog
from ...readers import reference_file
from ...task_api import Reference, ReferenceProblem
from ..planetscapes_semantic import reference as semantic_reference
from ..planetscapes_semantic.labels import LabelTable
from ..planetscapes_semantic.problems import (REF_INSTANCE_CLASS, REF_MISSING, REF_UNKNOWN_ID,
                                              REF_UNREADABLE)
from .problems import REF_PACKED
from .slots import Slots, of_pixels, of_values

INSTANCES = semantic_reference.INSTANCES
MAX_VALUE = 65535  # 16-bit instance images


class Truth(NamedTuple):
    """One reference image: per pixel the slot of its value (slots.py; every value of a void
    label has its own slot, all at position 0), and per segment position (0: void) its class
    (position among the evaluated labels; -1: void), whether it is a crowd region, and its area
    in pixels (position 0: the void pixels)."""

    index: np.ndarray     # uint32 slots, (height, width)
    slots: Slots          # slot -> segment position
    classes: np.ndarray
    crowd: np.ndarray
    areas: np.ndarray

    @property
    def shape(self) -> Tuple[int, int]:
        return self.index.shape


class SegmentSpec:
    """What the table says of each value < 1000 and each class: small arrays for the workers."""

    def __init__(self, table: LabelTable) -> None:
        evaluated = table.evaluated()
        # label id -> position among the evaluated labels; -1 ignored (void); -2 not in table
        self.position = np.full(256, -2, dtype=np.int64)
        self.things = np.zeros(256, dtype=bool)
        self.ignored_ok = np.zeros(256, dtype=bool)  # may hold instance values (>= 1000)
        for lab in table.in_images:
            self.position[lab.id] = -1
            self.things[lab.id] = lab.has_instances
            self.ignored_ok[lab.id] = lab.has_instances or lab.ignore_in_eval
        for k, lab in enumerate(evaluated):
            self.position[lab.id] = k


def segments_of(instances: np.ndarray, spec: SegmentSpec, name: str,
                colours: Optional[List[Tuple[int, int]]] = None) -> Truth:
    """The segments of one instance image (createPanopticImgs' loop over np.unique, vectorised):
    a ReferenceProblem naming the file for a value the table cannot explain. colours: Pillow's
    getcolors of the image, [(count, value)], if it gave them (one C pass instead of a
    histogram)."""
    flat = instances.ravel()
    if colours is not None:
        pairs = sorted((v, n) for n, v in colours)
        if pairs and (pairs[0][0] < 0 or pairs[-1][0] > MAX_VALUE):
            raise ReferenceProblem(REF_UNKNOWN_ID, name, "values outside 0-65535")
        values = np.array([v for v, _ in pairs], dtype=np.intp)
        counts = np.zeros(int(values[-1]) + 1 if pairs else 1, dtype=np.int64)
        counts[values] = [n for _, n in pairs]
    else:
        if flat.dtype != np.uint16:
            if flat.size and (int(flat.min()) < 0 or int(flat.max()) > MAX_VALUE):
                raise ReferenceProblem(REF_UNKNOWN_ID, name, "values outside 0-65535")
            flat = flat.astype(np.uint16)
        counts = np.bincount(flat)
        values = np.flatnonzero(counts)
    labels = np.where(values < 1000, values, values // 1000)
    if labels.size and int(labels.max()) > 255:
        raise ReferenceProblem(REF_UNKNOWN_ID, name, "label ids {}".format(
            ", ".join(str(int(v)) for v in labels[labels > 255][:8])))
    position = spec.position[labels]
    unknown = position == -2
    if unknown.any():
        raise ReferenceProblem(REF_UNKNOWN_ID, name, "values {} (label ids {})".format(
            ", ".join(str(int(v)) for v in values[unknown][:8]),
            ", ".join(str(int(v)) for v in labels[unknown][:8])))
    bad = (values >= 1000) & ~spec.ignored_ok[labels]
    if bad.any():
        raise ReferenceProblem(REF_INSTANCE_CLASS, name, "instance values {} of labels whose "
                               "has_instances is false".format(
                                   ", ".join(str(int(v)) for v in values[bad][:8])))
    kept = position >= 0
    seg_values = values[kept]
    classes = np.concatenate([[-1], position[kept]])
    crowd = np.concatenate([[False], (seg_values < 1000) & spec.things[labels[kept]]])
    areas = np.concatenate([[counts[values[~kept]].sum()], counts[seg_values]]).astype(np.int64)
    # Every value present gets a slot; a void label's values all lead to position 0.
    slots = of_values(values.tolist())
    segment = np.zeros(values.size, dtype=np.intp)
    segment[kept] = np.arange(1, seg_values.size + 1)
    taken = slots.positions >= 0
    slots.positions[taken] = segment[slots.positions[taken]]
    index = of_pixels(flat, slots).reshape(instances.shape)
    return Truth(index, slots, classes.astype(np.int64), crowd.astype(bool), areas)


class PanopticReference(Reference):
    """The raw layout of the semantic task (both folders must be there: one reference for the
    three pixel tasks); only instances/<id>.png is read."""

    layout = "raw"
    root: str

    def __init__(self, root: str, ids, table: LabelTable) -> None:
        self.root = root
        self.ids = ids
        self.table = table
        self.spec = SegmentSpec(table)

    def expect(self, unit_id: str, truth: Truth) -> Tuple[int, int]:
        return truth.shape

    def read(self, unit_id: str) -> Truth:
        semantic_reference.keep_freed_memory()
        name = "{}/{}.png".format(INSTANCES, unit_id)
        instances, colours = read_instances(os.path.join(self.root, name), name)
        return segments_of(instances, self.spec, name, colours)


def read_instances(path: str, name: str) -> Tuple[np.ndarray, Optional[List[Tuple[int, int]]]]:
    """The instance image as the semantic task reads it (semantic_reference.read_png's checks),
    and its values with their counts when Pillow gives them in one C pass: getcolors, for the
    32-bit mode 'I' the worker's Pillow 6.1 opens a 16-bit PNG in (newer Pillows open it as
    'I;16', which getcolors refuses: the histogram is then numpy's)."""
    data = reference_file.read(path, name, REF_UNREADABLE, missing=REF_MISSING)
    colours = None
    try:
        with pillow_call():
            img = Image.open(io.BytesIO(data))
        with img:
            if img.format != "PNG" or img.mode not in semantic_reference.INSTANCE_MODES:
                raise ReferenceProblem(
                    REF_UNREADABLE, name, "{} image of mode {}; expected a single-channel PNG "
                    "({})".format(img.format, img.mode, "/".join(semantic_reference.INSTANCE_MODES)))
            with pillow_call():
                img.load()
                if img.mode == "I":
                    colours = img.getcolors(MAX_VALUE + 1)
            arr = load_array(img)
    except Undecodable as exc:
        raise ReferenceProblem(REF_UNREADABLE, name, str(exc).strip() or type(exc).__name__) \
            from None
    if arr.ndim != 2:
        raise ReferenceProblem(REF_UNREADABLE, name, "it decodes to shape {}".format(arr.shape))
    return arr, colours


def open_reference(ref_dir: str, table: LabelTable) -> PanopticReference:
    root = semantic_reference.find_root(ref_dir)
    if os.path.isfile(os.path.join(root, semantic_reference.PACKED_MANIFEST)):
        log = ProblemLog()
        log.add(REF_PACKED, root, "it holds packed.json")
        raise BrokenReference(log)
    raw = semantic_reference.open_raw(root, table)
    return PanopticReference(raw.root, raw.ids, table)
