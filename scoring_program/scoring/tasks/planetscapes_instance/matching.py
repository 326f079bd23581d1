"""One image's predicted instances matched against its ground-truth segments, as the anchor's
assignGt2Preds and evaluateMatches see them, reduced to what AP needs at every overlap: per
prediction its class, confidence, best overlap (IoU) with a segment of its class, which instance
that is (or none: a crowd region, an instance under the minimum size, no overlap), and the share
of its pixels the anchor ignores when it matches nothing.

Why so little suffices: at an overlap threshold t >= 0.5 a prediction exceeds t with at most one
segment (two disjoint segments cannot both cover more than half of the union), so "the
prediction matches something at t" is "best IoU > t", and what it matches is the best segment.
"""
from typing import List, NamedTuple, Sequence

import numpy as np

from .prediction import Mask
from .reference import FIRST_INSTANCE, Truth, segment_classes

MIN_REGION = 100  # the anchor's minRegionSizes[0]: smaller instances are ignored, not missed


class ImageRecord(NamedTuple):
    """One image's record (the metric state's CAT field): every array is small (one entry per
    kept prediction, or per class)."""

    cls: np.ndarray          # int64 per prediction: index of its class in the evaluated classes
    confidence: np.ndarray   # float64 per prediction
    iou: np.ndarray          # float64: best IoU with a segment of its class (0.0: none)
    instance: np.ndarray     # int64: the value of that segment if a counted instance, else -1
    ignored: np.ndarray      # float64: (void + crowd + small-instance pixels) / pixels
    gt: np.ndarray           # int64 per class: counted instances (>= 1000, >= MIN_REGION px)


class ClassSpec:
    """The evaluated instance classes (the anchor's instLabels: has_instances and not ignored,
    in table order), the ids a prediction may skip (ignored classes with instances) and the void
    ids (ignored in evaluation)."""

    def __init__(self, table) -> None:
        self.ids = [lab.id for lab in table.in_images if lab.has_instances and
                    not lab.ignore_in_eval]
        self.names = [lab.name for lab in table.in_images if lab.has_instances and
                      not lab.ignore_in_eval]
        self.index = np.full(256, -1, dtype=np.int64)
        self.index[self.ids] = np.arange(len(self.ids))
        self.void = np.zeros(256, dtype=bool)
        for lab in table.in_images:
            self.void[lab.id] = lab.ignore_in_eval
        self.accepted = [lab.id for lab in table.in_images if lab.has_instances]


def empty_record(classes: int) -> ImageRecord:
    f, i = np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
    return ImageRecord(i, f, f, i, f, np.zeros(classes, dtype=np.int64))


def match(spec: ClassSpec, masks: Sequence[Mask], truth: Truth) -> ImageRecord:
    values, sizes = truth.values, truth.sizes
    seg_class = segment_classes(values)
    counted = (values >= FIRST_INSTANCE) & (sizes >= MIN_REGION)
    # Per segment: belongs to class index k (or -1), void, crowd, small
    seg_index = np.where(seg_class < 256, spec.index[np.minimum(seg_class, 255)], -1)
    void = (values < FIRST_INSTANCE) & spec.void[np.minimum(values, 255)]
    crowd = values < FIRST_INSTANCE
    small = sizes < MIN_REGION
    gt = np.bincount(seg_index[counted & (seg_index >= 0)], minlength=len(spec.ids))
    # Segment values -> their position, for the masks' pixel values (a look-up over the
    # image's value range, built once).
    lookup = np.zeros(int(values[-1]) + 1 if values.size else 1, dtype=np.int64)
    lookup[values] = np.arange(values.size)
    image = truth.image
    cls: List[int] = []
    conf: List[float] = []
    ious: List[float] = []
    inst: List[int] = []
    ign: List[float] = []
    for m in masks:
        k = int(spec.index[m.label]) if 0 <= m.label < 256 else -1
        if k < 0 or m.pixels == 0:
            continue  # an ignored class, or an empty mask: skipped, as the anchor skips them
        y0, x0, y1, x1 = m.box
        under = image[y0:y1, x0:x1][m.crop]
        inter = np.bincount(lookup[under], minlength=values.size)
        own = (seg_index == k) & (inter > 0)
        best_iou, best = 0.0, -1
        if own.any():
            where = np.flatnonzero(own)
            union = (sizes[where] + m.pixels - inter[where]).astype(np.float64)
            overlap = inter[where].astype(np.float64) / union
            j = int(np.argmax(overlap))
            best_iou, best = float(overlap[j]), int(where[j])
        ignored_pixels = int(inter[void].sum()) + int(inter[own & crowd].sum()) + \
            int(inter[own & small].sum())
        cls.append(k)
        conf.append(m.confidence)
        ious.append(best_iou)
        inst.append(int(values[best]) if best >= 0 and counted[best] else -1)
        ign.append(float(ignored_pixels) / m.pixels)
    return ImageRecord(np.array(cls, dtype=np.int64), np.array(conf, dtype=np.float64),
                       np.array(ious, dtype=np.float64), np.array(inst, dtype=np.int64),
                       np.array(ign, dtype=np.float64), gt.astype(np.int64))
