"""The bootstrap core (scoring/metrics/bootstrap.py): the same draws in numpy and in Python, on
every numpy version (hard-coded values that the CI's numpy 1.16 and numpy 2 runs both
reproduce), binomial draws with the right distribution, both samplers with the distribution of
unit resampling, and the percentile rule."""
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scoring.metrics import bootstrap

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

FIXED_ROWS = [(i % 7, (i * i) % 11, 3) for i in range(50)]
VQA_LEVELS = {(0,): 25665, (9,): 5084, (18,): 3394, (27,): 3634, (30,): 62223}


def test_python_and_numpy_draw_the_same_uniforms():
    for seed in (0, bootstrap.SEED, 2 ** 32 - 1):
        python = random.Random(seed)
        legacy = np.random.RandomState([seed])
        assert [python.random() for _ in range(2000)] == legacy.random_sample(2000).tolist()


def test_unit_sampler_hard_coded_on_every_numpy_version():
    sums = bootstrap.unit_sums(np.array(FIXED_ROWS, dtype=np.int64))
    assert sums[:3] == [[156, 215, 150], [140, 192, 150], [114, 186, 150]]
    assert bootstrap.percentile_interval([s[0] + s[1] / 10 for s in sums]) == (140.2, 194.9)


def test_unit_sampler_python_equals_numpy_in_any_block_size(monkeypatch):
    expected = bootstrap.unit_sums(FIXED_ROWS)  # pure Python
    for block in (1 << 19, 50 * 7, 50):          # 1000, 7 and 1 resamples per block
        monkeypatch.setattr(bootstrap, "BLOCK_DRAWS", block)
        assert bootstrap.unit_sums(np.array(FIXED_ROWS, dtype=np.int64)) == expected


def test_group_sampler_hard_coded_on_every_numpy_version():
    """100,000 questions in five accuracy levels (the VQA bench's distribution)."""
    sums = bootstrap.group_sums(VQA_LEVELS)
    assert sums[:3] == [[2072304], [2073699], [2078769]]
    assert bootstrap.percentile_interval([s[0] for s in sums]) == (2063907, 2080752)


def test_the_sampler_is_chosen_by_the_number_of_distinct_rows():
    assert bootstrap.uses_groups(100000, 5)
    assert not bootstrap.uses_groups(300, 5)        # 5 * 64 > 300: unit draws
    rows = [(v,) for v in [0] * 200 + [1] * 120]   # 2 distinct rows, 320 units
    assert bootstrap.resample_sums(rows) == bootstrap.group_sums({(0,): 200, (1,): 120})
    few = rows[:100]
    assert bootstrap.resample_sums(few) == bootstrap.unit_sums(few)


def test_large_rows_are_summed_exactly_in_integers():
    rows = np.array([[2 ** 50 + k, k] for k in range(40)], dtype=np.int64)
    sums = bootstrap.unit_sums(rows, resamples=20)
    assert sums == bootstrap.unit_sums(rows.tolist(), resamples=20)


def _pmf(n, p):
    lp, lq = math.log(p), math.log(1 - p)
    return [math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) +
                     k * lp + (n - k) * lq) for k in range(n + 1)]


def _chi_square_ok(draws, pmf, min_expected=20):
    """Pearson's chi-square with bins merged to an expected count >= min_expected; passes
    below the 0.9999 quantile (normal approximation), so a correct sampler fails about once in
    10,000 seeds and this fixed seed was checked."""
    total = len(draws)
    counts = [0] * len(pmf)
    for d in draws:
        counts[d] += 1
    bins, obs, exp = [], 0, 0.0
    for c, p in zip(counts, pmf):
        obs += c
        exp += p * total
        if exp >= min_expected:
            bins.append((obs, exp))
            obs, exp = 0, 0.0
    if bins and exp:
        o, e = bins.pop()
        bins.append((o + obs, e + exp))
    stat = sum((o - e) ** 2 / e for o, e in bins)
    dof = len(bins) - 1
    return stat < dof + 3.72 * math.sqrt(2 * dof) + 5, (stat, dof)


@pytest.mark.parametrize("n,p", [(7, 0.3), (40, 0.2), (50, 0.9), (300, 0.25), (2000, 0.5),
                                 (100000, 0.62)])
def test_binomial_draws_have_the_binomial_distribution(n, p):
    """Inversion (n p < 10), BTRS (n p >= 10) and the p > 1/2 mirror, against the exact pmf."""
    rand = random.Random(99).random
    draws = [bootstrap.binomial(rand, n, p) for _ in range(20000)]
    assert all(0 <= d <= n for d in draws)
    ok, detail = _chi_square_ok(draws, _pmf(n, p))
    assert ok, detail


def test_binomial_edge_cases():
    rand = random.Random(1).random
    assert bootstrap.binomial(rand, 0, 0.5) == 0
    assert bootstrap.binomial(rand, 10, 0.0) == 0
    assert bootstrap.binomial(rand, 10, 1.0) == 10


def test_both_samplers_draw_a_groups_count_as_binomial(monkeypatch):
    """Either sampler: how many units of a group of 30 among 90 a resample holds is
    Binomial(90, 1/3)."""
    rows = [(0,)] * 30 + [(1,)] * 60
    pmf = _pmf(90, 1 / 3)
    by_units = [90 - s[0] for s in bootstrap.unit_sums(np.array(rows), resamples=20000)]
    assert _chi_square_ok(by_units, pmf)[0]
    by_groups = [90 - s[0] for s in bootstrap.group_sums({(0,): 30, (1,): 60}, resamples=20000)]
    assert _chi_square_ok(by_groups, pmf)[0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(-3, 3)), min_size=1, max_size=60),
       st.integers(0, 2 ** 32 - 1))
def test_every_resample_has_n_units_and_both_paths_agree(rows, seed):
    rows = [r + (1,) for r in rows]  # a column of ones counts the units
    sums = bootstrap.resample_sums(rows, resamples=30, seed=seed)
    assert all(s[-1] == len(rows) for s in sums)
    assert bootstrap.unit_sums(np.array(rows), 30, seed) == bootstrap.unit_sums(rows, 30, seed)
    _, drawn = bootstrap.group_counts(bootstrap.distinct_rows(rows), 30, seed)
    assert all(sum(c) == len(rows) and min(c) >= 0 for c in drawn)


def test_percentile_interval_leaves_25_of_1000_out_on_each_side():
    values = list(range(1000))
    random.Random(3).shuffle(values)
    assert bootstrap.tail(1000) == 25
    assert bootstrap.percentile_interval(values) == (25, 974)
    assert bootstrap.percentile_interval([0.5] * 1000) == (0.5, 0.5)
    assert bootstrap.percentile_interval(values[:-1] + [None]) is None


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 320), st.integers(1, 4), st.integers(0, 2 ** 32 - 1))
def test_paired_sums_are_the_sums_of_the_tables_side_by_side(tables, n, values, seed):
    """paired_sums (numpy, the one resample_sums uses for arrays) never builds the wide table,
    but draws exactly as the pure-Python resample_sums on it: the same sampler (few distinct
    rows side by side: group counts), the same stream."""
    rng = np.random.RandomState(seed % 1000)
    parts = [rng.randint(0, values, size=(n, 1 + t % 2)) for t in range(tables)]
    wide = np.hstack(parts)
    expected = bootstrap.resample_sums(wide.tolist(), resamples=40, seed=seed)  # pure Python
    got = bootstrap.paired_sums(parts, resamples=40, seed=seed)
    start = 0
    for part, sums in zip(parts, got):
        assert sums == [s[start:start + part.shape[1]] for s in expected]
        start += part.shape[1]
