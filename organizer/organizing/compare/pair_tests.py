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
import math
from typing import Any, List, Optional, Sequence, Tuple

ALPHA = 0.05
SHUFFLES = 1000
BLOCK_DRAWS = 1 << 19  # random numbers drawn at once for the swap masks (4 MB)

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
    extreme = randomization_count(rows_a, rows_b, scores, masks)
    return None if extreme is None else (1 + extreme) / (len(masks) + 1)


def randomization_count(rows_a: Any, rows_b: Any, scores, masks: Any) -> Optional[int]:
    """How many of the shuffles (masks) give a difference at least as large as observed; None
    if a score is undefined."""
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
    return extreme


def shuffles_for(pairs: int, alpha: float = ALPHA) -> int:
    """Shuffles enough for the smallest p-value, 1 / (R + 1), to pass Holm's first step
    (alpha / pairs) with a margin of 2: max(SHUFFLES, 2 pairs / alpha)."""
    return max(SHUFFLES, int(math.ceil(2 * pairs / alpha)))


def masked_sums(tables: List[Any], shuffles: int, seed: int = 2004) -> List[Any]:
    """Per table, the (shuffles, width) int64 sums of its rows over the units each shuffle
    swaps: swapping the units of a mask moves masks . (b - a) = masks . b - masks . a from a's
    sums to b's, so one product per model serves every pair. The masks are those of swap_masks
    (the same stream), drawn in blocks of about BLOCK_DRAWS numbers, never all at once (VQA:
    100,000 questions x 7,600 shuffles)."""
    import numpy as np
    units = tables[0].shape[0]
    exact = [np.asarray(t, dtype=np.int64).astype(np.float64) for t in tables]
    out = [np.zeros((shuffles, t.shape[1]), dtype=np.int64) for t in exact]
    state = np.random.RandomState([seed])
    rows = max(1, BLOCK_DRAWS // max(units, 1))
    for start in range(0, shuffles, rows):
        b = min(rows, shuffles - start)
        block = (state.random_sample(b * units) < 0.5).astype(np.float64).reshape(b, units)
        for table, sums in zip(exact, out):
            # float64 is exact: every sum is an integer below 2**53 (the rows' totals are)
            sums[start:start + b] = np.rint(block.dot(table)).astype(np.int64)
    return out


def randomization_tests(tables: List[Any], scores, seed: int = 2004,
                        alpha: float = ALPHA) -> List[Tuple[Optional[float], bool]]:
    """Approximate randomization of every pair (a < b) of the tables (each model's rows of the
    same units), with the same shuffles for every pair: per pair (p, complete). A pair stops
    early, in blocks of STOP_BLOCK shuffles, once (1 + extreme) / (R + 1) > alpha: it can no
    longer pass any step of Holm's procedure (whose largest threshold is alpha), so the marks
    are those of the full run; its p is then the estimate from the shuffles drawn
    (complete = False)."""
    import numpy as np
    m = len(tables)
    keys = [(a, b) for a in range(m) for b in range(a + 1, m)]
    if not keys:
        return []
    total = shuffles_for(len(keys), alpha)
    swapped = masked_sums(tables, total, seed)
    totals = [np.asarray(t, dtype=np.int64).sum(axis=0).tolist() for t in tables]
    out: List[Tuple[Optional[float], bool]] = []
    for a, b in keys:
        result = _pair(totals[a], totals[b], swapped[b] - swapped[a], scores, total, alpha)
        out.append(result)
    return out


def _pair(total_a: List[int], total_b: List[int], moved: Any, scores, total: int,
          alpha: float) -> Tuple[Optional[float], bool]:
    sa, sb = scores(total_a)[0], scores(total_b)[0]
    if sa is None or sb is None:
        return None, True
    observed = abs(sa - sb)
    extreme = used = 0
    for start in range(0, total, STOP_BLOCK):
        for m in moved[start:start + STOP_BLOCK].tolist():
            x = scores([t + v for t, v in zip(total_a, m)])[0]
            y = scores([t - v for t, v in zip(total_b, m)])[0]
            if x is None or y is None:
                return None, True
            # a tolerance of rounding: a shuffle as extreme as the data counts as extreme
            if abs(x - y) >= observed - 1e-12:
                extreme += 1
        used = min(total, start + STOP_BLOCK)
        if (1 + extreme) / (total + 1) > alpha and used < total:
            return (1 + extreme) / (used + 1), False
    return (1 + extreme) / (total + 1), True


STOP_BLOCK = 200


def holm(p_values: Sequence[Optional[float]]) -> List[Optional[float]]:
    """Holm-adjusted p-values in the given order (None stays None and is not counted)."""
    known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    k = len(known)
    out: List[Optional[float]] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (k - rank) * p))
        out[i] = running
    return out
