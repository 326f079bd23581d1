"""Bootstrap resamples of test units (the interval itself: confidence.py), drawn the same way
on every platform and numpy version (docs/confidence.md).

A task's score is a function of the column sums of per-unit rows of integers (an image's true
positives and union per class; a question's accuracy numerator), or else is scored again from
per-unit records (task_api.Rescoring). A resample draws n units with replacement from the n test
units; it is fully described by how many times each unit is drawn (unit_weights), and its score
is the task's function of the column sums weighted by those counts (or its re-scoring with
those weights). Pixels are never resampled, only units.

Randomness: one MT19937 stream seeded with [seed]. numpy's legacy RandomState guarantees its
stream across versions (NEP 19), and Python's random module guarantees random() for an integer
seed: random.Random(s).random() and numpy.random.RandomState([s]).random_sample() give the very
same doubles, so the numpy path and the pure-Python path draw the same resamples.

Two samplers, both with exactly the distribution of drawing n units with replacement:
- units: per resample, n draws j = floor(u * n) into the units in their given (sorted) order;
- groups: when the rows take few distinct values (k * GROUP_FACTOR <= n; the accuracies of
  100,000 questions take about 5), units with identical rows are interchangeable: the counts of
  the k distinct rows (in ascending order) are Multinomial(n, size / n), drawn as a chain of
  binomials c_g ~ Binomial(n - drawn so far, size_g / units not yet assigned). Cost B * k draws
  instead of B * n, in pure Python (no numpy import on the VQA path).
The choice depends only on n and the rows, so the same input always gets the same interval.
"""
import math
import random
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

SEED = 2004          # Koehn's paired bootstrap, EMNLP 2004
RESAMPLES = 1000
LEVEL_PERMILLE = 950  # a 95% interval
# The group sampler is used when the distinct rows are at most n / GROUP_FACTOR: a binomial
# draw in Python costs about as much as GROUP_FACTOR unit draws in numpy.
GROUP_FACTOR = 64
# Units x resamples drawn at once by the numpy sampler (memory: about 4 arrays of this many
# 8-byte numbers, 16 MB).
BLOCK_DRAWS = 1 << 19

Row = Tuple[int, ...]
Sums = List[List[int]]  # per resample, the column sums


# --- binomial draws (pure Python, exact up to floating point) ---------------------------------

def binomial(rand: Callable[[], float], n: int, p: float) -> int:
    """One draw of Binomial(n, p) from the uniform stream rand(): inversion when n * p < 10,
    else Hormann's BTRS (transformed rejection with squeeze, 1993), whose cost does not grow
    with n."""
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p > 0.5:
        return n - binomial(rand, n, 1.0 - p)
    q = 1.0 - p
    if n * p < 10.0:
        return _inversion(rand, n, p, q)
    spq = math.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    alpha: Optional[float] = None
    lpq = h = 0.0  # set with alpha, below, before any use; so is m
    m = 0
    while True:
        u = rand() - 0.5
        v = rand()
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= vr:
            return k
        if alpha is None:  # the exact test's constants, needed for a few draws only
            alpha = (2.83 + 5.1 / b) * spq
            lpq = math.log(p / q)
            m = math.floor((n + 1) * p)
            h = math.lgamma(m + 1) + math.lgamma(n - m + 1)
        v = math.log(v * alpha / (a / (us * us) + b))
        if v <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - m) * lpq:
            return k


def _inversion(rand: Callable[[], float], n: int, p: float, q: float) -> int:
    """Sequential search of the cdf from 0; a u left over after x = n (round-off) is drawn
    again, so the result is exact conditionally on the floats."""
    s = p / q
    a = (n + 1) * s
    while True:
        r = q ** n
        u = rand()
        x = 0
        while u > r and x < n:
            u -= r
            x += 1
            r *= a / x - s
        if u <= r:
            return x


# --- the two samplers -------------------------------------------------------------------------

def distinct_rows(rows: Any) -> Dict[Row, int]:
    """{row: units having it}."""
    if hasattr(rows, "tolist"):
        rows = rows.tolist()
    return Counter(tuple(r) for r in rows)


def uses_groups(n: int, distinct: int) -> bool:
    return distinct * GROUP_FACTOR <= n


def group_counts(groups: Dict[Row, int], resamples: int = RESAMPLES,
                 seed: int = SEED) -> Tuple[List[Row], List[List[int]]]:
    """(the distinct rows in ascending order, per resample how many units of each are drawn)."""
    ordered = sorted(groups)
    n = sum(groups.values())
    rand = random.Random(seed).random
    out = []
    for _ in range(resamples):
        counts = [0] * len(ordered)
        left_n, left_units = n, n
        for g, row in enumerate(ordered):
            if not left_n:
                break
            size = groups[row]
            c = left_n if g == len(ordered) - 1 else binomial(rand, left_n, size / left_units)
            left_n -= c
            left_units -= size
            counts[g] = c
        out.append(counts)
    return ordered, out


def group_sums(groups: Dict[Row, int], resamples: int = RESAMPLES, seed: int = SEED) -> Sums:
    """Column sums of each resample, from the distinct rows and how many units have each."""
    return sums_of_counts(*group_counts(groups, resamples, seed))


def sums_of_counts(ordered: List[Row], drawn: List[List[int]]) -> Sums:
    """Per resample, the column sums of the distinct rows weighted by their counts."""
    width = len(ordered[0]) if ordered else 0
    return [[sum(c * row[j] for c, row in zip(counts, ordered) if c) for j in range(width)]
            for counts in drawn]


def unit_indices(n: int, resamples: int = RESAMPLES, seed: int = SEED):
    """The drawn unit indices of each resample (a generator of lists), in pure Python."""
    rand = random.Random(seed).random
    for _ in range(resamples):
        yield [int(rand() * n) for _ in range(n)]


def unit_sums(rows: Any, resamples: int = RESAMPLES, seed: int = SEED) -> Sums:
    """Column sums of each resample drawn unit by unit: numpy for an array of rows (the same
    draws, in blocks), pure Python for a list of rows."""
    if hasattr(rows, "dtype"):
        return _unit_sums_numpy(rows, resamples, seed)
    rows = [tuple(r) for r in rows]
    width = len(rows[0]) if rows else 0
    out = []
    for drawn in unit_indices(len(rows), resamples, seed):
        sums = [0] * width
        for j in drawn:
            for c, v in enumerate(rows[j]):
                sums[c] += v
        out.append(sums)
    return out


def _unit_sums_numpy(rows, resamples: int, seed: int) -> Sums:
    return unit_sums_of_tables([rows], resamples, seed)[0]


def unit_sums_of_tables(tables: List[Any], resamples: int = RESAMPLES, seed: int = SEED,
                        each: Optional[Callable[[List[int]], Any]] = None) -> List[List[Any]]:
    """unit_sums of several numpy tables of the same units with the SAME draws (one stream):
    for each table, the column sums of each resample; or, with each, each(those sums) (a
    score) instead of them, so that the sums of many tables never exist at once: the tables
    side by side are multiplied by a block of resamples' counts at a time (one matrix product
    for all the tables, about BLOCK_DRAWS sums), then each table's sums are handed to each."""
    import numpy as np
    keep = each if each is not None else (lambda sums: sums)
    n = tables[0].shape[0]
    if n == 0:
        return [[keep([0] * t.shape[1]) for _ in range(resamples)] for t in tables]
    dtypes = []
    for rows in tables:
        if rows.dtype.kind not in "iub":
            raise TypeError("bootstrap rows must be integers")
        peak = int(np.abs(rows).max()) * n if rows.size else 0  # bounds every column sum
        if peak >= 1 << 62:
            raise OverflowError("bootstrap sums would overflow int64")
        # float64 is exact while every partial sum is an integer < 2**53 (and uses BLAS)
        dtypes.append(np.dtype(np.float64 if peak < 1 << 53 else np.int64))
    widths = [t.shape[1] for t in tables]
    out: List[List[Any]] = [[] for _ in tables]
    # the tables of one dtype side by side, filled in place (no second copy of each):
    # (the wide table, [(table, its first column)])
    sides: List[Tuple[Any, List[Tuple[int, int]]]] = []
    for dtype in sorted(set(dtypes), key=str):
        kind = [k for k, d in enumerate(dtypes) if d == dtype]
        wide = np.empty((n, sum(widths[k] for k in kind)), dtype=dtype)
        columns, start = [], 0
        for k in kind:
            wide[:, start:start + widths[k]] = tables[k]
            columns.append((k, start))
            start += widths[k]
        sides.append((wide, columns))
    for _, counts in unit_count_blocks(n, resamples, seed):
        for wide, columns in sides:
            weights = counts.astype(wide.dtype)
            rows = max(1, BLOCK_DRAWS // wide.shape[1])
            for first in range(0, len(weights), rows):
                block_sums = weights[first:first + rows].dot(wide)
                for k, start in columns:
                    part = block_sums[:, start:start + widths[k]].tolist()
                    out[k].extend(keep([int(v) for v in s]) for s in part)
    return out


def unit_count_blocks(n: int, resamples: int = RESAMPLES, seed: int = SEED):
    """The unit draws in numpy, a block of resamples at a time: (index of the block's first
    resample, counts[b, n]: how often each unit is drawn). The array is reused between blocks."""
    import numpy as np
    state = np.random.RandomState([seed])
    block = max(1, BLOCK_DRAWS // n)
    counts = np.empty((min(block, resamples), n), dtype=np.int64)
    for start in range(0, resamples, block):
        b = min(block, resamples - start)
        drawn = state.random_sample(b * n)
        drawn *= n
        drawn = drawn.astype(np.intp).reshape(b, n)
        for i in range(b):
            counts[i] = np.bincount(drawn[i], minlength=n)
        yield start, counts[:b]


def unit_weights(n: int, of_unit: Optional[Sequence[int]] = None,
                 resamples: int = RESAMPLES, seed: int = SEED):
    """Per resample (a generator), how often it draws each unit: the unit sampler's draws
    (unit_count_blocks) over n units, the same resamples as unit_sums'. With of_unit (per unit
    the index of its cluster; n the clusters), each unit weighted by its cluster's draws. An
    int64 numpy row of one weight per unit (per cluster without of_unit), for the re-scoring
    form of the interval (task_api.Rescoring)."""
    import numpy as np
    index = None if of_unit is None else np.asarray(of_unit, dtype=np.intp)
    for _, counts in unit_count_blocks(n, resamples, seed):
        for row in (counts if index is None else counts[:, index]):
            yield row.copy()


def paired_sums(tables: List[Any], resamples: int = RESAMPLES, seed: int = SEED) -> List[Sums]:
    """Per table (the rows of one model; all tables have the same units in the same order), the
    column sums of every resample, the SAME units drawn for all: resample_sums of the tables
    side by side, split back per table, without building that wide table (numpy)."""
    import numpy as np
    arrays = [np.asarray(t, dtype=np.int64).reshape(len(t), -1) for t in tables]
    n = arrays[0].shape[0]
    # The units' rows side by side are equal where every table's rows are: count them from
    # each table's row classes.
    classes = np.stack([np.unique(a, axis=0, return_inverse=True)[1].reshape(-1)
                        for a in arrays], axis=1) if n else np.zeros((0, len(arrays)))
    _, first, sizes = np.unique(classes, axis=0, return_index=True, return_counts=True)
    if not uses_groups(n, len(sizes)):
        return unit_sums_of_tables(arrays, resamples, seed)
    groups: Dict[Row, int] = {}
    for unit, size in zip(first.tolist(), sizes.tolist()):
        groups[tuple(v for a in arrays for v in a[unit].tolist())] = size
    sums = group_sums(groups, resamples, seed)
    out, start = [], 0
    for a in arrays:
        out.append([s[start:start + a.shape[1]] for s in sums])
        start += a.shape[1]
    return out


def resample_sums(rows: Any = None, resamples: int = RESAMPLES, seed: int = SEED,
                  groups: Optional[Dict[Row, int]] = None,
                  rows_of: Optional[Callable[[], Any]] = None) -> Sums:
    """Column sums of every resample of the units. rows: one row per unit in a fixed order
    (sorted by unit id); or groups ({row: units}, when the caller has them anyway) with
    rows_of() building the rows only if the unit sampler is needed."""
    if groups is None and hasattr(rows, "dtype"):
        return paired_sums([rows], resamples, seed)[0]  # distinct rows counted in numpy
    if groups is None:
        groups = distinct_rows(rows)
    n = sum(groups.values())
    if uses_groups(n, len(groups)):
        return group_sums(groups, resamples, seed)
    if rows is None:
        assert rows_of is not None, "groups without rows need rows_of"
        rows = rows_of()
    return unit_sums(rows, resamples, seed)


# --- intervals --------------------------------------------------------------------------------

def tail(resamples: int, level_permille: int = LEVEL_PERMILLE) -> int:
    """How many sorted resample values lie outside the interval on each side: 25 of 1,000."""
    return resamples * (1000 - level_permille) // 2000


def percentile_interval(values: Sequence[Optional[float]],
                        level_permille: int = LEVEL_PERMILLE) -> Optional[Tuple[float, float]]:
    """The percentile interval: with B values sorted, the (t+1)-th smallest and the (t+1)-th
    largest, t = tail(B) (no interpolation). None if any value is undefined."""
    defined = [v for v in values if v is not None]
    if not values or len(defined) != len(values):
        return None
    ordered = sorted(defined)
    t = tail(len(ordered), level_permille)
    return ordered[t], ordered[len(ordered) - 1 - t]
