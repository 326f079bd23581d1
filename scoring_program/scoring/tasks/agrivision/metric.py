"""Overlap-aware confusion matrix of Agriculture-Vision, as additive integer state.

Per pixel the rule needs only (prediction, reference label set), so the state is the joint
histogram of those pairs over valid pixels: 9 x 512 integer counts, whatever the number of images.
update() is one exact histogram per image over (prediction, reference index) pairs, folded
into label sets through the image's code table; merge() is a sum; both are exact and independent of
order. The confusion matrix is derived once at the end, where the storm_damage policy is applied,
so both policies come from the same state.

For the confidence interval (docs/confidence.md, intervals.py) update() also keeps, per image,
its TP and union (TP + FP + FN) per class under the run's storm_damage policy: 18 integers from
the image's histogram through a fixed matrix (unit_weights), no second pass over pixels.
"""
from fractions import Fraction
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ...metrics.histogram import histogram
from ...task_api import CAT, SUM, MetricState

from .classes import N_CLASSES, N_SETS, SET_BITS, STORM_BIT, VALID_BIT


class CodedLabels(NamedTuple):
    """One reference image as the metric consumes it: per pixel an index into `table`, whose
    entries are codes (see classes.py). The raw layout uses the identity table (index = code);
    the packed layout a per-image table of the few codes present, so its index fits in a byte."""

    labels: np.ndarray  # 2-D uint8 or uint16 indices
    table: np.ndarray   # 1-D uint16 codes

    @property
    def shape(self) -> Tuple[int, int]:
        return self.labels.shape


IDENTITY_TABLE = np.arange(2 * N_SETS, dtype=np.uint16)


def _valid_columns(table: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(table indices whose code is valid, the label set of each)."""
    cols = np.nonzero(table & VALID_BIT)[0]
    return cols, (table[cols] & (N_SETS - 1)).astype(np.intp)


_IDENTITY_COLUMNS = _valid_columns(IDENTITY_TABLE)


class LabelSetHistogram(MetricState):
    """counts[x, s]: valid pixels predicted x whose reference label-set bitmask is s; with a
    storm_damage policy, also unit_rows: per image (by id) its TP and union per class."""

    fields = {"counts": SUM, "images": SUM, "unit_rows": CAT}

    def __init__(self, storm_policy: Optional[str] = None) -> None:
        self.counts = np.zeros((N_CLASSES, N_SETS), dtype=np.int64)
        self.images = 0
        self.storm_policy = storm_policy
        self.unit_rows: Dict[str, np.ndarray] = {}

    def update(self, unit_id: str, pred: np.ndarray, ref: CodedLabels) -> None:
        """pred: uint8 class ids (already checked <= 8), same shape as ref.labels."""
        folded, sets = self._fold(pred, ref)
        if self.storm_policy is not None:
            # (sets present x classes) pixel counts times their weights: the image's 18 numbers
            weights = unit_weights(self.storm_policy)[sets].reshape(-1, 2 * N_CLASSES)
            self.unit_rows[unit_id] = np.dot(folded.T.ravel(), weights)

    def _fold(self, pred: np.ndarray, ref: CodedLabels):
        k = len(ref.table)
        if N_CLASSES * k <= 256 and ref.labels.dtype == np.uint8:
            key = pred * np.uint8(k)  # <= 8k + (k - 1) < 256: one byte per pixel
        else:
            key = pred.astype(np.uint16)
            key *= k
        key += ref.labels
        hist = histogram(key, N_CLASSES * k).reshape(N_CLASSES, k)
        cols, sets = (_IDENTITY_COLUMNS if ref.table is IDENTITY_TABLE
                      else _valid_columns(ref.table))
        # Distinct valid codes have distinct label sets, so plain fancy-index addition is exact.
        folded = hist[:, cols]
        self.counts[:, sets] += folded
        self.images += 1
        return folded, sets

    def unit_table(self) -> Tuple[List[str], np.ndarray]:
        """(image ids sorted, their rows: TP of the 9 classes, then their unions) as int64;
        every image's row, or ValueError."""
        if len(self.unit_rows) != self.images:
            raise ValueError("images were folded in without their row")
        records = self.in_unit_order("unit_rows")
        rows = np.array([row for _, row in records], dtype=np.int64).reshape(
            len(records), 2 * N_CLASSES)
        return [unit for unit, _ in records], rows

    @property
    def units(self) -> int:  # type: ignore[override]
        return self.images

    @property
    def pixels(self) -> int:
        return int(self.counts.sum())


def label_set(s: int, storm_policy: str) -> Optional[Tuple[int, ...]]:
    """Class ids Y of label-set bitmask s; None if the pixel is not evaluated."""
    patterns = tuple(k + 1 for k in range(SET_BITS - 1) if s >> k & 1)
    if patterns:
        return patterns
    if s & STORM_BIT and storm_policy == "ignore":
        return None
    return (0,)


_UNIT_WEIGHTS: Dict[str, np.ndarray] = {}


def unit_weights(storm_policy: str) -> np.ndarray:
    """W[s, x] = what one valid pixel predicted x with label set s adds to an image's row
    (TP of each class, then TP + FP + FN of each class), by the rule of confusion() below:
    a hit adds 1 to TP and union of every label of the pixel; a miss adds 1 to the union of
    every label (a FN each) and the number of labels to the predicted class's union (its FPs)."""
    if storm_policy not in _UNIT_WEIGHTS:
        w = np.zeros((N_SETS, N_CLASSES, 2 * N_CLASSES), dtype=np.int64)
        for s in range(N_SETS):
            ys = label_set(s, storm_policy)
            if ys is None:
                continue
            for x in range(N_CLASSES):
                for y in ys:
                    w[s, x, N_CLASSES + y] += 1
                if x in ys:
                    for y in ys:
                        w[s, x, y] += 1
                else:
                    w[s, x, N_CLASSES + x] += len(ys)
        _UNIT_WEIGHTS[storm_policy] = w
    return _UNIT_WEIGHTS[storm_policy]


def miou_of_sums(sums: Sequence[int]) -> Optional[float]:
    """mIoU from an image set's summed rows (TP per class, then union per class), in floats:
    the bootstrap's score of a resample."""
    ious = [t / u for t, u in zip(sums[:N_CLASSES], sums[N_CLASSES:]) if u]
    return sum(ious) / len(ious) if ious else None


def miou_gradient(sums: Sequence[int]) -> List[Optional[List[float]]]:
    """[the gradient of miou_of_sums at sums] (None where it is undefined): for a class with a
    union, d/dTP = 1 / (D U), d/dU = -TP / (D U^2), D the classes with a union."""
    unions = sums[N_CLASSES:]
    defined = [c for c in range(N_CLASSES) if unions[c]]
    if not defined:
        return [None]
    grad = [0.0] * (2 * N_CLASSES)
    for c in defined:
        u = unions[c]
        grad[c] = 1.0 / (len(defined) * u)
        grad[N_CLASSES + c] = -sums[c] / (len(defined) * u * u)
    return [grad]


def confusion(counts: np.ndarray, storm_policy: str) -> List[List[int]]:
    """M[x][y] (x predicted, y reference) as Python ints, by the challenge's rule."""
    m = [[0] * N_CLASSES for _ in range(N_CLASSES)]
    for s in range(N_SETS):
        column = counts[:, s]
        if not column.any():
            continue
        ys = label_set(s, storm_policy)
        if ys is None:
            continue
        for x in range(N_CLASSES):
            n = int(column[x])
            if not n:
                continue
            if x in ys:      # a hit credits every label of the pixel
                for y in ys:
                    m[y][y] += n
            else:            # a miss counts against every label of the pixel
                for y in ys:
                    m[x][y] += n
    return m


def pixel_counts(m: List[List[int]]) -> Tuple[List[int], List[int], List[int]]:
    """Per class (TP, FP, FN) from M[x][y]: FP = rest of row c, FN = rest of column c."""
    n = len(m)
    tp = [m[c][c] for c in range(n)]
    fp = [sum(m[c]) - m[c][c] for c in range(n)]
    fn = [sum(m[x][c] for x in range(n)) - m[c][c] for c in range(n)]
    return tp, fp, fn


def iou(tp: List[int], fp: List[int], fn: List[int]) -> List[Optional[Fraction]]:
    """Exact IoU per class; None where the denominator is 0 (class absent everywhere)."""
    return [Fraction(t, t + p + f) if t + p + f else None for t, p, f in zip(tp, fp, fn)]


def mean_iou(ious: List[Optional[Fraction]]) -> Optional[Fraction]:
    """Mean over the classes that have an IoU; None if none has."""
    defined = [v for v in ious if v is not None]
    return sum(defined, Fraction(0)) / len(defined) if defined else None
