"""challengeR's analysis of a ranking (Wiesenfarth et al., Scientific Reports 2021; the
package's R sources: rankingMethods.R, testBased.R, violin.R, consensus.R), on compare.py's
paired bootstrap:

- test-then-rank (testThenRank): a submission's prop_significance is the number of submissions
  it is significantly better than (the significance map's marks, pair_tests.py) divided by
  M - 1; ranks by it, higher first, ties sharing the best rank (ties.method = "min": 1-2-2-4);
- Kendall's tau (kendall.bootstrap.list): between the ranking and the ranking of each
  bootstrap resample, R's cor(method = "kendall"), i.e. tau-b (ties corrected); a resample in
  which every submission ties has none (NA in R) and is counted apart; summarised as challengeR
  prints it (mean, median, 25% and 75% quantiles, R's default type 7);
- consensus across tasks (consensus(method = "euclidean")): the Euclidean consensus of complete
  rankings is the order of the mean ranks over the tasks; ties share the best rank.
"""
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..ranks import competition_ranks

Value = Optional[float]
TAU_BLOCK_PAIRS = 1 << 21  # pairs of submissions compared at once by kendall_taus (16 MB)


def test_then_rank(names: Sequence[str], marked: Sequence[Tuple[str, str]]
                   ) -> List[Dict[str, Any]]:
    """Per submission (in names' order): wins, prop_significance, rank."""
    wins = {n: 0 for n in names}
    for a, _ in marked:
        wins[a] += 1
    m = len(names)
    props = [wins[n] / (m - 1) if m > 1 else 0.0 for n in names]
    ranks = competition_ranks(props)
    return [{"wins": wins[n], "prop_significance": p, "rank": r}
            for n, p, r in zip(names, props, ranks)]


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    """Kendall's tau-b of two equally long sequences, over all pairs (exact, O(n^2): n is the
    number of submissions); None when either has no two distinct values."""
    n = len(x)
    concordant = discordant = ties_x = ties_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0:
                ties_x += 1
            if dy == 0:
                ties_y += 1
            if dx * dy > 0:
                concordant += 1
            elif dx * dy < 0:
                discordant += 1
    return _tau_b(concordant, discordant, ties_x, ties_y, n * (n - 1) // 2)


def _tau_b(concordant: int, discordant: int, ties_x: int, ties_y: int,
           pairs: int) -> Optional[float]:
    denominator = math.sqrt(float(pairs - ties_x) * float(pairs - ties_y))
    return (concordant - discordant) / denominator if denominator > 0 else None


def kendall_taus(ranks: Sequence[int], per_resample: Sequence[Sequence[int]]
                 ) -> List[Optional[float]]:
    """kendall_tau_b(ranks, r) for every r of per_resample: the same integer counts, taken
    for a block of resamples at a time over the n (n - 1) / 2 pairs with numpy (200
    submissions: 19,900 pairs of each of 1,000 resamples), hence the same floats."""
    import numpy as np
    n = len(ranks)
    if n < 2:
        return [None] * len(per_resample)
    first, second = np.triu_indices(n, 1)
    x = np.asarray(ranks, dtype=np.int64)
    dx = np.sign(x[first] - x[second])
    ties_x = int((dx == 0).sum())
    pairs = len(first)
    block = max(1, TAU_BLOCK_PAIRS // pairs)
    out: List[Optional[float]] = []
    for start in range(0, len(per_resample), block):
        y = np.asarray(per_resample[start:start + block], dtype=np.int64).reshape(-1, n)
        dy = np.sign(y[:, first] - y[:, second])
        product = dy * dx[None, :]
        counts = zip((product > 0).sum(axis=1).tolist(), (product < 0).sum(axis=1).tolist(),
                     (dy == 0).sum(axis=1).tolist())
        out += [_tau_b(c, d, ties_x, t, pairs) for c, d, t in counts]
    return out


def quantile7(values: Sequence[float], p: float) -> float:
    """R's quantile(type = 7): linear between the order statistics at h = (n - 1) p."""
    ordered = sorted(values)
    h = (len(ordered) - 1) * p
    lo = int(math.floor(h))
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])


def kendall_summary(ranks: Sequence[int], per_resample: Sequence[Sequence[int]],
                    bins: int = 20) -> Dict[str, Any]:
    """Kendall's tau between the ranking and every resample's: challengeR's summary, the count
    of resamples without one, and a histogram over [-1, 1] in `bins` equal bins (the last one
    closed)."""
    taus = kendall_taus(ranks, per_resample)
    known = [t for t in taus if t is not None]
    histogram = [0] * bins
    for t in known:
        histogram[min(bins - 1, int(math.floor((t + 1.0) / 2.0 * bins)))] += 1
    out: Dict[str, Any] = {"resamples": len(taus), "undefined": len(taus) - len(known),
                           "histogram": histogram}
    if known:
        out.update({"mean": sum(known) / len(known), "median": quantile7(known, 0.5),
                    "q25": quantile7(known, 0.25), "q75": quantile7(known, 0.75)})
    else:
        out.update({"mean": None, "median": None, "q25": None, "q75": None})
    return out


def consensus(rankings: Dict[str, Dict[str, int]]) -> Dict[str, Any]:
    """rankings: task -> {submission: rank}. The submissions ranked in every task, by mean rank
    (lower first; ties share the best rank); the others are listed apart (a consensus of
    complete rankings only, as challengeR requires)."""
    tasks = sorted(rankings)
    everywhere = set.intersection(*[set(rankings[t]) for t in tasks]) if tasks else set()
    names = sorted(everywhere)
    means = [sum(rankings[t][n] for t in tasks) / len(tasks) for n in names]
    ranks = competition_ranks([-m for m in means])
    order = sorted(range(len(names)), key=lambda k: (ranks[k], names[k]))
    return {"method": "euclidean (mean rank over the tasks)", "tasks": tasks,
            "ranking": [{"model": names[k], "mean_rank": means[k], "rank": ranks[k],
                         "ranks": {t: rankings[t][names[k]] for t in tasks}} for k in order],
            "left_out": sorted(set().union(*[set(r) for r in rankings.values()]) - everywhere)
            if tasks else []}
