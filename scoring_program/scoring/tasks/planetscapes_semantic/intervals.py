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
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ... import resample_units
from ...metrics import unseen
from ...task_api import Intervals, Resampling, Summary
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
    records = state.in_unit_order("unit_rows")
    rows = np.array([row for _, row in records], dtype=np.int64)
    return [unit for unit, _ in records], rows.reshape(len(records), state.row_layout.width)


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


def gradient_of_sums(layout: RowLayout, averages: Dict[int, float],
                     sums: Sequence[int]) -> List[Optional[List[float]]]:
    """The gradients of scores_of_sums' two means with respect to the sums (None where the
    mean is undefined). IoU = TP / U, U = TP + FP + FN: d/dTP = (FP + FN) / U^2, d/dFP = d/dFN
    = -TP / U^2; iIoU = a w / (a N + FP), w = W / 2^24: d/dW = a / 2^24 / den,
    d/dN = -a^2 w / den^2, d/dFP = -a w / den^2; each over the mean's number of terms."""
    width = len(sums)
    g_iou = [0.0] * width
    defined = [k for k in range(len(layout.evaluated)) if sum(sums[3 * k:3 * k + 3])]
    for k in defined:
        tp, fp, fn = sums[3 * k:3 * k + 3]
        u2 = float(tp + fp + fn) ** 2 * len(defined)
        g_iou[3 * k], g_iou[3 * k + 1], g_iou[3 * k + 2] = (fp + fn) / u2, -tp / u2, -tp / u2
    column = {c: k for k, c in enumerate(layout.evaluated)}
    base = 3 * len(layout.evaluated)
    scale = float(1 << FIXED_POINT_BITS)
    terms = []
    for k, c in enumerate(layout.instance):
        count, w = sums[base + 2 * k], sums[base + 2 * k + 1] / scale
        avg = averages.get(c, 0.0)
        den = avg * count + sums[3 * column[c] + 1]  # iTP + FP + iFN
        if den:
            terms.append((k, c, avg, w, den))
    g_iiou = [0.0] * width
    for k, c, avg, w, den in terms:
        d = len(terms)
        g_iiou[base + 2 * k + 1] = avg / scale / den / d
        g_iiou[base + 2 * k] = -avg * avg * w / (den * den) / d
        g_iiou[3 * column[c] + 1] = -avg * w / (den * den) / d
    return [g_iou if defined else None, g_iiou if terms else None]


def blind_terms(layout: RowLayout, averages: Dict[int, float], sums: Sequence[int]):
    """Per mean (iou_class, iiou_class) its (terms, unseen, missing) (metrics/unseen.py): a
    class without reference pixels; an instance class without instances."""
    n = len(layout.evaluated)
    ref = [sums[3 * k] + sums[3 * k + 2] for k in range(n)]
    union = [sum(sums[3 * k:3 * k + 3]) for k in range(n)]
    column = {c: k for k, c in enumerate(layout.evaluated)}
    base = 3 * n
    counts = [sums[base + 2 * k] for k in range(len(layout.instance))]
    dens = [averages.get(c, 0.0) * counts[k] + sums[3 * column[c] + 1]
            for k, c in enumerate(layout.instance)]
    return [unseen.blind_terms(ref, union), unseen.blind_terms(counts, dens)]


class SemanticIntervals(Intervals[Any, Any, Any]):
    """The task's Intervals role: iou_class's and iiou_class's intervals, by image (default) or
    `prefix N` (the city, the sequence)."""

    keys = ["iou_class", "iiou_class"]
    resample_by = ("image",)

    def clusters(self, reference: Any, by: str):
        return sorted(reference.ids), resample_units.key_of(by, "image")

    def resampling(self, state: Any, summary: Summary, reference: Any, settings: Any,
                   by: str) -> Optional[Resampling]:
        """Images, each with its TP, FP, FN per class and its instances' weighted hits; the
        average instance sizes of the run are held fixed (metric.SemanticState's rows)."""
        if state.row_layout is None or len(state.unit_rows) != state.units:
            return None
        layout = state.row_layout
        averages = {r.id: r.average_size or 0.0 for r in summary.details.result.classes
                    if r.has_instances}
        return Resampling("images", state.units, lambda: unit_table(state),
                          lambda sums: scores_of_sums(layout, averages, sums),
                          group=resample_units.key_of(by, "image"), group_noun="groups",
                          gradient=lambda sums: gradient_of_sums(layout, averages, sums),
                          widen=lambda key, ends, total: unseen.open_mean(
                              ends, *blind_terms(layout, averages, total)[key]))
