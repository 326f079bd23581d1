"""The instance task's metric state: per image its record (matching.ImageRecord), concatenated
(CAT); AP is computed at the end over every record in image-id order (ap.py), so any worker
count and file order give the same bits."""
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ...task_api import CAT, SUM, MetricState
from . import ap
from .matching import ClassSpec, ImageRecord, match
from .prediction import Mask
from .reference import Truth


class InstanceState(MetricState):
    fields = {"records": CAT, "units": SUM, "predictions": SUM}

    def __init__(self, spec: ClassSpec) -> None:
        self.spec = spec
        self.records: Dict[str, ImageRecord] = {}
        self.units = 0
        self.predictions = 0

    def update(self, unit_id: str, prediction: Sequence[Mask], truth: Truth) -> None:
        self.records[unit_id] = match(self.spec, prediction, truth)
        self.units += 1
        self.predictions += len(prediction)


class ClassResult(NamedTuple):
    name: str
    id: int
    ap: Optional[float]
    ap50: Optional[float]
    instances: int      # counted ground-truth instances (>= 100 px)
    predictions: int    # predictions kept (non-empty, of this class)
    curve: Any          # (precision, recall) at overlap 0.5, or None


class Result(NamedTuple):
    ap: Optional[float]
    ap50: Optional[float]
    classes: List[ClassResult]
    table: np.ndarray   # AP per class and overlap (NaN: none)


def examples_of(state: InstanceState) -> Tuple[List[str], ap.Examples]:
    pairs = state.in_unit_order("records")
    return [u for u, _ in pairs], ap.Examples([r for _, r in pairs], len(state.spec.ids))


def summarize(state: InstanceState) -> Result:
    _, ex = examples_of(state)
    table = ex.table()
    m = ap.means(table)
    classes = []
    w = np.ones(ex.images)
    for k, (name, cid) in enumerate(zip(state.spec.names, state.spec.ids)):
        curve = None
        if m.per_class[k][0] is not None and ex.preds[:, k].sum():
            _, precision, recall = ap.curve_ap(ex.curves[0][k], w, float(ex.hard_fn[0][:, k].sum()))
            curve = (precision.tolist(), recall.tolist())
        classes.append(ClassResult(name, cid, m.per_class[k][0], m.per_class[k][1],
                                   int(ex.gt[:, k].sum()), int(ex.preds[:, k].sum()), curve))
    return Result(m.ap, m.ap50, classes, table)


def score_list(result: Result, key_name) -> List[Tuple[str, Optional[float]]]:
    scores = [("ap", result.ap), ("ap50", result.ap50)]
    scores += [("ap_" + key_name(c.name), c.ap) for c in result.classes]
    scores += [("ap50_" + key_name(c.name), c.ap50) for c in result.classes]
    return scores
