#!/usr/bin/env python3
"""Do the intervals and the comparisons keep their promise? A simulation (issue 27): test sets
drawn from populations whose score is known (bench/confidence_populations.py), each analysed by
the scorer's own bootstrap code, and the share of test sets in which the promise holds.

    python3 bench/confidence.py                   # a quick look: 40 draws a cell
    python3 bench/confidence.py --draws 1000 --methods today,percentile-clusters,\
        basic-clusters,studentized,scorer,bootstrap-holm,randomization \
        --report bench/results-confidence.md                                   # the full run

Parts (each figure with its binomial standard error, sqrt(p (1 - p) / draws)):
1. coverage: per population and n = 50, 200, 1,000 units, the share of test sets whose 95%
   interval holds the population's score, misses above and below, and the estimate's bias in
   units of its standard deviation over the draws;
2. duplicated fields: 60 fields each present 4 times under 4 tile names against the 60 once:
   the ratio of the intervals' mean widths (a bootstrap over independent units: about 1);
3. the significance map over 10 equally good models (Agriculture-Vision n = 200 tiles, VQA
   n = 1,000 questions): the share of maps marking at least one cell (familywise error), the
   cells marked per map, and the share of ordered pairs marked (per-pair false positives);
4. power: two Agriculture-Vision models 0.041 mIoU apart (n = 200 tiles), the share of test
   sets in which the better one is marked better;
6. (part `ap`) the instance task's AP, a score of no sums: coverage of its re-scoring interval
   (the scorer's own InstanceIntervals and confidence.of_rescoring) on a population of per-image
   records (confidence_populations.instance_records), n = 50, 200, 1,000 images, the truth the
   AP of 100,000 images, and the interval's cost at 19,708 images.
5. the dependence on a third submission: two VQA models (2,000 questions) compared alone and
   with a third beside them: the share of test sets in which p(A beats B) changes, and in which
   the verdict (marked or not) flips.

Each method is a function of the rows of the test set (METHODS, COMPARISONS): "today" is the
method of the scorer before issue 27, kept here as it was (a percentile bootstrap over units;
a cell marked where p(a better) >= 0.95).

Exit status: 0 measured; 2 bad usage.
"""
import argparse
import datetime
import math
import os
import platform
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scoring_program"))
sys.path.insert(0, os.path.join(ROOT, "organizer"))
sys.path.insert(0, HERE)

import confidence_populations as pops  # noqa: E402
from scoring import confidence, resample_units  # noqa: E402
from organizing.compare import pair_tests, paired  # noqa: E402
from scoring.metrics import bootstrap  # noqa: E402
from scoring.metrics import unseen  # noqa: E402
from scoring.task_api import Resampling  # noqa: E402
from scoring.tasks.agrivision import metric as av_metric  # noqa: E402
from scoring.tasks.planetscapes_panoptic import intervals as pan_intervals  # noqa: E402
from scoring.tasks.planetscapes_semantic import intervals as ps_intervals  # noqa: E402
from scoring.tasks.planetscapes_vqa import intervals as vqa_intervals  # noqa: E402

Interval = Optional[Tuple[float, float]]


# --- the methods under test --------------------------------------------------------------------

def today_intervals(rows, clusters, scores, resamples: int, reference=None
                    ) -> List[Interval]:
    """The interval of every key as score.py computed it before issue 27: a percentile bootstrap
    over the units (tiles, questions), the clusters ignored."""
    sums = bootstrap.resample_sums(rows, resamples=resamples)
    values = [scores(s) for s in sums]
    return [bootstrap.percentile_interval([v[i] for v in values])
            for i in range(len(values[0]))]


def today_map(tables, clusters, scores, resamples: int) -> np.ndarray:
    """marked[a, b]: the significance map's cell (a better than b) as compare.py drew it
    before issue 27: the share of paired resamples (units drawn for all models at once) in
    which a scores strictly higher than b, marked at >= 0.95."""
    sums = bootstrap.paired_sums(tables, resamples=resamples)
    values = np.array([[scores(s)[0] for s in model] for model in sums])
    m = len(tables)
    marked = np.zeros((m, m), dtype=bool)
    for a in range(m):
        for b in range(m):
            if a != b:
                marked[a, b] = np.mean(values[a] > values[b]) >= 0.95
    return marked


def _models(tables, clusters, scores):
    grouped = len(set(clusters.tolist())) < len(clusters)
    return [_resampling(t, clusters, scores, grouped) for t in tables]


def _names(m: int) -> List[str]:
    return ["m{:02d}".format(k) for k in range(m)]


def bootstrap_map(tables, clusters, scores, resamples: int) -> np.ndarray:
    """Paired bootstrap of the ranked score over the clusters, two-sided p per pair, Holm over
    the pairs (compare/paired.py without randomization p-values)."""
    models = _models(tables, clusters, scores)
    values = paired.resample_values(models, resamples)
    points = [scores(t.sum(0).tolist())[0] for t in tables]
    doc = paired.analyse(_names(len(tables)), points, values)
    return _marked(doc["pairs"], len(tables))


def scorer_map(tables, clusters, scores, resamples: int) -> np.ndarray:
    """The map compare.py draws now (cli.py: paired.analyse with paired.randomization)."""
    models = _models(tables, clusters, scores)
    values = paired.resample_values(models, resamples)
    points = [scores(t.sum(0).tolist())[0] for t in tables]
    doc = paired.analyse(_names(len(tables)), points, values,
                         tested=paired.randomization(models))
    return _marked(doc["pairs"], len(tables))


def shifted_map(tables, clusters, scores, resamples: int) -> np.ndarray:
    """As scorer_map, with the bootstrap test shifted to the null (pair_tests)."""
    models = _models(tables, clusters, scores)
    values = paired.resample_values(models, resamples)
    points = [scores(t.sum(0).tolist())[0] for t in tables]
    m = len(tables)
    keys = [(a, b) for a in range(m) for b in range(a + 1, m)]
    adjusted = pair_tests.holm([pair_tests.shifted_bootstrap_p(values[a], values[b],
                                                               points[a] - points[b])
                                for a, b in keys])
    return _marks(keys, adjusted, points, m)


def _marks(keys, adjusted, points, m: int) -> np.ndarray:
    marked = np.zeros((m, m), dtype=bool)
    for (a, b), q in zip(keys, adjusted):
        if q is not None and q <= pair_tests.ALPHA and points[a] != points[b]:
            better, worse = (a, b) if points[a] > points[b] else (b, a)
            marked[better, worse] = True
    return marked


def _marked(pairs, m: int) -> np.ndarray:
    index = {n: k for k, n in enumerate(_names(m))}
    marked = np.zeros((m, m), dtype=bool)
    for p in pairs:
        marked[index[p["a"]], index[p["b"]]] = bool(p["significant"])
    return marked


def randomization_map(tables, clusters, scores, resamples: int) -> np.ndarray:
    """Approximate randomization (swap a cluster's two predictions) per pair, as
    pair_tests.randomization_tests runs it (shuffles_for(pairs) shuffles, early stopping),
    Holm over the pairs, marked where the better-scoring one is significant."""
    models = _models(tables, clusters, scores)
    m = len(tables)
    keys = [(a, b) for a in range(m) for b in range(a + 1, m)]
    tested = pair_tests.randomization_tests(paired.unit_tables(models), scores)
    adjusted = pair_tests.holm([p for p, _ in tested])
    points = [scores(t.sum(0).tolist())[0] for t in tables]
    return _marks(keys, adjusted, points, m)


def scorer_p(tables, clusters, scores, resamples: int) -> float:
    """p(A beats B) as compare.py computes it now (unit draws over the clusters)."""
    values = paired.resample_values(_models(tables, clusters, scores), resamples)
    return sum(x > y for x, y in zip(values[0], values[1])) / len(values[0])


def today_p(tables, clusters, scores, resamples: int) -> float:
    """p(A beats B), models 0 and 1, today's way (the paired resamples of all the tables)."""
    sums = bootstrap.paired_sums(tables, resamples=resamples)
    a = [scores(s)[0] for s in sums[0]]
    b = [scores(s)[0] for s in sums[1]]
    return sum(x > y for x, y in zip(a, b)) / len(a)


def _gradient_and_widen(scores, reference):
    """What each task's resampling() gives the engine beside its scores: the gradient of the
    scores (the studentized interval) and the widening for classes the test set does not show
    (metrics/unseen.py), for the populations' rows."""
    if scores is pops.miou:
        def widen(_, ends, total):
            return unseen.open_mean(ends, *unseen.blind_terms(reference, total[9:]))
        return av_metric.miou_gradient, (widen if reference is not None else None)
    if scores is pops.vqa_accuracy:
        return vqa_intervals.ratio_gradient, None
    if scores is pops.pan_scores:
        return pan_intervals.pq_gradient, pan_intervals.widen
    averages = {c: pops.PS_AVERAGE_SIZE for c in pops.PS_INSTANCE}
    return (lambda sums: ps_intervals.gradient_of_sums(pops.Layout, averages, sums),
            lambda key, ends, total: unseen.open_mean(
                ends, *ps_intervals.blind_terms(pops.Layout, averages, total)[key]))


def _resampling(rows, clusters, scores, grouped: bool, reference=None, studentized=True,
                widened=True):
    ids = ["F{:06d}_{:06d}".format(c, i) for i, c in enumerate(clusters)]
    order = sorted(range(len(ids)), key=ids.__getitem__)
    gradient, widen = _gradient_and_widen(scores, reference) if studentized else (None, None)
    widen = widen if widened else None
    return Resampling("units", len(ids), lambda: ([ids[i] for i in order], rows[order]), scores,
                      group=resample_units.prefix_of(1) if grouped else None,
                      group_noun="clusters",
                      bounds=(0.0, 100.0 if scores is pops.vqa_accuracy else 1.0),
                      gradient=gradient, widen=widen)


def scorer_intervals(rows, clusters, scores, resamples: int, reference=None) -> List[Interval]:
    """The scorer's intervals now (confidence.of_resampling): studentized bootstrap over the
    clusters, widened for the classes the test set does not show."""
    conf = confidence.of_resampling(["k"] * len(scores(rows[0].tolist())),
                                    _resampling(rows, clusters, scores, True, reference),
                                    resamples)
    return [ends for _, ends in conf.intervals]


def studentized_clusters(rows, clusters, scores, resamples: int, reference=None
                         ) -> List[Interval]:
    """The scorer's studentized interval without setting free the classes a test set does not
    show (what the widening adds, measured apart)."""
    conf = confidence.of_resampling(["k"] * len(scores(rows[0].tolist())),
                                    _resampling(rows, clusters, scores, True, widened=False),
                                    resamples)
    return [ends for _, ends in conf.intervals]


def basic_clusters(rows, clusters, scores, resamples: int, reference=None) -> List[Interval]:
    """The basic interval over the clusters (the scorer's from issue 27's first change until
    the studentized interval replaced it)."""
    conf = confidence.of_resampling(["k"] * len(scores(rows[0].tolist())),
                                    _resampling(rows, clusters, scores, True,
                                                studentized=False), resamples)
    return [ends for _, ends in conf.intervals]


def percentile_clusters(rows, clusters, scores, resamples: int, reference=None
                        ) -> List[Interval]:
    """The percentile interval over the clusters (issue 27 part 1 alone, for comparison)."""
    _, table = resample_units.collapse(["F{:06d}".format(c) for c in clusters], rows,
                                       lambda u: u)
    return today_intervals(table, None, scores, resamples)


METHODS = {"today": today_intervals, "percentile-clusters": percentile_clusters,
           "basic-clusters": basic_clusters, "studentized": studentized_clusters,
           "scorer": scorer_intervals}
MAPS = {"today": today_map, "bootstrap-holm": bootstrap_map,
        "shifted-bootstrap": shifted_map, "randomization": randomization_map,
        "scorer": scorer_map}
PAIR_P = {"today": today_p, "scorer": scorer_p}


# --- measurement -------------------------------------------------------------------------------

def share(hits: int, draws: int) -> str:
    p = hits / draws if draws else 0.0
    return "{:.3f} +- {:.3f}".format(p, math.sqrt(p * (1 - p) / draws) if draws else 0.0)


def coverage(pop, n: int, draws: int, resamples: int, method: str, seed: int) -> Dict[str, Any]:
    rng = np.random.RandomState([seed, n])
    keys = len(pop.truth[0])
    hit, above, below, undefined = [0] * keys, [0] * keys, [0] * keys, [0] * keys
    absent = [0, 0]  # test sets with a class absent from the reference, and those covered
    estimates, widths = [[] for _ in range(keys)], [[] for _ in range(keys)]
    for _ in range(draws):
        tables, clusters = pop.units(rng, n)
        rows = tables[0]
        point = pop.scores(rows.sum(0).tolist())
        ends = METHODS[method](rows, clusters, pop.scores, resamples,
                               reference=pop.last_reference)
        for k in range(keys):
            truth = pop.truth[0][k]
            if ends[k] is None or point[k] is None:
                undefined[k] += 1
                continue
            estimates[k].append(point[k])
            widths[k].append(ends[k][1] - ends[k][0])
            if truth < ends[k][0]:
                below[k] += 1
            elif truth > ends[k][1]:
                above[k] += 1
            else:
                hit[k] += 1
                absent[1] += pop.last_absent and k == 0
        absent[0] += pop.last_absent
    out = []
    for k in range(keys):
        est = np.array(estimates[k])
        sd = float(est.std()) if len(est) > 1 else 0.0
        out.append({"cover": hit[k], "above": above[k], "below": below[k],
                    "undefined": undefined[k],
                    "bias_sd": (float(est.mean()) - pop.truth[0][k]) / sd if sd else 0.0,
                    "width": float(np.mean(widths[k])) if widths[k] else 0.0})
    return {"draws": draws, "keys": out, "absent": absent}


def duplicated_width(draws: int, resamples: int, method: str, seed: int) -> Tuple[float, float]:
    """Mean interval widths: 60 fields once, and the same 60 fields 4 times (4 tile names)."""
    pop = pops.agrivision(1)
    rng = np.random.RandomState([seed, 4])
    once, four = [], []
    for _ in range(draws):
        tables, clusters = pop.units(rng, 60)
        rows = tables[0]
        a = METHODS[method](rows, clusters, pop.scores, resamples,
                            reference=pop.last_reference)[0]
        b = METHODS[method](np.tile(rows, (4, 1)), np.tile(clusters, 4), pop.scores,
                            resamples, reference=pop.last_reference)[0]
        if a and b:
            once.append(a[1] - a[0])
            four.append(b[1] - b[0])
    return float(np.mean(once)), float(np.mean(four))


def familywise(pop, n: int, models: int, draws: int, resamples: int, method: str,
               seed: int) -> Dict[str, float]:
    rng = np.random.RandomState([seed, n, models])
    any_marked, cells = 0, 0
    for _ in range(draws):
        tables, clusters = pop.units(rng, n, models)
        marked = MAPS[method](tables, clusters, pop.scores, resamples)
        any_marked += bool(marked.any())
        cells += int(marked.sum())
    pairs = models * (models - 1)
    return {"draws": draws, "any": any_marked, "cells": cells / draws,
            "pair_rate": cells / (draws * pairs), "pairs": pairs * draws}


def power(pop, n: int, draws: int, resamples: int, method: str, seed: int) -> Dict[str, Any]:
    rng = np.random.RandomState([seed, n, 2])
    found = 0
    for _ in range(draws):
        tables, clusters = pop.units(rng, n, shifts=pop.shifts)
        marked = MAPS[method](tables, clusters, pop.scores, resamples)
        found += bool(marked[0, 1])
    return {"draws": draws, "found": found, "diff": pop.truth[0][0] - pop.truth[1][0]}


def third(pop, n: int, draws: int, resamples: int, method: str, seed: int) -> Dict[str, Any]:
    rng = np.random.RandomState([seed, n, 3])
    changed = flipped = 0
    for _ in range(draws):
        tables, clusters = pop.units(rng, n, shifts=pop.shifts)
        alone = PAIR_P[method](tables[:2], clusters, pop.scores, resamples)
        beside = PAIR_P[method](tables, clusters, pop.scores, resamples)
        changed += alone != beside
        flipped += (alone >= 0.95) != (beside >= 0.95)
    return {"draws": draws, "changed": changed, "flipped": flipped}


# --- report ------------------------------------------------------------------------------------

COVERAGE_POPULATIONS = ("agrivision", "agrivision-fields", "planetscapes", "panoptic", "vqa",
                        "vqa-images")
KEY_NAMES = {"planetscapes": ["iou_class", "iiou_class"], "panoptic": ["pq"]}


def run(args, say) -> List[str]:
    lines = ["# Confidence bench: {} draws a cell, {} resamples".format(args.draws,
                                                                       args.resamples), ""]
    lines.append("`python3 bench/confidence.py {}` on {} (Python {}, numpy {}), {}.".format(
        " ".join(sys.argv[1:]), platform.node() or "?", platform.python_version(),
        np.__version__, datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC")))
    lines.append("")
    methods = args.methods.split(",")
    sizes = [int(v) for v in args.sizes.split(",")]
    parts = args.parts.split(",")
    populations = {}
    for name in COVERAGE_POPULATIONS:
        populations[name] = pops.POPULATIONS[name]()
    if "coverage" in parts:
        lines += coverage_part(args, say, methods, sizes, populations)
    if "maps" in parts:
        lines += maps_part(args, say, methods, populations)
    if "ap" in parts:
        lines += ap_part(args, say, sizes)
    return lines


AP_TRUTH_IMAGES = 100000
AP_COST_IMAGES = 19708


class _Records:
    """The instance state's face that InstanceIntervals reads: records by image id."""

    def __init__(self, records, classes: int) -> None:
        self.records = {"img%06d" % i: r for i, r in enumerate(records)}
        self.units = len(records)
        self.spec = type("Spec", (), {"ids": list(range(classes))})()

    def in_unit_order(self, name):
        return sorted(getattr(self, name).items())


def ap_interval(records, resamples: int, seed: int):
    """(point [ap, ap50], intervals [(low, high) or None]) by the scorer's own path."""
    from scoring.tasks.planetscapes_instance.intervals import InstanceIntervals
    state = _Records(records, pops.AP_CLASSES)
    res = InstanceIntervals().resampling(state, None, None, None, "image")
    conf = confidence.of_rescoring(["ap", "ap50"], res, resamples, seed)
    point = res.rescore([1] * len(records))
    return point, [ends for _, ends in conf.intervals]


def ap_part(args, say, sizes) -> List[str]:
    from scoring.tasks.planetscapes_instance import ap as ap_mod
    rng = np.random.RandomState([args.seed, 34])
    started = time.time()
    truth_images, cost_images = args.ap_truth_images, args.ap_cost_images
    truth_ex = ap_mod.Examples(pops.instance_records(rng, truth_images), pops.AP_CLASSES)
    truth = ap_mod.means(truth_ex.table())
    truth_values = [truth.ap, truth.ap50]
    say("AP truth from {:,} images: {:.4f}, {:.4f} [{:.0f} s]".format(
        truth_images, truth.ap, truth.ap50, time.time() - started))
    lines = ["## 6. Instance-level labeling: AP, interval by re-scoring", "",
             "Population: per-image records ({} classes, Poisson {} instances of a class per "
             "image, detected with chance {}, {} duplicates, Poisson {} unmatched predictions "
             "per image; bench/confidence_populations.py). Truth: the AP of {:,} images: "
             "ap {:.4f}, ap50 {:.4f}. Interval: the scorer's (basic bootstrap, re-scored).".format(
                 pops.AP_CLASSES, pops.AP_GT_PER_CLASS, pops.AP_DETECT, pops.AP_DUPLICATE,
                 pops.AP_FALSE, truth_images, truth.ap, truth.ap50), "",
             "| key | n images | coverage | truth above | truth below | bias / sd | mean width |",
             "|---|---|---|---|---|---|---|"]
    for n in sizes:
        started = time.time()
        hit, above, below, est, widths = [0, 0], [0, 0], [0, 0], [[], []], [[], []]
        for _ in range(args.draws):
            point, ends = ap_interval(pops.instance_records(rng, n), args.resamples,
                                      int(rng.randint(1 << 30)))
            for k in range(2):
                if ends[k] is None or point[k] is None:
                    continue
                est[k].append(point[k])
                widths[k].append(ends[k][1] - ends[k][0])
                if truth_values[k] < ends[k][0]:
                    below[k] += 1
                elif truth_values[k] > ends[k][1]:
                    above[k] += 1
                else:
                    hit[k] += 1
        for k, key in enumerate(("ap", "ap50")):
            e = np.array(est[k])
            sd = float(e.std()) if e.size > 1 else 0.0
            row = "| {} | {:,} | {} | {} | {} | {:+.2f} | {:.4f} |".format(
                key, n, share(hit[k], args.draws), above[k], below[k],
                (float(e.mean()) - truth_values[k]) / sd if sd else 0.0,
                float(np.mean(widths[k])) if widths[k] else 0.0)
            lines.append(row)
            say(row + "  [{:.0f} s]".format(time.time() - started))
    records = pops.instance_records(rng, cost_images)
    predictions = sum(r.cls.size for r in records)
    cpu, wall = time.process_time(), time.time()
    ap_interval(records, bootstrap.RESAMPLES, 1)
    cpu, wall = time.process_time() - cpu, time.time() - wall
    row = ("Cost at full test-set scale: {:,} images, {:,} predicted instances, {:,} resamples: "
           "{:.1f} s CPU, {:.1f} s wall (main process, after scoring; Examples built once, then "
           "one re-scoring per resample).".format(cost_images, predictions, bootstrap.RESAMPLES,
                                                  cpu, wall))
    say(row)
    lines += ["", "({} draws a cell, {} resamples.)".format(args.draws, args.resamples), "",
              row, ""]
    return lines


def coverage_part(args, say, methods, sizes, populations) -> List[str]:
    lines = ["## 1. Coverage of the 95% interval", "",
              "Share of test sets whose interval holds the population's score (goal >= 0.93; "
              "nominal 0.95); misses with the truth above / below the interval; bias: (mean "
              "estimate - truth) / sd of the estimate; width: the mean width. Units: n is in "
              "tiles, images or questions; a clustered population draws n / 5 clusters.", "",
              "| population | key | n | method | coverage | truth above | truth below | "
              "bias / sd | mean width | with a class absent: sets, covered |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name in [p for p in COVERAGE_POPULATIONS if p in args.chosen]:
        pop = populations[name]
        for n in sizes:
            for method in [m for m in methods if m in METHODS]:
                started = time.time()
                res = coverage(pop, n, args.draws, args.resamples, method, args.seed)
                for k, r in enumerate(res["keys"]):
                    key = KEY_NAMES.get(name, ["score"])[k]
                    row = "| {} | {} | {:,} | {} | {} | {} | {} | {:+.2f} | {:.4f} | {} |".format(
                        pop.name, key, n, method, share(r["cover"], res["draws"]), r["above"],
                        r["below"], r["bias_sd"], r["width"],
                        "{}, {}".format(*res["absent"]) if k == 0 and res["absent"][0] else
                        "-")
                    if r["undefined"]:
                        row += " ({} undefined)".format(r["undefined"])
                    lines.append(row)
                    say(row + "  [{:.0f} s]".format(time.time() - started))
    lines += ["", "Population scores (truth, from {:,} units of expectations): {}.".format(
        pops.TRUTH_UNITS, "; ".join("{} {}".format(populations[n].name, ", ".join(
            "{:.4f}".format(v) for v in populations[n].truth[0])) for n in COVERAGE_POPULATIONS)),
        ""]

    lines += ["## 2. Duplicated fields", "",
              "Mean width of the interval for 60 fields, each once, and each 4 times under 4 "
              "tile names (the same pixels); goal: about as wide.", "",
              "| method | 60 once | 60 x 4 | ratio |", "|---|---|---|---|"]
    dup_draws = max(1, args.draws // 5)
    for method in [m for m in methods if m in METHODS]:
        once, four = duplicated_width(dup_draws, args.resamples, method, args.seed)
        row = "| {} | {:.4f} | {:.4f} | {:.2f} |".format(method, once, four, four / once)
        lines.append(row)
        say(row)
    lines += ["", "({} draws.)".format(dup_draws), ""]

    return lines


def maps_part(args, say, methods, populations) -> List[str]:
    lines = ["## 3. Significance map over 10 equally good models", "",
              "Familywise error: the share of maps with at least one marked cell (goal <= "
              "0.05); cells marked per map; per-pair false positives: marked cells / ordered "
              "pairs (goal <= 0.05).", "",
              "| population | n | method | maps marking a cell | cells per map | "
              "per ordered pair |", "|---|---|---|---|---|---|"]
    map_draws = max(1, args.draws // 2)
    for name, n in (("agrivision", 200), ("vqa", 1000)):
        pop = populations[name]
        for method in [m for m in methods if m in MAPS]:
            r = familywise(pop, n, 10, map_draws, args.resamples, method, args.seed)
            row = "| {} | {:,} | {} | {} | {:.2f} | {} |".format(
                pop.name, n, method, share(r["any"], r["draws"]), r["cells"],
                share(int(round(r["pair_rate"] * r["pairs"])), r["pairs"]))
            lines.append(row)
            say(row)
    lines += ["", "({} maps a cell; the per-pair error assumes independent pairs, so it is too "
                  "small.)".format(map_draws), ""]

    lines += ["## 4. Power and the single pair's error", "", "Two Agriculture-Vision models "
              "(the first one better, or both equally good), n = 200 tiles: the share of test "
              "sets in which the first one is marked better (one pair: no adjustment). With "
              "equal models, the goal is <= 0.025 (one direction of a two-sided 5% test; "
              "today's one-sided rule aims at 0.05).", "",
              "| true difference | method | marked |", "|---|---|---|"]
    for shifts in ((0.0, -0.045), (0.0, 0.0)):
        pair = pops.agrivision(1, shifts=shifts)
        for method in [m for m in methods if m in MAPS]:
            r = power(pair, 200, args.draws, args.resamples, method, args.seed)
            row = "| {:+.4f} mIoU | {} | {} |".format(r["diff"], method,
                                                     share(r["found"], r["draws"]))
            lines.append(row)
            say(row)
    vq = pops.vqa(1, shifts=(0.0, -0.05, -0.02))
    lines += ["", "## 5. Dependence on a third submission", "",
              "Two VQA models (accuracy {:+.2f} points apart), 2,000 questions, compared alone "
              "and with a third model beside them: the share of test sets in which p(A beats "
              "B) changes, and in which its verdict (>= 0.95) flips (goal: never).".format(
                  vq.truth[0][0] - vq.truth[1][0]), "",
              "| method | p changes | verdict flips |", "|---|---|---|"]
    for method in [m for m in methods if m in PAIR_P]:
        r = third(vq, 2000, args.draws, args.resamples, method, args.seed)
        row = "| {} | {} | {} |".format(method, share(r["changed"], r["draws"]),
                                        share(r["flipped"], r["draws"]))
        lines.append(row)
        say(row)
    lines.append("")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--draws", type=int, default=40,
                   help="test sets per cell (default 40: errors of about +-0.035 on a 95%% "
                        "share; the maps use half as many)")
    p.add_argument("--resamples", type=int, default=bootstrap.RESAMPLES)
    p.add_argument("--sizes", default="50,200,1000", help="n of the coverage part")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--seed", type=int, default=27)
    p.add_argument("--parts", default="coverage,maps", help="coverage (1, 2), maps (3-5), "
                   "ap (6: the instance task's AP, not run by default: minutes)")
    p.add_argument("--populations", default="", help="coverage of these only (default: all of "
                   + ", ".join(COVERAGE_POPULATIONS) + ")")
    p.add_argument("--ap-truth-images", type=int, default=AP_TRUTH_IMAGES,
                   help="part ap: images whose AP is the population's (default 100,000)")
    p.add_argument("--ap-cost-images", type=int, default=AP_COST_IMAGES,
                   help="part ap: images of the cost measurement (default 19,708)")
    p.add_argument("--report", help="also write the Markdown report here")
    p.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)
    unknown = [m for m in args.methods.split(",") if m not in METHODS and m not in MAPS]
    unknown += [m for m in args.parts.split(",") if m not in ("coverage", "maps", "ap")]
    if unknown or args.draws < 1 or args.resamples < 40:
        p.error("unknown method {} (known: {})".format(unknown, ", ".join(METHODS)) if unknown
                else "--draws must be >= 1 and --resamples >= 40")
    args.chosen = args.populations.split(",") if args.populations else COVERAGE_POPULATIONS
    say = (lambda s: None) if args.quiet else (lambda s: (sys.stderr.write(s + "\n"),
                                                          sys.stderr.flush()))
    lines = run(args, say)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
