"""detailed_results.html of the Planetscapes semantic task, from the shared HTML blocks.

Aggregate results only: the four means, per-class IoU and iIoU side by side with the pixel counts
behind them, the category table, the confusion matrix (rows = reference, as the anchor prints
it), the average instance sizes used. Nothing per image.
"""
from typing import Any, List, Sequence, Tuple

from ...report import html, interval_text, run_info
from ...task_api import Report, RunFacts, Summary
from .labels import LabelTable
from .metric import Result, SemanticState

FIRST_NOTE = ("Scores are computed as cityscapesScripts' evalPixelLevelSemanticLabeling "
              "computes them, over all pixels of {} at once (one confusion matrix, rows = "
              "reference).")
NOTES = [
    FIRST_NOTE.format("all test images"),
    "IoU = TP / (TP + FP + FN) per class. Pixels whose reference label is ignored in evaluation "
    "never count. Predicting an ignored id on an evaluated pixel is a false negative for the "
    "reference class and a false positive for no class. A class with TP + FP + FN = 0 has no "
    "IoU and is left out of the mean.",
    "Category IoU: the same with the classes of a category merged (its non-ignored classes).",
    "iIoU = iTP / (iTP + FP + iFN) for classes with instances: each instance's pixels are "
    "weighted by (average instance size of its class) / (its size), so small objects count as "
    "much as large ones; FP is not weighted. Instances are the values above 1000 of the instance "
    "images (class_id * 1000 + k); other pixels count for IoU only.",
    "Category iIoU, for categories whose classes all have instances: a pixel of an instance "
    "predicted as any class of its category (ignored ones included) is a hit.",
    "Means are over the classes (categories) that have a value.",
]

_SOURCE = {"configured": "config.yaml (average_instance_size)",
           "reference": "mean size of the class's instances in the reference"}


def _source(table: LabelTable, source: str) -> str:
    if source == "configured" and table.source == "cityscapes":
        return "the Cityscapes table (cityscapesScripts)"
    return _SOURCE.get(source, "")


def _with_interval(note: str, intervals, key: str) -> str:
    phrase = interval_text.phrase(intervals, key)
    return note + "; " + phrase if phrase else note


def render(title: str, result: Result, table: LabelTable, warnings: List[str], run: RunFacts,
           settings_facts: Sequence[Tuple[str, Any]], intervals=None) -> str:
    """intervals: the run's confidence.Confidence (None: not shown)."""
    means = result.means
    sections = []
    have = "{:d} of {:d} evaluated classes have an IoU".format(
        sum(1 for r in result.classes if r.iou is not None), len(result.classes))
    first = interval_text.headline_parts(intervals, "iou_class") + [have]
    sections.append(("", html.headline("IoU (classes)", means["iou_class"],
                                       run_info.subline(run, warnings, first)) +
                     interval_text.explanation_html(intervals)))
    sections.append(("Scores", html.scores_table([
        ("IoU, mean over classes", means["iou_class"],
         _with_interval("leaderboard key iou_class", intervals, "iou_class")),
        ("iIoU, mean over classes", means["iiou_class"],
         _with_interval("iiou_class", intervals, "iiou_class")),
        ("IoU, mean over categories", means["iou_category"], "iou_category"),
        ("iIoU, mean over categories", means["iiou_category"], "iiou_category"),
    ])))

    class_rows = [[r.name, r.id, r.iou, r.iiou if r.has_instances else "-", r.tp, r.fp, r.fn]
                  for r in result.classes]
    sections.append(("Per class", html.counts_table(
        ["Class", "Id", "IoU", "iIoU", "TP pixels", "FP pixels", "FN pixels"], class_rows) +
        html.bar_chart([r.name for r in result.classes], [r.iou for r in result.classes],
                       "IoU per class (0 = worst, 1 = best)", show_values=False)))

    cat_rows = [[r.name, ", ".join(r.members), r.iou, r.iiou if r.itp is not None else "-",
                 r.tp, r.fp, r.fn]
                for r in result.categories]
    sections.append(("Per category", html.counts_table(
        ["Category", "Classes", "IoU", "iIoU", "TP pixels", "FP pixels", "FN pixels"],
        cat_rows)))

    # Rows: the evaluated reference classes; columns: every id a prediction may hold.
    evaluated = table.evaluated()
    columns = table.in_images
    matrix = [[int(result.matrix[r.id, c.id]) for c in columns] for r in evaluated]
    col_names = [c.name + (" (ignored)" if c.ignore_in_eval else "") for c in columns]
    column_of = {c.id: j for j, c in enumerate(columns)}
    sections.append(("Confusion matrix", html.confusion_matrix(
        matrix, [r.name for r in evaluated], col_names,
        "Rows are the evaluated classes only; columns are every id a prediction may hold, the "
        "ignored ones included (a pixel predicted as one is a false negative of its row).",
        diagonal=[column_of.get(r.id) for r in evaluated])))

    size_rows = [[r.name, "{:,.2f}".format(r.average_size), _source(table, r.size_source)]
                 for r in result.classes if r.has_instances and r.average_size is not None]
    if size_rows:
        sizes = html.counts_table(["Class", "Average instance size (pixels)", "From"], size_rows)
    else:
        sizes = '<p class="na">No class with instances has an instance in the reference.</p>'
    sections.append(("Average instance sizes used for iIoU", sizes))

    sections.append(("Warnings", html.warnings_list(warnings)))
    sections.append(("How the scores are computed", html.notes_list(
        [FIRST_NOTE.format(run.over("images"))] + NOTES[1:])))
    sections.append(run_info.section(run, settings_facts))
    return html.page(title, sections, run_info.footer(run, "image"))


class SemanticReport(Report[SemanticState, Any]):
    """The task's Report role: the console table and the page, from the summary's result."""

    def __init__(self, title: str) -> None:
        self.title = title

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

    def page(self, summary: Summary, warnings: List[str], run: RunFacts, settings: Any) -> str:
        return render(self.title + " - detailed results", summary.details.result,
                      summary.details.table, warnings, run, [("Label table", settings.described)],
                      summary.confidence)

    def run_facts(self, state: SemanticState) -> List[Tuple[str, Any]]:
        return [("Pixels scored", state.pixels)]
