"""The confidence interval of `ap` and `ap50` by re-scoring (task_api.Rescoring): AP ranks every
prediction of the test set, so it is no function of per-image sums; each bootstrap resample of
images is scored again from the images' records, each weighted by how often it is drawn
(ap.Examples arranges the records once; a resample costs a few weighted bincounts per class and
overlap)."""
from typing import Any, List, Optional, Sequence

from ... import resample_units
from ...task_api import Intervals, Rescoring, Summary
from . import ap
from .metric import InstanceState, examples_of


class InstanceIntervals(Intervals[InstanceState, Any, Any]):
    keys = ["ap", "ap50"]
    resample_by = ("image",)

    def resampling(self, state: InstanceState, summary: Summary, reference: Any, settings: Any,
                   by: str) -> Optional[Rescoring]:
        if len(state.records) != state.units or not state.units:
            return None
        ids, examples = examples_of(state)

        def rescore(weights: Sequence[int]) -> List[Optional[float]]:
            m = ap.means(examples.table_resampled(weights))
            return [m.ap, m.ap50]
        return Rescoring("images", ids, rescore, group=resample_units.key_of(by, "image"),
                         group_noun="groups")
