"""The paired bootstrap of many models on one test set (Koehn, EMNLP 2004; challengeR's rank
stability): every resample draws the SAME units for all models, so a resample's scores are
comparable model against model.

Per resample each model gets its ranking score; from them:
- rank_ci: the 95% percentile interval of the model's rank (standard competition ranking,
  1-2-2-4, higher score first; an undefined score ranks last);
- per ordered pair (a, b): diff_ci, the interval of score_a - score_b, and p_a_better, the share
  of resamples in which a scores STRICTLY higher than b (the bootstrap probability of
  superiority, not a p-value). Identical models are never better than each other (p = 0 both
  ways); a model better on every unit is better in every resample (p = 1);
- per pair, p_value: the test of the ranked score (pair_tests.py): approximate randomization
  of the resampled units when compare.py gives it (randomization()), else the two-sided paired
  bootstrap test; p_holm: Holm-adjusted over every pair of the map; significant: a scores
  higher and p_holm <= 0.05 (the map's mark: the chance of marking any pair of equally good
  submissions is then at most 5%, bench/results-confidence.md).
"""
from typing import Any, Dict, List, Optional, Tuple

from scoring.metrics import bootstrap
from scoring.resample_units import collapse, members
from scoring.task_api import Rescoring
from ..ranks import competition_ranks
from . import challenger, family, pair_tests

Value = Optional[float]


def unit_tables(resamplings: List[Any]) -> List[Any]:
    """Per model its rows as an int64 array, one row per resampling unit (a cluster's summed
    rows when the task groups its units: fields), the units in the same order for all."""
    import numpy as np
    tables = []
    ids = None
    for res in resamplings:
        unit_ids, rows = res.rows()
        if ids is None:
            ids = unit_ids
        elif list(unit_ids) != list(ids):
            raise ValueError("the models were not scored on the same units")
        if res.group is not None:
            unit_ids, rows = collapse(unit_ids, rows, res.group)
        tables.append(np.asarray(rows, dtype=np.int64).reshape(len(unit_ids), -1))
    return tables


def resampled_units(res: Any, units: int, noun: str) -> Tuple[int, str]:
    """(how many units the bootstrap resamples, their noun): the clusters (fields) when the task
    groups its units; (units, noun) without a resampling."""
    if res is None:
        return units, noun
    if res.group is None:
        return res.units, res.noun
    unit_ids = res.ids if isinstance(res, Rescoring) else res.rows()[0]
    return len(set(res.group(u) for u in unit_ids)), res.group_noun


def resample_values(resamplings: List[Any], resamples: int = bootstrap.RESAMPLES,
                    seed: int = bootstrap.SEED, tables: Optional[List[Any]] = None
                    ) -> List[List[Value]]:
    """Per model (a task_api.Resampling each, same units), its ranking score in every resample,
    all models on the same resampled units. The units are drawn one by one (unit draws) from a
    stream that depends only on their number and the seed: a pair's resamples are the same
    whichever other submissions are compared beside it. Each resample's sums are scored as
    they are drawn, a block of resamples and one model at a time (bounded memory). tables:
    row_tables(resamplings), when the caller has them. Tasks of the re-scoring form
    (task_api.Rescoring): each model's records re-scored with the same draws."""
    if isinstance(resamplings[0], Rescoring):
        return _rescored_values(resamplings, resamples, seed)
    tables = unit_tables(resamplings) if tables is None else tables
    score = resamplings[0].scores  # one reference: the same score function for every model
    return bootstrap.unit_sums_of_tables(tables, resamples, seed, lambda sums: score(sums)[0])


def row_tables(resamplings: List[Any]) -> Optional[List[Any]]:
    """unit_tables(resamplings), built once for the bootstrap and the randomization test; None
    for the re-scoring form (no rows)."""
    return None if isinstance(resamplings[0], Rescoring) else unit_tables(resamplings)


def _rescored_values(resamplings: List[Any], resamples: int, seed: int) -> List[List[Value]]:
    ids = list(resamplings[0].ids)
    if any(list(res.ids) != ids for res in resamplings):
        raise ValueError("the models were not scored on the same units")
    n, cluster_of = len(ids), None
    if resamplings[0].group is not None:
        clusters, cluster_of = members(ids, resamplings[0].group)
        n = len(clusters)
    values: List[List[Value]] = [[] for _ in resamplings]
    for weights in bootstrap.unit_weights(n, cluster_of, resamples, seed):
        for res, out in zip(resamplings, values):
            out.append(res.rescore(weights)[0])
    return values


def randomization(resamplings: List[Any], pairs: Optional[List[Tuple[int, int]]] = None,
                  tables: Optional[List[Any]] = None) -> Optional[List[Optional[float]]]:
    """The approximate randomization p-value of each pair (a, b) (default: every a < b, in the
    models' order) of the ranked score, the units (clusters) of every pair swapped by the same
    shuffles (pair_tests.randomization_tests); the task's score function is the same for every
    submission of one reference. None for the re-scoring form, whose units' records cannot be
    swapped between models as rows: the pairs then get the paired bootstrap test."""
    if isinstance(resamplings[0], Rescoring):
        return None
    tested = pair_tests.randomization_tests(
        unit_tables(resamplings) if tables is None else tables,
        lambda sums: resamplings[0].scores(sums), pairs=pairs)
    return [p for p, _ in tested]


def pair_p_values(names: List[str], values: List[List[Value]],
                  raw: Optional[List[Optional[float]]] = None,
                  pairs: Optional[List[Tuple[int, int]]] = None
                  ) -> Dict[Tuple[str, str], Any]:
    """{(a, b): (p, Holm-adjusted p)} over the pairs tested (default: every pair a < b, the
    map); p: raw (randomization() of the same pairs) when given, else the two-sided paired
    bootstrap test."""
    keys = family.every_pair(len(names)) if pairs is None else pairs
    if raw is None:
        raw = [pair_tests.bootstrap_p(values[a], values[b]) for a, b in keys]
    adjusted = pair_tests.holm(raw)
    return {(names[a], names[b]): (p, q) for (a, b), p, q in zip(keys, raw, adjusted)}


def _better(a: Value, b: Value) -> bool:
    return a is not None and (b is None or a > b)


def analyse(names: List[str], points: List[Value], values: Optional[List[List[Value]]],
            level_permille: int = bootstrap.LEVEL_PERMILLE,
            tested: Optional[List[Optional[float]]] = None,
            tests: Optional[family.Family] = None) -> Dict[str, Any]:
    """comparison.json's models, pairs and family from the point scores and the per-resample
    scores (values None: no resampling; intervals and p are then null). tests: the pairs tested
    (default: every pair, the full map), whose p-values `tested` gives in its order when
    given; the pairs listed are those tests lists (family.Family.listed)."""
    tests = family.choose(family.ALL, len(names)) if tests is None else tests
    ranks = competition_ranks(points)
    per_resample_ranks = None
    if values is not None:
        per_resample_ranks = [competition_ranks(col) for col in zip(*values)]
    models = [{"model": name, "score": points[m], "rank": ranks[m],
               "rank_ci": _rank_interval(per_resample_ranks, m, level_permille)}
              for m, name in enumerate(names)]
    p_values = pair_p_values(names, values, tested, tests.pairs) if values is not None else {}
    pairs = [_pair(names, points, values, p_values, a, b, level_permille)
             for a, b in tests.listed()]
    doc: Dict[str, Any] = {"models": models, "pairs": pairs, "family": tests.as_json()}
    if per_resample_ranks is not None:
        _challenger(doc, names, ranks, per_resample_ranks, tests.kind == family.ALL)
    return doc


def _rank_interval(per_resample_ranks: Optional[List[List[int]]], m: int,
                   level_permille: int) -> Optional[List[Any]]:
    if per_resample_ranks is None:
        return None
    ends = bootstrap.percentile_interval([r[m] for r in per_resample_ranks], level_permille)
    return list(ends) if ends else None


def _pair(names: List[str], points: List[Value], values: Optional[List[List[Value]]],
          p_values: Dict[Tuple[str, str], Any], a: int, b: int,
          level_permille: int) -> Dict[str, Any]:
    """One ordered pair's entry of comparison.json."""
    name_a, name_b = names[a], names[b]
    point_a, point_b = points[a], points[b]
    diff = None if point_a is None or point_b is None else point_a - point_b
    p, p_holm = p_values.get((name_a, name_b)) or p_values.get((name_b, name_a)) or \
        (None, None)
    pair: Dict[str, Any] = {
        "a": name_a, "b": name_b, "diff": diff, "diff_ci": None, "p_a_better": None,
        "p_value": p, "p_holm": p_holm,
        "significant": p_holm is not None and p_holm <= pair_tests.ALPHA and
        diff is not None and diff > 0}
    if values is not None:
        diffs = [None if x is None or y is None else x - y
                 for x, y in zip(values[a], values[b])]
        ends = bootstrap.percentile_interval(diffs, level_permille)
        pair["diff_ci"] = list(ends) if ends else None
        pair["p_a_better"] = sum(_better(x, y) for x, y in zip(values[a], values[b])) \
            / len(values[a])
    return pair


def _challenger(doc: Dict[str, Any], names: List[str], ranks: List[int],
                per_resample_ranks: List[List[int]], every_pair: bool) -> None:
    """challengeR's analysis (challenger.py) into the document: per model its share of the
    resamples at each rank, and its test-then-rank when every pair was tested (its share of
    significant wins over ALL the others); Kendall's tau of the resamples' rankings."""
    count = len(per_resample_ranks)
    tested = challenger.test_then_rank(names, significant(doc["pairs"])) if every_pair else None
    for m, model in enumerate(doc["models"]):
        at = [0] * len(names)
        for r in per_resample_ranks:
            at[r[m] - 1] += 1
        model["rank_shares"] = [c / count for c in at]
        if tested is not None:
            model["test_then_rank"] = tested[m]
    doc["kendall_tau"] = challenger.kendall_summary(ranks, per_resample_ranks)


def significant(pairs: List[Dict[str, Any]]) -> List[Tuple[str, str]]:
    """(a, b) marked on the map: a scores higher and the pair's Holm-adjusted p <= alpha."""
    return [(p["a"], p["b"]) for p in pairs if p.get("significant")]
