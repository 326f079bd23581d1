"""The 95% confidence interval of a run's ranking score(s): the task's resampling of its units
(task_api.Intervals) through the bootstrap (metrics/bootstrap.py). Task-agnostic; see
docs/confidence.md for the method and its limits.

The one owner of the interval's settings in config.yaml: `confidence:` (whether intervals are
computed) and `resample_by:` (what is resampled, among the rules the task declares), read once
into IntervalSettings (read_settings).

Two forms (task_api.py): the sum form (Resampling: per-unit integer rows whose column sums give
the scores; studentized where the task gives the scores' gradient, else basic) and the
re-scoring form (Rescoring: each resample scored again from the units' records, weighted by how
often it draws each; basic). Both draw the same units.

Only the two ends of each interval leave this module (as <key>_ci_low and <key>_ci_high): never
a unit's row nor a resample's score.
"""
import math
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from . import resample_units
from .config import CONFIG_FILE
from .metrics import bootstrap, spread
from .problems import REF_CONFIG, BrokenReference, ProblemLog
from .task_api import Rescoring

CONFIG_KEY = "confidence"  # config.yaml: `confidence: false` turns the intervals off
SUFFIXES = ("_ci_low", "_ci_high")


class IntervalSettings(NamedTuple):
    """config.yaml's interval settings (read_settings)."""

    enabled: bool   # `confidence:` (default true)
    by: str         # `resample_by:` checked against the task's rules; "" for a task without
    #                 intervals


class Confidence(NamedTuple):
    intervals: List[Tuple[str, Optional[Tuple[float, float]]]]  # per interval key; None: undefined
    noun: str            # "images", "questions"
    units: int
    resamples: int
    level_permille: int  # 950
    members: int = 0      # the units the resampled clusters hold (0: units are not clustered)
    member_noun: str = ""  # "images"
    studentized: bool = True  # False: the basic bootstrap (no standard errors: a Rescoring,
    #                           or a Resampling without the scores' gradient)

    @property
    def level(self) -> str:
        return "{:g}%".format(self.level_permille / 10)

    def interval(self, key: str) -> Optional[Tuple[float, float]]:
        return dict(self.intervals).get(key)

    def scores(self) -> List[Tuple[str, Optional[float]]]:
        """The leaderboard entries: <key>_ci_low, <key>_ci_high per key (None if undefined)."""
        out: List[Tuple[str, Optional[float]]] = []
        for key, ends in self.intervals:
            for suffix, value in zip(SUFFIXES, ends or (None, None)):
                out.append((key + suffix, value))
        return out


def interval_keys(task: Any) -> List[str]:
    """The leaderboard keys that get an interval (Intervals.keys); [] for a task without."""
    return list(task.intervals.keys) if task.intervals is not None else []


def interval_score_keys(task: Any) -> List[str]:
    """The leaderboard keys the intervals of a task can produce (for bundle columns)."""
    return [key + suffix for key in interval_keys(task) for suffix in SUFFIXES]


def read_settings(ref_config: Dict[str, Any], intervals: Any) -> IntervalSettings:
    """config.yaml's `resample_by:` (one of the task's rules, default its first, or `prefix N`
    where the task takes it) and `confidence:`; a bad value is the organizers' mistake
    (BrokenReference, exit 3). intervals: the task's Intervals role, or None."""
    by = ""
    if intervals is not None:
        rules = intervals.resample_by
        by = resample_units.read_rule(ref_config, rules[0], rules, prefix=intervals.by_prefix)
    return IntervalSettings(enabled(ref_config), by)


def enabled(ref_config: Dict[str, Any]) -> bool:
    """config.yaml's `confidence:` (default true); anything but a boolean is the organizers'
    mistake (exit 3)."""
    value = ref_config.get(CONFIG_KEY, True)
    if not isinstance(value, bool):
        log = ProblemLog()
        log.add(REF_CONFIG, CONFIG_FILE, "{} must be true or false, not {!r}".format(
            CONFIG_KEY, value))
        raise BrokenReference(log)
    return value


def basic_interval(values: Sequence[Optional[float]], point: Optional[float],
                   bounds: Tuple[float, float] = (0.0, 1.0),
                   level_permille: int = bootstrap.LEVEL_PERMILLE
                   ) -> Optional[Tuple[float, float]]:
    """The basic (reverse percentile) bootstrap interval (Davison and Hinkley 1997, 5.2):
    (2 t - q_hi, 2 t - q_lo), t the estimate and q the percentile interval's ends, within the
    score's bounds. Where the estimate is biased (on a small test set, a rare class seen on few
    images scores 0 in every resample that misses them: the resamples fall below the estimate
    as the estimate falls below the truth), the percentile interval repeats the bias and this
    one reverses it (bench/results-confidence.md)."""
    ends = bootstrap.percentile_interval(values, level_permille)
    if ends is None or point is None:
        return None
    lo, hi = 2 * point - ends[1], 2 * point - ends[0]
    return _within(lo, hi, bounds)


def _within(lo: float, hi: float, bounds: Tuple[float, float]) -> Tuple[float, float]:
    return min(max(lo, bounds[0]), bounds[1]), min(max(hi, bounds[0]), bounds[1])


def studentized_interval(values: Sequence[Optional[float]], spreads: Sequence[Optional[float]],
                         point: Optional[float], spread0: Optional[float],
                         bounds: Tuple[float, float] = (0.0, 1.0),
                         level_permille: int = bootstrap.LEVEL_PERMILLE
                         ) -> Optional[Tuple[float, float]]:
    """The studentized (bootstrap-t) interval (Davison and Hinkley 1997, 5.2.1; Efron and
    Tibshirani 1993, 12.5): with z* = (t* - t) / se* over the resamples (se*: each resample's
    own standard error, the square root of its spread, metrics/spread.py) and z_lo, z_hi its
    percentile ends, (t - z_hi se, t - z_lo se), within the score's bounds. A resample with no
    spread counts as 0 if it scores t, else as an infinite z on its side. A test set with no
    spread of its own (a single unit) gets the basic interval. None if any score is
    undefined."""
    if point is None or spread0 is None or any(v is None for v in values):
        return None
    if spread0 <= 0.0:
        return basic_interval(values, point, bounds, level_permille)
    z = []
    for v, s in zip(values, spreads):
        assert v is not None
        if s is not None and s > 0.0:
            z.append((v - point) / math.sqrt(s))
        else:
            z.append(0.0 if v == point else math.copysign(math.inf, v - point))
    ends = bootstrap.percentile_interval(z, level_permille)
    assert ends is not None
    se = math.sqrt(spread0)
    lo, hi = point - ends[1] * se, point - ends[0] * se
    return _within(lo, hi, bounds)


def _total(rows: Any = None, groups: Optional[Dict[Tuple[int, ...], int]] = None) -> List[int]:
    if groups is not None:
        ordered = list(groups)
        width = len(ordered[0]) if ordered else 0
        return [sum(groups[r] * r[j] for r in ordered) for j in range(width)]
    if hasattr(rows, "dtype"):
        return [int(v) for v in rows.sum(axis=0).tolist()]
    return [sum(col) for col in zip(*rows)]


def resampling_of(task: Any, state: Any, summary: Any, reference: Any, settings: Any,
                  by: str) -> Any:
    """The task's resampling of this run's units under the rule `by` (IntervalSettings.by): a
    Resampling or a Rescoring; None if the task gives no interval (or none this run)."""
    if not interval_keys(task):
        return None
    return task.intervals.resampling(state, summary, reference, settings, by)


def compute(task: Any, state: Any, summary: Any, reference: Any, settings: Any, by: str,
            resamples: int = bootstrap.RESAMPLES, seed: int = bootstrap.SEED
            ) -> Optional[Confidence]:
    """The intervals of the task's interval keys for this run; None if the task gives none."""
    return intervals_of(task, resampling_of(task, state, summary, reference, settings, by),
                        resamples, seed)


def intervals_of(task: Any, res: Any, resamples: int = bootstrap.RESAMPLES,
                 seed: int = bootstrap.SEED) -> Optional[Confidence]:
    """The intervals of a run's resampling (resampling_of); None without one or without
    units."""
    if res is None or res.units == 0:
        return None
    return of_resampling(interval_keys(task), res, resamples, seed)


def of_rescoring(keys: Sequence[str], res: Rescoring, resamples: int = bootstrap.RESAMPLES,
                 seed: int = bootstrap.SEED) -> Confidence:
    """The basic intervals of a task_api.Rescoring: every resample (over its clusters when it
    names them) scored again by the task from its units' records, weighted by their draws."""
    ids = list(res.ids)
    noun, units, members, member_noun = res.noun, len(ids), 0, ""
    cluster_of = None
    if res.group is not None:
        clusters, cluster_of = resample_units.members(ids, res.group)
        noun, units, members, member_noun = res.group_noun, len(clusters), len(ids), res.noun
    point = res.rescore([1] * len(ids))
    values = [res.rescore(weights)
              for weights in bootstrap.unit_weights(units, cluster_of, resamples, seed)]
    intervals = [(key, basic_interval([v[i] for v in values], point[i], res.bounds))
                 for i, key in enumerate(keys)]
    return Confidence(intervals, noun, units, len(values), bootstrap.LEVEL_PERMILLE, members,
                      member_noun, studentized=False)


def of_resampling(keys: Sequence[str], res: Any, resamples: int = bootstrap.RESAMPLES,
                  seed: int = bootstrap.SEED) -> Confidence:
    """The intervals of a task_api.Resampling, over its clusters when it names them
    (res.group), else over its units: studentized where the task gives its scores' gradient,
    else basic; then widened by the task for what the test set cannot show (res.widen). Every
    interval is held within the score's range (res.bounds) after each of these steps. A
    Rescoring: of_rescoring."""
    if isinstance(res, Rescoring):
        return of_rescoring(keys, res, resamples, seed)
    noun, units, members, member_noun = res.noun, res.units, 0, ""
    rows: Any = None
    groups = None
    if res.group is not None:
        ids, unit_rows = res.rows()
        clusters, rows = resample_units.collapse(ids, unit_rows, res.group)
        noun, units, members, member_noun = res.group_noun, len(clusters), res.units, res.noun
        total = _total(rows)
    elif res.distinct is not None:  # the rows are built only if the unit sampler needs them
        groups = res.distinct
        total = _total(groups=groups)
    else:
        rows = res.rows()[1]
        total = _total(rows)
    spreads = spread0 = None
    if res.gradient is not None:
        sums, spreads = spread.resample_spreads(
            res.gradient, len(keys), rows=rows, resamples=resamples, seed=seed, groups=groups,
            rows_of=lambda: res.rows()[1])
        spread0 = spread.full_spread(res.gradient, total, rows=rows, groups=groups)
    elif groups is not None:
        sums = bootstrap.resample_sums(groups=groups, rows_of=lambda: res.rows()[1],
                                       resamples=resamples, seed=seed)
    else:
        sums = bootstrap.resample_sums(rows, resamples=resamples, seed=seed)
    values = [res.scores(s) for s in sums]
    point = res.scores(list(total))
    intervals = []
    for i, key in enumerate(keys):
        column = [v[i] for v in values]
        if spreads is not None and spread0 is not None:
            ends = studentized_interval(column, [s[i] for s in spreads], point[i], spread0[i],
                                        res.bounds)
        else:
            ends = basic_interval(column, point[i], res.bounds)
        if ends is not None and res.widen is not None:
            # Setting a class free can carry an end past the score's range (a mean whose other
            # terms are near 1 plus a free term of up to 1): held within it again.
            lo, hi = res.widen(i, ends, total)
            ends = _within(lo, hi, res.bounds)
        intervals.append((key, ends))
    return Confidence(intervals, noun, units, len(sums), bootstrap.LEVEL_PERMILLE, members,
                      member_noun, studentized=res.gradient is not None)
