"""Every kind of page the program writes, in a real browser (headless Chromium): each task's
detailed results, the comparison, the generalist ranking and the bundles' competition pages, made
by the real commands. At 1400, 500 and 360 px no page is wider than the window, no chart text is
drawn under 11 px, every table and chart whose content is out of view shows its "scroll" hint at
its right edge, and only then; at 1400 px nothing scrolls. Without chromium the module is
skipped, except in CI (.ci/run installs it and sets PAGES_IN_BROWSER=required): there it fails.
A new kind of page is one line of PAGES. The screenshots to look at are made by hand:
docs/pages.md."""
import hashlib
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from PIL import Image

from conftest import AGRIVISION, AV_KIT, AV_REF, ROOT, SEM_KIT, SEM_REF, VQA_KIT, VQA_REF, run_score
from generalist_util import SAMPLE as GENERALIST_SAMPLE, run_generalist
from kits_util import built_bundle, session_kits

sys.path.insert(0, os.path.join(ROOT, "dev"))
import page_shots  # noqa: E402

BROWSER = page_shots.chromium()
REQUIRED = os.environ.get("PAGES_IN_BROWSER") == "required"
pytestmark = pytest.mark.skipif(BROWSER is None and not REQUIRED,
                                reason="no chromium (apt-get install chromium)")
WIDTHS = (1400, 500, 360)  # a desktop, a narrow window, a phone held upright


def detailed_results(ref, kit):
    def make(factory):
        out = factory.mktemp("detailed") / "out"
        proc = run_score("--ref", os.path.join(ROOT, ref), "--res",
                         os.path.join(ROOT, kit, "sample_submission"), "--out", out)
        assert proc.returncode == 0, proc.stderr
        return [out / "detailed_results.html"]
    return make


def comparison(factory):
    """The README's comparison: the sample submission against an all-background baseline."""
    tmp = factory.mktemp("comparison")
    sample = os.path.join(AGRIVISION, "starting_kit", "sample_submission")
    baseline = tmp / "all_background"
    baseline.mkdir()
    for name in os.listdir(sample):
        Image.fromarray(np.zeros((512, 512), np.uint8)).save(str(baseline / name))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "organizer", "compare.py"),
                           "--ref", os.path.join(AGRIVISION, "reference_data"), "--out", tmp / "out",
                           sample, baseline], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [tmp / "out" / "comparison.html"]


def ranking(factory):
    out = factory.mktemp("ranking") / "out"
    proc = run_generalist(os.path.join(GENERALIST_SAMPLE, "config.yaml"), "--out", out)
    assert proc.returncode == 0, proc.stderr
    return [out / "ranking.html"]


def competition_pages(factory):
    """The html pages of every bundle bundle.sh builds from the samples (both competitions,
    every track, the merged Planetscapes bundle), each distinct page once. The bundles are the
    kits' build, shared with the kits' tests."""
    kits = session_kits(factory)
    tmp = factory.mktemp("competition-pages")
    pages, seen = [], set()
    for competition in ("agriculture-vision", "planetscapes"):
        folder = built_bundle(kits, competition, "")
        for name in sorted(os.listdir(folder)):
            with zipfile.ZipFile(os.path.join(folder, name)) as zf:
                for entry in sorted(n for n in zf.namelist() if n.endswith(".html")):
                    data = zf.read(entry)
                    digest = hashlib.sha256(data).hexdigest()
                    if digest not in seen:
                        seen.add(digest)
                        page = tmp / "{}-{}".format(name[:-4], entry.replace("/", "-"))
                        page.write_bytes(data)
                        pages.append(page)
    assert len(pages) >= 3 * 4, "the pages of the three tracks at least"
    return pages


def verification(factory):
    """The README's verification of the sample final package (valid), and of one that breaks
    rules (no report, a claimed score that does not match): both verdicts' pages."""
    import shutil
    tmp = factory.mktemp("verification")
    pages = []
    for name, claimed, keep_pdf in (("valid", "0.6133", True), ("broken", "0.7", False)):
        package = tmp / name
        shutil.copytree(os.path.join(ROOT, "samples", "final_submission"), str(package))
        shutil.copytree(os.path.join(AGRIVISION, "starting_kit", "sample_submission"),
                        str(package / "submission" / "results"))
        if not keep_pdf:
            os.remove(str(package / "submission" / "challenge_report.pdf"))
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "organizer", "verify.py"),
                               str(package), "--ref", os.path.join(AGRIVISION, "reference_data"),
                               "--out", str(tmp / (name + "-out")), "--claimed", claimed],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == (0 if keep_pdf else 1), proc.stderr
        pages.append(tmp / (name + "-out") / "verdict.html")
    return pages


def consensus(factory):
    """consensus.py over two tasks' comparisons (long names, a submission left out)."""
    import json
    tmp = factory.mktemp("consensus")
    names = ["aurora_long_model_name_with_many_parts_v2", "borealis", "cirrus", "dune_lab"]
    for task, ranks in (("planetscapes-semantic", [1, 2, 3, 4]), ("planetscapes-vqa", [2, 1, 3])):
        (tmp / task).mkdir()
        (tmp / task / "comparison.json").write_text(json.dumps(
            {"task": task, "key": "score", "models": [{"model": n, "rank": r}
                                                       for n, r in zip(names, ranks)]}))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "organizer", "consensus.py"),
                           "--out", str(tmp / "out"), str(tmp / "planetscapes-semantic"),
                           str(tmp / "planetscapes-vqa")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [tmp / "out" / "consensus.html"]


# kind -> how the real commands make its pages: a function of tmp_path_factory -> the pages.
PAGES = {
    "detailed results, agriculture-vision": detailed_results(AV_REF, AV_KIT),
    "detailed results, planetscapes-semantic": detailed_results(SEM_REF, SEM_KIT),
    "detailed results, planetscapes-vqa": detailed_results(VQA_REF, VQA_KIT),
    "comparison": comparison,
    "consensus": consensus,
    "ranking": ranking,
    "competition pages": competition_pages,
    "verification": verification,
}


@pytest.fixture(scope="module")
def browser():
    if BROWSER is None:
        pytest.fail("no chromium on PATH, and PAGES_IN_BROWSER=required (CI): apt-get install "
                    "-y chromium")
    tools = page_shots.DevTools(BROWSER)
    yield tools
    tools.close()


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_every_page_reads_at_1400_500_and_360_px(kind, browser, tmp_path_factory):
    pages = PAGES[kind](tmp_path_factory)
    for page in pages:
        for width in WIDTHS:
            measured = browser.measure(str(page), width)
            assert page_shots.problems(measured) == [], (page.name, width)
            if width == 1400:  # room for everything: nothing scrolls
                assert all(box["hidden"] <= 0 for box in measured["boxes"]), page.name
        if kind.startswith("detailed results"):
            assert measured["boxes"] and measured["svgText"]
    # At 500 px the 9 x 9 (or larger) matrix does not fit: it scrolls, with its hint shown.
    if kind.startswith("detailed results") and not kind.endswith("vqa"):
        narrow = browser.measure(str(pages[0]), 500)
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


def test_page_shots_names_every_page_apart_and_refuses_a_missing_one(tmp_path):
    """Issue 32: dev/page_shots.py named each screenshot after the page's folder, so the pages of
    one folder overwrote each other's; a missing page was a traceback."""
    pages = []
    for folder, name, colour in (("out", "comparison.html", "#c00"), ("out", "consensus.html",
                                                                       "#0c0"),
                                 ("x/out", "comparison.html", "#00c")):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        page = tmp_path / folder / name
        page.write_text('<!DOCTYPE html><html><body style="margin:0"><div style="background:{};'
                        'height:200px"></div></body></html>'.format(colour))
        pages.append(str(page))
    shots = tmp_path / "shots"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "dev", "page_shots.py"),
                           str(shots)] + pages + ["--widths", "500"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(os.listdir(str(shots))) == ["out-comparison-2-500.png",
                                              "out-comparison-500.png",
                                              "out-consensus-500.png"]
    colours = {n: Image.open(str(shots / n)).convert("RGB").getpixel((10, 10))
               for n in os.listdir(str(shots))}
    assert colours == {"out-comparison-500.png": (204, 0, 0),
                       "out-consensus-500.png": (0, 204, 0),
                       "out-comparison-2-500.png": (0, 0, 204)}, colours
    for args in ([str(shots), str(tmp_path / "nowhere.html")],
                 ["--check", str(tmp_path / "nowhere.html")]):
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "dev", "page_shots.py")] + args,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr == "page_shots.py: no such page: {}\n".format(
            tmp_path / "nowhere.html")
