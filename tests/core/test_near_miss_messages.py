"""Messages that name the participant's real mistake: files named around the image id
(pred_<id>.png, <id>_leftImg8bit.png, <id>.jpg.png) get "rename ...", a transposed prediction is
told that width and height are swapped, and counts read "(1)", never "1 files"."""
import os

import numpy as np
import pytest
from PIL import Image

import broken_cases
from agrivision_data import SMALL_IDS, SMALL_SIZE, write_small_reference
from conftest import run_main
from scoring.commands import score as cli



@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    return write_small_reference(str(tmp_path_factory.mktemp("ref")))


def score(ref, res):
    return run_main(cli.main, ["--ref", ref, "--res", res, "--workers", "1"])


@pytest.mark.parametrize("before, after", [("pred_", ""), ("", "_leftImg8bit"), ("", ".jpg"),
                                           ("run3-", "-final")])
def test_names_around_the_id_are_told_to_rename(ref, tmp_path, before, after):
    good = tmp_path / "good"
    broken_cases.good(str(good), SMALL_IDS, SMALL_SIZE)
    res = tmp_path / "res"
    res.mkdir()
    for name in os.listdir(str(good)):
        stem = name[:-4]
        os.rename(str(good / name), str(res / (before + stem + after + ".png")))
    code, out, err = score(ref, str(res))
    assert code == 1
    assert "Predictions named around a test image id (3):" in err
    shown = "{}{}{}.png: rename it {}.png ({}<id>{}.png: 3 files)".format(
        before, SMALL_IDS[0], after, SMALL_IDS[0], before, after)
    assert shown in err
    assert "without a prediction" not in err and "match no test image" not in err


def test_one_misnamed_file_among_good_ones(ref, tmp_path):
    res = tmp_path / "res"
    broken_cases.good(str(res), SMALL_IDS, SMALL_SIZE)
    os.rename(str(res / (SMALL_IDS[1] + ".png")), str(res / ("pred_" + SMALL_IDS[1] + ".png")))
    code, out, err = score(ref, str(res))
    assert code == 1
    assert "(pred_<id>.png: 1 file)" in err and "Predictions named around a test image id (1)" in err


def test_a_name_holding_two_ids_is_not_guessed(ref, tmp_path):
    res = tmp_path / "res"
    broken_cases.good(str(res), SMALL_IDS[1:2], SMALL_SIZE)
    Image.fromarray(np.zeros(SMALL_SIZE, np.uint8)).save(
        str(res / (SMALL_IDS[0] + "+" + SMALL_IDS[2] + ".png")))
    code, out, err = score(ref, str(res))
    assert code == 1 and "named around" not in err and "without a prediction (2)" in err


def test_a_transposed_prediction_is_told_so(ref, tmp_path):
    res = tmp_path / "res"
    broken_cases.good(str(res), SMALL_IDS, SMALL_SIZE)
    h, w = SMALL_SIZE
    Image.fromarray(np.zeros((w, h), np.uint8)).save(str(res / (SMALL_IDS[0] + ".png")))
    code, out, err = score(ref, str(res))
    assert code == 1
    assert "Predictions whose width and height are swapped (1):" in err
    assert "{}.png: it is {} x {} (width x height), the test image {} x {}".format(
        SMALL_IDS[0], h, w, w, h) in err
    assert "do not resize or crop" not in err


def test_one_warning_reads_1_not_1_files(ref, tmp_path):
    res = tmp_path / "res"
    broken_cases.good(str(res), SMALL_IDS, SMALL_SIZE)
    (res / "readme.txt").write_text("notes")
    code, out, err = score(ref, str(res))
    assert code == 0
    assert "WARNING: Files that are not PNG predictions (ignored) (1): readme.txt" in out
    assert "1 files" not in out + err
