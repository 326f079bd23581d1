"""detailed_results.html of the instance task: AP and AP50, the per-class table (AP, AP50, the
counted instances and the predictions behind them) and the precision-recall curves (overlap 0.5)
of the best and the worst class as an inline SVG. Aggregate results only."""
from typing import Any, List, Sequence, Tuple

from ...report import html, interval_text, run_info
from ...task_api import Report, RunFacts, Summary
from .metric import ClassResult, InstanceState, Result

FIRST_NOTE = ("Scores are computed as cityscapesScripts' evalInstanceLevelSemanticLabeling "
              "computes them with its defaults, over the predictions of {} at once: overlaps "
              "0.5, 0.55, ..., 0.95, minimum region size 100 pixels, no distance.")
NOTES = [
    FIRST_NOTE.format("all test images"),
    "Per class and overlap, every prediction of the test set is ranked by confidence; precision "
    "and recall are taken at each distinct confidence. A ground-truth instance matched by "
    "several predictions (IoU above the overlap, strictly) counts the most confident one as a "
    "true positive and the others as false positives.",
    "Predictions matching a crowd region or an instance under 100 pixels count for nothing; an "
    "unmatched prediction is a false positive unless more than the overlap of its pixels lie on "
    "void, crowd or small instances. Predictions of classes ignored in evaluation and empty "
    "masks are skipped.",
    "AP of a class: the mean over the overlaps; AP50: at overlap 0.5. A class without a "
    "ground-truth instance of at least 100 pixels has no AP and is left out of the means.",
    "Where cityscapesScripts raises IndexError (a class with instances and predictions of which "
    "none is matched or counted at some overlap), AP is 0 there.",
]

_W, _H, _PAD = 360.0, 260.0, 40.0


def _pr_svg(curves: Sequence[Tuple[str, Any]]) -> str:
    """Precision (y) against recall (x), one step line per class."""
    body = ['<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>'.format(
        _PAD, 10, _W - _PAD - 10, _H - _PAD - 10)]
    colours = ["#1f77b4", "#d62728"]
    for i, (label, curve) in enumerate(curves):
        precision, recall = curve
        pts = sorted(zip(recall, precision), key=lambda rp: (rp[0], -rp[1]))
        coords = []
        for r, p in pts:
            x = _PAD + r * (_W - _PAD - 10)
            y = 10 + (1 - p) * (_H - _PAD - 10)
            coords.append("{:.1f},{:.1f}".format(x, y))
        body.append('<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>'.format(
            colours[i % 2], " ".join(coords)))
        # The legend goes under the plot: inside it, it hides the curves' high-precision start.
        y = _H + 8 + 18 * i
        body.append('<line x1="{:.0f}" y1="{:.0f}" x2="{:.0f}" y2="{:.0f}" stroke="{}" '
                    'stroke-width="3"/>'.format(_PAD, y - 4, _PAD + 18, y - 4, colours[i % 2]))
        body.append('<text x="{:.0f}" y="{:.0f}" font-size="12" fill="{}">{}</text>'.format(
            _PAD + 24, y, colours[i % 2], html._esc(label)))
    for x, y, anchor, tick in ((_PAD, _H - _PAD + 14, "middle", "0"),
                               (_W - 10, _H - _PAD + 14, "middle", "1"),
                               (_PAD - 5, _H - _PAD + 4, "end", "0"),
                               (_PAD - 5, 14, "end", "1")):
        body.append('<text x="{:.0f}" y="{:.0f}" font-size="12" text-anchor="{}">{}</text>'
                    .format(x, y, anchor, tick))
    body.append('<text x="{:.0f}" y="{:.0f}" font-size="12" text-anchor="middle">recall</text>'
                .format(_W / 2, _H - 8))
    body.append('<text x="12" y="{:.0f}" font-size="12" transform="rotate(-90 12 {:.0f})" '
                'text-anchor="middle">precision</text>'.format(_H / 2, _H / 2))
    return html.figure("Precision-recall at overlap 0.5: best and worst class", "pr-curve",
                       _W, _H + 18 * len(curves), body)


def render(title: str, result: Result, warnings: List[str], run: RunFacts,
           settings_facts: Sequence[Tuple[str, Any]], intervals=None) -> str:
    sections = []
    defined = [c for c in result.classes if c.ap is not None]
    first = interval_text.headline_parts(intervals, "ap") + [
        "{:d} of {:d} instance classes have an AP".format(len(defined), len(result.classes))]
    sections.append(("", html.headline("AP", result.ap, run_info.subline(run, warnings, first)) +
                     interval_text.explanation_html(intervals)))
    sections.append(("Scores", html.scores_table([
        ("AP, mean over classes and overlaps 0.5:0.95", result.ap, "leaderboard key ap"),
        ("AP50, mean over classes at overlap 0.5", result.ap50, "ap50")])))
    rows = [[c.name, c.id, c.ap, c.ap50, c.instances, c.predictions] for c in result.classes]
    sections.append(("Per class", html.counts_table(
        ["Class", "Id", "AP", "AP50", "Instances (>= 100 px)", "Predictions"], rows)))
    with_curve: List[ClassResult] = [c for c in defined if c.curve is not None]
    if with_curve:
        best = max(with_curve, key=lambda c: (c.ap or 0.0, c.name))
        worst = min(with_curve, key=lambda c: (c.ap or 0.0, c.name))
        chosen = [("best: {} (AP {:.4f})".format(best.name, best.ap or 0.0), best.curve)]
        if worst is not best:
            chosen.append(("worst: {} (AP {:.4f})".format(worst.name, worst.ap or 0.0),
                           worst.curve))
        sections.append(("Precision and recall", _pr_svg(chosen)))
    sections.append(("Warnings", html.warnings_list(warnings)))
    sections.append(("How the scores are computed", html.notes_list(
        [FIRST_NOTE.format(run.over("images"))] + NOTES[1:])))
    sections.append(run_info.section(run, settings_facts))
    return html.page(title, sections, run_info.footer(run, "image"))


class InstanceReport(Report[InstanceState, Any]):
    def __init__(self, title: str) -> None:
        self.title = title

    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        def f(v):
            return "n/a" if v is None else "{:.4f}".format(v)

        result = summary.details.result
        rows = [[c.name, f(c.ap), f(c.ap50)] for c in result.classes]
        rows.append(["mean", f(result.ap), f(result.ap50)])
        return ["class", "AP", "AP50"], rows

    def page(self, summary: Summary, warnings: List[str], run: RunFacts, settings: Any) -> str:
        return render(self.title + " - detailed results", summary.details.result, warnings, run,
                      [("Label table", settings.described)], summary.confidence)

    def run_facts(self, state: InstanceState) -> List[Tuple[str, Any]]:
        return [("Predicted instances read", state.predictions)]
