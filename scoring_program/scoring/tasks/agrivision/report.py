"""detailed_results.html of the Agriculture-Vision task, from the shared HTML blocks.

Aggregate results only: mIoU, per-class IoU with the pixel counts behind it (each IoU shown
once), the 9 x 9 confusion matrix with reference rows as on every page. Nothing per image.
"""
from typing import Any, List, Optional, Sequence, Tuple

from ...report import html, interval_text, run_info
from ...task_api import Report, RunFacts, Summary
from .classes import CLASSES
from .metric import LabelSetHistogram

FIRST_NOTE = ("IoU_c = TP_c / (TP_c + FP_c + FN_c), computed over all valid pixels of {} at "
              "once; mIoU is the mean over the 9 classes, background included.")
NOTES = [
    FIRST_NOTE.format("all test images"),
    "Valid pixels are inside the field boundary and not masked; other pixels are not evaluated.",
    "A pixel may carry several reference labels. If the prediction is one of them, every label of "
    "the pixel is counted as a true positive; otherwise the pixel counts once against each of its "
    "labels (a false negative for each, and as many false positives for the predicted class).",
    "A valid pixel with no scored label is background. storm_damage is not evaluated.",
    "A class absent from both the reference and the predictions has no IoU and is left out of "
    "the mean (its score is not written, so the leaderboard shows it as missing).",
]


def render(title: str, miou: Optional[float], iou: Sequence[Optional[float]],
           counts: Tuple[Sequence[int], Sequence[int], Sequence[int]],
           confusion: Sequence[Sequence[int]], warnings: List[str], run: RunFacts,
           settings_facts: Sequence[Tuple[str, Any]], classes: Sequence[str] = CLASSES,
           notes: Sequence[str] = tuple(NOTES), intervals=None) -> str:
    """counts: (TP, FP, FN) per class; confusion[p][r]: pixels predicted p whose reference is r;
    intervals: the run's confidence.Confidence (None: not shown)."""
    classes = list(classes)
    tp, fp, fn = counts
    n_with = sum(1 for v in iou if v is not None)
    have = "{:d} of {:d} classes have an IoU".format(n_with, len(classes))
    sections: List[Tuple[str, str]] = []
    first = interval_text.headline_parts(intervals, "miou") + [have]
    sections.append(("", html.headline("mIoU", miou, run_info.subline(run, warnings, first)) +
                     interval_text.explanation_html(intervals)))

    # Each IoU once: beside the counts it comes from (the console's order), then the bars
    # without numbers as the picture of the same column.
    count_rows = [[name, iou[i], tp[i], fp[i], fn[i]] for i, name in enumerate(classes)]
    absent = ('<p class="lead">n/a: no IoU, the class is absent from both the reference and the '
              'predictions.</p>' if n_with < len(classes) else "")
    sections.append(("Per-class IoU", '<p class="lead">IoU = TP / (TP + FP + FN), in pixels.</p>' +
                     html.counts_table(["Class", "IoU", "TP", "FP", "FN"], count_rows) + absent +
                     html.bar_chart(classes, list(iou), "IoU per class (0 = worst, 1 = best)",
                                    show_values=False)))

    # The metric counts confusion[predicted][reference]; every page shows reference rows.
    by_reference = [list(r) for r in zip(*confusion)]
    sections.append(("Confusion matrix", html.confusion_matrix(
        by_reference, classes, classes,
        "A pixel with several reference labels counts in the row of each of its labels, so the "
        "rows can add up to more than the pixels scored.")))
    sections.append(("Warnings", html.warnings_list(warnings)))
    sections.append(("How the scores are computed", html.notes_list(notes)))
    sections.append(run_info.section(run, settings_facts))
    return html.page(title, sections, run_info.footer(run, "image"))



def settings_rows(settings: Any) -> List[Tuple[str, str]]:
    """What the page shows of the task's settings."""
    return [("storm_damage policy", str(settings.storm_damage))]


class AVReport(Report[LabelSetHistogram, Any]):
    """The task's Report role: the console table and the page, from the summary's counts."""

    def __init__(self, title: str) -> None:
        self.title = title

    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        """One row per class plus the mean."""
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

    def page(self, summary: Summary, warnings: List[str], run: RunFacts, settings: Any) -> str:
        values = dict(summary.scores)
        counts = summary.details
        return render(self.title + " - detailed results", values["miou"],
                      [values["iou_" + c] for c in CLASSES],
                      (counts.tp, counts.fp, counts.fn), counts.confusion,
                      warnings, run, settings_rows(settings),
                      notes=[FIRST_NOTE.format(run.over("images"))] + NOTES[1:],
                      intervals=summary.confidence)

    def run_facts(self, state: LabelSetHistogram) -> List[Tuple[str, Any]]:
        return [("Pixels scored", state.pixels)]
