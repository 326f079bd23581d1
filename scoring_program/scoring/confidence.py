"""The 95% confidence interval of a run's ranking score(s): the task's per-unit rows
(Task.resampling) through the bootstrap (metrics/bootstrap.py). Task-agnostic; see
docs/confidence.md for the method and its limits.

Only the two ends of each interval leave this module (as <key>_ci_low and <key>_ci_high): never
a unit's row nor a resample's score.
"""
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .config import CONFIG_FILE
from .metrics import bootstrap
from .problems import REF_CONFIG, BrokenReference, ProblemLog
from .resample_units import collapse

CONFIG_KEY = "confidence"  # config.yaml: `confidence: false` turns the intervals off
SUFFIXES = ("_ci_low", "_ci_high")


class Confidence(NamedTuple):
    intervals: List[Tuple[str, Optional[Tuple[float, float]]]]  # per interval key; None: undefined
    noun: str            # "images", "questions"
    units: int
    resamples: int
    level_permille: int  # 950
    members: int = 0      # the units the resampled clusters hold (0: units are not clustered)
    member_noun: str = ""  # "images"

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


def interval_score_keys(task: Any) -> List[str]:
    """The leaderboard keys the intervals of a task can produce (for bundle columns)."""
    return [key + suffix for key in task.interval_keys for suffix in SUFFIXES]


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


def from_sums(keys: Sequence[str], noun: str, units: int, scores, sums: bootstrap.Sums,
              level_permille: int = bootstrap.LEVEL_PERMILLE) -> Confidence:
    """The percentile intervals of keys from the column sums of every resample."""
    values = [scores(s) for s in sums]
    intervals = [(key, bootstrap.percentile_interval([v[i] for v in values], level_permille))
                 for i, key in enumerate(keys)]
    return Confidence(intervals, noun, units, len(sums), level_permille)


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
    return min(max(lo, bounds[0]), bounds[1]), min(max(hi, bounds[0]), bounds[1])


def basic_from_sums(keys: Sequence[str], noun: str, units: int, scores, sums: bootstrap.Sums,
                    total: Sequence[int], bounds: Tuple[float, float],
                    level_permille: int = bootstrap.LEVEL_PERMILLE, members: int = 0,
                    member_noun: str = "") -> Confidence:
    """The basic intervals of keys from every resample's column sums and the full sums."""
    values = [scores(s) for s in sums]
    point = scores(list(total))
    intervals = [(key, basic_interval([v[i] for v in values], point[i], bounds,
                                      level_permille))
                 for i, key in enumerate(keys)]
    return Confidence(intervals, noun, units, len(sums), level_permille, members, member_noun)


def _total(rows: Any = None, groups: Optional[Dict[Tuple[int, ...], int]] = None) -> List[int]:
    if groups is not None:
        ordered = list(groups)
        width = len(ordered[0]) if ordered else 0
        return [sum(groups[r] * r[j] for r in ordered) for j in range(width)]
    if hasattr(rows, "dtype"):
        return [int(v) for v in rows.sum(axis=0).tolist()]
    return [sum(col) for col in zip(*rows)]


def compute(task: Any, state: Any, summary: Any, config: Any,
            resamples: int = bootstrap.RESAMPLES, seed: int = bootstrap.SEED
            ) -> Optional[Confidence]:
    """The intervals of task.interval_keys for this run; None if the task gives none."""
    if not task.interval_keys:
        return None
    res = task.resampling(state, summary, config)
    if res is None or res.units == 0:
        return None
    return of_resampling(task.interval_keys, res, resamples, seed)


def of_resampling(keys: Sequence[str], res: Any, resamples: int = bootstrap.RESAMPLES,
                  seed: int = bootstrap.SEED) -> Confidence:
    """The basic intervals of a task_api.Resampling: over its clusters when it names them
    (res.group), else over its units."""
    if res.group is not None:
        ids, rows = res.rows()
        clusters, rows = collapse(ids, rows, res.group)
        sums = bootstrap.resample_sums(rows, resamples=resamples, seed=seed)
        return basic_from_sums(keys, res.group_noun, len(clusters), res.scores, sums,
                               _total(rows), res.bounds, members=res.units,
                               member_noun=res.noun)
    if res.distinct is not None:  # the rows are built only if the unit sampler needs them
        sums = bootstrap.resample_sums(groups=res.distinct, rows_of=lambda: res.rows()[1],
                                       resamples=resamples, seed=seed)
        total = _total(groups=res.distinct)
    else:
        rows = res.rows()[1]
        sums = bootstrap.resample_sums(rows, resamples=resamples, seed=seed)
        total = _total(rows)
    return basic_from_sums(keys, res.noun, res.units, res.scores, sums, total, res.bounds)
