"""The Planetscapes pixel-level semantic labeling task, as the shared engine sees it."""
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union, cast

from ...formats.label_png.manifest import image_manifest, image_sizes
from ...formats.label_png.prediction import PngLabels
from ...problems import BrokenReference, ProblemLog
from ... import resample_units
from ...metrics import unseen
from ...task_api import Resampling, RunFacts, Summary, Task
from . import intervals, metric, report
from . import labels as ps_labels
from .packed import PackedReference, is_packed, open_packed, pack
from .problems import REF_EMPTY
from .reference import LABELS, SemanticReference, find_root, open_raw

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
    resample_by: Any = "image"   # the interval's resampling unit (resample_units.py)


class Details(NamedTuple):
    """Summary.details: the per-class and per-category results, and the label table."""

    result: Any          # metric.Result
    table: Any           # labels.LabelTable


class PlanetscapesSemantic(Task[metric.SemanticState, AnyReference, Settings]):
    name = "planetscapes-semantic"
    title = "Planetscapes pixel-level semantic labeling"
    # The per-class and per-category keys follow the label table: keys(config) lists them all.
    score_keys = list(MEANS)
    # One 2048 x 1024 image in one process on the raw layout, the slowest: about 35 ms of CPU
    # (bench/results-planetscapes.md, 1 worker). engine.default_workers uses every CPU as soon
    # as that pays for starting a pool: from 6 images on 2 CPUs.
    unit_seconds = 0.035
    packed_layout = "docs/planetscapes.md"

    def configure(self, args, ref_config: Dict[str, Any]) -> Settings:
        table = ps_labels.load(ref_config)
        described = ("Cityscapes (cityscapesScripts 2.3.0)" if table.source == "cityscapes" else
                     "config.yaml")
        # The categories the page's table shows (metric.py scores these): a category of
        # ignored labels only (Cityscapes' void) is none of them.
        scored = [c for c in table.categories
                  if table.category_ids(c) or table.instance_category_ids(c) is not None]
        return Settings(table, "{}: {} labels, {} evaluated in {} categories".format(
            described, len(table.labels), len(table.evaluated()), len(scored)),
            # image (default), or `prefix N`: the city, the sequence (resample_units.py)
            resample_units.read_rule(ref_config, "image", ("image",)))

    def config_facts(self, config: Settings) -> List[Tuple[str, str]]:
        return [("Label table", config.described)]

    def keys(self, config: Settings) -> List[str]:
        return config.table.score_keys()

    def open_reference(self, ref_dir: str, config: Settings) -> AnyReference:
        """Raw or packed layout, detected from the folder's contents."""
        root = find_root(ref_dir)
        table = config.table
        return open_packed(root, table) if is_packed(root) else open_raw(root, table)

    def pack(self, reference: AnyReference, out_dir: str, workers: int,
             progress=None) -> Tuple[int, int]:
        # pack.py packs a raw layout only (it refuses any other before this call).
        return pack(cast(SemanticReference, reference), out_dir, workers, progress)

    def submission_format(self, config: Settings) -> PngLabels:
        return _format([lab.id for lab in config.table.in_images])

    def new_state(self, config: Settings) -> metric.SemanticState:
        table = config.table
        return metric.SemanticState(metric.MetricSpec(table), intervals.RowLayout(table))

    interval_keys = ["iou_class", "iiou_class"]

    def resampling(self, state: metric.SemanticState, summary: Summary,
                   config: Settings) -> Optional[Resampling]:
        """Images, each with its TP, FP, FN per class and its instances' weighted hits
        (intervals.py); the average instance sizes of the run are held fixed."""
        if state.row_layout is None or len(state.unit_ids) != state.units:
            return None
        layout = state.row_layout
        averages = {r.id: r.average_size or 0.0 for r in summary.details.result.classes
                    if r.has_instances}
        return Resampling("images", state.units, lambda: intervals.unit_table(state),
                          lambda sums: intervals.scores_of_sums(layout, averages, sums),
                          group=resample_units.key_of(config.resample_by,
                                                      "image"), group_noun="groups",
                          gradient=lambda sums: intervals.gradient_of_sums(layout, averages,
                                                                           sums),
                          widen=lambda key, ends, total: unseen.open_mean(
                              ends, *intervals.blind_terms(layout, averages, total)[key]))

    def summarize(self, state: metric.SemanticState, reference: AnyReference,
                  config: Settings) -> Summary:
        table = config.table
        result = metric.summarize(state, table)
        if result.means["iou_class"] is None:
            log = ProblemLog()
            log.add(REF_EMPTY, reference.root or "reference",
                    "{:,} images scored".format(state.units))
            raise BrokenReference(log)
        return Summary(metric.score_list(result, table), Details(result, table))

    def run_facts(self, state: metric.SemanticState) -> List[Tuple[str, Any]]:
        return [("Pixels scored", state.pixels)]

    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        def f(v):
            return "n/a" if v is None else "{:.4f}".format(v)

        result = summary.details.result
        rows = [[r.name, f(r.iou), f(r.iiou) if r.has_instances else ""] for r in result.classes]
        rows.append(["mean of classes", f(result.means["iou_class"]),
                     f(result.means["iiou_class"])])
        rows += [["category " + r.name, f(r.iou), "" if r.itp is None else f(r.iiou)]
                 for r in result.categories]
        rows.append(["mean of categories", f(result.means["iou_category"]),
                     f(result.means["iiou_category"])])
        return ["class / category", "IoU", "iIoU"], rows

    def render_html(self, summary: Summary, warnings: List[str], run: RunFacts,
                    config: Settings) -> str:
        return report.render(self.title + " - detailed results", summary.details.result,
                             summary.details.table, warnings, run, self.config_facts(config),
                             summary.confidence)

    def make_manifest(self, reference: AnyReference) -> Dict[str, Any]:
        """Image ids and sizes (from labels/ headers) and the label ids; no labels."""
        table = reference.table
        return image_manifest(self.name, reference.root, reference.ids, LABELS,
                              label_ids=[lab.id for lab in table.in_images],
                              label_names={str(lab.id): lab.name for lab in table.in_images})

    def open_manifest(self, manifest: Dict[str, Any]):
        return image_sizes(manifest), _format([int(i) for i in manifest["label_ids"]])
