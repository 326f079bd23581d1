"""A deliberately naive approximate randomization test, written from docs/confidence.md alone, for
the pair tests: the swap of each unit from Python's own MT19937 stream (random.Random(2004)), the
swapped sums and the score recomputed in plain loops, the tie tolerance and the early stop as
the docs state them. No numpy, nothing of organizing/compare."""
import math
import random

SEED = 2004
ALPHA = 0.05
TOLERANCE = 1e-12
STOP_EVERY = 200


def shuffles_for(pairs, alpha=ALPHA):
    return max(1000, int(math.ceil(2 * pairs / alpha)))


def masks(units, shuffles, seed=SEED):
    """Per shuffle, per unit in order: swapped (1) when its double of the stream is below 0.5."""
    rand = random.Random(seed).random
    return [[1 if rand() < 0.5 else 0 for _ in range(units)] for _ in range(shuffles)]


def _sums(rows, mask):
    """Column sums of one submission: per unit its own row, or the other's where swapped."""
    out = [0] * len(rows[0][0])
    for (own, other), swapped in zip(rows, mask):
        for j, v in enumerate(other if swapped else own):
            out[j] += v
    return out


def randomization(rows_a, rows_b, score, shuffles, seed=SEED, alpha=ALPHA, stop=True):
    """(p, complete) of the pair: rows_a, rows_b the two submissions' rows (tuples of ints) of
    the same units, score(sums) -> the ranked score (None: undefined). With stop, a pair whose
    (1 + extreme) / (R + 1) exceeds alpha after 200, 400, ... shuffles (before R) ends there
    with p = (1 + extreme) / (used + 1)."""
    a_rows = list(zip(rows_a, rows_b))
    b_rows = list(zip(rows_b, rows_a))
    none = [0] * len(a_rows)
    x0, y0 = score(_sums(a_rows, none)), score(_sums(b_rows, none))
    if x0 is None or y0 is None:
        return None, True
    observed = abs(x0 - y0)
    extreme = 0
    for used, mask in enumerate(masks(len(a_rows), shuffles, seed), 1):
        x, y = score(_sums(a_rows, mask)), score(_sums(b_rows, mask))
        if x is None or y is None:
            return None, True
        if abs(x - y) >= observed - TOLERANCE:
            extreme += 1
        if stop and used % STOP_EVERY == 0 and used < shuffles and \
                (1 + extreme) / (shuffles + 1) > alpha:
            return (1 + extreme) / (used + 1), False
    return (1 + extreme) / (shuffles + 1), True
