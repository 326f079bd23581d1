"""detailed_results.html for VQA: the aggregates it shows are the state's, exactly; small
question types are pooled; nothing per question."""
import re

from scoring.task_api import RunFacts
from scoring.tasks.planetscapes_vqa import report
from scoring.tasks.planetscapes_vqa.metric import AccuracyState


def state():
    s = AccuracyState()
    s.counts = {("yes/no", "is the", 30): 12, ("yes/no", "is the", 0): 4,
                ("number", "how many", 9): 3, ("number", "how many", 27): 7,
                ("other", "why", 18): 2, ("other", "what", 30): 1, ("other", "what", 16): 1}
    s.changed, s.disagreeing = 5, 20
    return s


def cells(page):
    return [re.sub("<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", page)]


def test_rows_are_exact_aggregates():
    s = state()
    assert report.distribution_rows(s) == [
        ["0", 4, "13.33%"], ["0.3", 3, "10.00%"], ["0.6", 2, "6.67%"], ["0.9", 7, "23.33%"],
        ["1", 13, "43.33%"], ["other multiples of 1/30", 1, "3.33%"]]
    assert report.question_type_rows(s) == [
        ["how many", 10, "72.00"], ["is the", 16, "75.00"],
        ["(2 types with fewer than 10 questions)", 4, "68.33"]]


def test_page_shows_the_state():
    run = RunFacts(1, "results file", 1, 0.5, "raw", "1.0", "2026-11-30 12:00:00 UTC",
                   [("Questions scored", 30)])
    page = report.render("T", state(), ["a warning"], run)
    c = cells(page)
    overall = (12 * 30 + 3 * 9 + 7 * 27 + 2 * 18 + 30 + 16) / (30 * 30) * 100
    assert ["Overall", "30", "{:.2f}".format(overall)] == c[0:3]
    assert ["Yes/No", "16", "75.00"] == c[3:6]
    assert ["Number", "10", "72.00"] == c[6:9]
    assert ["Other", "4", "68.33"] == c[9:12]
    assert "a warning" in page and "why" not in page  # pooled type names are not shown
    i = c.index("Answers that the normalization changed (compared in another form than "
                "submitted)")
    assert c[i + 1] == "5" and c[i + 3] == "20" and c[i + 5] == "10"
