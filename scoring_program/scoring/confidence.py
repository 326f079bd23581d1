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

CONFIG_KEY = "confidence"  # config.yaml: `confidence: false` turns the intervals off
SUFFIXES = ("_ci_low", "_ci_high")


class Confidence(NamedTuple):
    intervals: List[Tuple[str, Optional[Tuple[float, float]]]]  # per interval key; None: undefined
    noun: str            # "images", "questions"
    units: int
    resamples: int
    level_permille: int  # 950

    @property
    def level(self) -> str:
        return "{:g}%".format(self.level_permille / 10)

    def interval(self, key: str) -> Optional[Tuple[float, float]]:
        return dict(self.intervals).get(key)

    def scores(self) -> List[Tuple[str, Optional[float]]]:
        """The leaderboard entries: <key>_ci_low, <key>_ci_high per key (None if undefined)."""
        out = []  # type: List[Tuple[str, Optional[float]]]
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
    """The intervals of keys from the column sums of every resample."""
    values = [scores(s) for s in sums]
    intervals = [(key, bootstrap.percentile_interval([v[i] for v in values], level_permille))
                 for i, key in enumerate(keys)]
    return Confidence(intervals, noun, units, len(sums), level_permille)


def compute(task: Any, state: Any, summary: Any, config: Dict[str, Any],
            resamples: int = bootstrap.RESAMPLES, seed: int = bootstrap.SEED
            ) -> Optional[Confidence]:
    """The intervals of task.interval_keys for this run; None if the task gives none."""
    if not task.interval_keys:
        return None
    res = task.resampling(state, summary, config)
    if res is None or res.units == 0:
        return None
    if res.distinct is not None:  # the rows are built only if the unit sampler needs them
        sums = bootstrap.resample_sums(groups=res.distinct, rows_of=lambda: res.rows()[1],
                                       resamples=resamples, seed=seed)
    else:
        sums = bootstrap.resample_sums(res.rows()[1], resamples=resamples, seed=seed)
    return from_sums(task.interval_keys, res.noun, res.units, res.scores, sums)
