"""detailed_results.html for VQA: the aggregates it shows are the state's, exactly; small
question types are pooled; nothing per question; every accuracy and share in percent, the
distribution chart included."""
import re

from html_checks import (assert_balanced, assert_chart_text_at_least,
                         assert_every_table_and_chart_scrolls, assert_self_contained)
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
        ["0%", 4, "13.33%"], ["30%", 3, "10.00%"], ["60%", 2, "6.67%"], ["90%", 7, "23.33%"],
        ["100%", 13, "43.33%"], ["other multiples of 1/30 of 100%", 1, "3.33%"]]
    assert report.question_type_rows(s) == [
        ["how many", 10, "72.00"], ["is the", 16, "75.00"],
        ["(2 types with fewer than 10 questions)", 4, "68.33"]]


RUN = RunFacts(1, "results file", 1, 0.5, "raw", "1.0", "2026-11-30 12:00:00 UTC",
               [("Questions scored", 30)])


def test_page_shows_the_state():
    page = report.render("T", state(), ["a warning"], RUN)
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


def test_distribution_chart_and_table_in_one_unit_percent():
    """Issue 15: the chart was 0-1 while its table was in %. Both are in percent now: the axis
    reads 0% to 100%, and each bar is drawn from its row's share, as the table prints it."""
    page = report.render("T", state(), [], RUN)
    section = page[page.index("Distribution of per-question accuracies"):page.index(
        "<h2>Normalization")]
    svg = section[section.index("<svg"):section.index("</svg>")]
    ticks = re.findall(r'text-anchor="middle" fill="#59636e">([^<]*)</text>', svg)
    assert ticks == ["0%", "25%", "50%", "75%", "100%"]
    assert "(0 to 1)" not in page and ">0.25<" not in page and ">1<" not in svg
    assert "Share of the questions (%)" in section
    rows = [[re.sub("<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>.*?</td>", r)]
            for r in re.findall(r"<tr>(.*?)</tr>", section)[1:]]
    assert [r[0] for r in rows] == ["0%", "30%", "60%", "90%", "100%",
                                    "other multiples of 1/30 of 100%"]
    assert all(r[2].endswith("%") for r in rows)
    grid = [float(x) for x in re.findall(r'<line x1="([0-9.]+)"', svg)]
    plot = grid[-1] - grid[0]  # the width of 0% to 100%
    bars = re.findall(r'<g class="bar-row"><title>([^<]*)</title>(.*?)</g>', svg)
    assert [b[0] for b in bars] == [r[0] for r in rows]
    for (_, body), row in zip(bars, rows):
        width = re.search(r'<rect class="bar"[^>]* width="([0-9.]+)"', body)
        drawn = float(width.group(1)) if width else 0.0
        want = plot * float(row[2][:-1]) / 100.0
        assert abs(drawn - (max(want, 1.0) if want else 0.0)) <= 0.05  # a bar is >= 1 px
        assert row[2] not in body  # each share is printed once, in the table


def test_page_is_well_formed_with_readable_charts():
    page = report.render("T", state(), ["a <warning>"], RUN)
    assert_balanced(page)
    assert_self_contained(page)
    assert_chart_text_at_least(page)
    assert_every_table_and_chart_scrolls(page)
