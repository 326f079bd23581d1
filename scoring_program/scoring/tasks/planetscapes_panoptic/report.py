"""detailed_results.html of the Planetscapes panoptic task, from the shared HTML blocks.

Aggregate results only: PQ, SQ and RQ for all classes, things and stuff; per class PQ with its
split into SQ (how well matched segments overlap) and RQ (how many segments are matched), and
the TP, FP and FN segment counts behind them. Nothing per image.
"""
from typing import Any, List, Tuple

from ...report import html, interval_text, run_info
from ...task_api import Report, RunFacts, Summary
from .metric import PanopticState, Result

FIRST_NOTE = ("Scores are computed as cityscapesScripts' evalPanopticSemanticLabeling computes "
              "them, over the segments of {} at once, with the reference segments derived from "
              "the instance images as its createPanopticImgs does.")
NOTES = [
    FIRST_NOTE.format("all test images"),
    "Per class, a predicted and a reference segment match when their IoU is above 0.5 "
    "(strictly); PQ = (sum of matched IoUs) / (TP + FP/2 + FN/2) = SQ x RQ, with SQ = (sum of "
    "matched IoUs) / TP and RQ = TP / (TP + FP/2 + FN/2).",
    "Void pixels (labels ignored in evaluation) inside a predicted segment are taken out of its "
    "union with a reference segment. A crowd region (a value below 1000 on a class with "
    "instances) is never matched nor a false negative; an unmatched predicted segment whose "
    "void pixels plus its pixels on the crowd region of its own class are more than half of it "
    "is not a false positive.",
    "A class with TP + FP + FN = 0 has no value and is left out of the means (cityscapesScripts "
    "shows 0 for it in its table); a class with TP = 0 but FP or FN has SQ 0, which counts in "
    "the mean SQ.",
    "Things are the classes with instances (has_instances), stuff the others.",
]


def _f(v) -> str:
    return "n/a" if v is None else "{:.4f}".format(v)


def render(title: str, result: Result, warnings: List[str], run: RunFacts, settings_facts,
           intervals=None) -> str:
    means = result.means
    sections = []
    have = "{:d} of {:d} evaluated classes have a PQ".format(result.counted["all"],
                                                             len(result.classes))
    first = interval_text.headline_parts(intervals, "pq") + [have]
    sections.append(("", html.headline("PQ", means["pq"], run_info.subline(run, warnings, first))
                     + interval_text.explanation_html(intervals)))
    phrase = interval_text.phrase(intervals, "pq")
    rows = []
    for name, suffix in (("All classes", ""), ("Things", "_things"), ("Stuff", "_stuff")):
        rows.append((name + " ({} classes)".format(result.counted[suffix.lstrip("_") or "all"]),
                     means["pq" + suffix], "pq{} (SQ {}, RQ {}){}".format(
                         suffix, _f(means["sq" + suffix]), _f(means["rq" + suffix]),
                         "; " + phrase if phrase and not suffix else "")))
    sections.append(("Scores", html.scores_table(rows)))
    class_rows = [[r.name, r.id, "thing" if r.isthing else "stuff",
                   r.pq if r.pq is not None else "-", r.sq if r.sq is not None else "-",
                   r.rq if r.rq is not None else "-", r.tp, r.fp, r.fn]
                  for r in result.classes]
    sections.append(("Per class: PQ = SQ x RQ", html.counts_table(
        ["Class", "Id", "Kind", "PQ", "SQ", "RQ", "TP segments", "FP segments", "FN segments"],
        class_rows) +
        html.bar_chart([r.name for r in result.classes], [r.sq for r in result.classes],
                       "SQ per class: the overlap of matched segments", show_values=False) +
        html.bar_chart([r.name for r in result.classes], [r.rq for r in result.classes],
                       "RQ per class: the share of segments matched", show_values=False)))
    sections.append(("Warnings", html.warnings_list(warnings)))
    sections.append(("How the scores are computed", html.notes_list(
        [FIRST_NOTE.format(run.over("images"))] + NOTES[1:])))
    sections.append(run_info.section(run, settings_facts))
    return html.page(title, sections, run_info.footer(run, "image"))


class PanopticReport(Report[PanopticState, Any]):
    """The task's Report role: the console table and the page."""

    def __init__(self, title: str) -> None:
        self.title = title

    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        result = summary.details.result
        rows = [[r.name, _f(r.pq), _f(r.sq), _f(r.rq)] for r in result.classes]
        for name, suffix in (("all", ""), ("things", "_things"), ("stuff", "_stuff")):
            rows.append(["mean of " + name, _f(result.means["pq" + suffix]),
                         _f(result.means["sq" + suffix]), _f(result.means["rq" + suffix])])
        return ["class", "PQ", "SQ", "RQ"], rows

    def page(self, summary: Summary, warnings: List[str], run: RunFacts, settings: Any) -> str:
        return render(self.title + " - detailed results", summary.details.result, warnings, run,
                      [("Label table", settings.described)], summary.confidence)

    def run_facts(self, state: PanopticState) -> List[Tuple[str, Any]]:
        return [("Segments matched (TP)", int(state.tp.sum())),
                ("Unmatched predicted segments (FP)", int(state.fp.sum())),
                ("Unmatched reference segments (FN)", int(state.fn.sum()))]
