"""Tests for the self-contained HTML report: the building blocks (scoring/report/html.py) and the
Agriculture-Vision page built from them (scoring/tasks/agrivision/report.py)."""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scoring_program"))

from scoring.report import html  # noqa: E402
from scoring.task_api import RunFacts  # noqa: E402
from scoring.tasks.agrivision import report as av_report  # noqa: E402

CLASSES = [
    "background", "double_plant", "drydown", "endrow", "nutrient_deficiency",
    "planter_skip", "water", "waterway", "weed_cluster",
]

VOID = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
    "param", "source", "track", "wbr",
}


class TagBalanceChecker(HTMLParser):
    """Records tags; checks that every non-void element is closed in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.starttags = []
        self.attrs = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.starttags.append(tag)
        self.attrs.extend(attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):  # <rect ... /> in SVG
        self.starttags.append(tag)
        self.attrs.extend(attrs)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack:
            self.errors.append("unexpected </%s>" % tag)
        elif self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1]))
            self.stack.pop()
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(doc):
    checker = TagBalanceChecker()
    checker.feed(doc)
    checker.close()
    return checker


def assert_balanced(doc):
    checker = parse(doc)
    assert checker.errors == []
    assert checker.stack == [], "unclosed: %r" % checker.stack
    return checker


def confusion_9():
    m = [[0] * 9 for _ in range(9)]
    for x in range(9):
        for y in range(9):
            m[x][y] = (1000 + 37 * x * y) * (50 if x == y else 1)
    m[0][0] = 5000000000  # very large cell
    return m


def sample_data(**overrides):
    data = {
        "title": "Agriculture-Vision 2021 - detailed results",
        "primary": ("mIoU", 0.5123),
        "classes": list(CLASSES),
        "iou": [0.81, 0.33, 0.5, 0.25, None, 1.0, 0.0, 0.61, 0.47],
        "tp": [123456789, 2345678, 345678, 45678, 0, 5678, 0, 78, 1234567890],
        "fp": [1000, 2000, 3000, 4000, 0, 0, 7000, 8000, 9000],
        "fn": [11, 22, 33, 44, 0, 0, 77, 88, 99],
        "confusion": confusion_9(),
        "warnings": ["3 files ignored: a.png, b.png, c.png", "strange <file> & 'name'"],
        "run": {
            "images": 40, "pixels": 10485760, "workers": 2, "seconds": 1.23,
            "storm_damage": "background", "reference_layout": "raw",
            "scorer_version": "1.0.0", "finished": "2026-11-29 12:00:00 UTC",
        },
        "notes": [
            "A pixel with several reference labels counts once per label.",
            "IoU = TP / (TP + FP + FN).",
        ],
    }
    data.update(overrides)
    return data


def render_page(data):
    """The Agriculture-Vision page (tasks/agrivision/report.py) from sample_data's fields."""
    run = data.get("run") or {}
    facts = RunFacts(
        units=run.get("images", 40), unit_noun="images", workers=run.get("workers", 2),
        seconds=run.get("seconds", 1.23), reference_layout=run.get("reference_layout", "raw"),
        scorer_version=run.get("scorer_version", "1.0.0"),
        finished=run.get("finished", "2026-11-29 12:00:00 UTC"),
        task_facts=[("Pixels scored", run["pixels"])] if "pixels" in run else [])
    return av_report.render(
        data["title"], data["primary"][1], data["iou"], (data["tp"], data["fp"], data["fn"]),
        data["confusion"], data.get("warnings") or [], facts,
        [("storm_damage policy", run.get("storm_damage", "background"))],
        classes=data["classes"], notes=data.get("notes") or av_report.NOTES)


def assert_self_contained(doc):
    low = doc.lower()
    assert "<script" not in low
    assert re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//|file:|[\w./-]+\.\w+)""", low) is None
    assert "@import" not in low
    assert "url(" not in low


# --------------------------------------------------------------------------
# full page
# --------------------------------------------------------------------------

def test_page_is_well_formed_and_self_contained():
    doc = render_page(sample_data())
    assert doc.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in doc
    assert "<style>" in doc
    assert "<svg" in doc
    assert_balanced(doc)
    assert_self_contained(doc)


def test_page_contents():
    data = sample_data()
    doc = render_page(data)
    assert "0.5123" in doc
    for name in CLASSES:
        assert name in doc
    for n in data["tp"] + data["fp"] + data["fn"]:
        assert "{:,}".format(n) in doc
    assert "1,234,567,890" in doc
    assert "n/a" in doc
    assert "Predicted class" in doc and "Reference class" in doc
    assert "10,485,760" in doc
    assert "1.23 s" in doc
    assert "2026-11-29 12:00:00 UTC" in doc
    assert "1.0.0" in doc
    assert "background" in doc
    assert "once per label" in doc
    assert "3 files ignored" in doc
    # 1.0 and 0.0 are regular values, not n/a
    assert "1.0000" in doc and "0.0000" in doc
    # exactly one n/a class: 'nutrient_deficiency'
    assert "no IoU: class absent from reference and prediction" in doc


def test_page_has_81_heatmap_cells():
    doc = render_page(sample_data())
    assert doc.count('<rect class="hm-cell"') == 81
    # the huge cell count is in a tooltip with separators
    assert "5,000,000,000" in doc


def test_escaping_of_class_names_and_warnings():
    classes = list(CLASSES)
    classes[1] = "<b>&x"
    data = sample_data(classes=classes, warnings=['bad "<i>file</i>" & more'],
                       notes=["note <u>x</u>"], title="T <em>&</em>")
    doc = render_page(data)
    assert "<b>" not in doc
    assert "&lt;b&gt;&amp;x" in doc
    assert "<i>" not in doc and "<u>" not in doc and "<em>&" not in doc
    assert "&lt;i&gt;file&lt;/i&gt;" in doc
    assert "&quot;" in doc
    checker = assert_balanced(doc)
    text = "".join(checker.text)
    assert "<b>&x" in text
    assert 'bad "<i>file</i>" & more' in text
    assert "b" not in checker.starttags and "i" not in checker.starttags


def test_none_primary_and_missing_optional_keys():
    data = sample_data(primary=("mIoU", None))
    for key in ("warnings", "notes", "run"):
        del data[key]
    doc = render_page(data)
    assert_balanced(doc)
    assert "No warnings." in doc
    assert "n/a" in doc


def test_partial_run_information():
    doc = render_page(sample_data(run={"images": 3, "seconds": 125.5}))
    assert_balanced(doc)
    assert "2 min 5.5 s" in doc


def test_all_zero_confusion_and_counts():
    zeros = [[0] * 9 for _ in range(9)]
    data = sample_data(confusion=zeros, tp=[0] * 9, fp=[0] * 9, fn=[0] * 9,
                       iou=[None] * 9, primary=("mIoU", None), warnings=[])
    doc = render_page(data)
    assert_balanced(doc)
    assert doc.count('<rect class="hm-cell"') == 81
    assert "No warnings." in doc


def test_extreme_values_one_and_zero():
    data = sample_data(iou=[1.0] * 4 + [0.0] * 5, primary=("mIoU", 0.0))
    doc = render_page(data)
    assert_balanced(doc)
    assert "1.0000" in doc and "0.0000" in doc
    assert doc.count('<rect class="bar"') == 4  # zero-length bars are not drawn


# --------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------

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
