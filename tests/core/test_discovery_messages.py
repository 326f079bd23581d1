"""What a participant is told when the submission holds nothing to score, or predictions of
another split, through the real commands (issue 26 items 8, 10, 14)."""
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

from conftest import ROOT, AGRIVISION, VQA_REF, run_score

KIT = os.path.join(ROOT, "kit")
AV_KIT = os.path.join(AGRIVISION, "starting_kit")
AV_REF = os.path.join(AGRIVISION, "reference_data")


def _check(path):
    # The repository's kit tools have no manifest beside them (a built kit has): the flagship's.
    return subprocess.run([sys.executable, os.path.join(KIT, "check_submission.py"), str(path),
                           "--manifest", os.path.join(AV_KIT, "manifest.json")],
                          capture_output=True, text=True, timeout=120)


def test_an_empty_folder_or_zip_is_said_to_be_empty(tmp_path):
    import zipfile
    empty = tmp_path / "empty"
    empty.mkdir()
    with zipfile.ZipFile(str(tmp_path / "empty.zip"), "w"):
        pass
    for given in (empty, tmp_path / "empty.zip"):
        for proc in (_check(given), run_score("--ref", AV_REF, "--res", given)):
            assert proc.returncode == 1, proc.stderr
            assert "it is empty: it holds no file at all" in proc.stderr
            assert "found 0 other files" not in proc.stderr and "Traceback" not in proc.stderr


def test_predictions_of_another_split_are_said_to_be_so(tmp_path):
    other = tmp_path / "val_predictions"
    other.mkdir()
    for i in range(3):
        Image.fromarray(np.zeros((512, 512), np.uint8)).save(
            str(other / "VALFIELD{}_0-0-512-512.png".format(i)))
    for proc in (_check(other), run_score("--ref", AV_REF, "--res", other)):
        assert proc.returncode == 1
        text = proc.stderr
        assert "none of its 3 PNG files is named after a test id" in text
        assert "check that you predicted the test split" in text
        # the diagnosis comes before the list of missing images
        assert text.index("test split") < text.index("without a prediction")


def test_one_near_miss_is_not_called_another_split(tmp_path):
    """Files named around the test ids (a prefix) are misnamed, not another split's."""
    res = tmp_path / "res"
    res.mkdir()
    for name in sorted(os.listdir(os.path.join(AV_KIT, "sample_submission"))):
        Image.open(os.path.join(AV_KIT, "sample_submission", name)).save(str(res / ("pred_" + name)))
    proc = _check(res)
    assert proc.returncode == 1 and "test split" not in proc.stderr
    assert "named around a test image id" in proc.stderr


def test_the_fixes_of_a_merged_competition_agree(tmp_path):
    """One zip holds both tasks' files in the merged Planetscapes competition: neither task's fix
    may tell the participant to zip its own files alone."""
    res = tmp_path / "res"
    res.mkdir()
    Image.fromarray(np.zeros((4, 4), np.uint8)).save(str(res / "some_image.png"))
    vqa = run_score("--ref", VQA_REF, "--res", res)
    assert vqa.returncode == 1
    assert "beside the other tasks' files" in vqa.stderr
    assert "zip exactly one file" not in vqa.stderr
    only_json = tmp_path / "json_only"
    only_json.mkdir()
    (only_json / "results.json").write_text("[]")
    av = run_score("--ref", AV_REF, "--res", only_json)
    assert av.returncode == 1
    assert "put the PNG files themselves in the submission" in av.stderr
    assert "zip the PNG files themselves" not in av.stderr


def test_jpeg_predictions_are_named_and_converted(tmp_path):
    """Issue 32: JPEG predictions were "No PNG files found ... found 40 other files". Each is
    named as a JPEG, with the conversion to PNG (from the label arrays: JPEG changed the values);
    a text file beside them is still only noted."""
    jpegs = tmp_path / "jpegs"
    jpegs.mkdir()
    names = sorted(os.listdir(os.path.join(AV_KIT, "sample_submission")))[:3]
    for name in names:
        Image.open(os.path.join(AV_KIT, "sample_submission", name)).save(
            str(jpegs / (name[:-4] + (".jpeg" if name == names[0] else ".jpg"))))
    (jpegs / "README.txt").write_text("our predictions")
    for proc in (_check(jpegs), run_score("--ref", AV_REF, "--res", jpegs)):
        err = proc.stderr
        assert proc.returncode == 1, err
        assert "Predictions saved in another image format than PNG (3):" in err, err
        assert "  - {}.jpeg: a JPEG file\n".format(names[0][:-4]) in err
        assert "  - {}.jpg: a JPEG file\n".format(names[1][:-4]) in err
        assert "Fix: convert them to PNG: save each prediction again from its label array" in err
        assert "No PNG files found" not in err and "other files" not in err.split("Also")[0]
        assert "README.txt" in err.split("Also noted")[1]

    # Some of them JPEG beside the PNGs: each missing image says where its JPEG is.
    mixed = tmp_path / "mixed"
    shutil.copytree(os.path.join(AV_KIT, "sample_submission"), str(mixed))
    os.remove(str(mixed / names[0]))
    Image.open(os.path.join(AV_KIT, "sample_submission", names[0])).save(
        str(mixed / (names[0][:-4] + ".jpg")))
    for proc in (_check(mixed), run_score("--ref", AV_REF, "--res", mixed)):
        assert proc.returncode == 1, proc.stderr
        assert "  - {}: found {}.jpg instead, a JPEG file: convert it to PNG\n".format(
            names[0], names[0][:-4]) in proc.stderr, proc.stderr
