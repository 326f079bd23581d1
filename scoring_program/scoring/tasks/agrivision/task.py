"""The Agriculture-Vision task: what the generic engine needs to score it and report on it."""
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, cast

from ...config import CONFIG_FILE
from ...formats.label_png.manifest import image_manifest, image_sizes
from ...formats.label_png.prediction import PngLabels
from ...problems import REF_CONFIG, BrokenReference, ProblemLog
from ...quoting import brief
from ...task_api import Manifest, Options, Reference, Summary, Task
from . import metric
from .classes import CLASSES, MAX_ID, STORM_POLICIES
from .intervals import FieldIntervals
from .packed import AVPacking, is_packed, open_packed
from .problems import REF_EMPTY
from .reference import CodedReference, find_root, open_raw
from .report import AVReport


class Settings(NamedTuple):
    """The task's settings (configure): the storm_damage policy (docs/agriculture-vision.md);
    None in a check without labels, which scores nothing."""

    storm_damage: Optional[str] = None


class Counts(NamedTuple):
    """Summary.details: the confusion matrix of label sets and the per-class pixel counts."""

    confusion: Any
    tp: List[int]
    fp: List[int]
    fn: List[int]


class AVManifest(Manifest[CodedReference]):
    """The task's Manifest role: image ids and sizes (from the raw layout's boundaries/), no
    labels."""

    def __init__(self, task_name: str) -> None:
        self.task_name = task_name

    def make(self, reference: CodedReference) -> Dict[str, Any]:
        return image_manifest(self.task_name, cast(str, reference.root), reference.ids,
                              "boundaries", max_id=MAX_ID)

    def open(self, manifest: Dict[str, Any]) -> Tuple[Reference, PngLabels]:
        return image_sizes(manifest), PngLabels(MAX_ID)


class AgricultureVision(Task[metric.LabelSetHistogram, CodedReference, Settings]):
    name = "agriculture-vision"
    title = "Agriculture-Vision"
    max_id = MAX_ID
    score_keys = ["miou"] + ["iou_" + c for c in CLASSES]
    # One 512 x 512 image in one process on the raw layout, the slowest (bench/README.md).
    unit_seconds = 0.005

    report = AVReport(title)
    manifest = AVManifest(name)
    intervals = FieldIntervals()
    packing = AVPacking()

    def configure(self, options: Options, ref_config: Mapping[str, Any]) -> Settings:
        policy = options.get("storm_damage") or ref_config.get("storm_damage", "background")
        if policy not in STORM_POLICIES:
            log = ProblemLog()
            log.add(REF_CONFIG, CONFIG_FILE, "storm_damage must be one of {}, not {}".format(
                ", ".join(STORM_POLICIES), brief(policy)))
            raise BrokenReference(log)
        return Settings(policy)

    def open_reference(self, ref_dir: str,
                       settings: Optional[Settings] = None) -> CodedReference:
        """Raw or packed layout, detected from the folder's contents."""
        root = find_root(ref_dir)
        return open_packed(root) if is_packed(root) else open_raw(root)

    def submission_format(self, settings: Optional[Settings] = None) -> PngLabels:
        return PngLabels(MAX_ID)

    def new_state(self, settings: Optional[Settings] = None) -> metric.LabelSetHistogram:
        return metric.LabelSetHistogram(settings.storm_damage if settings is not None else None)

    def summarize(self, state: metric.LabelSetHistogram, reference: CodedReference,
                  settings: Settings) -> Summary:
        m = metric.confusion(state.counts, cast(str, settings.storm_damage))  # set by configure
        tp, fp, fn = metric.pixel_counts(m)
        ious = metric.iou(tp, fp, fn)
        miou = metric.mean_iou(ious)
        if miou is None:  # the ranking score needs at least one valid pixel
            log = ProblemLog()
            log.add(REF_EMPTY, reference.root or "reference",
                    "{:,} images scored".format(state.images))
            raise BrokenReference(log)
        scores = [("miou", miou)] + [("iou_" + c, v) for c, v in zip(CLASSES, ious)]
        return Summary([(k, None if v is None else float(v)) for k, v in scores],
                       Counts(m, tp, fp, fn))
