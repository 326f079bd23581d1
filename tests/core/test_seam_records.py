"""What the seam offers a task whose metric is no function of summed counts (an average
precision ranks every prediction of the test set): a state that concatenates per-unit records
(task_api.CAT) and merges them into the same records for any worker count and unit order, and a
confidence interval re-scored from those records for every resample (task_api.Rescoring), on the
same unit draws as the sum form. Shown on tiny test-only tasks (tests/support/seam_toys.py),
against deliberately naive oracles."""
import json
import os
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

import bootstrap_oracle
from scoring import confidence, engine
from organizing.compare import paired
from scoring.metrics import bootstrap
from scoring.task_api import CAT, SUM, MetricState, Rescoring
from seam_toys import (GuessFiles, RecordState, TinyAP, ToyReference, average_precision,
                       rate_forms)

# Can differ with numpy / Python versions (the unit draws): CI runs it on the oldest too.
pytestmark = pytest.mark.compat

TASK = TinyAP()


def naive_ap(guesses, positives):
    """AP written out: the guesses sorted by confidence, highest first; at the last guess of
    each run of equal confidences, precision so far times the recall it adds."""
    if not positives:
        return None
    ordered = sorted(guesses, key=lambda g: -g[0])
    ap, hits, added = Fraction(0), 0, 0
    for k, (conf, hit) in enumerate(ordered):
        hits += hit
        added += hit
        last_of_run = k + 1 == len(ordered) or ordered[k + 1][0] != conf
        if last_of_run:
            ap += Fraction(added, positives) * Fraction(hits, k + 1)
            added = 0
    return float(ap)


def random_set(rng, units, prefix_groups=0):
    """({unit id: (hits, positives)}, {unit id: confidences}): a few guesses per unit on a
    coarse grid of confidences (ties across units), some units without a positive."""
    truth, guesses = {}, {}
    for k in range(units):
        unit = "g{}_u{:03d}".format(k % prefix_groups, k) if prefix_groups else "u{:03d}".format(k)
        n = rng.randint(0, 4)
        hits = [rng.random() < 0.5 for _ in range(n)]
        truth[unit] = (hits, sum(hits) + rng.randint(0, 2))
        guesses[unit] = [rng.randint(0, 5) / 5 for _ in range(n)]
    return truth, guesses


def write_guesses(folder, guesses):
    os.makedirs(folder, exist_ok=True)
    for unit, confidences in guesses.items():
        with open(os.path.join(folder, unit + ".json"), "w") as f:
            json.dump(confidences, f)


def scored(truth, res, workers, seed):
    """The engine's state of the toy submission at res, its units in a shuffled order."""
    reference, fmt = ToyReference(truth), GuessFiles()
    items = [(u, p, u) for u, p in fmt.discover(res, reference.ids).files.items()]
    random.Random(seed).shuffle(items)
    acc = engine.evaluate(TASK, reference, fmt, None, items, workers)
    assert not acc.submission_log.fatal and not acc.reference_log.fatal
    return acc.state, reference


# --- per-unit records (CAT) ---------------------------------------------------------------------

def test_records_merge_into_the_same_records_whatever_the_split_and_order():
    rng = random.Random(1)
    truth, guesses = random_set(rng, 30)
    whole = RecordState()
    for unit in sorted(truth):
        whole.update(unit, guesses[unit], truth[unit])
    for _ in range(20):
        units = sorted(truth)
        rng.shuffle(units)
        cuts = sorted(rng.sample(range(1, len(units)), rng.randint(1, 5)))
        parts = []
        for a, b in zip([0] + cuts, cuts + [len(units)]):
            part = RecordState()
            for unit in units[a:b]:
                part.update(unit, guesses[unit], truth[unit])
            parts.append(part)
        rng.shuffle(parts)
        merged = RecordState()
        for part in parts:
            merged.merge(part)
        assert merged.by_unit == whole.by_unit and merged.units == whole.units
        assert merged.in_unit_order("by_unit") == whole.in_unit_order("by_unit")
        assert [u for u, _ in merged.in_unit_order("by_unit")] == sorted(truth)


def test_a_unit_folded_into_two_merged_states_is_refused():
    a, b = RecordState(), RecordState()
    a.update("u1", [0.5], ([True], 1))
    b.update("u1", [0.5], ([True], 1))
    with pytest.raises(ValueError, match="u1"):
        a.merge(b)


class _SumAndCat(MetricState):
    """Both reductions side by side: a sum, and records."""

    fields = {"total": SUM, "seen": CAT}

    def __init__(self):
        self.total = 0
        self.seen = {}

    def update(self, unit_id, prediction, truth):
        self.total += prediction
        self.seen[unit_id] = prediction


def test_sum_and_cat_fields_merge_each_their_way():
    a, b = _SumAndCat(), _SumAndCat()
    a.update("x", 2, None)
    b.update("y", 5, None)
    b.update("a", 1, None)
    merged = a.merge(b)
    assert merged.total == 8 and merged.seen == {"x": 2, "y": 5, "a": 1}
    assert merged.in_unit_order("seen") == [("a", 1), ("x", 2), ("y", 5)]
    assert CAT != SUM


def test_the_toy_ap_equals_the_naive_ap_with_ties_in_any_order():
    rng = random.Random(2)
    for _ in range(200):
        truth, guesses = random_set(rng, rng.randint(1, 8))
        records = [(tuple(zip(guesses[u], truth[u][0])), truth[u][1]) for u in sorted(truth)]
        every = [g for guess, _ in records for g in guess]
        positives = sum(p for _, p in records)
        assert average_precision(records) == naive_ap(every, positives)
        rng.shuffle(every)     # tied guesses in another order: the same AP
        assert naive_ap(every, positives) == average_precision(records)


def test_a_task_without_its_own_console_table_gets_its_scores():
    """Report.table's default: one row per leaderboard key (the toy keeps it)."""
    from scoring.task_api import Summary
    assert TASK.report.table(Summary([("ap", 0.123456), ("other", None)])) == \
        (["score", "value"], [["ap", "0.1235"], ["other", "n/a"]])


def test_records_through_the_engine_are_the_same_for_any_worker_count_and_order(tmp_path):
    truth, guesses = random_set(random.Random(3), 40, prefix_groups=6)
    res = str(tmp_path / "res")
    write_guesses(res, guesses)
    base, reference = scored(truth, res, 1, 0)
    base_ap = TASK.summarize(base, reference, None).scores
    base_ci = confidence.compute(TASK, base, None, reference, None, "prefix 1")
    for workers, seed in ((2, 1), (3, 2), (1, 5), (2, 7)):
        state, _ = scored(truth, res, workers, seed)
        assert state.by_unit == base.by_unit
        assert TASK.summarize(state, reference, None).scores == base_ap
        assert confidence.compute(TASK, state, None, reference, None, "prefix 1") == base_ci
    every = [g for u in sorted(truth) for g in zip(guesses[u], truth[u][0])]
    assert base_ap == [("ap", naive_ap(every, sum(p for _, p in truth.values())))]


# --- the interval re-scored from the records (Rescoring) ----------------------------------------

def _records_state(truth, guesses):
    state = RecordState()
    for unit in truth:
        state.update(unit, guesses[unit], truth[unit])
    return state


def test_the_rescored_interval_equals_the_naive_bootstrap():
    """Each resample drawn unit by unit from the documented stream (bootstrap_oracle), its AP
    from the drawn units' guesses written out, the basic interval of docs/confidence.md."""
    truth, guesses = random_set(random.Random(4), 30)
    state = _records_state(truth, guesses)
    got = confidence.compute(TASK, state, None, ToyReference(truth), None, "unit")
    units = [(u, (list(zip(guesses[u], truth[u][0])), truth[u][1])) for u in truth]
    # every unit its own row: the oracle draws unit by unit, as the re-scoring form does
    values = []
    for sample in bootstrap_oracle.resamples(units, lambda stat: id(stat)):
        values.append(naive_ap([g for guess, _ in sample for g in guess],
                               sum(p for _, p in sample)))
    point = naive_ap([g for u in truth for g in zip(guesses[u], truth[u][0])],
                     sum(p for _, p in truth.values()))
    assert got.intervals == [("ap", bootstrap_oracle.basic_interval(values, point))]
    assert (got.noun, got.units, got.resamples, got.members) == ("units", 30, 1000, 0)


def test_a_rescored_interval_over_clusters_draws_each_cluster_whole():
    truth, guesses = random_set(random.Random(5), 36, prefix_groups=9)
    state = _records_state(truth, guesses)
    got = confidence.compute(TASK, state, None, ToyReference(truth), None, "prefix 1")
    clusters = bootstrap_oracle.clusters(
        [(u, (list(zip(guesses[u], truth[u][0])), truth[u][1])) for u in truth],
        lambda u: u.split("_")[0])
    values = []
    for sample in bootstrap_oracle.resamples(clusters, lambda stats: id(stats)):
        drawn = [stat for stats in sample for stat in stats]
        values.append(naive_ap([g for guess, _ in drawn for g in guess],
                               sum(p for _, p in drawn)))
    point = TASK.summarize(state, None, None).scores[0][1]
    assert got.intervals == [("ap", bootstrap_oracle.basic_interval(values, point))]
    assert (got.noun, got.units, got.members, got.member_noun) == ("groups", 9, 36, "units")


@settings(max_examples=25)
@given(st.integers(0, 10 ** 6), st.integers(2, 60), st.integers(0, 5))
def test_a_sum_metric_gets_the_same_interval_in_both_forms(seed, units, groups):
    """A hit rate given as rows (Resampling) and as records (Rescoring) is resampled on the
    same draws: the two basic intervals are equal, with or without clusters. (Rows that repeat
    a lot take the sum form's group sampler, another valid stream: kept out here.)"""
    truth, guesses = random_set(random.Random(seed), units, prefix_groups=groups)
    state = _records_state(truth, guesses)
    group = (lambda u: u.split("_")[0]) if groups else None
    sums, rescored = rate_forms(state, group)
    rows = [r for r in sums.rows()[1]]
    if group is None and bootstrap.uses_groups(len(rows), len(set(rows))):
        return
    assert rescored.units == sums.units == units
    assert confidence.of_resampling(["rate"], sums) == confidence.of_resampling(["rate"], rescored)


def test_unit_weights_are_the_unit_samplers_draws():
    """bootstrap.unit_weights: per resample how often each unit is drawn, the draws of
    bootstrap_oracle's plain stream; with clusters, each unit weighted as its cluster."""
    n = 7
    drawn = list(bootstrap.unit_weights(n, resamples=50, seed=11))
    units = [(k, k) for k in range(n)]
    for weights, sample in zip(drawn, bootstrap_oracle.resamples(units, lambda s: s, 50, 11)):
        assert list(weights) == [sample.count(k) for k in range(n)]
    of_unit = [0, 0, 1, 2, 2, 2, 1]
    for weights, cluster_weights in zip(bootstrap.unit_weights(3, of_unit, 50, 11),
                                        bootstrap.unit_weights(3, None, 50, 11)):
        assert list(weights) == [cluster_weights[c] for c in of_unit]


def test_the_paired_bootstrap_rescores_every_model_on_the_same_draws():
    """compare.py's per-resample scores of two submissions of the re-scoring form: each
    resample's AP of either from the same drawn units; no randomization test (records are not
    rows that can be swapped), the paired bootstrap test instead."""
    rng = random.Random(6)
    truth, guesses = random_set(rng, 25)
    other = {u: [rng.randint(0, 5) / 5 for _ in g] for u, g in guesses.items()}
    forms = [TASK.intervals.resampling(_records_state(truth, g), None, None, None, "unit")
             for g in (guesses, other)]
    values = paired.resample_values(forms, resamples=200)
    for weights, va, vb in zip(bootstrap.unit_weights(25, resamples=200), *values):
        expanded = [u for u, w in zip(sorted(truth), weights) for _ in range(int(w))]
        for g, v in ((guesses, va), (other, vb)):
            assert v == naive_ap([x for u in expanded for x in zip(g[u], truth[u][0])],
                                 sum(truth[u][1] for u in expanded))
    assert paired.randomization(forms) is None
    assert paired.resampled_units(forms[0], 25, "units") == (25, "units")
    assert isinstance(forms[0], Rescoring)
