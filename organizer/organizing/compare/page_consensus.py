"""consensus.html: consensus.py's ranking across tasks as a page, on the project's page frame
(report/html.py) as comparison.html and ranking.html: the ranking by mean rank with each task's
rank, what was left out, the comparisons it was made from, how to read it, the run's facts.
Every name comes from a comparison.json (from file names): shown escaped (problems.shown for
control characters, then HTML-escaped by the shared tables)."""
from typing import Any, Dict, List, Sequence

from scoring.problems import shown
from scoring.report import html

NOTES = [
    "challengeR's consensus ranking (consensus(method = \"euclidean\")): each submission's mean "
    "of its ranks in the tasks, lower is better; submissions with the same mean share the best "
    "rank (1-2-2-4).",
    "Only submissions ranked in every task are ranked: a mean over fewer tasks would not be "
    "comparable. The others are listed under Left out.",
    "A task's rank is compare.py's rank by that task's ranking score (its comparison.json): "
    "ties there stay ties here. The consensus says nothing about significance: each task's "
    "comparison.html does.",
]


def render(result: Dict[str, Any], inputs: Sequence[Dict[str, Any]],
           facts: List[List[Any]]) -> str:
    """result: challenger.consensus()'s document; inputs: per task (label, path, key, number of
    submissions)."""
    tasks = result["tasks"]
    rows = [[r["rank"], shown(r["model"]), "{:.2f}".format(r["mean_rank"])] +
            [r["ranks"][t] for t in tasks] for r in result["ranking"]]
    lead = ('<p class="lead">{:,} submissions ranked in each of the {:,} tasks, by their mean '
            'rank over the tasks (lower is better).</p>'.format(len(rows), len(tasks)))
    sections = [("Consensus ranking", lead + html.counts_table(
        ["Rank", "Submission", "Mean rank"] + ["Rank in {}".format(shown(t)) for t in tasks],
        rows))]
    if result["left_out"]:
        ranked_in = [[shown(m), ", ".join(shown(i["label"]) for i in inputs
                                          if m in i["ranks"])] for m in result["left_out"]]
        sections.append(("Left out", '<p class="lead">Not ranked in every task, so not in the '
                                     'consensus:</p>' + html.counts_table(
                                         ["Submission", "Ranked in"], ranked_in)))
    sections.append(("Comparisons used", html.counts_table(
        ["Task", "Ranking score", "Submissions", "comparison.json"],
        [[shown(i["label"]), shown(str(i["key"])), len(i["ranks"]), shown(i["path"])]
         for i in inputs])))
    sections.append(("How to read this", html.notes_list(NOTES)))
    sections.append(("Run information", html.counts_table(["Item", "Value"], facts)))
    return html.page("Consensus ranking of {:,} submissions over {:,} tasks".format(
        len(rows), len(tasks)), sections, "Aggregate results only: ranks, no scores per unit.")

