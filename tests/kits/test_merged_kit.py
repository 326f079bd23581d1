"""The merged Planetscapes kit (one upload scored by every task): make_submission.py says what
the zip still lacks instead of "Upload it." until the other tasks' files are in (--add), and
what it writes with them is scored by every task through the merged bundle. Real commands, built kits."""
import os
import subprocess
import sys
import zipfile

import pytest

from kits_util import built_bundle, session_kits

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

MERGED_BUNDLE = "planetscapes2027-codabench.zip"


@pytest.fixture
def kits(tmp_path_factory):
    """The starting kits as built by bundle.sh --kits (once per session)."""
    return session_kits(tmp_path_factory)


def tool(kit, *args):
    return subprocess.run([sys.executable] + [str(a) for a in args], cwd=kit,
                          capture_output=True, text=True, timeout=120)


def test_without_the_vqa_results_the_zip_is_not_ready_to_upload(kits, tmp_path):
    kit = os.path.join(kits, "merged")
    out = tmp_path / "submission.zip"
    proc = tool(kit, "semantic/make_submission.py", "semantic/sample_submission", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "Upload it." not in proc.stdout
    assert "Wrote {} (12 predictions at the root of the zip, ".format(out) in proc.stdout
    assert "Do not upload it yet: this competition scores every submission on Instance " \
           "labeling and Panoptic segmentation and VQA too, and this zip holds nothing for it, " \
           "so that task would fail. Check that task's file with the kit's instance/, " \
           "panoptic/, vqa/ tools (its README.md), " \
           "then make the zip again adding it: --add FILE." in proc.stdout
    with zipfile.ZipFile(str(out)) as zf:
        assert len(zf.namelist()) == 12 and all(n.endswith(".png") for n in zf.namelist())


def test_with_every_tasks_files_added_the_zip_scores_on_every_task(kits, tmp_path):
    kit = os.path.join(kits, "merged")
    out = tmp_path / "submission.zip"
    proc = tool(kit, "semantic/make_submission.py", "semantic/sample_submission", "--add",
                "vqa/sample_submission/results.json", "--add",
                "panoptic/sample_submission/predictions.json", "--add",
                "panoptic/sample_submission/predictions/", "--add",
                "sample_submission/instance/", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "(12 predictions and results.json and predictions.json and predictions/ and " \
           "instance/ at the root of the zip, " in proc.stdout
    assert proc.stdout.rstrip().endswith("Upload it.")
    masks = os.listdir(os.path.join(kit, "instance", "sample_submission", "masks"))
    with zipfile.ZipFile(str(out)) as zf:
        names = zf.namelist()
        assert "results.json" in names and "predictions.json" in names
        assert len(names) == 26 + 12 + len(masks)
        assert sum(n.startswith("predictions/") for n in names) == 12
        # the instance folder keeps the masks where its .txt files' lines name them
        assert {"instance/site00_sol0100_000.txt", "instance/masks/" + masks[0]} <= set(names)
    proc = tool(kit, "semantic/dry_run.py", out, "--bundle",
                built_bundle(kits, "planetscapes", MERGED_BUNDLE), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("--- child submission") == 4
    assert "RESULT: the submission would be scored on Codabench." in proc.stdout


def test_a_kit_of_one_task_says_upload_it(kits, tmp_path):
    kit = os.path.join(kits, "semantic")
    proc = tool(kit, "make_submission.py", "sample_submission", "-o", tmp_path / "s.zip")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("Upload it.")


@pytest.mark.parametrize("added,phrase", [
    ("nothing.json", "--add nothing.json: no such file"),
    ("semantic/sample_submission/site00_sol0100_000.png",
     "--add: site00_sol0100_000.png is also the name of a prediction"),
])
def test_add_refuses_what_cannot_go_in_the_zip(kits, tmp_path, added, phrase):
    kit = os.path.join(kits, "merged")
    out = tmp_path / "submission.zip"
    proc = tool(kit, "semantic/make_submission.py", "semantic/sample_submission", "--add",
                added, "-o", out)
    assert proc.returncode == 2 and phrase in proc.stderr, proc.stderr
    assert not out.exists() and "Traceback" not in proc.stderr
