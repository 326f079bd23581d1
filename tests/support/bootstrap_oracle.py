"""A deliberately naive bootstrap, for the interval tests: which units each resample holds, drawn
from the same seed as docs/confidence.md defines it, then the metric of every resample from the
task oracle's own per-unit statistics in plain Python loops.

The unit draws are written out plainly here (the MT19937 stream of Python's random module, unit
int(u * n) of the units sorted by id). For the group sampler (few distinct rows) the counts of the
distinct rows come from the scorer's binomial chain (the random numbers are the definition, not
the metric) and are expanded back into units: the group's first unit, that many times.
"""
import math
import random

from scoring.metrics import bootstrap


def resamples(units, row_of, count=bootstrap.RESAMPLES, seed=bootstrap.SEED):
    """units: [(unit id, statistic)]; row_of(statistic) -> the unit's row (a tuple: units with
    equal rows are interchangeable). Yields, per resample, the list of resampled statistics."""
    units = sorted(units, key=lambda u: u[0])
    n = len(units)
    members = {}
    for _, stat in units:
        members.setdefault(row_of(stat), []).append(stat)
    if len(members) * bootstrap.GROUP_FACTOR <= n:
        rows, drawn = bootstrap.group_counts({r: len(m) for r, m in members.items()}, count, seed)
        for counts in drawn:
            sample = []
            for row, c in zip(rows, counts):
                sample += [members[row][0]] * c
            yield sample
        return
    rand = random.Random(seed).random
    for _ in range(count):
        sample = []
        for _ in range(n):
            sample.append(units[int(rand() * n)][1])
        yield sample


def interval(values):
    """The (t+1)-th smallest and largest of the values, t = 25 per 1,000."""
    values = sorted(values)
    t = len(values) * 25 // 1000
    return values[t], values[len(values) - 1 - t]


def basic_interval(values, point, bounds=(0.0, 1.0)):
    """The basic bootstrap interval as docs/confidence.md defines it: 2 x the estimate minus
    the percentile interval's ends, swapped, then held within the score's bounds."""
    low, high = interval(values)
    ends = (2 * point - high, 2 * point - low)
    return tuple(min(max(e, bounds[0]), bounds[1]) for e in ends)


def clusters(units, key):
    """[(cluster key, [its units' statistics])] sorted by key: the units of a cluster are
    resampled together."""
    out = {}
    for unit_id, stat in units:
        out.setdefault(key(unit_id), []).append(stat)
    return sorted(out.items())


def ratio_spread(sample, terms_of):
    """The linearized variance of a mean of ratios over a resample, written out: terms_of(stat)
    -> per term its (numerator, denominator) on that unit; with N_k, D_k the sample's sums and
    r_k = N_k / D_k over the K terms with D_k > 0, unit u moves the mean by
    phi_u = sum_k (num_uk - r_k den_uk) / D_k / K, and the spread is
    sum_u phi_u^2 - (sum_u phi_u)^2 / len(sample). None if no term has a denominator."""
    # A resample holds the same unit objects many times: each distinct one is worked out once
    # and weighted by how often it was drawn (the same sums, unit by unit).
    drawn, first = {}, {}
    for stat in sample:
        drawn[id(stat)] = drawn.get(id(stat), 0) + 1
        first.setdefault(id(stat), stat)
    parts = [(terms_of(first[key]), count) for key, count in drawn.items()]
    width = len(parts[0][0]) if parts else 0
    nums = [math.fsum(p[k][0] * c for p, c in parts) for k in range(width)]
    dens = [math.fsum(p[k][1] * c for p, c in parts) for k in range(width)]
    live = [k for k in range(width) if dens[k]]
    if not live:
        return None
    phis = []
    for p, c in parts:
        phi = 0.0
        for k in live:
            phi += (p[k][0] - nums[k] / dens[k] * p[k][1]) / dens[k]
        phis.append((phi / len(live), c))
    return max(math.fsum(v * v * c for v, c in phis) - math.fsum(v * c for v, c in phis) ** 2
               / len(sample), 0.0)


def studentized_interval(values, spreads, point, spread0, bounds=(0.0, 1.0)):
    """The studentized interval as docs/confidence.md defines it: z = (value - point) / its
    standard error per resample (0 without spread if it equals the point, else infinite on
    its side), the 26th smallest and largest z per 1,000, the ends point - z se, held within
    the bounds."""
    if spread0 <= 0:
        return basic_interval(values, point, bounds)
    z = []
    for v, s in zip(values, spreads):
        if s and s > 0:
            z.append((v - point) / math.sqrt(s))
        elif v == point:
            z.append(0.0)
        else:
            z.append(math.inf if v > point else -math.inf)
    z_lo, z_hi = interval(z)
    se = math.sqrt(spread0)
    ends = (point - z_hi * se, point - z_lo * se)
    return tuple(min(max(e, bounds[0]), bounds[1]) for e in ends)


def opened(ends, reference, union):
    """The interval of a mean of per-class terms in [0, 1] with the classes the test set does
    not show set free (docs/confidence.md): per class its reference count and its union over
    the whole test set; a class with a union but no reference lets its term (0 in the mean) be
    up to 1, a class with neither joins the mean anywhere in [0, 1]; the mean stays in [0, 1]."""
    terms = len([u for u in union if u])
    unseen = len([1 for r, u in zip(reference, union) if u and not r])
    missing = len([u for u in union if not u])
    lo, hi = ends
    return (terms * lo / (terms + missing),
            min(1.0, (terms * hi + unseen + missing) / (terms + missing)))
