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
model's sum of logs is kept exactly, as two or three floats (exact_partials), so the sum without
board k, fsum(parts + [-log_k]), is the correctly rounded exact sum of the other boards: bit for
bit what fsum over the other boards gives, for a sum of three numbers instead of M - 1.
"""
import functools
import math
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

EPS_DEFAULT = 1e-12


def s_value(rank: int, n: int) -> float:
    """max(0, 1 - (r - 1)/(N - 1)) = max(0, N - r)/(N - 1), correctly rounded (int division)."""
    if n < 2 or rank < 1:
        raise ValueError("need N >= 2 and r >= 1, got N={} r={}".format(n, rank))
    return max(0, n - rank) / (n - 1)


@functools.lru_cache(maxsize=None)
def s_table(n: int) -> List[float]:
    """s for r = 0 .. N + 1 (index 0 unused), as s_value gives it; look ranks up with
    table_index. Made once per N (do not modify the list)."""
    if n < 2:
        raise ValueError("need N >= 2, got N={}".format(n))
    d = n - 1
    table = [(n - r) / d for r in range(n + 1)]     # n - r >= 0 here: no max needed
    table[0] = 1.0
    table.append(0.0)                               # r = N + 1: max(0, -1) / (N - 1)
    return table


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


def exact_partials(values: List[float]) -> List[float]:
    """A few floats whose sum is exactly the sum of values: fsum(values), then the correctly
    rounded rest, fsum(values - what we have), until the rest is 0 (each step leaves less than
    half an ulp of the previous one: 2 or 3 parts in practice, never more than about 40). So
    fsum(exact_partials(v) + w) == fsum(v + w) for any list w: both round the same exact sum."""
    fsum = math.fsum
    parts = [fsum(values)]
    while True:
        rest = fsum(values + [-p for p in parts])
        if not rest:
            return parts
        parts.append(rest)


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


def _index_columns(boards: Sequence[Board], names: List[str]):
    """Per board, every model's rank (None: absent) and where it is in s_table (absent or a
    rank above N + 1 from a rank column: N + 1, s = 0)."""
    ranks, where = [], []
    for b in boards:
        last = b.n + 1
        column = list(map(b.ranks.get, names))
        ranks.append(column)
        where.append([last if r is None or r > last else r for r in column])
    return ranks, where


def rank_models(boards: Sequence[Board], eps: float = EPS_DEFAULT, min_leaderboards: int = 2,
                leave_one_out: bool = True) -> List[ModelResult]:
    """Every model on any board, ranked ones first (C descending, then name), then the others.

    Equal C share a rank (competition ranking); inside a tie the order is by name. With
    leave_one_out, each ranked model's rank_range over the M rankings without one board.
    """
    m = len(boards)
    names = sorted(set().union(*(b.ranks for b in boards)))
    s_tables = [s_table(b.n) for b in boards]
    log_eps = math.log(eps)
    log_tables = [[math.log(s) if s > eps else log_eps for s in table] for table in s_tables]
    rank_columns, where_columns = _index_columns(boards, names)
    # Looked up one board at a time (its tables stay in the CPU cache), then read per model.
    log_columns = [list(map(t.__getitem__, w)) for t, w in zip(log_tables, where_columns)]
    s_columns = [list(map(t.__getitem__, w)) for t, w in zip(s_tables, where_columns)]
    del where_columns
    results = []
    all_logs = []
    fsum = math.fsum
    for name, ranks, logs, s_values in zip(names, zip(*rank_columns), zip(*log_columns),
                                           zip(*s_columns)):
        low = min(s_values)
        if s_values.count(low) == 1:
            weakest: Tuple[int, ...] = (s_values.index(low),)
        else:
            weakest = tuple(i for i, s in enumerate(s_values) if s == low)
        results.append(ModelResult(name, _c(fsum(logs), m, eps), None, m - ranks.count(None),
                                   ranks, weakest))
        all_logs.append(logs)
    del rank_columns, log_columns, s_columns

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


def _leave_one_out(results: List[ModelResult], ranked: List[int], all_logs: List[Tuple[float, ...]],
                   m: int, eps: float, min_leaderboards: int):
    """(model index, (best, worst or None)) for every ranked model."""
    fsum, exp, m1 = math.fsum, math.exp, m - 1
    # Per ranked model, its C without each board in turn (None: unranked without it). A model
    # on more than min_leaderboards boards stays ranked whichever board is left out; one on
    # exactly min_leaderboards is unranked without any of its own boards.
    rows = []
    for j in ranked:
        logs = list(all_logs[j])
        parts = exact_partials(logs)
        row: List[Optional[float]]  # None once unranked, below
        row = [min(1.0, max(eps, exp(fsum(parts + [-x]) / m1))) for x in logs]
        r = results[j]
        if r.boards_present == min_leaderboards:
            row = [None if rank is not None else c for c, rank in zip(row, r.ranks)]
        rows.append(row)
    unranked = len(ranked) + 1          # above every rank: min() skips it, max() shows it
    rank_columns = []
    for column in zip(*rows):
        kept = [c for c in column if c is not None]
        ordered = sorted(kept, reverse=True)
        first: Dict[Optional[float], int] = {None: unranked}
        for pos, c in enumerate(ordered, 1):       # 1 + the number of higher values
            first.setdefault(c, pos)
        rank_columns.append(list(map(first.__getitem__, column)))
    del rows
    # Every ranked model is ranked without some board (one it is absent from, or, if it is on
    # all M, any of them: M - 1 >= min_leaderboards), so its best is a rank.
    out = []
    for j, ranks in zip(ranked, zip(*rank_columns)):
        worst = max(ranks)
        out.append((j, (min(ranks), None if worst == unranked else worst)))
    return out
