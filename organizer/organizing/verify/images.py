"""Two sets of predictions compared image by image, by content (the decoded label values, not
the PNG bytes: a re-encoded PNG is the same prediction): identical, or how many pixels differ.
Read with the task's own reader, in the engine's worker processes.
"""
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from scoring import engine
from scoring.task_api import PredictionProblem

# (image id, path in A or None, path in B or None)
Item = Tuple[str, Optional[str], Optional[str]]


class Difference(NamedTuple):
    unit: str
    pixels: int          # pixels that differ (all of them when the sizes differ)
    total: int           # pixels of the image in A (0 if A has none)
    note: str            # "" or why they cannot be compared: "missing in B", "sizes differ"


class Agreement(NamedTuple):
    compared: int        # images present on both sides
    identical: int
    pixels: int          # pixels compared
    differing: int       # pixels that differ
    differences: List[Difference]   # every image that is not identical, sorted by id

    @property
    def agreement(self) -> Optional[float]:
        return 1.0 - self.differing / self.pixels if self.pixels else None


def _compare_chunk(context: Dict[str, Any], items: Sequence[Item]):
    import numpy as np
    fmt = context["format"]
    out = []
    for unit, a, b in items:
        if a is None or b is None:
            out.append(Difference(unit, 0, 0, "missing in {}".format(
                context["names"][0] if a is None else context["names"][1])))
            continue
        try:
            left = fmt.comparable(fmt.read(a, None))
            right = fmt.comparable(fmt.read(b, None))
        except PredictionProblem as exc:
            out.append(Difference(unit, 0, 0, "unreadable ({})".format(exc.detail or
                                                                       "not a prediction")))
            continue
        if not isinstance(left, np.ndarray):
            # A prediction that is no label image (the instance task's masks with their labels
            # and confidences): identical or not, as a whole.
            same = _canonical(left) == _canonical(right)
            out.append(Difference(unit, 0 if same else 1, 1,
                                  "" if same else "the predictions differ"))
            continue
        total = int(np.asarray(left).size)
        if np.shape(left) != np.shape(right):
            out.append(Difference(unit, total, total, "sizes differ ({} and {})".format(
                "x".join(map(str, np.shape(left)[::-1])),
                "x".join(map(str, np.shape(right)[::-1])))))
            continue
        out.append(Difference(unit, int(np.count_nonzero(np.asarray(left) !=
                                                         np.asarray(right))), total, ""))
    return out


def _canonical(value: Any) -> Any:
    """A comparable form of a prediction: arrays by dtype, shape and bytes, sequences item by
    item."""
    import numpy as np
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(v) for v in value)
    return value


def compare(fmt, a: Dict[str, str], b: Dict[str, str], names: Tuple[str, str],
            workers: int) -> Agreement:
    """a, b: image id -> prediction file; names: how A and B are called in notes."""
    units = sorted(set(a) | set(b))
    items = [(u, a.get(u), b.get(u)) for u in units]
    found: List[Difference] = []
    engine.map_chunks(_compare_chunk, {"format": fmt, "names": names},
                      engine.chunked(items, workers), workers, found.extend)
    found.sort()
    compared = [d for d in found if not d.note.startswith(("missing", "unreadable"))]
    return Agreement(len(compared), sum(1 for d in compared if d.pixels == 0),
                     sum(d.total for d in compared), sum(d.pixels for d in compared),
                     [d for d in found if d.pixels or d.note])
