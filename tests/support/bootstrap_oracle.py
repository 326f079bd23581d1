"""A deliberately naive bootstrap, for the interval tests: which units each resample holds, drawn
from the same seed as docs/confidence.md defines it, then the metric of every resample from the
task oracle's own per-unit statistics in plain Python loops.

The unit draws are written out plainly here (the MT19937 stream of Python's random module, unit
int(u * n) of the units sorted by id). For the group sampler (few distinct rows) the counts of the
distinct rows come from the scorer's binomial chain (the random numbers are the definition, not
the metric) and are expanded back into units: the group's first unit, that many times.
"""
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
