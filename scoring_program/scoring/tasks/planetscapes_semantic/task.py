"""The Planetscapes pixel-level semantic labeling task, as the shared engine sees it."""
from typing import Any, Dict, List, Mapping, NamedTuple, Sequence, Tuple, Union

from ...formats.label_png.manifest import image_manifest, image_sizes
from ...formats.label_png.prediction import PngLabels
from ...problems import BrokenReference, ProblemLog
from ...task_api import Manifest, Options, Reference, Summary, Task
from . import intervals, metric
from . import labels as ps_labels
from .intervals import SemanticIntervals
from .packed import PackedReference, SemanticPacking, is_packed, open_packed
from .problems import REF_EMPTY
from .reference import LABELS, SemanticReference, find_root, open_raw
from .report import SemanticReport

MEANS = ["iou_class", "iiou_class", "iou_category", "iiou_category"]

# What open_reference() returns: the raw or the packed layout.
AnyReference = Union[SemanticReference, PackedReference]


def _ranges(ids: Sequence[int]) -> str:
    """'0-3, 7, 9-12' for the ids shown in messages."""
    ids = sorted(ids)
    parts, start = [], None
    for i, v in enumerate(ids):
        if start is None:
            start = v
        if i + 1 == len(ids) or ids[i + 1] != v + 1:
            parts.append(str(start) if start == v else "{}-{}".format(start, v))
            start = None
    return ", ".join(parts)


def _format(ids: Sequence[int]) -> PngLabels:
    """Predictions: PNGs of label ids; any id of the table (ignored ones included) is valid."""
    return PngLabels(max(ids), ids, "a label id of the challenge's label table ({}; the `id` "
                     "column, not trainId or a colour)".format(_ranges(ids)))


class Settings(NamedTuple):
    """The task's settings (configure): the label table, and how the page describes it."""

    table: Any           # labels.LabelTable
    described: str


class Details(NamedTuple):
    """Summary.details: the per-class and per-category results, and the label table."""

    result: Any          # metric.Result
    table: Any           # labels.LabelTable


class SemanticManifest(Manifest[AnyReference]):
    """The task's Manifest role: image ids and sizes (from labels/ headers) and the label ids;
    no labels."""

    def __init__(self, task_name: str) -> None:
        self.task_name = task_name

    def make(self, reference: AnyReference) -> Dict[str, Any]:
        table = reference.table
        return image_manifest(self.task_name, reference.root, reference.ids, LABELS,
                              label_ids=[lab.id for lab in table.in_images],
                              label_names={str(lab.id): lab.name for lab in table.in_images})

    def open(self, manifest: Dict[str, Any]) -> Tuple[Reference, PngLabels]:
        return image_sizes(manifest), _format([int(i) for i in manifest["label_ids"]])


class PlanetscapesSemantic(Task[metric.SemanticState, AnyReference, Settings]):
    name = "planetscapes-semantic"
    title = "Planetscapes pixel-level semantic labeling"
    # The per-class and per-category keys follow the label table: keys(settings) lists them all.
    score_keys = list(MEANS)
    # One 2048 x 1024 image in one process on the raw layout, the slowest: about 35 ms of CPU
    # (bench/results-planetscapes.md, 1 worker). engine.default_workers uses every CPU as soon
    # as that pays for starting a pool: from 6 images on 2 CPUs.
    unit_seconds = 0.035

    report = SemanticReport(title)
    manifest = SemanticManifest(name)
    intervals = SemanticIntervals()
    packing = SemanticPacking()

    def configure(self, options: Options, ref_config: Mapping[str, Any]) -> Settings:
        table = ps_labels.load(ref_config)
        described = ("Cityscapes (cityscapesScripts 2.3.0)" if table.source == "cityscapes" else
                     "config.yaml")
        # The categories the page's table shows (metric.py scores these): a category of
        # ignored labels only (Cityscapes' void) is none of them.
        scored = [c for c in table.categories
                  if table.category_ids(c) or table.instance_category_ids(c) is not None]
        return Settings(table, "{}: {} labels, {} evaluated in {} categories".format(
            described, len(table.labels), len(table.evaluated()), len(scored)))

    def keys(self, settings: Settings) -> List[str]:
        return settings.table.score_keys()

    def open_reference(self, ref_dir: str, settings: Settings) -> AnyReference:
        """Raw or packed layout, detected from the folder's contents."""
        root = find_root(ref_dir)
        table = settings.table
        return open_packed(root, table) if is_packed(root) else open_raw(root, table)

    def submission_format(self, settings: Settings) -> PngLabels:
        return _format([lab.id for lab in settings.table.in_images])

    def new_state(self, settings: Settings) -> metric.SemanticState:
        table = settings.table
        return metric.SemanticState(metric.MetricSpec(table), intervals.RowLayout(table))

    def summarize(self, state: metric.SemanticState, reference: AnyReference,
                  settings: Settings) -> Summary:
        table = settings.table
        result = metric.summarize(state, table)
        if result.means["iou_class"] is None:
            log = ProblemLog()
            log.add(REF_EMPTY, reference.root or "reference",
                    "{:,} images scored".format(state.units))
            raise BrokenReference(log)
        return Summary(metric.score_list(result, table), Details(result, table))
