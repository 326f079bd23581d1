"""The Agriculture-Vision detailed results page (scoring/tasks/agrivision/report.py): well-formed,
self-contained, every number shown once, everything escaped, reference rows in the matrix."""
import re

from scoring.task_api import RunFacts
from scoring.tasks.agrivision import report as av_report
from html_checks import (CLASSES, assert_balanced, assert_chart_text_at_least,
                         assert_every_table_and_chart_scrolls, assert_self_contained, confusion_9,
                         elements)

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
    # exactly one n/a class: 'nutrient_deficiency', explained under the table
    assert "n/a: no IoU, the class is absent from both the reference and the predictions" in doc


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


def test_each_iou_is_shown_once():
    """Issue 15: the page listed each IoU three times (scores table, bar values, pixel-count
    table). Now once, in the table beside its TP, FP and FN; the bars carry no numbers, and no
    tooltip repeats them."""
    data = sample_data()
    doc = render_page(data)
    parsed = elements(doc)
    visible = "\n".join(parsed.visible)
    for v in data["iou"]:
        if v is not None:
            shown = "{:.4f}".format(v)
            assert doc.count(shown) == 1, shown
            assert visible.count(shown) == 1, shown
    assert doc.count("0.5123") == 1  # the mIoU: the headline only


def test_per_class_table_is_iou_then_its_counts():
    data = sample_data()
    doc = render_page(data)
    rows = re.findall(r"<tr>(.*?)</tr>", doc)
    head = [re.sub("<[^>]+>", "", c) for c in re.findall(r"<th[^>]*>.*?</th>", rows[0])]
    assert head == ["Class", "IoU", "TP", "FP", "FN"]
    body = [[re.sub("<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>.*?</td>", r)]
            for r in rows[1:10]]
    for i, name in enumerate(CLASSES):
        iou = data["iou"][i]
        assert body[i] == [name, "n/a" if iou is None else "{:.4f}".format(iou)] + [
            "{:,}".format(data[k][i]) for k in ("tp", "fp", "fn")]


def test_matrix_rows_are_the_reference_class():
    """The metric's confusion[predicted][reference] is shown with reference rows, as on the
    Planetscapes page: row x, column y holds confusion[y][x], normalised over row x."""
    m = confusion_9()
    m[1][2] = 777   # predicted double_plant, reference drydown
    m[2][1] = 5     # predicted drydown, reference double_plant
    doc = render_page(sample_data(confusion=m))
    tips = {(ref, pred): int(n.replace(",", "")) for ref, pred, n in re.findall(
        r"<title>Reference class: (\w+) / Predicted class: (\w+)\n([0-9,]+) pixels", doc)}
    assert len(tips) == 81
    for x, ref in enumerate(CLASSES):
        for y, pred in enumerate(CLASSES):
            assert tips[ref, pred] == m[y][x]
    assert tips["drydown", "double_plant"] == 777 and tips["double_plant", "drydown"] == 5
    totals = dict((k, int(n.replace(",", ""))) for n, k in re.findall(
        r"<title>([0-9,]+) pixels whose reference is (\w+)</title>", doc))
    assert totals == {ref: sum(m[y][x] for y in range(9)) for x, ref in enumerate(CLASSES)}
    assert "Rows are the <strong>reference</strong> class" in doc
    assert "(rows: reference class, columns: predicted class)" in doc


def test_no_chart_text_under_11_px_and_every_table_scrolls():
    doc = render_page(sample_data())
    assert_chart_text_at_least(doc)
    assert_every_table_and_chart_scrolls(doc)


def test_headline_counts_the_classes_that_have_an_iou():
    """One class without an IoU (None) of nine: the headline says 8 of 9, once."""
    doc = render_page(sample_data())
    assert doc.count("8 of 9 classes have an IoU") == 1
    every = render_page(sample_data(iou=[0.5] * 9))
    assert "9 of 9 classes have an IoU" in every and "8 of 9" not in every
