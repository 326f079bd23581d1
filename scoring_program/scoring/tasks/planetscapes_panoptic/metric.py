"""Panoptic quality as additive state, computed as cityscapesScripts'
evalPanopticSemanticLabeling computes it (the anchor), quirks included
(docs/planetscapes-panoptic.md).

Per image, one histogram of (reference segment, predicted segment) pairs gives every
intersection and, through its row of void, each predicted segment's void pixels. Per evaluated
class the state sums TP, FP, FN and the matched IoUs; the IoUs are summed in fixed point,
floor(IoU * 2^64) per match as a Python integer, so the sum is exact, the same for any worker
count and image order, and within 2^-64 per match of the real one (the anchor adds floats in
its own order).
"""
import math
from fractions import Fraction
from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from ...task_api import CAT, SUM, MetricState
from ..planetscapes_semantic.labels import LabelTable, key_name
from ...task_api import ReferenceProblem
from ..planetscapes_semantic.problems import REF_UNKNOWN_ID
from .predictions import Prediction, run_lengths, run_starts
from .reference import MAX_VALUE, SegmentSpec, Segments, Truth, segments_of

FIXED_BITS = 64            # the state's IoU sums: units of 2^-64
ROW_BITS = 24              # the interval's per-image rows: units of 2^-24 (int64 sums)
MEANS = ["pq", "sq", "rq", "pq_things", "sq_things", "rq_things", "pq_stuff", "sq_stuff",
         "rq_stuff"]


def score_keys(table: LabelTable) -> List[str]:
    keys = list(MEANS)
    for lab in table.evaluated():
        keys += [m + "_" + key_name(lab.name) for m in ("pq", "sq", "rq")]
    return keys


class ImageCounts(NamedTuple):
    """One image's contribution, per evaluated class: TP, FP, FN, IoU sum (2^-64 units)."""

    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    iou: List[int]


# Above this many (reference value, predicted segment) combinations an image's pairs are
# counted by sorting its pieces instead of one bincount over every combination.
DENSE_PAIRS = 1 << 22


def joint_counts(truth: Truth, pred: Prediction) -> Tuple[np.ndarray, np.ndarray,
                                                          np.ndarray]:
    """(reference value, predicted segment position, pixels) of every pair present: the
    flattened image cut wherever the reference value or the predicted segment changes (one
    comparison pass over the reference, the prediction's cuts added), each piece's value pair
    counted with its length: exact integer counts, linear in the pixels."""
    flat = truth.instances.reshape(-1)
    if truth.instances.dtype != np.uint16:
        if flat.size and (int(flat.min()) < 0 or int(flat.max()) > MAX_VALUE):
            raise ReferenceProblem(REF_UNKNOWN_ID, truth.name, "values outside 0-65535")
    cut = np.zeros(flat.size, dtype=bool)
    cut[pred.starts] = True
    starts = run_starts(flat, cut)
    lengths = run_lengths(starts, flat.size)
    values = flat[starts].astype(np.intp)
    # Each piece lies in one predicted run: the count of the prediction's cuts up to it.
    segment = pred.segments[np.cumsum(cut[starts]) - 1]
    # The reference values present, numbered (a value is below 2^16).
    present = np.flatnonzero(np.bincount(values, minlength=MAX_VALUE + 1))
    number = np.zeros(MAX_VALUE + 1, dtype=np.intp)
    number[present] = np.arange(present.size)
    width = pred.ids.size
    key = number[values] * width + segment
    if present.size * width <= DENSE_PAIRS:
        # Exact: float64 holds every pixel count of a bounded image.
        counts = np.bincount(key, weights=lengths, minlength=present.size * width)
        keys = np.flatnonzero(counts)
        counts = counts[keys].astype(np.int64)
    else:
        keys, counts = sum_runs(key, lengths)
    return present[keys // width], keys % width, counts


def sum_runs(keys: np.ndarray, lengths: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(distinct keys sorted, pixels of each): the runs' lengths summed by key, in integers."""
    if not keys.size:
        return keys, lengths
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    first = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return ordered[first], np.add.reduceat(lengths[order], first)


def pairs(truth: Truth, pred: Prediction, spec: SegmentSpec) -> Tuple[
        Segments, np.ndarray, np.ndarray, np.ndarray]:
    """The reference's segments, and (reference segment, predicted segment, intersection) of
    every pair that meets (the void position may come several times, once per void value)."""
    value, p, inter = joint_counts(truth, pred)
    values, which = np.unique(value, return_inverse=True)
    areas = np.zeros(values.size, dtype=np.int64)
    np.add.at(areas, which, inter)
    segments = segments_of(values, areas, spec, truth.name)
    g = segments.position[which]
    return segments, g, p, inter


def image_counts(truth: Truth, pred: Prediction, spec: SegmentSpec,
                 classes: int) -> ImageCounts:
    """The anchor's pq_compute_single_core for one image, over its segment pairs."""
    ref, g, p, inter = pairs(truth, pred, spec)
    k = len(pred.ids)
    if g.size and int(g.min()) < 0:  # a value segments_of did not place: a bug
        raise AssertionError("a reference value has no segment")
    gcls, pcls = ref.classes[g], pred.classes[p]
    on_void = g == 0
    void = np.zeros(k, dtype=np.int64)
    np.add.at(void, p[on_void], inter[on_void])  # several void values may meet one p
    # A match: same class, reference not crowd, neither void; IoU > 0.5 with the predicted
    # segment's void pixels taken out of the union (2 * I > U: the anchor's float test exactly).
    candidate = (g > 0) & (p > 0) & ~ref.crowd[g] & (gcls == pcls)
    union = pred.areas[p] + ref.areas[g] - inter - void[p]
    match = candidate & (2 * inter > union)
    tp = np.bincount(gcls[match], minlength=classes)
    iou = [0] * classes
    for c, i, u in zip(gcls[match].tolist(), inter[match].tolist(), union[match].tolist()):
        iou[c] += (i << FIXED_BITS) // u
    matched_g = np.zeros(len(ref.classes), dtype=bool)
    matched_g[g[match]] = True
    matched_p = np.zeros(k, dtype=bool)
    matched_p[p[match]] = True
    # FN: unmatched reference segments, crowd regions aside.
    missed = ~matched_g & ~ref.crowd
    missed[0] = False
    fn = np.bincount(ref.classes[missed], minlength=classes)
    # FP: unmatched predicted segments, unless their void pixels plus their pixels on the crowd
    # region of their own class are more than half of them (the two added, as the anchor does).
    on_crowd = (g > 0) & ref.crowd[g] & (gcls == pcls)
    ignored = void.copy()
    np.add.at(ignored, p[on_crowd], inter[on_crowd])
    extra = ~matched_p & (2 * ignored <= pred.areas)
    extra[0] = False
    fp = np.bincount(pred.classes[extra], minlength=classes)
    return ImageCounts(tp.astype(np.int64), fp.astype(np.int64), fn.astype(np.int64), iou)


class PanopticState(MetricState):
    """Per evaluated class (table order): TP, FP, FN (int64) and the IoU sum (2^-64 units);
    with rows on, each image's row for the interval (intervals.py)."""

    fields = {"tp": SUM, "fp": SUM, "fn": SUM, "iou": SUM, "units": SUM, "unit_rows": CAT}

    def __init__(self, spec: SegmentSpec, classes: int, rows: bool = True) -> None:
        self.spec = spec          # configuration: what the label table says of each value
        self.classes = classes
        self.tp = np.zeros(classes, dtype=np.int64)
        self.fp = np.zeros(classes, dtype=np.int64)
        self.fn = np.zeros(classes, dtype=np.int64)
        self.iou: List[int] = [0] * classes
        self.units = 0
        self.rows = rows
        self.unit_rows: Dict[str, np.ndarray] = {}

    def update(self, unit_id: str, prediction: Prediction, truth: Truth) -> None:
        one = image_counts(truth, prediction, self.spec, self.classes)
        self.tp += one.tp
        self.fp += one.fp
        self.fn += one.fn
        for c, v in enumerate(one.iou):
            if v:
                self.iou[c] += v
        self.units += 1
        if self.rows:
            shift = FIXED_BITS - ROW_BITS
            self.unit_rows[unit_id] = np.stack(
                [one.tp, one.fp, one.fn,
                 np.array([v >> shift for v in one.iou], dtype=np.int64)], axis=1).ravel()


class ClassRow(NamedTuple):
    name: str
    id: int
    isthing: bool
    tp: int
    fp: int
    fn: int
    iou_sum: float
    pq: Optional[float]   # None: TP + FP + FN = 0 (the anchor's 0, left out of its means)
    sq: Optional[float]
    rq: Optional[float]


class Result(NamedTuple):
    classes: List[ClassRow]
    means: Dict[str, Optional[float]]
    counted: Dict[str, int]   # "all", "things", "stuff": classes in each mean (the anchor's n)


def class_values(tp: int, fp: int, fn: int, iou: Fraction) -> Tuple[Optional[float], ...]:
    """(pq, sq, rq) of one class from exact sums, each correctly rounded; None when TP + FP +
    FN = 0. TP = 0 with FP or FN gives SQ 0 (the anchor's `iou / tp if tp != 0 else 0`)."""
    if tp + fp + fn == 0:
        return None, None, None
    half = Fraction(2 * tp + fp + fn, 2)
    return (float(iou / half), float(iou / tp) if tp else 0.0, float(tp / half))


def _mean(values: List[float]) -> Optional[float]:
    return math.fsum(values) / len(values) if values else None


def summarize(state: PanopticState, table: LabelTable) -> Result:
    rows = []
    for k, lab in enumerate(table.evaluated()):
        tp, fp, fn = int(state.tp[k]), int(state.fp[k]), int(state.fn[k])
        iou = Fraction(state.iou[k], 1 << FIXED_BITS)
        pq, sq, rq = class_values(tp, fp, fn, iou)
        rows.append(ClassRow(lab.name, lab.id, lab.has_instances, tp, fp, fn, float(iou),
                             pq, sq, rq))
    means: Dict[str, Optional[float]] = {}
    counted = {}
    for suffix, keep in (("", lambda r: True), ("_things", lambda r: r.isthing),
                         ("_stuff", lambda r: not r.isthing)):
        chosen = [r for r in rows if keep(r) and r.pq is not None]
        counted[suffix.lstrip("_") or "all"] = len(chosen)
        for m in ("pq", "sq", "rq"):
            means[m + suffix] = _mean([getattr(r, m) for r in chosen])
    return Result(rows, means, counted)


def score_list(result: Result, table: LabelTable) -> List[Tuple[str, Optional[float]]]:
    values = dict(result.means)
    for r in result.classes:
        for m in ("pq", "sq", "rq"):
            values[m + "_" + key_name(r.name)] = getattr(r, m)
    return [(k, values.get(k)) for k in score_keys(table)]
