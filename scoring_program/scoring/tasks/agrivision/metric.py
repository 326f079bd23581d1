"""Overlap-aware confusion matrix of Agriculture-Vision, as additive integer state.

Per pixel the rule needs only (prediction, reference label set), so the state is the joint
histogram of those pairs over valid pixels: 9 x 512 integer counts, whatever the number of images.
update() is one vectorised bincount per image; merge() is a sum; both are exact and independent of
order. The confusion matrix is derived once at the end, where the storm_damage policy is applied,
so both policies come from the same state.
"""
from fractions import Fraction
from typing import List, Optional, Tuple

import numpy as np

from .classes import N_CLASSES, N_SETS, SET_BITS, STORM_BIT

# Key per pixel = prediction << 10 | code, code's bit 9 being validity: invalid pixels fall in the
# lower half of each prediction's block and are dropped at the end instead of masked per pixel.
_BLOCK = 2 * N_SETS


class LabelSetHistogram:
    """counts[x, s]: valid pixels predicted x whose reference label-set bitmask is s."""

    def __init__(self) -> None:
        self.counts = np.zeros((N_CLASSES, N_SETS), dtype=np.int64)
        self.images = 0

    def update(self, pred: np.ndarray, code: np.ndarray) -> None:
        """pred: uint8 class ids (checked <= 8); code: uint16 reference code, same shape."""
        key = pred.astype(np.uint16)
        key <<= SET_BITS + 1
        key |= code
        hist = np.bincount(key.ravel(), minlength=N_CLASSES * _BLOCK)
        self.counts += hist.reshape(N_CLASSES, _BLOCK)[:, N_SETS:]
        self.images += 1

    def merge(self, other: "LabelSetHistogram") -> "LabelSetHistogram":
        self.counts += other.counts
        self.images += other.images
        return self

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
