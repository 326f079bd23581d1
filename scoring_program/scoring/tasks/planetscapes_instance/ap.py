"""Average precision from the images' records (matching.ImageRecord), as the anchor's
evaluateMatches computes it, for the whole test set or for a bootstrap resample (each image
counted as often as the resample draws it).

At an overlap t, per class, over all images:
- a counted instance with predictions whose IoU exceeds t: the most confident one is a true
  positive, the others false positives (the anchor keeps the higher score, appends the lower);
- a counted instance with none: a hard false negative;
- a prediction whose best IoU exceeds t with a crowd region or an instance under 100 px: neither;
- a prediction exceeding t with nothing: a false positive unless its ignored share (void, crowd,
  small instances) exceeds t (`<= t` counts, as the anchor's test).
Precision and recall are taken at each distinct confidence (every prediction at or above it
counted), so the order of tied confidences never matters; the curve gets the point (recall 0,
precision 1) and is integrated as the anchor does (np.convolve with [-0.5, 0, 0.5], then a dot
product), with the same floats. A class without counted instance has no AP (the anchor's NaN);
one with instances but no prediction has 0; one with predictions whose examples are all neither
(nothing matched or counted) has 0 too, where the anchor raises IndexError: our one departure.
"""
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .matching import ImageRecord

# The anchor's args.overlaps, these very floats (np.arange(0.5, 1., 0.05)): an IoU is compared
# with them (`>`), so 0.55 means the float the anchor's arange gives.
OVERLAPS = np.arange(0.5, 1., 0.05)


class Curve(NamedTuple):
    """The examples of one class at one overlap, grouped by distinct confidence (ascending)."""

    image: np.ndarray    # per example: its image's position
    group: np.ndarray    # per example: index of its confidence among the distinct ones
    true: np.ndarray     # per example: 1.0 for a true positive
    scores: np.ndarray   # the distinct confidences, ascending


class Examples:
    """Everything AP needs from the records, arranged once: per overlap and class its curve's
    examples and per image its hard false negatives; per image and class the counted instances
    and the predictions."""

    def __init__(self, records: Sequence[ImageRecord], classes: int) -> None:
        self.images = len(records)
        self.classes = classes
        counts = np.array([r.cls.size for r in records], dtype=np.int64)
        image = np.repeat(np.arange(self.images), counts)

        def cat(name: str, dtype: type) -> np.ndarray:
            if not records:
                return np.zeros(0, dtype=dtype)
            return np.concatenate([getattr(r, name) for r in records]).astype(dtype)
        cls, conf = cat("cls", np.int64), cat("confidence", np.float64)
        iou, inst, ign = cat("iou", np.float64), cat("instance", np.int64), cat("ignored", np.float64)
        self.gt = (np.stack([r.gt for r in records]) if records else
                   np.zeros((0, classes), dtype=np.int64))
        self.preds = np.zeros((self.images, classes), dtype=np.int64)
        np.add.at(self.preds, (image, cls), 1)
        self.curves: List[List[Curve]] = []
        self.hard_fn: List[np.ndarray] = []   # per overlap: images x classes
        for t in OVERLAPS:
            over = iou > t
            cand = np.flatnonzero(over & (inst >= 0))
            # Candidates of one instance: the most confident is the true positive.
            order = cand[np.lexsort((-conf[cand], inst[cand], image[cand]))]
            first = np.ones(order.size, dtype=bool)
            first[1:] = (image[order][1:] != image[order][:-1]) | (inst[order][1:] != inst[order][:-1])
            true = np.zeros(cls.size, dtype=np.float64)
            true[order[first]] = 1.0
            matched = np.zeros((self.images, classes), dtype=np.int64)
            np.add.at(matched, (image[order[first]], cls[order[first]]), 1)
            self.hard_fn.append(self.gt - matched)
            counted = over & (inst >= 0) | ~over & (ign <= t)
            row = []
            for k in range(classes):
                ex = np.flatnonzero(counted & (cls == k))
                scores, group = np.unique(conf[ex], return_inverse=True)
                row.append(Curve(image[ex], group.astype(np.int64), true[ex], scores))
            self.curves.append(row)
        self._arrange_all()

    def _arrange_all(self) -> None:
        """Every curve's examples in one array, groups numbered across the curves (curve c's
        from start[c] to end[c]): a resample's counts then take one bincount for all."""
        curves = [c for row in self.curves for c in row]
        sizes = np.array([c.scores.size for c in curves], dtype=np.int64)
        self.end = np.cumsum(sizes)
        self.start = self.end - sizes
        self.total_groups = int(self.end[-1]) if sizes.size else 0
        self.all_image = np.concatenate([c.image for c in curves]) if curves else np.zeros(0, int)
        self.all_group = (np.concatenate([c.group + s for c, s in zip(curves, self.start)])
                          if curves else np.zeros(0, int))
        self.all_true = np.concatenate([c.true for c in curves]) if curves else np.zeros(0)
        self.segment = np.repeat(np.arange(len(curves)), sizes)
        # In group order: a group's weighted count is then one np.add.reduceat run; the true
        # positives (fewer) apart.
        order = np.argsort(self.all_group, kind="mergesort")
        self.all_image, self.all_group = self.all_image[order], self.all_group[order]
        self.all_true = self.all_true[order]
        self.group_starts = np.searchsorted(self.all_group, np.arange(self.total_groups))
        hit = self.all_true > 0
        self.true_image, self.true_group = self.all_image[hit], self.all_group[hit]
        # per overlap and class, its hard false negatives by image: images x curves
        self.hard_all = (np.stack([self.hard_fn[o][:, k] for o in range(OVERLAPS.size)
                                   for k in range(self.classes)], axis=1)
                         if self.images and self.classes else
                         np.zeros((self.images, len(curves)), dtype=np.int64))

    def table(self, weights: Optional[Sequence[int]] = None) -> np.ndarray:
        """AP per class (rows) and overlap (columns); NaN where the class has no AP."""
        w = np.ones(self.images) if weights is None else np.asarray(weights, dtype=np.float64)
        have_gt = w.dot(self.gt) > 0 if self.images else np.zeros(self.classes, dtype=bool)
        have_pred = w.dot(self.preds) > 0 if self.images else np.zeros(self.classes, dtype=bool)
        out = np.full((self.classes, OVERLAPS.size), np.nan)
        for o in range(OVERLAPS.size):
            for k in range(self.classes):
                if not have_gt[k]:
                    continue
                if not have_pred[k]:
                    out[k, o] = 0.0
                    continue
                curve = self.curves[o][k]
                hard = float(w.dot(self.hard_fn[o][:, k]))
                out[k, o] = curve_ap(curve, w, hard)[0]
        return out


    def table_resampled(self, weights: Sequence[int]) -> np.ndarray:
        """table(weights) for a bootstrap resample, every curve at once: the same values
        (to about 1e-15: the sums are taken in another order). A confidence none of the
        resample's images holds is a group of weight 0, whose point repeats the next one's
        (or the artificial point (0, 1) above the highest): a repeated point adds nothing to
        the anchor's integral, so no group needs removing."""
        w = np.asarray(weights, dtype=np.float64)
        have_gt = w.dot(self.gt) > 0
        have_pred = w.dot(self.preds) > 0
        curves = self.start.size
        if self.all_image.size:   # every group has an example: reduceat's runs are non-empty
            n = np.add.reduceat(w[self.all_image], self.group_starts)
        else:
            n = np.zeros(self.total_groups)
        t = np.bincount(self.true_group, w[self.true_image], minlength=self.total_groups)
        n_above = np.append(np.cumsum(n[::-1])[::-1], 0.0)
        t_above = np.append(np.cumsum(t[::-1])[::-1], 0.0)
        at_or_above = n_above[:-1] - n_above[self.end][self.segment]
        tp = t_above[:-1] - t_above[self.end][self.segment]
        positives = t_above[self.start] - t_above[self.end] + w.dot(self.hard_all)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(at_or_above > 0, tp / np.where(at_or_above > 0, at_or_above, 1),
                                 1.0)
            recall = tp / np.where(positives > 0, positives, 1)[self.segment]
        first = np.zeros(self.total_groups, dtype=bool)
        first[self.start[self.start < self.end]] = True
        last = np.zeros(self.total_groups, dtype=bool)
        last[self.end[self.start < self.end] - 1] = True
        before = np.where(first, recall, np.roll(recall, 1))
        after = np.where(last, 0.0, np.roll(recall, -1))
        area = np.bincount(self.segment, precision * (before - after), minlength=curves)
        area += np.bincount(self.segment[last], recall[last], minlength=curves)
        values = (0.5 * area).reshape(OVERLAPS.size, self.classes).T
        out = np.where(have_pred[:, None], values, 0.0)
        return np.where(have_gt[:, None], out, np.nan)


def curve_ap(curve: Curve, w: np.ndarray, hard_fn: float
             ) -> Tuple[float, np.ndarray, np.ndarray]:
    """(AP, precision, recall) of one class at one overlap under image weights w."""
    we = w[curve.image]
    n = np.bincount(curve.group, we, minlength=curve.scores.size)
    t = np.bincount(curve.group, we * curve.true, minlength=curve.scores.size)
    present = n > 0
    if not present.any():
        return 0.0, np.ones(1), np.zeros(1)   # the anchor: IndexError
    n, t = n[present], t[present]
    at_or_above = np.cumsum(n[::-1])[::-1]
    tp = np.cumsum(t[::-1])[::-1]
    positives = tp[0] + hard_fn
    precision = np.append(tp / at_or_above, 1.0)
    recall = np.append(tp / positives, 0.0)
    widths = np.convolve(np.append(np.append(recall[0], recall), 0.0), [-0.5, 0, 0.5], "valid")
    return float(np.dot(precision, widths)), precision, recall


class Means(NamedTuple):
    ap: Optional[float]
    ap50: Optional[float]
    per_class: List[Tuple[Optional[float], Optional[float]]]   # (ap, ap50) per class


def means(table: np.ndarray) -> Means:
    """The anchor's computeAverages: a class's AP is the mean over the overlaps, its AP50 the
    value at 0.5; `ap` and `ap50` the means over the defined values (np.nanmean)."""
    per: List[Tuple[Optional[float], Optional[float]]] = []
    for k in range(table.shape[0]):
        if np.isnan(table[k, 0]):
            per.append((None, None))
        else:
            per.append((float(np.average(table[k])), float(table[k, 0])))
    defined = ~np.isnan(table[:, 0])
    if not defined.any():
        return Means(None, None, per)
    return Means(float(np.mean(table[defined])), float(np.mean(table[defined, 0])), per)
