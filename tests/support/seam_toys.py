"""Tiny test-only tasks on the seam (scoring/task_api.py), for what no registered task uses yet:
a state that concatenates per-unit records (CAT) and an interval re-scored from them
(task_api.Rescoring), as a metric that is no function of summed counts needs.

`TinyAP` scores ranked guesses: a unit's prediction is a JSON list of confidences, its truth
which of them are hits and how many positives the unit holds; the score is the average precision
of every guess of the test set ranked by confidence, taken at distinct confidences only (so tied
guesses in any order give the same value), in exact fractions. `TinyRate` is a sum metric (hits
over guesses) given in both interval forms, so the two can be compared draw for draw.

Written for the tests, not as a model of a real task's format: no checks beyond what the tests
need, no hostile inputs.
"""
import json
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple

from scoring import resample_units
from scoring.task_api import (CAT, SUM, Intervals, Manifest, MetricState, Reference, Report,
                              Rescoring, Resampling, Submission, SubmissionFormat, Summary, Task)

# A unit's record: its guesses as (confidence, hit) and its positives.
Record = Tuple[Tuple[Tuple[float, bool], ...], int]


def average_precision(records: Sequence[Record], weights: Optional[Sequence[int]] = None
                      ) -> Optional[float]:
    """AP of the records' guesses, each record counted `weights[i]` times (1 each by default):
    the sum over distinct confidences c, highest first, of (recall at c - recall before c) x
    precision at c, the guesses at or above c counted. None without positives."""
    weights = [1] * len(records) if weights is None else weights
    positives = sum(int(w) * p for (_, p), w in zip(records, weights))
    if not positives:
        return None
    by_confidence: Dict[float, List[int]] = {}
    for (guesses, _), w in zip(records, weights):
        for confidence, hit in guesses:
            counts = by_confidence.setdefault(confidence, [0, 0])
            counts[0] += int(w) * hit
            counts[1] += int(w)
    ap, hits, seen = Fraction(0), 0, 0
    for confidence in sorted(by_confidence, reverse=True):
        new_hits, new_seen = by_confidence[confidence]
        if not new_seen:
            continue
        hits, seen = hits + new_hits, seen + new_seen
        ap += Fraction(new_hits, positives) * Fraction(hits, seen)
    return float(ap)


class ToyReference(Reference):
    """Truth in memory: unit id -> (hit flags of the guesses, positives)."""

    def __init__(self, truth: Dict[str, Tuple[List[bool], int]]) -> None:
        self.truth = truth
        self.ids = sorted(truth)
        self.root = None
        self.main_process_only = ()

    def read(self, unit_id: str) -> Tuple[List[bool], int]:
        return self.truth[unit_id]

    def expect(self, unit_id: str, truth: Any) -> int:
        return len(truth[0])


class GuessFiles(SubmissionFormat):
    """<unit id>.json: a list of confidences, one per guess."""

    words = {"files": "JSON files", "file": "JSON file", "ext": ".json", "unit": "unit",
             "units": "units"}

    def discover(self, res_dir: str, expected_ids: Optional[Sequence[str]]) -> Submission:
        import os
        from scoring.problems import ProblemLog
        files = {name[:-5]: os.path.join(res_dir, name) for name in os.listdir(res_dir)
                 if name.endswith(".json")}
        return Submission(res_dir, files, ProblemLog())

    def read(self, path: str, expectation: int) -> List[float]:
        with open(path) as f:
            confidences = json.load(f)
        assert len(confidences) == expectation
        return confidences


class RecordState(MetricState):
    """Per unit its record (CAT): the guesses with their hits, and its positives."""

    fields = {"by_unit": CAT, "units": SUM}

    def __init__(self) -> None:
        self.by_unit: Dict[str, Record] = {}
        self.units = 0

    def update(self, unit_id: str, prediction: List[float], truth: Tuple[List[bool], int]
               ) -> None:
        hits, positives = truth
        self.by_unit[unit_id] = (tuple(zip(prediction, hits)), positives)
        self.units += 1


class ToyReport(Report):
    def page(self, summary, warnings, run, settings) -> str:
        return "<html>{}</html>".format(summary.scores)


class ToyManifest(Manifest):
    def make(self, reference):
        return {"task": "tiny-ap", "units": {u: len(t[0]) for u, t in reference.truth.items()}}

    def open(self, manifest):
        return ToyReference({u: ([False] * n, 0) for u, n in manifest["units"].items()}), \
            GuessFiles()


class APIntervals(Intervals):
    """The re-scoring form: every resample's AP from the units' records, weighted."""

    keys = ["ap"]
    resample_by = ("unit",)

    def resampling(self, state, summary, reference, settings, by) -> Rescoring:
        pairs = state.in_unit_order("by_unit")
        ids = [unit for unit, _ in pairs]
        records = [record for _, record in pairs]
        return Rescoring("units", ids, lambda weights: [average_precision(records, weights)],
                         group=resample_units.key_of(by, "unit"), group_noun="groups")


class TinyAP(Task):
    name = "tiny-ap"
    title = "Tiny AP"
    score_keys = ["ap"]
    unit_seconds = 0.001    # a pool from a few units on: the tests compare 1, 2 and 3 workers

    report = ToyReport()
    manifest = ToyManifest()
    intervals = APIntervals()

    def configure(self, options, ref_config):
        return None

    def open_reference(self, ref_dir, settings):
        raise NotImplementedError("the tests build a ToyReference themselves")

    def submission_format(self, settings):
        return GuessFiles()

    def new_state(self, settings):
        return RecordState()

    def summarize(self, state, reference, settings) -> Summary:
        records = [record for _, record in state.in_unit_order("by_unit")]
        return Summary([("ap", average_precision(records))])


# --- a sum metric in both interval forms ---------------------------------------------------------

def rate_rows(state: RecordState) -> Tuple[List[str], List[Tuple[int, int]]]:
    """(unit ids sorted, per unit (hits, guesses)): the sum form's rows."""
    pairs = state.in_unit_order("by_unit")
    return [u for u, _ in pairs], [(sum(hit for _, hit in guesses), len(guesses))
                                   for _, (guesses, _) in pairs]


def rate_of_sums(sums: Sequence[int]) -> List[Optional[float]]:
    hits, guesses = sums
    return [hits / guesses if guesses else None]


def rate_forms(state: RecordState, group=None) -> Tuple[Resampling, Rescoring]:
    """The hit rate's interval as a Resampling (rows) and as a Rescoring (records, weighted)."""
    ids, rows = rate_rows(state)

    def rescore(weights):
        return rate_of_sums([sum(int(w) * r[0] for w, r in zip(weights, rows)),
                             sum(int(w) * r[1] for w, r in zip(weights, rows))])
    return (Resampling("units", len(ids), lambda: (ids, rows), rate_of_sums, group=group,
                       group_noun="groups"),
            Rescoring("units", ids, rescore, group=group, group_noun="groups"))
