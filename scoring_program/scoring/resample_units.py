"""What the bootstrap resamples: the independent units of a test set (docs/confidence.md).

Test units that are not independent (Agriculture-Vision's tiles of one field, consecutive
frames of one drive, several questions about one image) must be resampled together, or the
intervals are too narrow. A reference's config.yaml names the grouping (read with
`confidence:` by confidence.read_settings, against the rules the task's Intervals declare):

    resample_by: image      # every image (question: every question) on its own
    resample_by: prefix 2   # the first 2 `_`-separated parts of the id (aachen_000012_...)
    resample_by: field      # a rule of the task's own (Agriculture-Vision's fields)

For a score that is a function of per-unit rows' sums (task_api.Resampling), a cluster's row is
the sum of its units' rows, and resampling clusters is resampling those summed rows: the
bootstrap itself is unchanged (collapse). For a score re-scored from per-unit records
(task_api.Rescoring), every unit of a cluster is drawn as often as its cluster (members).
Clusters are ordered by their key (a string), so the result does not depend on the order in
which units were scored.
"""
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .config import CONFIG_FILE
from .problems import REF_CONFIG, BrokenReference, ProblemLog
from .quoting import brief

CONFIG_KEY = "resample_by"
PREFIX = "prefix"


def prefix_of(parts: int) -> Callable[[Any], str]:
    def key(unit_id: Any) -> str:
        return "_".join(str(unit_id).split("_")[:parts])
    return key


def read_rule(ref_config: Dict[str, Any], default: str, named: Sequence[str],
              prefix: bool = True) -> str:
    """config.yaml's resample_by (default: the task's): one of named, or `prefix N` (N >= 1)
    where unit ids are names (prefix). Anything else is the organizers' mistake (exit 3)."""
    value = ref_config.get(CONFIG_KEY, default)
    if isinstance(value, str):
        words = value.split()
        if len(words) == 1 and words[0] in named:
            return words[0]
        if prefix and len(words) == 2 and words[0] == PREFIX and words[1].isdigit() and \
                0 < int(words[1]) < 100:
            return "{} {}".format(PREFIX, int(words[1]))
    log = ProblemLog()
    choices = ", ".join(named)
    if prefix:
        choices += " or `{} N` (the first N `_`-separated parts of the unit id)".format(PREFIX)
    log.add(REF_CONFIG, CONFIG_FILE, "{} must be one of {}, not {}".format(
        CONFIG_KEY, choices, brief(value)))
    raise BrokenReference(log)


def key_of(rule: str, unit_rule: str,
           named: Optional[Dict[str, Callable[[Any], Any]]] = None
           ) -> Optional[Callable[[Any], Any]]:
    """The cluster of a unit id under a rule: None when every unit is its own (unit_rule), the
    task's own key for a rule it names (named: rule -> key), or `prefix N`'s."""
    if rule == unit_rule:
        return None
    if named and rule in named:
        return named[rule]
    if rule.startswith(PREFIX + " "):
        return prefix_of(int(rule.split()[1]))
    raise ValueError("no cluster key for " + rule)


def collapse(ids: Sequence[Any], rows: Any, key: Callable[[Any], Any]) -> Tuple[List[Any], Any]:
    """(cluster keys sorted, per cluster the sum of its units' rows: an int64 array, or a list
    of tuples if rows is a list)."""
    members: Dict[Any, List[int]] = {}
    for i, unit in enumerate(ids):
        members.setdefault(key(unit), []).append(i)
    keys = sorted(members)
    if hasattr(rows, "dtype"):
        import numpy as np
        order = np.array([i for k in keys for i in members[k]], dtype=np.intp)
        starts = np.cumsum([0] + [len(members[k]) for k in keys[:-1]]).astype(np.intp)
        table = np.asarray(rows, dtype=np.int64).reshape(len(ids), -1)
        if not len(keys):
            return keys, table[:0]
        return keys, np.add.reduceat(table[order], starts, axis=0)
    out = []
    for k in keys:
        sums: Optional[List[int]] = None
        for i in members[k]:
            sums = list(rows[i]) if sums is None else [s + v for s, v in zip(sums, rows[i])]
        out.append(tuple(sums or ()))
    return keys, out


def members(ids: Sequence[Any], key: Callable[[Any], Any]) -> Tuple[List[Any], List[int]]:
    """(cluster keys sorted, per unit the index of its cluster among them)."""
    keys = sorted(set(key(unit) for unit in ids))
    index = {k: i for i, k in enumerate(keys)}
    return keys, [index[key(unit)] for unit in ids]
