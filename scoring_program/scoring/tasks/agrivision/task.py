"""The Agriculture-Vision task: what the generic engine needs to score it and report on it."""
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, cast

from ... import resample_units
from ...metrics import unseen
from ...formats.label_png.manifest import image_manifest, image_sizes
from ...formats.label_png.prediction import PngLabels
from ...problems import BrokenReference, ProblemLog
from ...quoting import brief
from ...task_api import Resampling, RunFacts, Summary, Task
from . import metric, report
from .classes import CLASSES, MAX_ID, STORM_POLICIES
from .packed import is_packed, open_packed, pack
from .problems import REF_EMPTY, REF_LAYOUT
from .reference import CodedReference, RawReference, find_root, open_raw


class Settings(NamedTuple):
    """The task's settings (configure): the storm_damage policy (docs/agriculture-vision.md);
    None in a check without labels, which scores nothing."""

    storm_damage: Optional[str] = None
    resample_by: Any = "field"     # the interval's resampling unit (resample_units.py)


class Counts(NamedTuple):
    """Summary.details: the confusion matrix of label sets and the per-class pixel counts."""

    confusion: Any
    tp: List[int]
    fp: List[int]
    fn: List[int]


class AgricultureVision(Task[metric.LabelSetHistogram, CodedReference, Settings]):
    name = "agriculture-vision"
    title = "Agriculture-Vision"
    max_id = MAX_ID
    score_keys = ["miou"] + ["iou_" + c for c in CLASSES]
    # One 512 x 512 image in one process on the raw layout, the slowest (bench/README.md).
    unit_seconds = 0.005
    packed_layout = "docs/packed-format.md"

    def configure(self, args, ref_config: Dict[str, Any]) -> Settings:
        policy = getattr(args, "storm_damage", None) or ref_config.get("storm_damage", "background")
        if policy not in STORM_POLICIES:
            log = ProblemLog()
            log.add(REF_LAYOUT, "config.yaml", "storm_damage must be one of {}, not {}".format(
                ", ".join(STORM_POLICIES), brief(policy)))
            raise BrokenReference(log)
        return Settings(policy,
                        resample_units.read_rule(ref_config, "field", ("field", "image")))

    def config_facts(self, config: Settings) -> List[Tuple[str, str]]:
        return [("storm_damage policy", str(config.storm_damage))]

    def open_reference(self, ref_dir: str,
                       config: Optional[Settings] = None) -> CodedReference:
        """Raw or packed layout, detected from the folder's contents."""
        root = find_root(ref_dir)
        return open_packed(root) if is_packed(root) else open_raw(root)

    def submission_format(self, config: Optional[Settings] = None) -> PngLabels:
        return PngLabels(MAX_ID)

    def make_manifest(self, reference: CodedReference) -> Dict[str, Any]:
        """Image ids and sizes (from the raw layout's boundaries/), no labels."""
        return image_manifest(self.name, reference.root, reference.ids, "boundaries",
                              max_id=MAX_ID)

    def open_manifest(self, manifest: Dict[str, Any]):
        return image_sizes(manifest), self.submission_format()

    def pack(self, reference: CodedReference, out_dir: str, workers: int,
             progress=None) -> Tuple[int, int]:
        # pack.py packs a raw layout only (it refuses any other before this call).
        return pack(cast(RawReference, reference), out_dir, workers, progress)

    def new_state(self, config: Optional[Settings] = None) -> metric.LabelSetHistogram:
        return metric.LabelSetHistogram(config.storm_damage if config is not None else None)

    def summarize(self, state: metric.LabelSetHistogram, reference: CodedReference,
                  config: Settings) -> Summary:
        m = metric.confusion(state.counts, cast(str, config.storm_damage))  # set by configure
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

    interval_keys = ["miou"]

    def resampling(self, state: metric.LabelSetHistogram, summary: Summary,
                   config: Settings) -> Optional[Resampling]:
        """Images, each with its TP and union per class (metric.unit_weights), resampled by
        field (all the tiles of a field together) unless config.yaml says otherwise."""
        if len(state.unit_ids) != state.images:
            return None
        rule = config.resample_by
        counts = summary.details
        blind = unseen.blind_terms(  # classes without a reference pixel: their IoU is unknown
            [t + f for t, f in zip(counts.tp, counts.fn)],
            [t + p + f for t, p, f in zip(counts.tp, counts.fp, counts.fn)])
        return Resampling("images", state.images, state.unit_table,
                          lambda sums: [metric.miou_of_sums(sums)],
                          group=resample_units.key_of(rule, "image"),
                          group_noun="fields" if rule == "field" else "groups",
                          gradient=metric.miou_gradient,
                          widen=lambda _, ends, __: unseen.open_mean(ends, *blind))

    def run_facts(self, state: metric.LabelSetHistogram) -> List[Tuple[str, Any]]:
        return [("Pixels scored", state.pixels)]

    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        """Console table: one row per class plus the mean."""
        rows = []
        values = dict(summary.scores)
        counts = summary.details
        for c, t, p, f in zip(CLASSES, counts.tp, counts.fp, counts.fn):
            v = values["iou_" + c]
            rows.append([c, "n/a" if v is None else "{:.4f}".format(v),
                         "{:,}".format(t), "{:,}".format(p), "{:,}".format(f)])
        v = values["miou"]
        rows.append(["mIoU", "n/a" if v is None else "{:.4f}".format(v), "", "", ""])
        return ["class", "IoU", "TP pixels", "FP pixels", "FN pixels"], rows

    def render_html(self, summary: Summary, warnings: List[str], run: RunFacts,
                    config: Settings) -> str:
        values = dict(summary.scores)
        counts = summary.details
        return report.render(self.title + " - detailed results", values["miou"],
                             [values["iou_" + c] for c in CLASSES],
                             (counts.tp, counts.fp, counts.fn), counts.confusion,
                             warnings, run, self.config_facts(config),
                             intervals=summary.confidence)
