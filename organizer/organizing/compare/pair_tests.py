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
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .family import every_pair

ALPHA = 0.05
SHUFFLES = 1000
SEED = 2004
# doubles drawn at once for the swap masks, and the bound on each block's sums (4 MB each)
BLOCK_DRAWS = 1 << 19

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


def shuffles_for(pairs: int, alpha: float = ALPHA) -> int:
    """Shuffles enough for the smallest p-value, 1 / (R + 1), to pass Holm's first step
    (alpha / pairs) with a margin of 2: max(SHUFFLES, 2 pairs / alpha)."""
    return max(SHUFFLES, int(math.ceil(2 * pairs / alpha)))


def swap_mask_blocks(units: int, shuffles: int, seed: int = SEED, rows: int = 0):
    """The swap masks of the randomization test, a block of shuffles at a time: (index of the
    block's first shuffle, masks[b, units] of 0.0 and 1.0). One MT19937 stream seeded with
    [seed] (numpy's legacy RandomState, the same on every version; Python's
    random.Random(seed).random() gives the same doubles) is read in order: for each shuffle,
    for each unit in order, one double u; the unit's two predictions are swapped when u < 0.5.
    rows: shuffles per block (default: about BLOCK_DRAWS doubles); the masks do not depend on
    it."""
    import numpy as np
    state = np.random.RandomState([seed])
    rows = rows or max(1, BLOCK_DRAWS // max(units, 1))
    for start in range(0, shuffles, rows):
        b = min(rows, shuffles - start)
        yield start, (state.random_sample(b * units) < 0.5).astype(np.float64).reshape(b, units)


class _Running:
    """One pair's count while its shuffles are drawn."""

    def __init__(self, a: int, b: int, observed: float) -> None:
        self.a, self.b, self.observed = a, b, observed
        self.extreme = 0
        self.result: Optional[Tuple[Optional[float], bool]] = None  # (p, complete) once ended


def randomization_tests(tables: List[Any], scores, seed: int = SEED, alpha: float = ALPHA,
                        pairs: Optional[Sequence[Tuple[int, int]]] = None,
                        rows: int = 0) -> List[Tuple[Optional[float], bool]]:
    """Approximate randomization of the pairs (a, b) of the tables (each model's rows of the
    same units, in the same order; default: every pair a < b), all with the same R =
    shuffles_for(len(pairs)) shuffles (swap_mask_blocks): per pair (p, complete), in the
    order of pairs; p None if a score is undefined.

    A shuffle moves masks . (b - a) from a's column sums to b's; its statistic is
    |score(a's sums) - score(b's sums)|, extreme when >= the observed one - 1e-12 (a tolerance of
    rounding: a shuffle giving the data's sums, or their mirror image, counts as extreme).
    p = (1 + extreme) / (R + 1).

    Early stop: after every STOP_BLOCK shuffles (200, 400, ..., before R), a pair whose
    (1 + extreme) / (R + 1) already exceeds alpha can pass no step of Holm's procedure (its
    largest threshold is alpha): it stops, its mark is the full run's (none), and its p is the
    estimate (1 + extreme) / (used + 1) from the `used` shuffles drawn (complete False).

    Memory is bounded whatever the number of models, pairs and shuffles: the masks are drawn
    a block of `rows` shuffles at a time, and each block's sums are worked out for the models
    of the pairs still running only; both take about BLOCK_DRAWS numbers (4 MB). The results do
    not depend on the block size (rows)."""
    import numpy as np
    keys = every_pair(len(tables)) if pairs is None else list(pairs)
    if not keys:
        return []
    if len(set(keys)) != len(keys):
        raise ValueError("a pair is tested once")
    total = shuffles_for(len(keys), alpha)
    arrays = [np.asarray(t, dtype=np.int64).reshape(len(t), -1) for t in tables]
    totals = [a.sum(axis=0) for a in arrays]
    points = [scores(t.tolist())[0] for t in totals]
    tested = [_Running(a, b, abs(points[a] - points[b])) for a, b in keys
              if points[a] is not None and points[b] is not None]
    running = list(tested)
    units, width = arrays[0].shape
    involved = len(set(m for p in running for m in (p.a, p.b)))
    rows = rows or max(1, BLOCK_DRAWS // max(units, involved * width, 1))
    # float64 products are exact (and fast) while every sum is an integer below 2**53
    exact = all(int(np.abs(a).sum()) < 1 << 53 for a in arrays)
    side = _Side(arrays, exact)
    for start, masks in swap_mask_blocks(units, total, seed, rows):
        if not running:
            break
        moved = side.masked(masks, sorted(set(m for p in running for m in (p.a, p.b))))
        for pair in running:
            _count(pair, totals, moved[pair.b] - moved[pair.a], start, total, scores, alpha)
        running = [p for p in running if p.result is None]
    for pair in running:
        pair.result = ((1 + pair.extreme) / (total + 1), True)
    results = {(p.a, p.b): p.result for p in tested}
    return [results.get(k) or (None, True) for k in keys]


class _Side:
    """The tables of the models still tested, side by side: one matrix product per block of
    masks gives every such model's swapped sums (a product per model of 18 columns would use
    the machine a tenth as well)."""

    def __init__(self, arrays: List[Any], exact: bool) -> None:
        self.arrays, self.exact = arrays, exact
        self.models: List[int] = []
        self.wide: Any = None

    def masked(self, masks: Any, models: List[int]) -> Dict[int, Any]:
        """{model: masks . its table}: per shuffle of the block, the column sums of the units
        it swaps."""
        import numpy as np
        width = self.arrays[0].shape[1]
        if models != self.models:  # pairs ended: fewer models to multiply
            self.wide = None  # the old one freed first
            self.wide = np.empty((self.arrays[0].shape[0], len(models) * width),
                                 dtype=np.float64 if self.exact else np.int64)
            for k, m in enumerate(models):  # in place: no second copy of each table
                self.wide[:, k * width:(k + 1) * width] = self.arrays[m]
            self.models = models
        if self.exact:
            sums = np.rint(masks.dot(self.wide)).astype(np.int64)
        else:
            sums = masks.astype(np.int64).dot(self.wide)
        return {m: sums[:, k * width:(k + 1) * width] for k, m in enumerate(models)}


def _count(pair: _Running, totals: List[Any], moved: Any, start: int, total: int, scores,
           alpha: float) -> None:
    """Count a block of shuffles (the first is shuffle `start`) for one running pair, checking
    the early stop after each STOP_BLOCK-th shuffle."""
    a_sums = (totals[pair.a] + moved).tolist()
    b_sums = (totals[pair.b] - moved).tolist()
    threshold = pair.observed - 1e-12
    for i, (x_sums, y_sums) in enumerate(zip(a_sums, b_sums)):
        x, y = scores(x_sums)[0], scores(y_sums)[0]
        if x is None or y is None:
            pair.result = (None, True)
            return
        if abs(x - y) >= threshold:
            pair.extreme += 1
        used = start + i + 1
        if used % STOP_BLOCK == 0 and used < total and \
                (1 + pair.extreme) / (total + 1) > alpha:
            pair.result = ((1 + pair.extreme) / (used + 1), False)
            return


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
