"""The panoptic ground truth, derived from the semantic task's reference exactly as
cityscapesScripts' preparation/createPanopticImgs.py derives it from *_instanceIds.png.

One reference folder serves the three pixel tasks (labels/<id>.png, instances/<id>.png,
config.yaml's label table); this task reads instances/<id>.png only, as the anchor does. Each
value v of the instance image present in the image is one segment: v < 1000 is label v (a crowd
region when the label has instances, else the label's one stuff segment), v >= 1000 an instance
of label v // 1000. Segments of labels ignored in evaluation are void (the anchor leaves their
pixels black, id 0). isthing = has_instances.
"""
import os
from typing import NamedTuple, Tuple

import numpy as np

from ...problems import BrokenReference, ProblemLog
from ...task_api import Reference, ReferenceProblem
from ..planetscapes_semantic import reference as semantic_reference
from ..planetscapes_semantic.labels import LabelTable
from ..planetscapes_semantic.problems import REF_INSTANCE_CLASS, REF_UNKNOWN_ID
from .problems import REF_PACKED

INSTANCES = semantic_reference.INSTANCES
MAX_VALUE = 65535  # 16-bit instance images


class Truth(NamedTuple):
    """One reference image: its instance image as decoded (uint16: class_id * 1000 + k, or the
    label id) and its name for messages. Its segments are found with the prediction's, in one
    pass over both (metric.pairs): what the values are is read from the joint counts."""

    instances: np.ndarray
    name: str

    @property
    def shape(self) -> Tuple[int, int]:
        return self.instances.shape


class Segments(NamedTuple):
    """The segments of one reference image: per value present its segment position (0: void),
    and per position (0: void) the class (position among the evaluated labels; -1: void),
    whether it is a crowd region, and its area in pixels (position 0: the void pixels)."""

    position: np.ndarray   # intp, one per value given
    classes: np.ndarray
    crowd: np.ndarray
    areas: np.ndarray


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


def segments_of(values: np.ndarray, counts: np.ndarray, spec: SegmentSpec,
                name: str) -> Segments:
    """The segments of the values present in one instance image (sorted, distinct) with their
    pixel counts, as createPanopticImgs makes them (its loop over np.unique): a
    ReferenceProblem naming the file for a value the table cannot explain."""
    if values.size and (int(values[0]) < 0 or int(values[-1]) > MAX_VALUE):
        raise ReferenceProblem(REF_UNKNOWN_ID, name, "values outside 0-65535")
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
    segment = np.zeros(values.size, dtype=np.intp)
    segment[kept] = np.arange(1, int(kept.sum()) + 1)
    classes = np.concatenate([[-1], position[kept]]).astype(np.int64)
    crowd = np.concatenate([[False], (values[kept] < 1000) & spec.things[labels[kept]]])
    areas = np.concatenate([[counts[~kept].sum()], counts[kept]]).astype(np.int64)
    return Segments(segment, classes, crowd.astype(bool), areas)


class PanopticReference(Reference):
    """The raw layout of the semantic task (both folders must be there: one reference for the
    three pixel tasks); only instances/<id>.png is read (decoded as 16-bit samples, the semantic
    reader's fast path)."""

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
        instances = semantic_reference.read_png(os.path.join(self.root, name), name,
                                                semantic_reference.INSTANCE_MODES)
        return Truth(instances, name)


def open_reference(ref_dir: str, table: LabelTable) -> PanopticReference:
    root = semantic_reference.find_root(ref_dir)
    if os.path.isfile(os.path.join(root, semantic_reference.PACKED_MANIFEST)):
        log = ProblemLog()
        log.add(REF_PACKED, root, "it holds packed.json")
        raise BrokenReference(log)
    raw = semantic_reference.open_raw(root, table)
    return PanopticReference(raw.root, raw.ids, table)
