"""The panoptic task's confidence interval of pq (docs/confidence.md): images resampled, each
with its row of per-class TP, FP, FN and matched-IoU sum (units of 2^-24: integers, so a
resample's column sums are exact); PQ is a function of those sums, so this is the seam's sum
form (Resampling), studentized with the gradient below, and widened for the classes the test
set does not show (metrics/unseen.py): a class with predicted segments but no reference segment
scores PQ 0 whatever the predictions, and one with neither drops out of the mean."""
from typing import Any, List, Optional, Sequence

import numpy as np

from ... import resample_units
from ...metrics import unseen
from ...task_api import Intervals, Resampling, Summary
from .metric import ROW_BITS, PanopticState

SCALE = float(1 << ROW_BITS)


def unit_table(state: PanopticState):
    """(image ids sorted, their rows as one int64 array: 4 columns per evaluated class)."""
    records = state.in_unit_order("unit_rows")
    rows = np.array([row for _, row in records], dtype=np.int64)
    return [unit for unit, _ in records], rows.reshape(len(records), 4 * state.classes)


def _terms(sums: Sequence[int]):
    """(class k, tp, D = TP + FP/2 + FN/2, IoU sum) of every class with TP + FP + FN > 0."""
    out = []
    for k in range(len(sums) // 4):
        tp, fp, fn, iou = sums[4 * k:4 * k + 4]
        if tp + fp + fn:
            out.append((k, tp, tp + 0.5 * (fp + fn), iou / SCALE))
    return out


def pq_of_sums(sums: Sequence[int]) -> List[Optional[float]]:
    terms = _terms(sums)
    return [sum(iou / d for _, _, d, iou in terms) / len(terms) if terms else None]


def pq_gradient(sums: Sequence[int]) -> List[Optional[List[float]]]:
    """d pq / d sums: per class PQ_k = S / D with S = IoU sum / 2^24, D = TP + (FP + FN) / 2:
    d/dIoU = 1 / (2^24 D), d/dTP = -S / D^2, d/dFP = d/dFN = -S / (2 D^2); over the classes
    counted."""
    terms = _terms(sums)
    if not terms:
        return [None]
    n = len(terms)
    grad = [0.0] * len(sums)
    for k, _, d, s in terms:
        grad[4 * k] = -s / (d * d) / n
        grad[4 * k + 1] = grad[4 * k + 2] = -s / (2 * d * d) / n
        grad[4 * k + 3] = 1.0 / (SCALE * d) / n
    return [grad]


def blind_terms(sums: Sequence[int]):
    """(terms, unseen, missing) of pq's mean (metrics/unseen.py) from the column sums: a class's
    reference segments are its TP + FN, its denominator TP + FP + FN."""
    n = len(sums) // 4
    return unseen.blind_terms([sums[4 * k] + sums[4 * k + 2] for k in range(n)],
                              [sums[4 * k] + sums[4 * k + 1] + sums[4 * k + 2] for k in range(n)])


def widen(_key: int, ends, sums: Sequence[int]):
    """pq's interval with the classes the test set does not show set free."""
    return unseen.open_mean(ends, *blind_terms(sums))


class PanopticIntervals(Intervals[PanopticState, Any, Any]):
    """The task's Intervals role: pq's interval, by image (default) or `prefix N`."""

    keys = ["pq"]
    resample_by = ("image",)

    def resampling(self, state: PanopticState, summary: Summary, reference: Any, settings: Any,
                   by: str) -> Optional[Resampling]:
        if not state.rows or len(state.unit_rows) != state.units:
            return None
        return Resampling("images", state.units, lambda: unit_table(state), pq_of_sums,
                          group=resample_units.key_of(by, "image"), group_noun="groups",
                          gradient=pq_gradient, widen=widen)
