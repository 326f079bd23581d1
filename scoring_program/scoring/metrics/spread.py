"""The bootstrap's resamples with each one's own standard error: what the studentized
(bootstrap-t) interval needs (confidence.py, docs/confidence.md).

A resample's score is a function f of its column sums S = sum_u w_u x_u (w_u: how often unit u
is drawn, x_u its row). Linearized at S, f moves by g . x_u per unit (g = the gradient of f at
S, the task's Resampling.gradient), so the variance of the score over resamples of that
resample is estimated by

    spread(S) = sum_u w_u (g . x_u)^2 - (sum_u w_u g . x_u)^2 / n,   n = sum_u w_u

(the delta method, or infinitesimal jackknife; for a ratio of sums such as an IoU the second
term is 0). The draws are those of bootstrap.resample_sums, replayed through the same three
paths (unit draws in numpy, in pure Python, or group counts), so the sums given back are
exactly resample_sums' and the intervals of tasks without a gradient are unchanged.

Floats: g . x_u is summed over the columns in column order with elementwise numpy operations
(no BLAS, whose summation order may differ between machines), and the sums over units are
numpy's or Python's own, in unit order.
"""
import random
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, cast

from . import bootstrap

# column sums -> per key the gradient of its score at these sums (None: the key is undefined)
Gradient = Callable[[Sequence[int]], Sequence[Optional[Sequence[float]]]]
Spreads = List[List[Optional[float]]]  # per resample, per key


def spread_of(rows: Sequence[Sequence[int]], weights: Sequence[int],
              gradients: Sequence[Optional[Sequence[float]]]) -> List[Optional[float]]:
    """spread() of one weighting of the rows, per key, in pure Python."""
    n = sum(weights)
    out: List[Optional[float]] = []
    for g in gradients:
        if g is None or not n:
            out.append(None)
            continue
        s1 = s2 = 0.0
        for row, w in zip(rows, weights):
            if w:
                phi = 0.0
                for v, d in zip(row, g):
                    phi += v * d
                s1 += w * phi
                s2 += w * phi * phi
        out.append(max(s2 - s1 * s1 / n, 0.0))
    return out


def _spreads_numpy(table, counts, sums: Sequence[Sequence[int]], gradient: Gradient,
                   keys: int) -> Spreads:
    """spread() of each resample of a block: table (units x width) float64, counts (b x
    units)."""
    import numpy as np
    b, width = counts.shape[0], table.shape[1]
    grads = [gradient(s) for s in sums]
    weights = counts.astype(np.float64)
    n = weights.sum(axis=1)
    out: Spreads = [[None] * keys for _ in range(b)]
    for k in range(keys):
        defined = [r for r in range(b) if grads[r][k] is not None]
        if not defined:
            continue
        g = np.array([list(cast(Sequence[float], grads[r][k])) for r in defined],
                     dtype=np.float64)  # (defined resamples x width)
        phi = np.zeros((len(defined), table.shape[0]))
        for j in range(width):  # column by column: the same order on every machine
            phi += g[:, j:j + 1] * table[:, j][None, :]
        w = weights[defined]
        s1 = (w * phi).sum(axis=1)
        s2 = (w * phi * phi).sum(axis=1)
        values = s2 - s1 * s1 / n[defined]
        for r, v in zip(defined, values.tolist()):
            out[r][k] = max(v, 0.0)
    return out


def resample_spreads(gradient: Gradient, keys: int, rows: Any = None,
                     resamples: int = bootstrap.RESAMPLES, seed: int = bootstrap.SEED,
                     groups: Optional[dict] = None,
                     rows_of: Optional[Callable[[], Any]] = None
                     ) -> Tuple[bootstrap.Sums, Spreads]:
    """(bootstrap.resample_sums of the same arguments, per resample and key its spread)."""
    if groups is None and hasattr(rows, "dtype"):
        import numpy as np
        table = np.asarray(rows, dtype=np.int64).reshape(len(rows), -1)
        n = table.shape[0]
        distinct = len(np.unique(table, axis=0)) if n else 0
        if not bootstrap.uses_groups(n, distinct):
            return _unit_numpy(table, gradient, keys, resamples, seed)
        groups = bootstrap.distinct_rows(table)
    if groups is None:
        groups = bootstrap.distinct_rows(rows)
    n = sum(groups.values())
    if bootstrap.uses_groups(n, len(groups)):
        ordered, drawn = bootstrap.group_counts(groups, resamples, seed)
        sums = bootstrap.sums_of_counts(ordered, drawn)
        return sums, [spread_of(ordered, c, gradient(s)) for c, s in zip(drawn, sums)]
    if rows is None:
        assert rows_of is not None, "groups without rows need rows_of"
        rows = rows_of()
    if hasattr(rows, "dtype"):
        import numpy as np
        return _unit_numpy(np.asarray(rows, dtype=np.int64).reshape(len(rows), -1), gradient,
                           keys, resamples, seed)
    return _unit_python([tuple(r) for r in rows], gradient, resamples, seed)


def _unit_python(rows: List[Tuple[int, ...]], gradient: Gradient, resamples: int, seed: int
                 ) -> Tuple[bootstrap.Sums, Spreads]:
    """bootstrap.unit_sums' draws (unit int(u n) of the stream), counted per distinct row:
    equal rows move a resample's score equally, so the sums and the spread are worked out
    over the distinct rows (the same integers as unit_sums', in less time)."""
    index: Dict[Tuple[int, ...], int] = {}
    of_unit = [index.setdefault(r, len(index)) for r in rows]
    distinct = list(index)
    n, width = len(rows), len(rows[0]) if rows else 0
    rand = random.Random(seed).random
    sums: bootstrap.Sums = []
    spreads: Spreads = []
    for _ in range(resamples):
        counts = [0] * len(distinct)
        for _ in range(n):
            counts[of_unit[int(rand() * n)]] += 1
        total = [sum(c * row[j] for c, row in zip(counts, distinct) if c) for j in range(width)]
        sums.append(total)
        spreads.append(spread_of(distinct, counts, gradient(total)))
    return sums, spreads


def _unit_numpy(table, gradient: Gradient, keys: int, resamples: int, seed: int
                ) -> Tuple[bootstrap.Sums, Spreads]:
    import numpy as np
    sums = bootstrap.unit_sums_of_tables([table], resamples, seed)[0]
    n = table.shape[0]
    if n == 0:
        return sums, [[None] * keys for _ in range(resamples)]
    as_float = table.astype(np.float64)
    spreads: Spreads = []
    for start, counts in bootstrap.unit_count_blocks(n, resamples, seed):
        spreads += _spreads_numpy(as_float, counts, sums[start:start + len(counts)], gradient,
                                  keys)
    return sums, spreads


def full_spread(gradient: Gradient, total: Sequence[int], rows: Any = None,
                groups: Optional[dict] = None) -> List[Optional[float]]:
    """spread() of the test set itself (every unit once): of its rows, or of its distinct rows
    weighted by how many units have each."""
    if groups is not None:
        ordered = sorted(groups)
        return spread_of(ordered, [groups[r] for r in ordered], gradient(total))
    if hasattr(rows, "dtype"):
        import numpy as np
        table = np.asarray(rows, dtype=np.int64).reshape(len(rows), -1)
        ones = np.ones((1, table.shape[0]), dtype=np.int64)
        grads = gradient(total)
        return _spreads_numpy(table.astype(np.float64), ones, [total], lambda _: grads,
                              len(grads))[0]
    rows = [tuple(r) for r in rows]
    return spread_of(rows, [1] * len(rows), gradient(total))
