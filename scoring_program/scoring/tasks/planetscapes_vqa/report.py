"""detailed_results.html for VQA: aggregates only, never a question's result nor an answer.

Shown: overall and per answer type, per question type (as the official evaluation reports it;
question types with fewer than MIN_TYPE_QUESTIONS questions are pooled into one row, so no row
stands for a single question), the distribution of per-question accuracies, and how many of the
submitted answers the normalization changed.
"""
from html import escape
from typing import Any, List, Tuple

from ...report import html, interval_text, run_info
from ...task_api import Report, RunFacts, Summary
from .metric import STEPS, AccuracyState, percent

MIN_TYPE_QUESTIONS = 10
ANSWER_TYPES = (("yes/no", "Yes/No"), ("number", "Number"), ("other", "Other"))
# The per-question accuracies the rule gives with ten distinct answer records (n / 30), in
# percent as every accuracy on the page.
LEVELS = ((0, "0%"), (9, "30%"), (18, "60%"), (27, "90%"), (30, "100%"))

# The accuracies as shown (page, console), as the official VQA code displays them and as the
# bundle's leaderboard columns show them (tracks/vqa.yaml numeric_format: 2): ranked unrounded.
SHOWN_DECIMALS = 2

NOTES = [
    "Accuracy of an answer = the mean, over the ten ways of leaving one human answer out, of "
    "min(1, number of the other nine humans who gave that answer / 3): an answer given by k "
    "humans scores 0%, 30%, 60%, 90% or 100% for k = 0, 1, 2, 3, 4 or more.",
    "All answers: newlines and tabs become spaces, then leading and trailing spaces go.",
    "Only for questions whose ten human answers are not all identical, your answer and the "
    "humans' are normalized as the official VQA evaluation does: punctuation removed, lower case, "
    "number words to digits (two -> 2), articles (a, an, the) dropped, contractions restored "
    "(dont -> don't). For a question all ten humans answered \"yes\", only \"yes\" scores, not "
    "\"Yes\". The starting kit's normalize.py shows what happens to an answer.",
    "Scores are means over {} in percent, computed exactly (each question's accuracy is a "
    "multiple of 1/30) and ranked unrounded (scores.txt holds 10 decimals); shown with " +
    str(SHOWN_DECIMALS) + " decimals here, on the console and on the leaderboard, as the "
    "official code displays them.",
    "Question types with fewer than {} questions are pooled into one row.".format(
        MIN_TYPE_QUESTIONS),
]


def _pct(total: Tuple[int, int]) -> str:
    return "{:.{}f}".format(percent(total), SHOWN_DECIMALS)


def _headline(label: str, value: str, subline_html: str) -> str:
    """The shared headline shows a score in [0, 1]; VQA's is a percentage."""
    return ('<div class="headline"><span class="label">{}</span><span class="value">{}</span>'
            '<span class="sub">{}</span></div>'.format(escape(label), escape(value), subline_html))


def question_type_rows(state: AccuracyState) -> List[List[Any]]:
    rows: List[List[Any]] = []
    pooled = [0, 0, 0]  # types, questions, sum of n
    for qtype, total in sorted(state.totals(1).items()):
        if total[0] >= MIN_TYPE_QUESTIONS:
            rows.append([qtype, total[0], _pct(total)])
        else:
            pooled[0] += 1
            pooled[1] += total[0]
            pooled[2] += total[1]
    if pooled[0]:
        rows.append(["({} types with fewer than {} questions)".format(
            pooled[0], MIN_TYPE_QUESTIONS), pooled[1], _pct((pooled[1], pooled[2]))])
    return rows


def distribution_rows(state: AccuracyState) -> List[List[Any]]:
    """[accuracy of an answer, questions, share of the questions in % (2 decimals)]."""
    dist = state.distribution()
    total = sum(dist.values())
    rows: List[List[Any]] = []
    for n, label in LEVELS:
        rows.append([label, dist.get(n, 0), "{:.2f}%".format(100.0 * dist.get(n, 0) / total)])
    # Duplicated answer records in the reference can give other multiples of 1/30 (100/30 %).
    other = total - sum(dist.get(n, 0) for n, _ in LEVELS)
    if other:
        rows.append(["other multiples of 1/{} of 100%".format(STEPS), other,
                     "{:.2f}%".format(100.0 * other / total)])
    return rows


def render(title: str, state: AccuracyState, warnings: List[str], run: RunFacts,
           intervals=None) -> str:
    """intervals: the run's confidence.Confidence (None: not shown)."""
    overall = state.overall()
    by_type = state.totals(0)
    first = interval_text.headline_parts(intervals, "accuracy",
                                         "{{:.{}f}}".format(SHOWN_DECIMALS).format)
    # The questions once: the interval's phrase ends with them when there is one.
    questions = "{:,} questions".format(overall[0])
    if not any(p.endswith(" over " + questions) for p in first):
        first.append(questions)
    sections = [("", _headline("Accuracy", _pct(overall), run_info.subline(
        run, warnings, first)) +
        interval_text.explanation_html(intervals))]

    rows = [["Overall", overall[0], _pct(overall)]]
    for key, label in ANSWER_TYPES:
        if key in by_type:
            rows.append([label, by_type[key][0], _pct(by_type[key])])
    sections.append(("Accuracy per answer type",
                     html.counts_table(["Answer type", "Questions", "Accuracy (%)"], rows)))
    sections.append(("Accuracy per question type",
                     html.counts_table(["Question type", "Questions", "Accuracy (%)"],
                                       question_type_rows(state))))
    dist = distribution_rows(state)
    sections.append((
        "Distribution of per-question accuracies",
        html.counts_table(["Accuracy of the answer", "Questions", "Share of the questions"],
                          dist)
        # The chart draws the table's own percentages: one unit, the same numbers.
        + html.bar_chart([r[0] for r in dist], [float(r[2][:-1]) for r in dist],
                         "Share of the questions (%)", percent=True, show_values=False)))
    sections.append(("Normalization", html.counts_table(["", "Questions"], [
        ["Answers that the normalization changed (compared in another form than submitted)",
         state.changed],
        ["Questions whose ten human answers differ (full normalization applied)",
         state.disagreeing],
        ["Questions whose ten human answers are identical (only spaces trimmed)",
         overall[0] - state.disagreeing],
    ])))
    sections.append(("Warnings", html.warnings_list(warnings)))
    sections.append(("How the scores are computed", html.notes_list(
        [n.format(run.scored_on or "questions") if "{}" in n else n for n in NOTES])))
    sections.append(run_info.section(run, []))
    return html.page(title, sections, run_info.footer(run, "question"))


class VQAReport(Report[AccuracyState, Any]):
    """The task's Report role: the console table and the page, from the summary's state."""

    def __init__(self, title: str) -> None:
        self.title = title

    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        state = summary.details.state
        by_type = state.totals(0)
        rows = [["overall", "{:,}".format(state.questions()), _pct(state.overall())]]
        for label, atype in (("yes/no", "yes/no"), ("number", "number"), ("other", "other")):
            if atype in by_type:
                rows.append([label, "{:,}".format(by_type[atype][0]), _pct(by_type[atype])])
        return ["answer type", "questions", "accuracy (%)"], rows

    def page(self, summary: Summary, warnings: List[str], run: RunFacts, settings: Any) -> str:
        return render(self.title + " - detailed results", summary.details.state, warnings, run,
                      summary.confidence)

    def run_facts(self, state: AccuracyState) -> List[Tuple[str, Any]]:
        return [("Questions scored", state.questions())]
