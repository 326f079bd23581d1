"""Every participant mistake: one clear message naming the file and the problem, a non-zero exit,
no traceback, nothing written. Every tolerated extra: scored, and listed as a warning."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import broken_cases
from conftest import PROGRAM, run_score, score_either
from agrivision_data import SMALL_IDS, SMALL_SIZE, save, write_reference, write_small_reference

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

IDS, SIZE = SMALL_IDS, SMALL_SIZE


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    return write_small_reference(str(tmp_path_factory.mktemp("ref")))


def assert_refused(proc, out_dir, *phrases):
    assert_refused_run((proc.returncode, proc.stdout, proc.stderr), out_dir, *phrases)


def assert_refused_run(run, out_dir, *phrases):
    code, out, err = run
    assert code == 1, err
    assert "Traceback" not in err + out
    for phrase in phrases:
        assert phrase in err, (phrase, err)
    assert "Fix:" in err
    assert not os.path.exists(os.path.join(out_dir, "scores.txt"))


# The cases that would hang or blow up the process that reads them if their guard broke: the
# real command (a subprocess with a timeout); the others through the same main in this process.
REAL_CASES = {"fifo", "bomb", "second_ihdr_9000"}


@pytest.mark.parametrize("name", sorted(broken_cases.CASES))
def test_fatal_problem(tmp_path, ref, name):
    build, named, phrase = broken_cases.CASES[name]
    res = str(tmp_path / "res")
    build(res, IDS, SIZE)
    run = score_either(["--ref", ref, "--res", res, "--out", tmp_path / "out", "--workers", "1"],
                       real=name in REAL_CASES)
    assert_refused_run(run, str(tmp_path / "out"), named.format(IDS[0]), phrase)


def test_all_problems_reported_together(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE, skip=IDS[:1])                       # one missing
    save(os.path.join(res, IDS[1] + ".png"), np.full(SIZE, 9))             # one value 9
    from PIL import Image
    Image.new("RGB", SIZE[::-1]).save(os.path.join(res, IDS[2] + ".png"))  # one RGB
    proc = run_score("--ref", ref, "--res", res, "--workers", "2")
    assert_refused(proc, str(tmp_path), "Reference images without a prediction (1)",
                   "Predictions with pixel values outside the class ids (1)",
                   "Predictions that are not single-channel images (1)",
                   IDS[0], IDS[1], IDS[2], "from 0 to 8")
    # structural problems first, then per-file ones
    assert proc.stderr.index("without a prediction") < proc.stderr.index("single-channel")


def test_many_problems_are_summarised(tmp_path, ref):
    res = str(tmp_path / "res")
    os.makedirs(res)
    for k in range(12):
        save(os.path.join(res, "stray%02d.png" % k), np.zeros(SIZE))
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 1
    assert "Reference images without a prediction (3)" in proc.stderr
    assert "PNG files that match no test image" in proc.stderr       # listed, not fatal
    assert "stray00.png" in proc.stderr and "and 7 more" in proc.stderr


def test_decompression_bomb_refused_from_header(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    with open(os.path.join(res, IDS[0] + ".png"), "wb") as f:
        f.write(broken_cases.bomb_png(100000, 100000))   # declares 10 G pixels
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", "import resource, subprocess, sys; "
         "subprocess.run(sys.argv[1:]); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
         sys.executable, os.path.join(PROGRAM, "score.py"), "--ref", ref, "--res", res,
         "--workers", "1"], capture_output=True, text=True)
    elapsed = time.monotonic() - started
    peak_kb = int(proc.stdout.strip().splitlines()[-1])
    assert "100000 x 100000" in proc.stderr and IDS[0] in proc.stderr
    assert peak_kb < 300 * 1024, peak_kb     # nowhere near the 10 GB it declares
    assert elapsed < 10                      # the whole run, interpreter start included


def test_nested_folder_metadata_and_os_junk_are_tolerated(tmp_path, ref):
    res = tmp_path / "res"
    broken_cases.good(str(res / "my_predictions"), IDS, SIZE)
    (res / "metadata").write_text("exitCode: 0\nelapsedTime: 3\n")   # Codabench's
    (res / "__MACOSX" / "my_predictions").mkdir(parents=True)
    (res / "__MACOSX" / "my_predictions" / ("._" + IDS[0] + ".png")).write_bytes(b"\0\5junk")
    (res / "my_predictions" / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    (res / "my_predictions" / ".hidden.png").write_bytes(b"junk")
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stdout
    assert "miou" in (tmp_path / "out" / "scores.txt").read_text()


def test_extras_are_listed_as_warnings_not_scored(tmp_path, ref):
    res = tmp_path / "res"
    broken_cases.good(str(res), IDS, SIZE)
    (res / "notes.txt").write_text("my model")
    save(str(res / "FIELD9999_0-0-20-16.png"), np.zeros(SIZE))
    save(str(res / "vis" / "colour.png"), np.zeros(SIZE))
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", res, "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = (out / "detailed_results.html").read_text()
    for text in ("notes.txt", "FIELD9999_0-0-20-16.png", "vis/colour.png"):
        assert text in proc.stdout and text in page
    assert "PNG files that match no test image (ignored, not scored) (2): " in proc.stdout
    # scored exactly as without the extras
    clean = tmp_path / "clean"
    broken_cases.good(str(clean), IDS, SIZE)
    assert score_either(["--ref", ref, "--res", clean, "--out", tmp_path / "out2"],
                        real=False)[0] == 0
    assert (out / "scores.txt").read_text() == (tmp_path / "out2" / "scores.txt").read_text()


def test_case_mismatch_hint(tmp_path, ref):
    res = tmp_path / "res"
    broken_cases.good(str(res), IDS, SIZE)
    os.rename(str(res / (IDS[0] + ".png")), str(res / (IDS[0].lower() + ".png")))
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 1
    assert "case-sensitive" in proc.stderr


def test_nested_zip_hint(tmp_path, ref):
    res = tmp_path / "res"
    res.mkdir()
    (res / "submission.zip").write_bytes(b"PK\3\4")
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 1
    assert "another zip" in proc.stderr and "submission.zip" in proc.stderr


@pytest.mark.parametrize("breakage", ["missing_mask", "mis_sized_label", "no_boundaries",
                                      "unreadable_label", "bad_config"])
def test_broken_reference_blames_the_reference(tmp_path, ref, breakage):
    import shutil
    bad = str(tmp_path / "ref")
    shutil.copytree(ref, bad)
    if breakage == "missing_mask":
        os.remove(os.path.join(bad, "masks", IDS[1] + ".png"))
        named = "masks/" + IDS[1] + ".png"
    elif breakage == "mis_sized_label":
        save(os.path.join(bad, "labels", "water", IDS[2] + ".png"), np.zeros((3, 3)))
        named = "labels/water/" + IDS[2] + ".png"
    elif breakage == "unreadable_label":
        with open(os.path.join(bad, "labels", "drydown", IDS[0] + ".png"), "wb") as f:
            f.write(b"not a png")
        named = "labels/drydown/" + IDS[0] + ".png"
    elif breakage == "bad_config":
        with open(os.path.join(bad, "config.yaml"), "w") as f:
            f.write("storm_damage: sometimes\n")
        named = "config.yaml"
    else:
        shutil.rmtree(os.path.join(bad, "boundaries"))
        named = "boundaries"
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    # The real command for the missing mask; the other breakages through the same main.
    code, _, err = score_either(["--ref", bad, "--res", res, "--workers", "2"],
                                real=breakage == "missing_mask")
    assert code == 3, err
    assert "REFERENCE" in err and named in err
    assert "Traceback" not in err


def test_reference_without_valid_pixel_blames_the_reference(tmp_path):
    ref = str(tmp_path / "ref")
    zero = np.zeros(SIZE, np.uint8)
    for i in IDS:
        write_reference(ref, i, zero, zero + 1, {})
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 3, proc.stderr
    assert "REFERENCE" in proc.stderr and "valid pixel" in proc.stderr
    assert not (tmp_path / "out" / "scores.txt").exists()


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32, np.int64])
def test_check_values_bounds_every_integer_dtype(dtype):
    """Values 0..max_id come back as uint8 (max_id < 256); a value above max_id, or below 0 in
    a signed array (the minimum is skipped only where it cannot be negative), is refused with
    the values named."""
    from scoring.formats.label_png.prediction import check_values
    from scoring.formats.label_png.kinds import BAD_VALUES
    from scoring.task_api import PredictionProblem
    ok = np.array([[0, 3], [8, 1]], dtype=dtype)
    got = check_values(ok, 8)
    assert got.dtype == np.uint8 and np.array_equal(got, ok)
    bad = [9] + ([-1] if np.dtype(dtype).kind == "i" else [])
    for value in bad:
        arr = ok.copy()
        arr[1, 0] = value
        with pytest.raises(PredictionProblem) as exc:
            check_values(arr, 8)
        assert exc.value.kind == BAD_VALUES and "1 pixels hold values {}".format(value) in \
            exc.value.detail
