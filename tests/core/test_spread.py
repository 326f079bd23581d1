"""The studentized interval's parts (metrics/spread.py, confidence.studentized_interval,
metrics/unseen.py): hand-worked cases, and properties against the bootstrap they extend: the
same sums as resample_sums on every sampler path, and each resample's spread equal to the
formula written out over the units it holds."""
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import confidence
from scoring.metrics import bootstrap, spread, unseen

pytestmark = pytest.mark.compat


def test_studentized_interval_worked_by_hand():
    # z_k = (v_k - 0.5) / 0.01 = (k - 500) / 500; the 26th smallest and largest: -0.95, 0.948;
    # the test set's own standard error 0.1: (0.5 - 0.948 * 0.1, 0.5 + 0.95 * 0.1)
    values = [0.5 + (k - 500) / 1000 * 0.02 for k in range(1000)]
    random.Random(3).shuffle(values)
    ends = confidence.studentized_interval(values, [1e-4] * 1000, 0.5, 0.01)
    assert ends == pytest.approx((0.4052, 0.595))
    # held within the bounds
    assert confidence.studentized_interval(values, [1e-4] * 1000, 0.95, 0.01)[1] == 1.0


def test_a_resample_without_spread_is_infinitely_far_unless_it_is_the_point():
    values = [0.5 + (k - 500) / 1000 * 0.02 for k in range(1000)]
    spreads = [1e-4] * 1000
    for k in range(30):  # 30 resamples above the point with no spread: z = +inf, past the tail
        values[k], spreads[k] = 0.9, 0.0
    assert confidence.studentized_interval(values, spreads, 0.5, 0.01)[0] == 0.0
    for k in range(30):  # at the point itself: z = 0, harmless
        values[k] = 0.5
    ends = confidence.studentized_interval(values, spreads, 0.5, 0.01)
    assert 0.3 < ends[0] < 0.5 < ends[1] < 0.7


def test_a_test_set_without_spread_gets_the_basic_interval_and_undefined_stays_undefined():
    values = [k / 1000 for k in range(1000)]
    assert confidence.studentized_interval(values, [0.0] * 1000, 0.5, 0.0) == \
        confidence.basic_interval(values, 0.5)
    assert confidence.studentized_interval([None] + values[1:], [1.0] * 1000, 0.5, 1.0) is None
    assert confidence.studentized_interval(values, [1.0] * 1000, None, 1.0) is None


def test_open_mean_by_hand():
    # 8 terms in the mean, 1 of them unseen (0 without evidence): the high end gains 1/8
    assert unseen.open_mean((0.4, 0.6), 8, 1, 0) == pytest.approx((0.4, 0.725))
    # 8 terms, and a 9th class out of the mean: it joins it anywhere in [0, 1]
    assert unseen.open_mean((0.4, 0.6), 8, 0, 1) == pytest.approx((3.2 / 9, 5.8 / 9))
    assert unseen.open_mean((0.4, 0.6), 8, 0, 0) == (0.4, 0.6)
    assert unseen.blind_terms([5, 0, 0, 3], [9, 4, 0, 3]) == (3, 1, 1)


def _ratio(sums):
    """A mean of two ratios (columns 0/1 and 2/3), as the tasks' scores are."""
    ratios = [sums[i] / sums[i + 1] for i in (0, 2) if sums[i + 1]]
    return [sum(ratios) / len(ratios) if ratios else None]


def _gradient(sums):
    live = [i for i in (0, 2) if sums[i + 1]]
    if not live:
        return [None]
    g = [0.0] * 4
    for i in live:
        g[i] = 1 / sums[i + 1] / len(live)
        g[i + 1] = -sums[i] / sums[i + 1] ** 2 / len(live)
    return [g]


def _naive(rows, counts):
    """spread() written out over the units a resample holds, each as often as it is drawn."""
    sums = [sum(c * r[j] for r, c in zip(rows, counts)) for j in range(4)]
    g = _gradient(sums)[0]
    if g is None:
        return None
    phis = []
    for r, c in zip(rows, counts):
        phis += [sum(v * d for v, d in zip(r, g))] * c
    return max(math.fsum(p * p for p in phis) - math.fsum(phis) ** 2 / len(phis), 0.0)


def _unit_draws(n, resamples, seed, as_array):
    """Per resample, how often the unit sampler drew each unit: numpy's blocks for an array,
    the pure-Python stream written out (unit int(u n)) for a list."""
    if as_array:
        return [c for _, block in bootstrap.unit_count_blocks(n, resamples, seed)
                for c in block.tolist()]
    rand = random.Random(seed).random
    drawn = []
    for _ in range(resamples):
        counts = [0] * n
        for _ in range(n):
            counts[int(rand() * n)] += 1
        drawn.append(counts)
    return drawn


rows_strategy = st.lists(st.tuples(*[st.integers(0, 40)] * 4), min_size=1, max_size=40)


@settings(max_examples=40)
@given(rows_strategy, st.booleans())
def test_the_sums_are_resample_sums_and_each_spread_is_the_formula(rows, as_array):
    table = np.array(rows, dtype=np.int64) if as_array else rows
    sums, spreads = spread.resample_spreads(_gradient, 1, table, resamples=60, seed=7)
    assert sums == bootstrap.resample_sums(table, resamples=60, seed=7)
    n = len(rows)
    groups = bootstrap.distinct_rows(rows)
    if bootstrap.uses_groups(n, len(groups)) or (as_array and bootstrap.uses_groups(
            n, len(np.unique(table, axis=0)))):
        ordered, drawn = bootstrap.group_counts(groups, 60, 7)
        units = ordered
    else:
        drawn, units = _unit_draws(n, 60, 7, as_array), rows
    for counts, s in zip(drawn, spreads):
        expected = _naive(units, counts)
        if expected is None:
            assert s == [None]
        else:
            assert s[0] == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_many_equal_rows_take_the_group_path_with_the_same_sums():
    rows = [(3, 7, 1, 2)] * 200 + [(1, 5, 0, 4)] * 100
    sums, spreads = spread.resample_spreads(_gradient, 1, np.array(rows), resamples=50)
    assert sums == bootstrap.resample_sums(np.array(rows), resamples=50)
    ordered, drawn = bootstrap.group_counts(bootstrap.distinct_rows(rows), 50)
    assert [s[0] for s in spreads] == pytest.approx([_naive(ordered, c) for c in drawn])


def test_the_full_spread_of_rows_and_of_their_groups_agree():
    rows = [(3, 7, 1, 2)] * 20 + [(1, 5, 0, 4)] * 10 + [(2, 2, 2, 2)]
    total = [sum(c) for c in zip(*rows)]
    expected = _naive(rows, [1] * len(rows))
    assert spread.full_spread(_gradient, total, rows=np.array(rows))[0] == \
        pytest.approx(expected)
    assert spread.full_spread(_gradient, total, rows=rows)[0] == pytest.approx(expected)
    assert spread.full_spread(_gradient, total, groups=bootstrap.distinct_rows(rows))[0] == \
        pytest.approx(expected)


@settings(max_examples=30)
@given(rows_strategy, st.booleans())
def test_a_score_not_of_ratios_has_its_mean_influence_taken_out(rows, as_array):
    """A mean over a fixed number of units (VQA's accuracy over its questions): the influences
    g . x_u do not sum to 0, and the spread is their variance, not their mean square."""
    n = len(rows)

    def gradient(sums):
        return [[1.0 / n, 0.0, 0.0, 0.0]]
    table = np.array(rows, dtype=np.int64) if as_array else rows
    sums, spreads = spread.resample_spreads(gradient, 1, table, resamples=30, seed=5)
    assert sums == bootstrap.resample_sums(table, resamples=30, seed=5)
    if bootstrap.uses_groups(n, len(bootstrap.distinct_rows(rows))):
        return  # the group path: the other tests hold it
    for counts, s in zip(_unit_draws(n, 30, 5, as_array), spreads):
        phis = [r[0] / n for r, c in zip(rows, counts) for _ in range(c)]
        expected = math.fsum(p * p for p in phis) - math.fsum(phis) ** 2 / n
        # a spread of 0 in exact arithmetic may round to +-1e-14 either way
        assert s[0] == pytest.approx(max(expected, 0.0), rel=1e-9, abs=1e-9)
