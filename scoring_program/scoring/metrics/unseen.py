"""What a test set cannot show: the terms of a per-class mean (mIoU, iIoU) for which it holds no
evidence, and the interval that allows them any value (docs/confidence.md, "Classes the test
set does not show").

A class with no reference pixel in the test set scores IoU 0 whatever the predictions (or, if
nothing predicts it either, drops out of the mean), while the population the test set is drawn
from has it with some IoU the test set cannot tell. No resampling of the test set can show
that value, so the interval lets it be anything: a partial identification (Manski 2003) of the
population's mean, wide exactly as far as the test set is blind.
"""
from typing import Sequence, Tuple


def blind_terms(reference: Sequence[float], union: Sequence[float]) -> Tuple[int, int, int]:
    """(terms of the mean, unseen, missing) from per class its reference count (pixels;
    instances) and its union (or denominator): unseen classes are in the mean at 0 without a
    reference pixel, missing ones are out of it (nothing to divide by)."""
    terms = sum(1 for u in union if u)
    unseen = sum(1 for r, u in zip(reference, union) if u and not r)
    missing = sum(1 for u in union if not u)
    return terms, unseen, missing


def open_mean(ends: Tuple[float, float], terms: int, unseen: int, missing: int,
              term_bounds: Tuple[float, float] = (0.0, 1.0)) -> Tuple[float, float]:
    """The interval of a mean of per-class terms (mIoU, iIoU) when the test set holds no
    evidence for some of them: `unseen` of its `terms` terms score term_bounds[0] only because
    the class has no reference pixel (its IoU is 0 whatever the prediction), and `missing`
    classes of the population are left out of the mean (neither referenced nor predicted).
    Each such term may have any value in its range, so the interval becomes
    ((terms lo + missing low) / (terms + missing),
     (terms hi + unseen (high - low) + missing high) / (terms + missing))."""
    low, high = term_bounds
    lo, hi = ends
    total = terms + missing
    if not (unseen or missing) or total == 0:
        return ends
    lo2 = (terms * lo + missing * low) / total
    hi2 = (terms * hi + unseen * (high - low) + missing * high) / total
    return lo2, hi2
