"""The Planetscapes panoptic segmentation task, as the shared engine sees it."""
from typing import Any, Dict, List, Mapping, NamedTuple, Sequence, Tuple

from ...formats.label_png.manifest import image_manifest, image_sizes
from ...problems import BrokenReference, ProblemLog
from ...task_api import Manifest, Options, Reference, Summary, Task
from ..planetscapes_semantic import labels as ps_labels
from ..planetscapes_semantic.problems import REF_CONFIG
from . import metric
from .intervals import PanopticIntervals
from .predictions import PanopticPredictions
from .problems import REF_EMPTY, REF_ZERO
from .reference import INSTANCES, PanopticReference, SegmentSpec, open_reference
from .report import PanopticReport


def _format(ids: Sequence[int], names: Sequence[str]) -> PanopticPredictions:
    shown = ", ".join("{} ({})".format(i, n) for i, n in zip(ids[:12], names[:12]))
    return PanopticPredictions(ids, shown + (", ..." if len(ids) > 12 else ""))


class Settings(NamedTuple):
    table: Any           # labels.LabelTable
    described: str


class Details(NamedTuple):
    result: Any          # metric.Result
    table: Any


class PanopticManifest(Manifest[PanopticReference]):
    """Image ids and sizes (from instances/ headers) and the evaluated label ids; no labels."""

    def __init__(self, task_name: str) -> None:
        self.task_name = task_name

    def make(self, reference: PanopticReference) -> Dict[str, Any]:
        evaluated = reference.table.evaluated()
        return image_manifest(self.task_name, reference.root, reference.ids, INSTANCES,
                              label_ids=[lab.id for lab in evaluated],
                              label_names={str(lab.id): lab.name for lab in evaluated})

    def open(self, manifest: Dict[str, Any]) -> Tuple[Reference, PanopticPredictions]:
        ids = [int(i) for i in manifest["label_ids"]]
        names = [str(manifest.get("label_names", {}).get(str(i), "")) for i in ids]
        return image_sizes(manifest), _format(ids, names)


def _check_table(table: Any) -> None:
    """What the panoptic format adds to the semantic task's table checks."""
    log = ProblemLog()
    if any(lab.id == 0 for lab in table.evaluated()):
        log.add(REF_ZERO, ps_labels.CONFIG, "label {} has id 0".format(table.by_id[0].name))
    for lab in table.evaluated():
        if ps_labels.key_name(lab.name) in ("things", "stuff"):
            log.add(REF_CONFIG, ps_labels.CONFIG, "label {}: its score keys pq_{} would be the "
                    "mean over the {} (rename it)".format(lab.name, ps_labels.key_name(lab.name),
                                                          ps_labels.key_name(lab.name)))
    if log.fatal:
        raise BrokenReference(log)


class PlanetscapesPanoptic(Task[metric.PanopticState, PanopticReference, Settings]):
    name = "planetscapes-panoptic"
    title = "Planetscapes panoptic segmentation"
    score_keys = list(metric.MEANS)
    # One 2048 x 1024 image in one process: about 30 ms of CPU, two thirds of it the two
    # decodes (bench/results-panoptic.md).
    unit_seconds = 0.03

    report = PanopticReport(title)
    manifest = PanopticManifest(name)
    intervals = PanopticIntervals()

    def configure(self, options: Options, ref_config: Mapping[str, Any]) -> Settings:
        table = ps_labels.load(ref_config)
        _check_table(table)
        described = ("Cityscapes (cityscapesScripts 2.3.0)" if table.source == "cityscapes" else
                     "config.yaml")
        things = sum(1 for lab in table.evaluated() if lab.has_instances)
        return Settings(table, "{}: {} labels, {} evaluated ({} things, {} stuff)".format(
            described, len(table.labels), len(table.evaluated()), things,
            len(table.evaluated()) - things))

    def keys(self, settings: Settings) -> List[str]:
        return metric.score_keys(settings.table)

    def open_reference(self, ref_dir: str, settings: Settings) -> PanopticReference:
        return open_reference(ref_dir, settings.table)

    def submission_format(self, settings: Settings) -> PanopticPredictions:
        evaluated = settings.table.evaluated()
        return _format([lab.id for lab in evaluated], [lab.name for lab in evaluated])

    def new_state(self, settings: Settings) -> metric.PanopticState:
        return metric.PanopticState(SegmentSpec(settings.table), len(settings.table.evaluated()))

    def summarize(self, state: metric.PanopticState, reference: PanopticReference,
                  settings: Settings) -> Summary:
        # TP + FN counts the reference's segments whatever the prediction: none, no PQ ever.
        if not int(state.tp.sum() + state.fn.sum()):
            log = ProblemLog()
            log.add(REF_EMPTY, reference.root or "reference",
                    "{:,} images scored".format(state.units))
            raise BrokenReference(log)
        result = metric.summarize(state, settings.table)
        return Summary(metric.score_list(result, settings.table), Details(result, settings.table))
