"""The building blocks of the self-contained detailed results pages (scoring/report/html.py):
well-formed, escaped, self-contained."""
import pytest

from html_checks import CLASSES, assert_balanced, assert_self_contained, confusion_9
from scoring.report import html


def test_scores_table():
    frag = html.scores_table([("mIoU", 0.51234, ""), ("a<b", None, "absent & gone"), ("c", 1.0, "")])
    assert_balanced(frag)
    assert "0.5123" in frag
    assert "1.0000" in frag
    assert "n/a" in frag
    assert "absent &amp; gone" in frag
    assert "a&lt;b" in frag


def test_bar_chart():
    frag = html.bar_chart(["a", "b<", "c"], [0.25, None, 1.0], "Title & more")
    assert_balanced(frag)
    assert frag.count('<rect class="bar"') == 2
    assert "n/a" in frag
    assert "0.2500" in frag and "1.0000" in frag
    assert "Title &amp; more" in frag
    for tick in (">0<", ">0.25<", ">0.5<", ">0.75<", ">1<"):
        assert tick in frag


def test_heatmap_9x9_and_30x30():
    frag = html.heatmap(confusion_9(), CLASSES, CLASSES, "t", "Predicted class", "Reference class")
    assert_balanced(frag)
    assert frag.count('<rect class="hm-cell"') == 81
    assert "Predicted class" in frag and "Reference class" in frag

    n = 30
    labels = ["class_%02d_with_long_name" % i for i in range(n)]
    m = [[(i * 7 + j * 3) % 11 * 1000 for j in range(n)] for i in range(n)]
    m[3] = [0] * n  # empty row
    frag = html.heatmap(m, labels, labels, "big", "rows", "cols")
    assert_balanced(frag)
    assert frag.count('<rect class="hm-cell"') == n * n
    assert "rotate(-45" in frag
    for lab in labels:
        assert lab in frag


def test_heatmap_cell_shares_and_tooltips():
    frag = html.heatmap([[1, 3], [0, 0]], ["a", "b"], ["a", "b"], "t", "P", "R")
    assert "25" in frag and "75" in frag
    assert "<title>" in frag
    assert_balanced(frag)


def test_heatmap_all_zero():
    frag = html.heatmap([[0] * 9 for _ in range(9)], CLASSES, CLASSES, "t", "P", "R")
    assert_balanced(frag)
    assert frag.count('<rect class="hm-cell"') == 81


def test_counts_table():
    frag = html.counts_table(["Class", "TP"], [["a&b", 1234567], ["c", 0], ["d", 5000000000]])
    assert_balanced(frag)
    assert "1,234,567" in frag
    assert "5,000,000,000" in frag
    assert "a&amp;b" in frag


@pytest.mark.parametrize("warnings", [[], None])
def test_warnings_list_empty(warnings):
    assert "No warnings." in html.warnings_list(warnings)


def test_warnings_list():
    frag = html.warnings_list(["one <x>", "two & three"])
    assert_balanced(frag)
    assert frag.count("<li>") == 2
    assert "&lt;x&gt;" in frag and "two &amp; three" in frag


def test_page_builder():
    doc = html.page("T<", [("H&", "<p>x</p>"), ("", "<p>y</p>")], "foot <er>")
    assert doc.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in doc
    assert "T&lt;" in doc and "H&amp;" in doc and "foot &lt;er&gt;" in doc
    assert doc.count("<h2>") == 1
    assert_balanced(doc)
    assert_self_contained(doc)
