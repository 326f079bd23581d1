"""The starting kit's tools agree with the scoring program: every broken submission of
tests/support/broken_cases.py fails in both, naming the same file with the same message, and what the kit
zips, the scorer scores."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from conftest import AGRIVISION, ROOT, TESTS as HERE  # noqa: E402
KIT = os.path.join(ROOT, "kit")
AV_KIT = os.path.join(AGRIVISION, "starting_kit")
PROGRAM = os.path.join(ROOT, "scoring_program")
for path in (HERE, KIT, PROGRAM):
    if path not in sys.path:
        sys.path.insert(0, path)

import broken_cases  # noqa: E402
import check_submission  # noqa: E402
import make_submission  # noqa: E402
import agrivision_data as rawdata  # noqa: E402
from conftest import run_main  # noqa: E402
from scoring.commands import score as cli  # noqa: E402
from scoring.registry import DEFAULT, TASKS  # noqa: E402

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

SIZE = (48, 64)  # (height, width): not square, so a swapped size is caught too


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """A small reference and its manifest (the test images' names and sizes, no labels)."""
    tmp = tmp_path_factory.mktemp("kit")
    rng = np.random.RandomState(11)
    ids = ["KIT{}_0-{}-512-{}".format(i, 512 * i, 512 * i + 512) for i in range(3)]
    for image_id in ids:
        boundary, mask, labels, storm, _ = rawdata.random_image(rng, *SIZE)
        rawdata.write_reference(str(tmp / "ref"), image_id, boundary, mask, labels, storm)
    task = TASKS[DEFAULT]
    manifest = task.manifest.make(task.open_reference(str(tmp / "ref")))
    assert sorted(manifest["images"]) == sorted(ids)
    (tmp / "manifest.json").write_text(json.dumps(manifest))
    return tmp, ids


@pytest.mark.parametrize("case", sorted(broken_cases.CASES))
def test_checker_and_scorer_refuse_the_same_file_with_the_same_message(ref, tmp_path, case):
    tmp, ids = ref
    builder, named, phrase = broken_cases.CASES[case]
    res = str(tmp_path / "res")
    builder(res, ids, SIZE)
    named = named.format(ids[0])

    code, _, checker = run_main(check_submission.main,
                                [res, "--manifest", str(tmp / "manifest.json"), "--workers", "1"])
    assert code == 1, checker
    s_code, _, scorer = run_main(cli.main, ["--ref", str(tmp / "ref"), "--res", res,
                                            "--workers", "1", "--quiet"])
    assert s_code == 1, scorer
    for text in (checker, scorer):
        assert named in text and phrase in text, text
    # Not only the same file: the same message, word for word (the same code made it).
    assert checker.startswith(scorer), "checker:\n" + checker + "\nscorer:\n" + scorer


def test_the_real_commands_agree_too(ref, tmp_path):
    """Once through the command lines themselves (not in-process)."""
    tmp, ids = ref
    builder, named, _ = broken_cases.CASES["rgba"]
    res = str(tmp_path / "res")
    builder(res, ids, SIZE)
    check = subprocess.run([sys.executable, os.path.join(KIT, "check_submission.py"), res,
                            "--manifest", str(tmp / "manifest.json")],
                           capture_output=True, text=True, timeout=120)
    score = subprocess.run([sys.executable, os.path.join(PROGRAM, "score.py"), "--ref",
                            str(tmp / "ref"), "--res", res],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == score.returncode == 1
    assert named.format(ids[0]) in check.stderr and named.format(ids[0]) in score.stderr


def test_a_good_submission_passes_the_checker(ref, tmp_path):
    tmp, ids = ref
    res = str(tmp_path / "res")
    broken_cases.good(res, ids, SIZE)
    code, out, err = run_main(check_submission.main,
                              [res, "--manifest", str(tmp / "manifest.json")])
    assert code == 0, err
    assert "passes every check" in out and "3 predictions for the 3 test images" in out


def test_make_submission_zips_the_files_at_the_root_and_nothing_else(ref, tmp_path):
    tmp, ids = ref
    preds = tmp_path / "preds"
    broken_cases.good(str(preds / "inner"), ids, SIZE)       # even inside one folder
    (preds / "inner" / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (preds / "inner" / ("._" + ids[0] + ".png")).write_bytes(b"\x00\x05\x16\x07")  # AppleDouble
    (preds / "inner" / "notes.txt").write_text("my run")
    output = tmp_path / "submission.zip"
    code, out, err = run_main(make_submission.main, [str(preds), "-o", str(output), "--manifest",
                                                     str(tmp / "manifest.json")])
    assert code == 0, err
    with zipfile.ZipFile(str(output)) as zf:
        assert sorted(zf.namelist()) == sorted(i + ".png" for i in ids)
    assert "Left out of the zip:\n  - Files that are not PNG predictions (ignored) (1): " in out
    # What the kit zipped, the checker accepts and the scorer scores.
    assert run_main(check_submission.main, [str(output), "--manifest",
                                            str(tmp / "manifest.json")])[0] == 0
    assert run_main(cli.main, ["--ref", str(tmp / "ref"), "--res", str(output), "--quiet"])[0] == 0


def test_make_submission_refuses_a_broken_folder_and_writes_nothing(ref, tmp_path):
    tmp, ids = ref
    builder, named, _ = broken_cases.CASES["value_9"]
    builder(str(tmp_path / "preds"), ids, SIZE)
    output = tmp_path / "submission.zip"
    code, _, err = run_main(make_submission.main, [str(tmp_path / "preds"), "-o", str(output),
                                                   "--manifest", str(tmp / "manifest.json")])
    assert code == 1
    assert named.format(ids[0]) in err and "No zip was written" in err
    assert not output.exists()


def test_usage_errors_exit_2(ref, tmp_path):
    tmp, _ = ref
    code, _, err = run_main(check_submission.main, [str(tmp_path), "--manifest",
                                                    str(tmp_path / "none.json")])
    assert code == 2 and "no manifest" in err
    code, _, err = run_main(make_submission.main, [str(tmp_path / "nothing"), "--manifest",
                                                   str(tmp / "manifest.json")])
    assert code == 2 and "is not a folder" in err


def test_the_committed_manifest_is_the_samples():
    """starting_kit/manifest.json must describe the committed sample (bundle.sh rewrites it)."""
    sample = os.path.join(AGRIVISION, "reference_data")
    if not os.path.isdir(os.path.join(sample, "boundaries")):
        pytest.skip("no sample reference yet")
    task = TASKS[DEFAULT]
    ids = sorted(n[:-4] for n in os.listdir(os.path.join(sample, "boundaries"))
                 if n.endswith(".png"))
    with open(os.path.join(AV_KIT, "manifest.json")) as f:
        committed = json.load(f)
    assert committed == task.manifest.make(task.open_reference(sample))
    assert sorted(committed["images"]) == ids
    assert "labels" not in json.dumps(committed)


def test_the_kit_needs_only_python_37_numpy_and_pillow():
    vermin = shutil.which("vermin") or os.path.join(os.path.dirname(sys.executable), "vermin")
    if not os.path.exists(vermin):
        pytest.skip("vermin not installed")
    tools = [os.path.join(KIT, n) for n in sorted(os.listdir(KIT)) if n.endswith(".py")]
    proc = subprocess.run([vermin, "-q", "--no-tips", "--violations", "-t=3.7-"] + tools,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout
    for path in tools:
        with open(path) as f:
            source = f.read()
        assert "import yaml" not in source, path
