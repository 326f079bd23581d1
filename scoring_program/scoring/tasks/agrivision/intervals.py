"""The Agriculture-Vision task's confidence interval of mIoU (docs/confidence.md): per image its
TP and union per class (metric.unit_weights), resampled by field by default: the tiles of one
field are not independent, so they are drawn together.

A tile id is `<field>_<x1>-<y1>-<x2>-<y2>` (the dataset's naming): its field is the id without
its last `_` part.
"""
from typing import Any, Optional

from ... import resample_units
from ...metrics import unseen
from ...task_api import Intervals, Resampling, Summary
from . import metric
from .reference import CodedReference


def field_of(unit_id: Any) -> str:
    """The field of a tile id: the id without its last `_` part (the coordinates)."""
    text = str(unit_id)
    return text.rsplit("_", 1)[0] if "_" in text else text


def cluster_key(by: str):
    """A tile's cluster under the rule `by` (None: each tile on its own)."""
    return resample_units.key_of(by, "image", {"field": field_of})


class FieldIntervals(Intervals[metric.LabelSetHistogram, CodedReference, Any]):
    """The task's Intervals role: mIoU's interval, by field (default), image or `prefix N`."""

    keys = ["miou"]
    resample_by = ("field", "image")
    split_by = "field"

    def clusters(self, reference: CodedReference, by: str):
        return sorted(reference.ids), cluster_key(by)

    def resampling(self, state: metric.LabelSetHistogram, summary: Summary,
                   reference: CodedReference, settings: Any, by: str) -> Optional[Resampling]:
        """Images, each with its TP and union per class, resampled by the rule `by`; the
        classes without a reference pixel set free (metrics/unseen.py)."""
        if len(state.unit_rows) != state.images:
            return None
        counts = summary.details
        blind = unseen.blind_terms(  # classes without a reference pixel: their IoU is unknown
            [t + f for t, f in zip(counts.tp, counts.fn)],
            [t + p + f for t, p, f in zip(counts.tp, counts.fp, counts.fn)])
        return Resampling("images", state.images, state.unit_table,
                          lambda sums: [metric.miou_of_sums(sums)],
                          group=cluster_key(by),
                          group_noun="fields" if by == "field" else "groups",
                          gradient=metric.miou_gradient,
                          widen=lambda _, ends, __: unseen.open_mean(ends, *blind))
