"""The Planetscapes instance-level semantic labeling task, as the shared engine sees it."""
from typing import Any, Dict, List, Mapping, NamedTuple, Tuple

from ...formats.label_png.manifest import image_manifest, image_sizes
from ...problems import BrokenReference, ProblemLog
from ...task_api import Manifest, Options, Reference, Summary, Task
from ..planetscapes_semantic import labels as ps_labels
from ..planetscapes_semantic.problems import REF_CONFIG, REF_EMPTY
from ..planetscapes_semantic.reference import INSTANCES
from . import metric
from .intervals import InstanceIntervals
from .matching import ClassSpec
from .prediction import InstanceFiles
from .reference import InstanceReference, find_root, open_raw
from .report import InstanceReport


class Settings(NamedTuple):
    table: Any           # planetscapes_semantic.labels.LabelTable
    spec: ClassSpec
    described: str


class Details(NamedTuple):
    result: Any          # metric.Result


def _classes_text(table) -> str:
    shown = ["{} {}".format(lab.id, lab.name) for lab in table.in_images
             if lab.has_instances and not lab.ignore_in_eval]
    return ", ".join(shown)


def _format(table) -> InstanceFiles:
    return InstanceFiles([lab.id for lab in table.in_images if lab.has_instances],
                         _classes_text(table))


class InstanceManifest(Manifest[InstanceReference]):
    def __init__(self, task_name: str) -> None:
        self.task_name = task_name

    def make(self, reference: InstanceReference) -> Dict[str, Any]:
        table = reference.table
        return image_manifest(self.task_name, reference.root, reference.ids, INSTANCES,
                              label_ids=[lab.id for lab in table.in_images if lab.has_instances],
                              label_names={str(lab.id): lab.name for lab in table.in_images
                                           if lab.has_instances})

    def open(self, manifest: Dict[str, Any]) -> Tuple[Reference, InstanceFiles]:
        names = manifest.get("label_names", {})
        ids = [int(i) for i in manifest["label_ids"]]
        return image_sizes(manifest), InstanceFiles(ids, ", ".join(
            "{} {}".format(i, names.get(str(i), "")) for i in ids))


class PlanetscapesInstance(Task[metric.InstanceState, InstanceReference, Settings]):
    name = "planetscapes-instance"
    title = "Planetscapes instance-level semantic labeling"
    score_keys = ["ap", "ap50"]
    # One 2048 x 1024 image with ~20 masks in one process: about 0.1 s of CPU.
    unit_seconds = 0.1

    report = InstanceReport(title)
    manifest = InstanceManifest(name)
    intervals = InstanceIntervals()

    def configure(self, options: Options, ref_config: Mapping[str, Any]) -> Settings:
        table = ps_labels.load(ref_config)
        spec = ClassSpec(table)
        if not spec.ids:
            log = ProblemLog()
            log.add(REF_CONFIG, ps_labels.CONFIG, "no label has has_instances: true and "
                    "ignore_in_eval: false: the instance task has no class to score")
            raise BrokenReference(log)
        described = ("Cityscapes (cityscapesScripts 2.3.0)" if table.source == "cityscapes" else
                     "config.yaml")
        return Settings(table, spec, "{}: {} instance classes evaluated".format(
            described, len(spec.ids)))

    def keys(self, settings: Settings) -> List[str]:
        names = [ps_labels.key_name(n) for n in settings.spec.names]
        return ["ap", "ap50"] + ["ap_" + n for n in names] + ["ap50_" + n for n in names]

    def open_reference(self, ref_dir: str, settings: Settings) -> InstanceReference:
        return open_raw(find_root(ref_dir), settings.table)

    def submission_format(self, settings: Settings) -> InstanceFiles:
        return _format(settings.table)

    def new_state(self, settings: Settings) -> metric.InstanceState:
        return metric.InstanceState(settings.spec)

    def summarize(self, state: metric.InstanceState, reference: InstanceReference,
                  settings: Settings) -> Summary:
        result = metric.summarize(state)
        if result.ap is None:
            log = ProblemLog()
            log.add(REF_EMPTY, reference.root or "reference", "no instance class has a "
                    "ground-truth instance of at least 100 pixels in the {:,} images scored: "
                    "AP is undefined".format(state.units))
            raise BrokenReference(log)
        return Summary(metric.score_list(result, ps_labels.key_name), Details(result))
