"""The three tasks' sample pages in a real browser (headless Chromium, when it is installed; CI
does not need it): at 1400, 500 and 360 px no page is wider than the window, no chart text is drawn
under 11 px, and every table and chart whose content is out of view shows its "scroll" hint at
its right edge, and only then. The screenshots to look at are made by hand: docs/pages.md."""
import os
import sys

import pytest

from conftest import ROOT, run_score

sys.path.insert(0, os.path.join(ROOT, "tools"))
import page_shots  # noqa: E402

BROWSER = page_shots.chromium()
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium (apt-get install chromium)")

SAMPLES = {
    "agriculture-vision": ("reference_data", "starting_kit"),
    "planetscapes-semantic": ("reference_data_planetscapes", "starting_kit_planetscapes"),
    "planetscapes-vqa": ("reference_data_vqa", "starting_kit_vqa"),
}


@pytest.fixture(scope="module")
def browser():
    tools = page_shots.DevTools(BROWSER)
    yield tools
    tools.close()


@pytest.mark.parametrize("task", sorted(SAMPLES))
def test_sample_page_reads_at_1400_and_500_px(task, browser, tmp_path):
    ref, kit = SAMPLES[task]
    out = tmp_path / "out"
    proc = run_score("--ref", os.path.join(ROOT, ref), "--res",
                     os.path.join(ROOT, kit, "sample_submission"), "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = str(out / "detailed_results.html")
    for width in (1400, 500, 360):  # and a phone held upright
        measured = browser.measure(page, width)
        assert page_shots.problems(measured) == [], width
        assert measured["boxes"] and measured["svgText"]
        if width == 1400:  # room for everything: nothing scrolls
            assert all(box["hidden"] <= 0 for box in measured["boxes"])
    # At 500 px the 9 x 9 (or larger) matrix does not fit: it scrolls, with its hint shown.
    if task != "planetscapes-vqa":
        narrow = browser.measure(page, 500)
        assert any(box["what"] == "chart" and box["hidden"] > 0 and box["shown"]
                   for box in narrow["boxes"])


def test_the_check_sees_what_the_old_pages_got_wrong(browser, tmp_path):
    """The measure finds the problems the issue names: a chart shrunk under 11 px, and a table
    that scrolls with no hint (the page before this change, reduced to the two faults)."""
    old = tmp_path / "old.html"
    old.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><style>'
        'body{margin:0}.w{overflow-x:auto}svg{max-width:100%;height:auto}</style></head><body>'
        '<div class="w"><table><tr>' + "<td>1,234,567,890</td>" * 8 + '</tr></table></div>'
        '<svg width="900" height="40" viewBox="0 0 900 40"><text x="5" y="20" font-size="12">'
        'label</text></svg></body></html>', encoding="utf-8")
    found = page_shots.problems(browser.measure(str(old), 500))
    assert any("without a hint" in f for f in found), found
    assert any("chart texts under 11 px" in f for f in found), found
