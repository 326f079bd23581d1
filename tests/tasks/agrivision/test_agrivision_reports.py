"""Every number a participant reads is checked cell by cell against the naive oracle: the
scores files, the console table (TP, FP, FN per class) and the detailed page (the 81 cells of the
confusion heat map with their orientation, and the pixel-count table). A report that swaps FP and
FN (mIoU unchanged), transposes the matrix or mislabels a column fails here."""
import json
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import agrivision_oracle as oracle
from conftest import run_score
from agrivision_data import random_image, save, write_reference

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

CLASSES = oracle.CLASSES
SIZE = (12, 10)


class Cells(HTMLParser):
    """The text of every <tr>'s cells and every <title>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.titles = [], []
        self._row, self._cell, self._title = None, None, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        elif tag == "title":
            self._title = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        elif tag == "title" and self._title is not None:
            self.titles.append(self._title)
            self._title = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._title is not None:
            self._title += data


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A random reference and submission whose confusion matrix is far from symmetric (the
    prediction is biased towards a few classes), scored by the real command, and the oracle's
    matrix for it."""
    tmp = tmp_path_factory.mktemp("reports")
    rng = np.random.RandomState(2024)
    m = [[0] * 9 for _ in range(9)]
    for k in range(4):
        image_id = "R%02d_0-0-%d-%d" % (k, SIZE[1], SIZE[0])
        b, mask, labels, storm, _ = random_image(rng, *SIZE, density=0.6)
        pred = rng.choice(9, size=SIZE, p=[.3, .2, .05, .05, .05, .05, .15, .1, .05]).astype(
            np.uint8)
        write_reference(str(tmp / "ref"), image_id, b, mask, labels, storm)
        save(str(tmp / "res" / (image_id + ".png")), pred)
        oracle.confusion_one(b, mask, labels, storm, pred, "background", m)
    proc = run_score("--ref", tmp / "ref", "--res", tmp / "res", "--out", tmp / "out",
                     "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    assert m != [list(r) for r in zip(*m)], "the test needs an asymmetric matrix"
    return tmp / "out", proc.stdout, m


def oracle_counts(m):
    """(TP, FP, FN) per class, straight from the definition: FP_c = pixels predicted c whose
    reference is another class (row c off the diagonal), FN_c = reference c predicted otherwise
    (column c off the diagonal)."""
    tp = [m[c][c] for c in range(9)]
    fp = [sum(m[c][y] for y in range(9) if y != c) for c in range(9)]
    fn = [sum(m[x][c] for x in range(9) if x != c) for c in range(9)]
    return tp, fp, fn


def test_fp_and_fn_differ_here(scored):
    _, _, m = scored
    tp, fp, fn = oracle_counts(m)
    assert fp != fn   # otherwise a swap of the two could not be seen


def test_scores_files_equal_the_oracle(scored):
    out, _, m = scored
    ious, miou = oracle.scores(m)
    with open(str(out / "scores.json")) as f:
        got = json.load(f)
    assert got["miou"] == round(float(miou), 10)
    for c, v in zip(CLASSES, ious):
        assert got["iou_" + c] == round(float(v), 10)


def test_console_table_columns_are_tp_fp_fn(scored):
    _, stdout, m = scored
    tp, fp, fn = oracle_counts(m)
    ious, _ = oracle.scores(m)
    lines = stdout.splitlines()
    header = next(line for line in lines if line.startswith("class"))
    assert header.split() == ["class", "IoU", "TP", "pixels", "FP", "pixels", "FN", "pixels"]
    rows = {line.split()[0]: line.split()[1:] for line in lines
            if line.split() and line.split()[0] in CLASSES}
    assert len(rows) == 9
    for c, name in enumerate(CLASSES):
        iou, t, p, f = rows[name]
        assert iou == "{:.4f}".format(float(ious[c]))
        assert [int(v.replace(",", "")) for v in (t, p, f)] == [tp[c], fp[c], fn[c]], name


def test_page_counts_table_cell_by_cell(scored):
    """The per-class table: IoU then the TP, FP and FN behind it (the console's order), and the
    headline mIoU; the only place each IoU is shown."""
    out, _, m = scored
    tp, fp, fn = oracle_counts(m)
    ious, miou = oracle.scores(m)
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    cells = Cells()
    cells.feed(page)
    header = next(r for r in cells.rows if r[:2] == ["Class", "IoU"])
    assert header == ["Class", "IoU", "TP", "FP", "FN"]
    rows = {r[0]: r[1:] for r in cells.rows if len(r) == 5 and r[0] in CLASSES}
    assert len(rows) == 9
    for c, name in enumerate(CLASSES):
        iou, t, p, f = rows[name]
        assert [int(v.replace(",", "")) for v in (t, p, f)] == [tp[c], fp[c], fn[c]], name
        assert iou == "{:.4f}".format(float(ious[c]))
        assert page.count(iou) == 1 or ious.count(ious[c]) > 1, name
    value = re.search(r'<span class="value">([0-9.]+)</span>', page).group(1)
    assert value == "{:.4f}".format(float(miou))


def test_page_heatmap_cell_by_cell_with_its_orientation(scored):
    """Every heat-map cell's tooltip names its reference class (row) and predicted class
    (column) and its pixel count: all 81 must equal the oracle's M[predicted][reference], shown
    with reference rows as on every page."""
    out, _, m = scored
    cells = Cells()
    cells.feed((out / "detailed_results.html").read_text(encoding="utf-8"))
    pattern = re.compile(r"^Reference class: (\w+) / Predicted class: (\w+)\n([\d,]+) pixels")
    seen = {}
    for title in cells.titles:
        match = pattern.match(title)
        if match:
            y, x = CLASSES.index(match.group(1)), CLASSES.index(match.group(2))
            seen[x, y] = int(match.group(3).replace(",", ""))
    assert len(seen) == 81
    for x in range(9):
        for y in range(9):
            assert seen[x, y] == m[x][y], (CLASSES[x], CLASSES[y])
    # Row totals: the pixels whose reference is each class (TP + FN).
    totals = {}
    for title in cells.titles:
        match = re.match(r"^([\d,]+) pixels whose reference is (\w+)$", title)
        if match:
            totals[match.group(2)] = int(match.group(1).replace(",", ""))
    assert totals == {CLASSES[y]: sum(m[x][y] for x in range(9)) for y in range(9)}


def test_task_summary_counts_equal_the_definition(tmp_path):
    """In-process, on the summary itself (the source of every report)."""
    from scoring.registry import TASKS
    from scoring.tasks.agrivision import metric
    rng = np.random.RandomState(5)
    state = metric.LabelSetHistogram()
    state.counts[:] = rng.randint(0, 50, size=state.counts.shape)
    from scoring.tasks.agrivision.task import Settings
    summary = TASKS["agriculture-vision"].summarize(state, None, Settings("background"))
    counts = summary.details
    assert (counts.tp, counts.fp, counts.fn) == oracle_counts(counts.confusion)

