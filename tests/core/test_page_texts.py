"""What the pages say, made by the real commands on the samples (issue 26 item 18): each count
once, the counts a page gives agree with its tables, the significance mark read as a share of
resamples, not a p-value; and the three heat maps are one (issue 23 item 7)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from conftest import AGRIVISION, AV_KIT, AV_REF, ROOT, SEM_KIT, SEM_REF, VQA_KIT, VQA_REF, run_score
from generalist_util import SAMPLE as GENERALIST_SAMPLE, run_generalist

SAMPLES = {
    "agriculture-vision": (AV_REF, AV_KIT, "40 images"),
    "planetscapes-semantic": (SEM_REF, SEM_KIT, "12 images"),
    "planetscapes-vqa": (VQA_REF, VQA_KIT, "300 questions"),
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """task -> its sample's detailed_results.html."""
    out = {}
    for task, (ref, kit, _) in SAMPLES.items():
        folder = tmp_path_factory.mktemp("page") / "out"
        proc = run_score("--ref", os.path.join(ROOT, ref), "--res",
                         os.path.join(ROOT, kit, "sample_submission"), "--out", folder)
        assert proc.returncode == 0, proc.stderr
        out[task] = (folder / "detailed_results.html").read_text(encoding="utf-8")
    return out


@pytest.mark.parametrize("task", sorted(SAMPLES))
def test_the_headline_says_each_count_once(pages, task):
    sub = re.search(r'<span class="sub">(.*?)</span>', pages[task]).group(1)
    units = SAMPLES[task][2]
    assert sub.count(units) == 1, sub
    assert " over " + units in sub or " of " + units in sub, sub   # the interval's phrase says it


@pytest.mark.parametrize("task,phrase,section", [
    ("agriculture-vision", "classes have an IoU", "Per-class IoU"),
    ("planetscapes-semantic", "evaluated classes have an IoU", "Per class")])
def test_the_classes_with_an_iou_agree_with_the_table(pages, task, phrase, section):
    """'N of M ... classes have an IoU': N and M as the per-class table shows them (its rows, and
    those whose IoU is not n/a)."""
    page = pages[task]
    n, m = map(int, re.search(r"(\d+) of (\d+) " + phrase, page).groups())
    table = page.split("<h2>{}</h2>".format(section))[1].split("</table>")[0]
    rows = table.split("<tr>")[2:]                 # past the header row
    assert m == len(rows) and n == len([r for r in rows if ">n/a<" not in r]), (n, m)


def test_planetscapes_categories_counted_as_the_table_shows_them(pages):
    page = pages["planetscapes-semantic"]
    said = int(re.search(r"evaluated in (\d+) categories", page).group(1))
    table = page.split("<h2>Per category</h2>")[1].split("</table>")[0]
    assert said == table.count("<tr>") - 1 and said >= 2, said  # minus the header row


def test_every_heat_map_is_the_shared_one(pages, tmp_path):
    """The confusion matrices, the significance map and the generalist's map: one SVG heat map
    in the shared figure and scroll box, its cell text at 11 px, no HTML-table heat map."""
    sample = os.path.join(AGRIVISION, "starting_kit", "sample_submission")
    baseline = tmp_path / "all_background"
    baseline.mkdir()
    for name in os.listdir(sample):
        Image.fromarray(np.zeros((512, 512), np.uint8)).save(str(baseline / name))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "organizer", "compare.py"),
                           "--ref", os.path.join(AGRIVISION, "reference_data"), "--out",
                           tmp_path / "cmp", sample, baseline], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    comparison = (tmp_path / "cmp" / "comparison.html").read_text(encoding="utf-8")
    proc = run_generalist(os.path.join(GENERALIST_SAMPLE, "config.yaml"), "--out", tmp_path / "r")
    assert proc.returncode == 0, proc.stderr
    ranking = (tmp_path / "r" / "ranking.html").read_text(encoding="utf-8")
    for name, page, cells in (("agriculture-vision", pages["agriculture-vision"], 81),
                              ("comparison", comparison, 4), ("ranking", ranking, 21)):
        maps = re.findall(r'<figure class="figure"><figcaption>[^<]*</figcaption>'
                          r'<div class="scroll"><div class="scroll-in"><svg style="min-width:'
                          r'[0-9.]+px" class="chart heatmap".*?</svg>', page, re.S)
        assert len(maps) == 1, name
        assert maps[0].count('<rect class="hm-cell"') == cells, name
        assert maps[0].count('class="hm-legend"') == 10, name
        sizes = {float(v) for v in re.findall(r'<g>(?:<title>[^<]*</title>)?<rect class="hm-cell"'
                                              r'[^>]*/>(?:<text [^>]*font-size="([0-9.]+)")?',
                                              maps[0]) if v}
        assert sizes == {11.0}, (name, sizes)
        assert "table-wrap" not in page and "svg-wrap" not in page and 'class="heat"' not in page
    # Numbers never wrap at an exponent's or a range's hyphen (numeric cells do not wrap).
    assert '<td class="num">9.086e-05</td>' in ranking and '<td class="num">1.000e-12</td>' in ranking
    assert re.search(r'<td class="num">0\.\d{4}\u2013\d\.\d{4}</td>', comparison)
    assert ".num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}" in ranking
    # The mark of the significance map is a share of resamples, said where it is shown.
    assert "Ranking by" not in comparison
    assert "1.00*" in comparison and "* p &gt;= 0.95" not in comparison
    assert "(not a p-value)" in comparison and "Holm" in comparison
