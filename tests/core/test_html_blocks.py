"""The building blocks of the self-contained detailed results pages (scoring/report/html.py):
well-formed, escaped, self-contained; one confusion-matrix orientation (reference rows); charts
in the unit of their tables; no chart text under 11 px; every table and chart scrolls with a
hint on a narrow page."""
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from html_checks import (CLASSES, assert_balanced, assert_chart_text_at_least,
                         assert_every_table_and_chart_scrolls, assert_self_contained, confusion_9)
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


def test_bar_chart_in_percent_reads_percent_everywhere():
    frag = html.bar_chart(["0%", "30%", "100%"], [23.0, 4.0, 73.0], "Share (%)", percent=True)
    assert_balanced(frag)
    for tick in (">0%<", ">25%<", ">50%<", ">75%<", ">100%<"):
        assert tick in frag
    assert ">0.25<" not in frag and ">1<" not in frag
    assert "23.00%" in frag and "73.00%" in frag
    widths = [float(w) for w in re.findall(r'<rect class="bar"[^>]* width="([0-9.]+)"', frag)]
    assert widths == [69.0, 12.0, 219.0]  # 300 px = 100%


def test_bar_chart_without_values_shows_no_number():
    frag = html.bar_chart(["a", "b", "c"], [0.9144, None, 0.2480], "t", show_values=False)
    assert_balanced(frag)
    assert "0.9144" not in frag and "0.2480" not in frag
    assert "n/a" in frag and frag.count('<rect class="bar"') == 2


def cells(frag):
    """{(reference, predicted): (count, share shown, outlined)} from the heat map's cells."""
    out = {}
    for g in re.findall(r"<g><title>(.*?)</title>(.*?)</g>", frag, re.S):
        m = re.match(r"Reference class: (.*) / Predicted class: (.*)\n([0-9,]+) pixels = (.*) of "
                     r"the ([0-9,]+) pixels whose reference is (.*)$", g[0])
        if m:
            assert m.group(6) == m.group(1)
            shown = re.findall(r">([^<]*)</text>", g[1])
            out[m.group(1), m.group(2)] = (int(m.group(3).replace(",", "")), shown,
                                           'stroke="#24292f"' in g[1])
    return out


def test_confusion_matrix_rows_are_the_reference():
    """matrix[r][p]: reference r, predicted p. Each cell's tooltip names both and its count; each
    row is normalised to its own total (recall-style), the row's own class outlined."""
    m = [[6, 2, 0], [1, 0, 3], [0, 0, 0]]
    frag = html.confusion_matrix(m, ["a", "b", "c"], ["a", "b", "c"])
    assert_balanced(frag)
    got = cells(frag)
    assert {k: v[0] for k, v in got.items()} == {
        (r, p): m[i][j] for i, r in enumerate("abc") for j, p in enumerate("abc")}
    assert got["a", "a"][1] == ["75.0%"] and got["a", "b"][1] == ["25.0%"]
    assert got["b", "c"][1] == ["75.0%"] and got["b", "a"][1] == ["25.0%"]
    assert got["c", "c"][1] in ([], ["0%"])  # an empty row has no share
    assert [k for k, v in got.items() if v[2]] == [("a", "a"), ("b", "b"), ("c", "c")]
    assert "Rows are the <strong>reference</strong> class" in frag
    assert "normalised to 100% of the pixels whose reference is that class" in frag
    assert "(rows: reference class, columns: predicted class)" in frag
    assert ">Reference class<" in frag and ">Predicted class<" in frag
    assert "8 pixels whose reference is a" in frag and "4 pixels whose reference is b" in frag
    assert "share of the row&#x27;s reference pixels" in frag


def test_confusion_matrix_other_columns_and_diagonal():
    m = [[1, 9, 0], [0, 2, 2]]
    frag = html.confusion_matrix(m, ["x", "y"], ["void (ignored)", "x", "y"], "Note <b>.",
                                 diagonal=[1, 2])
    got = cells(frag)
    assert got["x", "x"][0] == 9 and got["x", "void (ignored)"][0] == 1
    assert [k for k, v in got.items() if v[2]] == [("x", "x"), ("y", "y")]
    assert frag.count('<rect class="hm-cell"') == 6
    assert "Note <b>." in frag  # the task's note is HTML already


def test_confusion_matrix_9x9_and_40x40():
    frag = html.confusion_matrix(confusion_9(), CLASSES, CLASSES)
    assert_balanced(frag)
    assert frag.count('<rect class="hm-cell"') == 81
    assert "5,000,000,000" in frag  # exact in a tooltip, compact in the total column
    n = 40
    labels = ["class_%02d_with_a_long_name" % i for i in range(n)]
    m = [[(i * 7 + j * 3) % 11 * 1000 for j in range(n)] for i in range(n)]
    m[3] = [0] * n  # empty row
    frag = html.confusion_matrix(m, labels, labels)
    assert_balanced(frag)
    assert frag.count('<rect class="hm-cell"') == n * n
    assert "rotate(-45" in frag
    for lab in labels:
        assert lab in frag
    assert_chart_text_at_least(frag)


def test_confusion_matrix_all_zero():
    frag = html.confusion_matrix([[0] * 9 for _ in range(9)], CLASSES, CLASSES)
    assert_balanced(frag)
    assert frag.count('<rect class="hm-cell"') == 81


@settings(max_examples=40, deadline=None)
@given(n_rows=st.integers(1, 45), n_cols=st.integers(1, 45), name=st.integers(1, 60),
       big=st.booleans())
def test_no_chart_text_is_smaller_than_11_px(n_rows, n_cols, name, big):
    """At any size and label length, every chart's text is at least 11 px, and no chart may
    shrink with the page further than its smallest text allows (it scrolls instead)."""
    rows = ["r%d" % i + "x" * name for i in range(n_rows)]
    cols = ["p%d" % j + "y" * name for j in range(n_cols)]
    scale = 10 ** 12 if big else 1
    m = [[(i * 31 + j * 17) % 7 * scale for j in range(n_cols)] for i in range(n_rows)]
    frag = html.confusion_matrix(m, rows, cols)
    assert min(assert_chart_text_at_least(frag)) >= html.MIN_FONT
    values = [(i % 5) / 4.0 if i % 3 else None for i in range(n_rows)]
    for percent in (False, True):
        for show in (False, True):
            vals = [None if v is None else v * (100 if percent else 1) for v in values]
            assert_chart_text_at_least(html.bar_chart(rows, vals, "t", percent, show))
    assert_every_table_and_chart_scrolls(frag)


def test_a_chart_shrinks_with_the_page_only_down_to_11_px_text():
    """Its min-width is its width scaled by 11 / its smallest font: a 12 px chart may shrink to
    11/12 of its size (and fit a phone), a chart with 11 px text not at all."""
    bars = html.bar_chart(["nutrient_deficiency"], [0.5], "t", show_values=False)
    width = float(re.search(r'<svg [^>]*width="([0-9.]+)"', bars).group(1))
    min_width = float(re.search(r"min-width:([0-9.]+)px", bars).group(1))
    assert min_width == pytest.approx(width * 11 / 12, abs=0.15)
    heat = html.confusion_matrix([[1, 2], [3, 4]], ["a", "b"], ["a", "b"])
    width = float(re.search(r'<svg [^>]*width="([0-9.]+)"', heat).group(1))
    assert float(re.search(r"min-width:([0-9.]+)px", heat).group(1)) == pytest.approx(width, abs=0.15)


def test_every_table_and_chart_is_in_a_scroll_box_with_its_hint():
    for frag in (html.scores_table([("a", 0.5, "")]), html.counts_table(["a"], [[1]]),
                 html.bar_chart(["a"], [0.5], "t"),
                 html.confusion_matrix([[1]], ["a"], ["a"])):
        assert_every_table_and_chart_scrolls(frag)
    doc = html.page("T", [("S", html.counts_table(["a"], [[1]]))], "f")
    assert_every_table_and_chart_scrolls(doc)


def test_counts_table():
    frag = html.counts_table(["Class", "TP"], [["a&b", 1234567], ["c", 0], ["d", 5000000000]])
    assert_balanced(frag)
    assert "1,234,567" in frag
    assert "5,000,000,000" in frag
    assert "a&amp;b" in frag


def test_counts_table_aligns_formatted_numbers_right():
    frag = html.counts_table(["Kind", "Share", "iIoU", "Note"],
                             [["a", "23.00%", 0.5, "x"], ["b", "1,234.5", "-", "y"],
                              ["c", "<1%", None, "2 files"]])
    heads = re.findall(r"<th( [^>]*)?>", frag)
    assert heads == ["", ' class="num"', ' class="num"', ""]
    assert '<td class="num">23.00%</td>' in frag and '<td class="num">-</td>' in frag
    assert '<td>2 files</td>' in frag


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
