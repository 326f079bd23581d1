"""The starting-kit tools when the machine is not what they expect, through
the real commands in the kits bundle.sh builds:

- a Python without numpy, Pillow or PyYAML: one line naming the package and the exact install
  command (the scoring program's scoring/deps.py message), exit 2, no traceback, and a dry run
  never calls it a broken reference or a failed submission;
- output into a reader that is gone (`| head`): the result is not lost (the zip is written, the
  exit status is the check's), and no traceback;
- a zip that cannot be unpacked (an entry outside the folder, encrypted) and a link loop in the
  submission folder: the participant's problem, exit 1, the scorer's own message."""
import functools
import os
import shutil
import site
import subprocess
import sys
import zipfile

import pytest

from conftest import SEM_REF, VQA_REF, built_once, score_either
from kits_util import session_kits
from scoring import deps

# A reader that goes away (how each Python closes a pipe) and a zip the kit cannot unpack are
# marked compat: CI runs them on the oldest versions too; a missing package is held there by
# tests/core/test_entry_points.py.

# tool, its kit, its arguments ({val}: a validation folder, {out}: a new file), what it needs
TOOLS = [
    ("check_submission.py", "semantic", ["sample_submission"], ("numpy", "PIL")),
    ("make_submission.py", "semantic", ["sample_submission", "-o", "{out}"], ("numpy", "PIL")),
    ("dry_run.py", "semantic", ["sample_submission", "{val}", "--quiet"], ("numpy", "PIL", "yaml")),
    ("check_results.py", "vqa", ["sample_submission"], ()),
    ("normalize.py", "vqa", ["Two dogs."], ()),
    ("dry_run.py", "vqa", ["sample_submission", "{val}", "--quiet"], ("numpy", "PIL", "yaml")),
]
VALIDATION = {"semantic": SEM_REF, "vqa": VQA_REF}
# What each package's installation holds in site-packages (its code, its libraries, its metadata).
INSTALLED_AS = {"numpy": ("numpy",), "PIL": ("pil", "pillow"), "yaml": ("yaml", "_yaml", "pyyaml")}


@pytest.fixture
def kits(tmp_path_factory):
    """The starting kits as built by bundle.sh --kits (once per session)."""
    return session_kits(tmp_path_factory)


def python_without(package, tmp_path_factory):
    """A Python (a venv of this interpreter's base) that has every package of this test's
    environment except `package`: its site-packages point at links to the others. Made once
    for the whole run (conftest.built_once: by one xdist worker for all; only run)."""
    return built_once(tmp_path_factory, "no-" + package,
                      functools.partial(make_python_without, package))


def make_python_without(package, folder):
    venv = os.path.join(folder, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True,
                   capture_output=True, timeout=120)
    others = os.path.join(folder, "packages")
    os.makedirs(others)
    for source in site.getsitepackages():
        for name in os.listdir(source):
            if not name.lower().startswith(INSTALLED_AS[package]):
                target = os.path.join(others, name)
                if not os.path.exists(target):
                    os.symlink(os.path.join(source, name), target)
    python = os.path.join(venv, "bin", "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True,
                             check=True).stdout.strip()
    with open(os.path.join(purelib, "others.pth"), "w") as f:
        f.write(others + "\n")
    found = subprocess.run([python, "-c", "import importlib.util as u; print([n for n in "
                            "('numpy', 'PIL', 'yaml') if u.find_spec(n)])"],
                           capture_output=True, text=True, check=True).stdout
    assert repr(package) not in found and found.count("'") == 4, found
    return python


def arguments(args, kit, tmp_path):
    val = str(tmp_path / "val")
    if not os.path.isdir(val):
        shutil.copytree(VALIDATION[kit], val, ignore=shutil.ignore_patterns("config.yaml"))
    return [a.format(val=val, out=tmp_path / "submission.zip") for a in args]


@pytest.mark.parametrize("package", ["numpy", "PIL", "yaml"])
@pytest.mark.parametrize("tool,kit,args,needs", TOOLS, ids=["{}-{}".format(t[1], t[0])
                                                            for t in TOOLS])
def test_a_missing_package_is_one_line_with_the_install_command(kits, tmp_path_factory, tmp_path,
                                                                tool, kit, args, needs, package):
    python = python_without(package, tmp_path_factory)
    proc = subprocess.run([python, tool] + arguments(args, kit, tmp_path),
                          cwd=os.path.join(kits, kit), capture_output=True, text=True,
                          timeout=300)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "INTERNAL ERROR" not in out, out
    if package not in needs:
        assert proc.returncode == 0, out
        return
    pip_name, minimum = deps.REQUIRED[package]
    assert proc.returncode == 2, out
    assert proc.stderr == (
        "ERROR: this command needs {} >= {} (import {}), which is not installed for {}. Install "
        "it with: {} -m pip install '{}>={}'\n".format(pip_name, minimum, package, python, python,
                                                      pip_name, minimum)), out
    for wrong in ("REFERENCE", "broken", "FAIL", "RESULT"):
        assert wrong not in out, out


@pytest.mark.compat
@pytest.mark.parametrize("tool,kit,args,needs", TOOLS, ids=["{}-{}".format(t[1], t[0])
                                                            for t in TOOLS])
def test_a_reader_that_goes_away_loses_nothing(kits, tmp_path, tool, kit, args, needs):
    """stdout is a pipe whose reader is gone before the tool starts: every write fails with
    EPIPE. The tool still finishes its work, exits with its own status, and says nothing
    about the pipe."""
    read, write = os.pipe()
    os.close(read)
    argv = arguments(args, kit, tmp_path)
    try:
        proc = subprocess.run([sys.executable, tool] + argv, cwd=os.path.join(kits, kit),
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr
    if tool == "make_submission.py":
        with zipfile.ZipFile(str(tmp_path / "submission.zip")) as zf:
            assert len(zf.namelist()) == 12


def _slip(path):
    with zipfile.ZipFile(str(path), "w") as zf:
        zf.writestr("../evil.json", "[]")
    return path


def _encrypted(path):
    with zipfile.ZipFile(str(path), "w") as zf:
        zf.writestr("results.json", "[]")
    blob = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = blob.find(signature)
        while at >= 0:
            blob[at + offset] |= 1
            at = blob.find(signature, at + 4)
    path.write_bytes(bytes(blob))
    return path


@pytest.mark.compat
@pytest.mark.parametrize("make,phrase", [
    (_slip, "the entry '../evil.json' points outside the archive"),
    (_encrypted, "the entry 'results.json' is encrypted (password-protected)"),
], ids=["zip slip", "encrypted"])
@pytest.mark.parametrize("tool,kit", [("check_results.py", "vqa"),
                                      ("check_submission.py", "semantic")])
def test_a_zip_that_cannot_be_unpacked_is_refused_as_the_scorer_refuses_it(
        kits, tmp_path, make, phrase, tool, kit):
    bad = make(tmp_path / "submission.zip")
    proc = subprocess.run([sys.executable, tool, str(bad)], cwd=os.path.join(kits, kit),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert phrase in proc.stderr
    # The scorer's side through its main in process (the kit's tool above is the real one).
    code, _, err = score_either(["--ref", VALIDATION[kit], "--res", bad], real=False)
    assert code == 1
    assert proc.stderr == err      # one code, one message


def test_a_link_loop_in_the_submission_folder_is_listed_not_followed(kits, tmp_path):
    """As score.py does (the shared discovery): a link in the folder is never followed, it is
    listed; the results file beside it is checked (it was a traceback, then exit 1)."""
    folder = tmp_path / "submission"
    folder.mkdir()
    os.symlink("self", str(folder / "self"))
    kit = os.path.join(kits, "vqa")
    with open(os.path.join(kit, "sample_submission", "results.json"), "rb") as f:
        (folder / "results.json").write_bytes(f.read())
    proc = subprocess.run([sys.executable, "check_results.py", str(folder)], cwd=kit,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "self (a symbolic link, not followed)" in proc.stdout, proc.stdout
