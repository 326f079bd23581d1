"""The instance task through the real commands: score.py on the committed sample, the starting
kit's check and zip (the masks go into the zip under their paths), compare.py ranking two
submissions (one format object reads both: nothing of one submission may leak into the other's
reading), and the page."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import KIT, ORGANIZER, PLANETSCAPES, run_score
from scoring.registry import TASKS
from scoring import reference_setup

# The pixel tasks' one reference (its config.yaml: task: planetscapes-semantic): every command
# scores it with the instance task by --task.
REF = os.path.join(PLANETSCAPES, "reference_data", "semantic")
TASK = ("--task", "planetscapes-instance")
SAMPLE = os.path.join(PLANETSCAPES, "starting_kit", "instance", "sample_submission")


@pytest.mark.compat
def test_the_sample_scores_and_the_page_shows_the_curves(tmp_path):
    out = tmp_path / "out"
    proc = run_score("--ref", REF, "--res", SAMPLE, "--out", out, *TASK)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stdout + proc.stderr   # the masks are no extra files
    scores = json.loads((out / "scores.json").read_text())
    assert set(scores) == {"ap", "ap50", "ap_rock", "ap_boulder", "ap_rover", "ap50_rock",
                           "ap50_boulder", "ap50_rover", "ap_ci_low", "ap_ci_high",
                           "ap50_ci_low", "ap50_ci_high"}
    assert scores["ap_ci_low"] <= scores["ap"] <= scores["ap_ci_high"]
    page = (out / "detailed_results.html").read_text()
    assert page.count("<polyline") == 2 and "best: rock" in page and "worst: rover" in page
    # the re-scored interval is the basic bootstrap, and the page says so
    assert "basic bootstrap over whole images" in page and "studentized" not in page


def _manifest(tmp_path):
    task = TASKS["planetscapes-instance"]
    settings = reference_setup.configure(REF, task.name).settings
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(task.manifest.make(task.open_reference(REF, settings))))
    return str(path)


def test_the_kit_zips_the_txt_files_with_their_masks_and_the_zip_scores(tmp_path):
    manifest = _manifest(tmp_path)
    preds = tmp_path / "preds"
    shutil.copytree(SAMPLE, str(preds))
    (preds / "masks" / "unused.png").write_bytes(b"not even a png")   # named by no line: left out
    zipped = str(tmp_path / "submission.zip")
    proc = subprocess.run([sys.executable, os.path.join(KIT, "make_submission.py"), str(preds),
                           "-o", zipped, "--manifest", manifest], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(zipped) as zf:
        names = set(zf.namelist())
    txt = {n for n in names if n.endswith(".txt")}
    assert len(txt) == 12 and all("/" not in n for n in txt)
    assert "masks/unused.png" not in names
    assert {n for n in names if n.startswith("masks/")} == {
        "masks/" + n for n in os.listdir(SAMPLE + "/masks")}
    proc = run_score("--ref", REF, "--res", zipped, "--out", tmp_path / "out", *TASK)
    assert proc.returncode == 0, proc.stderr


def _worse(tmp_path):
    """The sample with every confidence reversed: a worse ranking of the same masks."""
    worse = tmp_path / "worse"
    shutil.copytree(SAMPLE, str(worse))
    for name in os.listdir(str(worse)):
        if name.endswith(".txt"):
            lines = (worse / name).read_text().split("\n")
            flipped = []
            for line in lines:
                if line.strip():
                    path, label, conf = line.split()
                    flipped.append("{} {} {:.2f}".format(path, label, 1 - float(conf)))
            (worse / name).write_text("\n".join(flipped) + "\n")
    return str(worse)


def test_compare_ranks_two_submissions(tmp_path):
    worse = _worse(tmp_path)
    proc = subprocess.run([sys.executable, os.path.join(ORGANIZER, "compare.py"), "--ref", REF,
                           "--out", str(tmp_path / "cmp"), SAMPLE, worse, "--workers", "2", *TASK],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "cmp" / "leaderboard.csv").read_text().splitlines()
    assert "Left out" not in proc.stdout, proc.stdout
    assert lines[1].split(",")[0].endswith("sample_submission") or "sample_submission" in lines[1]


def test_a_table_without_instance_classes_is_the_references_problem(tmp_path):
    import yaml
    ref = tmp_path / "ref"
    shutil.copytree(REF, str(ref))
    config = yaml.safe_load((ref / "config.yaml").read_text())
    for row in config["labels"]:
        row["has_instances"] = False
    (ref / "config.yaml").write_text(yaml.safe_dump(config))
    proc = run_score("--ref", ref, "--res", SAMPLE, *TASK)
    assert proc.returncode == 3, proc.stderr
    assert "the instance task has no class to score" in proc.stderr


def test_verify_rescores_a_final_package_and_compares_its_predictions(tmp_path):
    """verify.py on the instance task: results/ rescored, and a reproduction compared image by
    image by content (the masks, labels and confidences), not as label images."""
    final = tmp_path / "final"
    shutil.copytree(SAMPLE, str(final / "results"))
    (final / "code").mkdir()
    (final / "code" / "train.py").write_text("print('train')\n")
    (final / "models").mkdir()
    (final / "challenge_report.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    worse = _worse(tmp_path)
    for reproduced, phrase in ((SAMPLE, "12 of 12 images identical"),
                               (worse, "0 of 12 images compared are identical")):
        proc = subprocess.run([sys.executable, os.path.join(ORGANIZER, "verify.py"), "--ref", REF,
                               "--out", str(tmp_path / "v"), "--reproduced", reproduced,
                               str(final), *TASK], capture_output=True, text=True, timeout=300)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "results/ passes every check of the scoring program; ap 0.6081" in proc.stdout
        assert phrase in proc.stdout, proc.stdout
