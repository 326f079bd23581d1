"""Issue 32: a file the operating system refuses to open (permissions) gets the fix of that
cause, through the real commands: the submission's ("make the files readable"), not "save each
prediction with a PNG encoder"; the reference's, for score.py and bundle.sh, not "re-export the
reference files as PNGs". Its content was never seen: no advice about its content fits.

The tests run as root on CI and here, and root reads any file whatever its mode: each command
runs without the two capabilities that let root ignore permissions (setpriv), so a file of mode
000 is refused to it as to any user."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import AV_KIT, AV_REF, PROGRAM, ROOT, VQA_KIT, VQA_REF

WITHOUT_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def _prefix():
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("root reads files whatever their mode, and setpriv is not installed")
    return WITHOUT_DAC


def run(argv, **kw):
    return subprocess.run(_prefix() + argv, capture_output=True, text=True, timeout=300, **kw)


def score(*args):
    return run([sys.executable, os.path.join(PROGRAM, "score.py")] + [str(a) for a in args])


def unreadable(path):
    os.chmod(str(path), 0)
    probe = run([sys.executable, "-c", "open({!r}, 'rb')".format(str(path))])
    if probe.returncode == 0:
        pytest.skip("this system lets the tests read a file of mode 000")


def first(folder, ext=""):
    return sorted(n for n in os.listdir(str(folder)) if n.endswith(ext))[0]


def assert_fix_of_the_cause(proc, code, name, whose):
    assert proc.returncode == code, proc.stdout + proc.stderr
    err = proc.stderr
    assert "refuses to open" in err and name in err and "(Permission denied)" in err, err
    assert "chmod -R a+rX` on the {} folder".format(whose) in err, err
    for wrong in ("PNG encoder", "re-export", "json.dump", "not valid JSON", "not readable PNG"):
        assert wrong not in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("task", ["agriculture-vision", "planetscapes-vqa"])
def test_an_unreadable_prediction_gets_the_fix_of_its_cause(tmp_path, task):
    kit, ref = (AV_KIT, AV_REF) if task == "agriculture-vision" else (VQA_KIT, VQA_REF)
    res = tmp_path / "res"
    shutil.copytree(os.path.join(kit, "sample_submission"), str(res))
    name = first(res)
    unreadable(res / name)
    assert_fix_of_the_cause(score("--ref", ref, "--res", res, "--out", tmp_path / "out"), 1,
                            name, "submission")


@pytest.mark.parametrize("layer", ["masks", "boundaries"])
def test_an_unreadable_reference_file_gets_the_fix_of_its_cause(tmp_path, layer):
    """score.py and bundle.sh (the boundaries give the kit's image sizes: read first by the
    builder; the masks are read when the reference is checked and packed)."""
    ref = tmp_path / "ref"
    shutil.copytree(AV_REF, str(ref))
    name = first(ref / layer, ".png")
    unreadable(ref / layer / name)
    proc = score("--ref", ref, "--res", os.path.join(AV_KIT, "sample_submission"), "--out",
                 tmp_path / "out")
    assert_fix_of_the_cause(proc, 3, name, "reference")
    assert "REFERENCE data" in proc.stderr
    env = dict(os.environ, PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1")
    built = run(["bash", os.path.join(ROOT, "bundle.sh"), "--reference", str(ref), "--out",
                 str(tmp_path / "dist"), "--no-smoke"], env=env, cwd=ROOT)
    assert_fix_of_the_cause(built, 1, layer + "/" + name, "reference")
    assert "REFUSED, nothing written" in built.stderr


def test_an_unreadable_vqa_reference_file(tmp_path):
    ref = tmp_path / "ref"
    shutil.copytree(VQA_REF, str(ref))
    unreadable(ref / "annotations.json")
    proc = score("--ref", ref, "--res", os.path.join(VQA_KIT, "sample_submission"), "--out",
                 tmp_path / "out")
    assert_fix_of_the_cause(proc, 3, "annotations.json", "reference")
