"""The MaCVi consistency score, exactly as specified (docs/generalist.md), on plain data.

    r = the model's rank on board i if present, else N_i + 1
    s = max(0, 1 - (r - 1) / (N_i - 1))
    C = exp(mean_i log(max(eps, s)))

s is max(0, N - r) / (N - 1) on Python ints, which int true division rounds correctly: the same
float as the exact fraction rounded once, so equal fractions on boards of different sizes give
the same float. The sum of logs uses math.fsum, which is correctly rounded and hence independent
of the order of the boards: two models with the same s values in any order get bit-identical C
(an exact tie, shown as a shared rank).

Leave-one-leaderboard-out: for every board k, the whole ranking is what the command would give
without board k (same eps and min_leaderboards; models then on fewer boards are unranked). Each
model's sum of logs is kept as its exact partials (Shewchuk), so the sum without board k,
fsum(partials + [-log_k]), is the correctly rounded exact sum of the other boards: bit for bit
what fsum over the other boards gives, at the cost of a few additions instead of M - 1.
"""
import bisect
import math
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

EPS_DEFAULT = 1e-12


def competition_ranks(values: Sequence, higher_is_better: bool) -> List[int]:
    """Standard competition ranking (1-2-2-4): 1 + the number of entries strictly better.

    values: exact numbers (Decimal or int), compared exactly, never within a tolerance.
    """
    ordered = sorted(values)
    n = len(ordered)
    if higher_is_better:
        return [1 + n - bisect.bisect_right(ordered, v) for v in values]
    return [1 + bisect.bisect_left(ordered, v) for v in values]


def s_value(rank: int, n: int) -> float:
    """max(0, 1 - (r - 1)/(N - 1)) = max(0, N - r)/(N - 1), correctly rounded (int division)."""
    if n < 2 or rank < 1:
        raise ValueError("need N >= 2 and r >= 1, got N={} r={}".format(n, rank))
    return max(0, n - rank) / (n - 1)


def s_table(n: int) -> List[float]:
    """s for r = 0 .. N + 1 (index 0 unused); look ranks up with table_index."""
    return [s_value(r, n) if r else 1.0 for r in range(n + 2)]


def table_index(rank: Optional[int], n: int) -> int:
    """Where a rank (None: absent) is in s_table(n): ranks above N + 1 (a rank column) are 0."""
    return n + 1 if rank is None or rank > n + 1 else rank


def consistency(s_values: Sequence[float], eps: float) -> float:
    """Geometric mean of max(eps, s), through logs summed with math.fsum.

    The result lies in [eps, 1] mathematically; the clamp only keeps a last-bit rounding of
    log/exp from stepping outside (every s = 0 gives eps up to that last bit).
    """
    if not s_values:
        raise ValueError("no leaderboards")
    return _c(math.fsum(math.log(max(eps, s)) for s in s_values), len(s_values), eps)


def _c(log_sum: float, m: int, eps: float) -> float:
    return min(1.0, max(eps, math.exp(log_sum / m)))


def exact_partials(values: Sequence[float]) -> List[float]:
    """Non-overlapping floats whose sum is exactly the sum of values (Shewchuk's algorithm, as
    in math.fsum): fsum(exact_partials(v) + w) == fsum(list(v) + w) for any w."""
    partials: List[float] = []
    for x in values:
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]
    return partials


class Board(NamedTuple):
    """One leaderboard reduced to what the score needs: N and each model's rank."""
    name: str
    n: int
    ranks: Dict[str, int]


class ModelResult(NamedTuple):
    model: str
    consistency: float
    rank: Optional[int]                 # None: on fewer boards than min_leaderboards
    boards_present: int
    ranks: Tuple[Optional[int], ...]    # per board, in the configuration's order; None: absent
    weakest: Tuple[int, ...]            # the boards (indices) with the model's lowest s
    # Best and worst rank over the leave-one-leaderboard-out rankings; worst None: unranked in
    # at least one of them. None for an unranked model, or when there is no such ranking
    # (M - 1 < min_leaderboards).
    rank_range: Optional[Tuple[int, Optional[int]]] = None


def leave_one_out_defined(n_boards: int, min_leaderboards: int) -> bool:
    """Without one board, can anyone still be ranked?"""
    return n_boards - 1 >= max(1, min_leaderboards)


def _competition_order(values: List[float]) -> List[int]:
    """Ranks of values, highest first, equal values sharing the best rank (1-2-2-4)."""
    order = sorted(range(len(values)), key=values.__getitem__, reverse=True)
    ranks = [0] * len(values)
    previous, rank = None, 0
    for pos, j in enumerate(order):
        if values[j] != previous:
            previous, rank = values[j], pos + 1
        ranks[j] = rank
    return ranks


def rank_models(boards: Sequence[Board], eps: float = EPS_DEFAULT, min_leaderboards: int = 2,
                leave_one_out: bool = True) -> List[ModelResult]:
    """Every model on any board, ranked ones first (C descending, then name), then the others.

    Equal C share a rank (competition ranking); inside a tie the order is by name. With
    leave_one_out, each ranked model's rank_range over the M rankings without one board.
    """
    m = len(boards)
    names = sorted(set().union(*(b.ranks for b in boards)))
    sizes = [b.n for b in boards]
    s_tables = [s_table(n) for n in sizes]
    log_tables = [[math.log(max(eps, s)) for s in table] for table in s_tables]
    lookups = [b.ranks.get for b in boards]
    results = []
    all_logs = []
    for name in names:
        ranks = tuple(get(name) for get in lookups)
        where = [table_index(r, n) for r, n in zip(ranks, sizes)]
        logs = [t[k] for t, k in zip(log_tables, where)]
        s_values = [t[k] for t, k in zip(s_tables, where)]
        low = min(s_values)
        weakest = tuple(i for i, s in enumerate(s_values) if s == low)
        results.append(ModelResult(name, _c(math.fsum(logs), m, eps), None,
                                   m - ranks.count(None), ranks, weakest))
        all_logs.append(logs)

    ranked = [j for j, r in enumerate(results) if r.boards_present >= min_leaderboards]
    values = [results[j].consistency for j in ranked]
    for j, rank in zip(ranked, _competition_order(values)):
        results[j] = results[j]._replace(rank=rank)
    if leave_one_out and leave_one_out_defined(m, min_leaderboards):
        for j, span in _leave_one_out(results, ranked, all_logs, m, eps, min_leaderboards):
            results[j] = results[j]._replace(rank_range=span)
    del all_logs
    ranked_set = set(ranked)
    order = sorted(range(len(results)),
                   key=lambda j: (j not in ranked_set, -results[j].consistency, names[j]))
    return [results[j] for j in order]


def _leave_one_out(results: List[ModelResult], ranked: List[int], all_logs: List[List[float]],
                   m: int, eps: float, min_leaderboards: int):
    """(model index, (best, worst or None)) for every ranked model."""
    partials = {j: exact_partials(all_logs[j]) for j in ranked}
    best: Dict[int, int] = {}
    worst: Dict[int, Optional[int]] = {}
    fsum, exp = math.fsum, math.exp
    for k in range(m):
        kept, values = [], []
        for j in ranked:
            r = results[j]
            if r.boards_present - (r.ranks[k] is not None) < min_leaderboards:
                worst[j] = None                      # unranked without board k
                continue
            c = exp(fsum(partials[j] + [-all_logs[j][k]]) / (m - 1))
            kept.append(j)
            values.append(min(1.0, max(eps, c)))
        for j, rank in zip(kept, _competition_order(values)):
            if j not in best or rank < best[j]:
                best[j] = rank
            if j not in worst or (worst[j] is not None and rank > worst[j]):
                worst[j] = rank
    # Every ranked model is ranked without some board (one it is absent from, or, if it is on
    # all M, any of them: M - 1 >= min_leaderboards), so best is always set.
    return [(j, (best[j], worst[j])) for j in ranked]
