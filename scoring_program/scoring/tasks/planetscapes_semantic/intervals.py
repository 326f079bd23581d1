"""The per-image rows of the Planetscapes semantic task for the confidence interval of iou_class
and iiou_class (docs/confidence.md), and those two scores from the rows' sums.

An image's row, from the image's own state (metric.SemanticState of that image alone):
- per evaluated class c (table order): TP, FP (column c over evaluated reference rows other
  than c) and FN: their sums give the class IoU exactly as summarize() does;
- per class with an iIoU: its instances N and W = sum over them of TP_i / size_i, in fixed
  point (units of 2**-24 of an instance, rounded down per instance size: integers, so sums
  are exact and the same everywhere).
The average instance sizes that weight iIoU are those of the whole run (configured, or the mean
over the whole reference), held fixed in every resample: iTP = avg * W, iFN = avg * (N - W).
"""
from typing import Dict, List, Optional, Sequence

import numpy as np

from .labels import LabelTable

FIXED_POINT_BITS = 24


class RowLayout:
    """Which classes the row holds, in order."""

    def __init__(self, table: LabelTable) -> None:
        self.evaluated = [lab.id for lab in table.evaluated()]
        self.instance = [lab.id for lab in table.instance_classes()]
        self.width = 3 * len(self.evaluated) + 2 * len(self.instance)


def image_row(layout: RowLayout, one) -> np.ndarray:
    """The row of one image from its own state (matrix and instances of that image only)."""
    m = one.matrix
    ev = np.array(layout.evaluated, dtype=np.intp)
    tp = m[ev, ev]
    fn = m[ev].sum(axis=1) - tp
    fp = m[ev][:, ev].sum(axis=0) - tp
    inst = []
    for c in layout.instance:
        by_size = one.instances.get(c, {})
        count = sum(n for n, _, _ in by_size.values())
        weight = sum((hit << FIXED_POINT_BITS) // size for size, (_, hit, _) in by_size.items())
        inst += [count, weight]
    return np.concatenate([np.stack([tp, fp, fn], axis=1).ravel(),
                           np.array(inst, dtype=np.int64)]).astype(np.int64)


def unit_table(state):
    """(image ids sorted, their rows as one int64 array)."""
    order = sorted(range(len(state.unit_ids)), key=state.unit_ids.__getitem__)
    rows = np.array([state.unit_rows[i] for i in order], dtype=np.int64)
    return [state.unit_ids[i] for i in order], rows.reshape(len(order), state.row_layout.width)


def _mean(values: List[Optional[float]]) -> Optional[float]:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def scores_of_sums(layout: RowLayout, averages: Dict[int, float],
                   sums: Sequence[int]) -> List[Optional[float]]:
    """[iou_class, iiou_class] of a resample from its summed rows; averages: class id ->
    average instance size (0.0 where the run has none)."""
    ious, fps = [], {}
    for k, c in enumerate(layout.evaluated):
        tp, fp, fn = sums[3 * k:3 * k + 3]
        fps[c] = fp
        ious.append(tp / (tp + fp + fn) if tp + fp + fn else None)
    iious = []
    base = 3 * len(layout.evaluated)
    scale = float(1 << FIXED_POINT_BITS)
    for k, c in enumerate(layout.instance):
        count, weight = sums[base + 2 * k], sums[base + 2 * k + 1] / scale
        avg = averages.get(c, 0.0)
        itp, ifn = avg * weight, avg * (count - weight)
        den = itp + fps[c] + ifn
        iious.append(itp / den if den else None)
    return [_mean(ious), _mean(iious)]
