"""The MaCVi consistency score, exactly as specified (docs/generalist.md), on plain data.

    r = the model's rank on board i if present, else N_i + 1
    s = max(0, 1 - (r - 1) / (N_i - 1))
    C = exp(mean_i log(max(eps, s)))

s is computed as an exact fraction and rounded once, so equal fractions on boards of different
sizes give the same float; the sum of logs uses math.fsum, which is correctly rounded and hence
independent of the order of the boards: two models with the same s values in any order get
bit-identical C (an exact tie, shown as a shared rank).
"""
import bisect
import math
from fractions import Fraction
from typing import Dict, List, NamedTuple, Optional, Sequence

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
    """max(0, 1 - (r - 1)/(N - 1)) = max(0, (N - r)/(N - 1)), from the exact fraction."""
    if n < 2 or rank < 1:
        raise ValueError("need N >= 2 and r >= 1, got N={} r={}".format(n, rank))
    return float(max(Fraction(0), Fraction(n - rank, n - 1)))


def consistency(s_values: Sequence[float], eps: float) -> float:
    """Geometric mean of max(eps, s), through logs summed with math.fsum.

    The result lies in [eps, 1] mathematically; the clamp only keeps a last-bit rounding of
    log/exp from stepping outside (every s = 0 gives eps up to that last bit).
    """
    if not s_values:
        raise ValueError("no leaderboards")
    mean_log = math.fsum(math.log(max(eps, s)) for s in s_values) / len(s_values)
    return min(1.0, max(eps, math.exp(mean_log)))


class Board(NamedTuple):
    """One leaderboard reduced to what the score needs: N and each model's rank."""
    name: str
    n: int
    ranks: Dict[str, int]


class Standing(NamedTuple):
    """One board's entry for one model: rank None when the model is absent (r = N + 1)."""
    rank: Optional[int]
    s: float


class ModelResult(NamedTuple):
    model: str
    consistency: float
    rank: Optional[int]            # None: on fewer boards than min_leaderboards
    boards_present: int
    standings: Dict[str, Standing]  # board name -> standing, every board
    weakest: str                    # the board with the lowest s (first in config order on a tie)


def _order(m: ModelResult):
    return (-m.consistency, m.model)


def rank_models(boards: Sequence[Board], eps: float = EPS_DEFAULT,
                min_leaderboards: int = 2) -> List[ModelResult]:
    """Every model on any board, ranked ones first (C descending, then name), then the others.

    Equal C share a rank (competition ranking); inside a tie the order is by name.
    """
    models = sorted({m for b in boards for m in b.ranks})
    results = []
    for model in models:
        standings: Dict[str, Standing] = {}
        for b in boards:
            r = b.ranks.get(model)
            standings[b.name] = Standing(r, s_value(b.n + 1 if r is None else r, b.n))
        s_list = [standings[b.name].s for b in boards]
        weakest = boards[s_list.index(min(s_list))].name
        present = sum(1 for b in boards if model in b.ranks)
        results.append(ModelResult(model, consistency(s_list, eps), None, present, standings,
                                   weakest))
    ranked = [m for m in results if m.boards_present >= min_leaderboards]
    unranked = [m for m in results if m.boards_present < min_leaderboards]
    ranked.sort(key=_order)
    unranked.sort(key=_order)
    scores = sorted(m.consistency for m in ranked)
    out = []
    for m in ranked:
        better = len(scores) - bisect.bisect_right(scores, m.consistency)
        out.append(m._replace(rank=1 + better))
    return out + unranked
