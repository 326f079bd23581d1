"""Is a pair of submissions different? Two tests of the ranked metric itself (pooled mIoU, IoU,
iIoU, VQA accuracy: never a per-image substitute), and Holm's step-down adjustment over every
pair of the map (docs/confidence.md).

- paired bootstrap test (Koehn 2004): in each paired resample d* = score_a - score_b; the
  two-sided p-value is 2 min(share of d* <= 0, share of d* >= 0), at most 1. Two identical
  submissions have d* = 0 everywhere: p = 1.
- approximate randomization (Noreen 1989; Riezler and Maxwell 2005; Dror et al. 2018): under
  "the two submissions are exchangeable", swapping the two predictions of any resampling unit
  changes nothing; each of R shuffles swaps every unit with probability 1/2 (the same shuffles
  for every pair: the swaps come from a stream that depends only on the number of units and the
  seed), and p = (1 + shuffles with |d| >= |d observed|) / (R + 1).
- Holm (1979): with K pairs and their p-values sorted, p_(i) is adjusted to
  max over j <= i of min(1, (K - j + 1) p_(j)); the pairs whose adjusted p <= alpha are marked,
  which keeps the probability of marking ANY pair of equally good submissions <= alpha.

bench/confidence.py measures both tests' error rates and power (bench/results-confidence.md).
"""
from typing import Any, List, Optional, Sequence

ALPHA = 0.05
SHUFFLES = 1000

Value = Optional[float]


def bootstrap_p(values_a: Sequence[Value], values_b: Sequence[Value]) -> Optional[float]:
    """The two-sided paired bootstrap p-value of score_a - score_b; None if any resample's
    score is undefined."""
    diffs = [x - y for x, y in zip(values_a, values_b) if x is not None and y is not None]
    if not values_a or len(diffs) != len(values_a):
        return None
    le = sum(1 for d in diffs if d <= 0)
    ge = sum(1 for d in diffs if d >= 0)
    return min(1.0, 2.0 * min(le, ge) / len(values_a))


def shifted_bootstrap_p(values_a: Sequence[Value], values_b: Sequence[Value],
                        observed: Value) -> Optional[float]:
    """The two-sided bootstrap test with the resampled differences shifted to the null
    (Efron and Tibshirani 1993, 16.4; Berg-Kirkpatrick et al. 2012): the share of resamples
    with |d* - d| >= |d|, d the observed difference."""
    diffs = [x - y for x, y in zip(values_a, values_b) if x is not None and y is not None]
    if not values_a or len(diffs) != len(values_a) or observed is None:
        return None
    far = sum(1 for d in diffs if abs(d - observed) >= abs(observed))
    return far / len(diffs)


def swap_masks(units: int, shuffles: int = SHUFFLES, seed: int = 2004):
    """(shuffles, units) 0/1 float array: which units swap their two predictions in each
    shuffle; MT19937 seeded with [seed] (numpy's legacy stream, the same on every version)."""
    import numpy as np
    state = np.random.RandomState([seed])
    return (state.random_sample(shuffles * units) < 0.5).astype(np.float64).reshape(
        shuffles, units)


def randomization_p(rows_a: Any, rows_b: Any, scores, masks: Any) -> Optional[float]:
    """Approximate randomization of the pair: rows_a, rows_b the two submissions' rows of the
    same units (int arrays), scores(sums) -> the ranked score; masks from swap_masks."""
    import numpy as np
    a = np.asarray(rows_a, dtype=np.int64)
    b = np.asarray(rows_b, dtype=np.int64)
    total_a, total_b = a.sum(axis=0), b.sum(axis=0)
    sa, sb = scores(total_a.tolist())[0], scores(total_b.tolist())[0]
    if sa is None or sb is None:
        return None
    observed = abs(sa - sb)
    # swapping a unit moves (b - a) from a's sums to b's: exact in float64 below 2**53
    moved = np.rint(masks.dot((b - a).astype(np.float64))).astype(np.int64)
    extreme = 0
    for m in moved.tolist():
        x = scores([int(t + v) for t, v in zip(total_a.tolist(), m)])[0]
        y = scores([int(t - v) for t, v in zip(total_b.tolist(), m)])[0]
        if x is None or y is None:
            return None
        # a tolerance of rounding: a shuffle as extreme as the data counts as extreme
        if abs(x - y) >= observed - 1e-12:
            extreme += 1
    return (1 + extreme) / (len(moved) + 1)


def holm(p_values: Sequence[Optional[float]]) -> List[Optional[float]]:
    """Holm-adjusted p-values in the given order (None stays None and is not counted)."""
    known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    k = len(known)
    out = [None] * len(p_values)  # type: List[Optional[float]]
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (k - rank) * p))
        out[i] = running
    return out
