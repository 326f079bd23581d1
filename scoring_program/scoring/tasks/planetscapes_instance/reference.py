"""The instance task's ground truth: the semantic reference's instances/<id>.png (class_id * 1000
+ k on instance pixels, the label id elsewhere: Cityscapes' *_gtFine_instanceIds.png), read as
the anchor reads it, with the same label table (config.yaml). labels/ is not read.

The anchor's segments (instances2dict): every distinct value v of the image is one segment of
class v (v < 1000: a crowd region or stuff) or v // 1000 (v >= 1000: an instance). A value
whose class is not in the table would crash the anchor (KeyError): refused as the organizers'.
"""
import os
from typing import List, NamedTuple, Tuple

import numpy as np

from ... import folders
from ...problems import BrokenReference, ProblemLog
from ...task_api import Reference, ReferenceProblem
from ..planetscapes_semantic.labels import LabelTable
from ..planetscapes_semantic.problems import REF_INSTANCE_CLASS, REF_LAYOUT, REF_UNKNOWN_ID
from ..planetscapes_semantic.reference import INSTANCE_MODES, INSTANCES, read_png

FIRST_INSTANCE = 1000  # the anchor: instID >= 1000 is an instance, below it a crowd region


class Truth(NamedTuple):
    """One image's ground truth: the instance image and its segments (distinct values, their
    pixel counts), ascending."""

    image: np.ndarray
    values: np.ndarray   # int64
    sizes: np.ndarray    # int64

    @property
    def shape(self) -> Tuple[int, int]:
        return self.image.shape


class SegmentSpec:
    """The label-table facts the per-image check needs: which class ids exist, which may have
    instance values, which are void (ignored in evaluation)."""

    def __init__(self, table: LabelTable) -> None:
        self.known = np.zeros(256, dtype=bool)
        self.instance_ok = np.zeros(256, dtype=bool)
        self.void = np.zeros(256, dtype=bool)
        for lab in table.in_images:
            self.known[lab.id] = True
            self.instance_ok[lab.id] = lab.has_instances or lab.ignore_in_eval
            self.void[lab.id] = lab.ignore_in_eval


def segment_classes(values: np.ndarray) -> np.ndarray:
    """The class of each segment value, as the anchor's Instance.getLabelID."""
    return np.where(values < FIRST_INSTANCE, values, values // 1000)


def check_segments(image: np.ndarray, spec: SegmentSpec, name: str) -> Truth:
    counts = np.bincount(image.ravel(), minlength=1)
    values = np.flatnonzero(counts)
    sizes = counts[values]
    classes = segment_classes(values)
    unknown = (classes > 255) | ~spec.known[np.minimum(classes, 255)]
    if unknown.any():
        raise ReferenceProblem(REF_UNKNOWN_ID, name, "values {} are of no class of the label "
                               "table".format(", ".join(str(int(v)) for v in values[unknown][:8])))
    bad = (values >= FIRST_INSTANCE) & ~spec.instance_ok[classes]
    if bad.any():
        raise ReferenceProblem(REF_INSTANCE_CLASS, name, "instances (values >= 1000) of class "
                               "ids {} whose has_instances is false".format(
                                   ", ".join(str(int(v)) for v in np.unique(classes[bad])[:8])))
    return Truth(image, values.astype(np.int64), sizes.astype(np.int64))


def find_root(ref_dir: str) -> str:
    root = folders.find_root(ref_dir, lambda d: os.path.isdir(os.path.join(d, INSTANCES)))
    if root is not None:
        return root
    log = ProblemLog()
    log.add(REF_LAYOUT, ref_dir, "no instances/ folder in it (the instance task reads "
            "instances/<id>.png)")
    raise BrokenReference(log)


class InstanceReference(Reference):
    layout = "raw"
    root: str

    def __init__(self, root: str, ids: List[str], table: LabelTable) -> None:
        self.root = root
        self.ids = ids
        self.table = table
        self.spec = SegmentSpec(table)

    def read(self, unit_id: str) -> Truth:
        name = "{}/{}.png".format(INSTANCES, unit_id)
        image = read_png(os.path.join(self.root, name), name, INSTANCE_MODES)
        return check_segments(image, self.spec, name)

    def expect(self, unit_id: str, truth: Truth) -> Tuple[int, int]:
        return truth.shape


def open_raw(root: str, table: LabelTable) -> InstanceReference:
    ids = folders.png_stems(os.path.join(root, INSTANCES)) or set()
    if not ids:
        log = ProblemLog()
        log.add(REF_LAYOUT, INSTANCES + "/", "it holds no PNG file")
        raise BrokenReference(log)
    return InstanceReference(root, sorted(ids), table)
