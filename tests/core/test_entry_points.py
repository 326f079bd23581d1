"""score.py and pack.py as commands: a reader of stdout that goes
away (`| head -1`) loses no result; a Python without PyYAML, numpy or Pillow gets one line with
the exact pip command (compare.py too); every pack.py refusal is one line or the scorer's message, never a
traceback."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ORGANIZER, PROGRAM, ROOT, entry_point, VQA_KIT, VQA_REF, pack_either, run_main
from organizing.commands import pack as pack_command

# The score.py tests marked compat depend on how each Python closes a pipe or reports a
# missing package: CI runs them on the oldest versions too (pack.py's, compare.py's and
# bundle.sh's take the same paths).

SAMPLES = {
    "agriculture-vision": ("competitions/agriculture-vision/reference_data",
                           "competitions/agriculture-vision/starting_kit/sample_submission"),
    "planetscapes-vqa": (VQA_REF, os.path.join(VQA_KIT, "sample_submission")),
}
SCORE = os.path.join(PROGRAM, "score.py")
PACK = os.path.join(ORGANIZER, "pack.py")


def sample(task):
    ref, res = SAMPLES[task]
    return os.path.join(ROOT, ref), os.path.join(ROOT, res)


def worker_input(tmp_path, task):
    """$input as the worker lays it out (links to the samples)."""
    ref, res = sample(task)
    folder = tmp_path / "input"
    folder.mkdir()
    os.symlink(ref, str(folder / "ref"))
    os.symlink(res, str(folder / "res"))
    return folder


# --- a reader that goes away ----------------------------------------------------------------

def _in_bash(script, *args):
    """Run `script` in bash with $0.. = args; returns (stdout, stderr) of the pipeline."""
    proc = subprocess.run(["bash", "-c", script] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=300)
    return proc.stdout, proc.stderr


@pytest.mark.compat
@pytest.mark.parametrize("task", sorted(SAMPLES))
def test_score_py_piped_into_head(tmp_path, task):
    """`score.py $input $output | head -1`: the scores are written, exit status 0, nothing on
    stderr (no INTERNAL ERROR, no BrokenPipeError, no 'Exception ignored')."""
    out = tmp_path / "output"
    stdout, stderr = _in_bash('"$0" "$1" "$2" "$3" | head -1; echo "status ${PIPESTATUS[0]}" >&2',
                              sys.executable, SCORE, worker_input(tmp_path, task), out)
    assert stdout.count("\n") == 1 and "scoring program" in stdout, stdout
    assert stderr == "status 0\n", stderr
    assert sorted(os.listdir(str(out))) == ["detailed_results.html", "scores.json", "scores.txt"]


@pytest.mark.compat
@pytest.mark.parametrize("task", sorted(SAMPLES))
def test_score_py_with_stdout_closed_before_anything_is_printed(tmp_path, task):
    ref, res = sample(task)
    read_end, write_end = os.pipe()
    os.close(read_end)                               # every write is EPIPE
    try:
        proc = subprocess.run([sys.executable, SCORE, "--ref", ref, "--res", res, "--out",
                               str(tmp_path / "out"), "--progress-every", "0"],
                              stdout=write_end, stderr=subprocess.PIPE, timeout=300)
    finally:
        os.close(write_end)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert (tmp_path / "out" / "scores.json").exists()


@pytest.mark.compat
@pytest.mark.parametrize("command", ["score.py", "pack.py"])
def test_a_refusal_keeps_its_exit_status_when_both_streams_are_gone(tmp_path, command):
    """stdout and stderr both a pipe nobody reads any more, and a broken reference: exit 3 as
    ever (an uncaught BrokenPipeError would make it 1), nothing written."""
    ref = tmp_path / "ref"
    shutil.copytree(sample("planetscapes-vqa")[0], str(ref))
    (ref / "annotations.json").write_text("[" * 100 + "oops")
    args = ["--ref", ref, "--res", sample("planetscapes-vqa")[1], "--out", tmp_path / "out"] \
        if command == "score.py" else [ref, tmp_path / "out"]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        code = subprocess.run([sys.executable, entry_point(command)] +
                              [str(a) for a in args], stdout=write_end, stderr=write_end,
                              timeout=120).returncode
    finally:
        os.close(write_end)
    assert code == 3
    assert not (tmp_path / "out" / "scores.json").exists()
    assert not (tmp_path / "out" / "packed.json").exists()


def test_pack_py_piped_into_head(tmp_path):
    ref, _ = sample("planetscapes-vqa")
    stdout, stderr = _in_bash('"$0" "$1" "$2" "$3" | head -1; echo "status ${PIPESTATUS[0]}" >&2',
                              sys.executable, PACK, ref, tmp_path / "packed")
    assert stdout.startswith("Packing 300 questions") and stderr == "status 0\n", stderr
    assert (tmp_path / "packed" / "packed.json").exists()


# --- a Python without a package --------------------------------------------------------------

def _blocked(tmp_path, *modules):
    """Environment whose first path entry holds stand-ins that fail to import exactly as a
    missing package does."""
    blocker = tmp_path / "blocker"
    blocker.mkdir(exist_ok=True)
    for name in modules:
        (blocker / (name + ".py")).write_text(
            "raise ModuleNotFoundError(\"No module named '{0}'\", name='{0}')\n".format(name))
    return dict(os.environ, PYTHONPATH=str(blocker))


def _one_line(proc, pip_name, minimum):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "INTERNAL ERROR" not in proc.stderr
    assert lines[0].endswith("Install it with: {} -m pip install '{}>={}'".format(
        sys.executable, pip_name, minimum)), lines[0]


_IMPORT_FAILS = """
import importlib.abc, sys


class _Fails(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise ModuleNotFoundError("No module named 'yaml'", name="yaml")
        return None


sys.meta_path.insert(0, _Fails())
"""


@pytest.mark.compat
@pytest.mark.parametrize("command", ["score", "pack", "compare", "consensus", "verify",
                                     "generalist"])
def test_a_package_missing_when_the_command_is_imported_is_one_line(tmp_path, command):
    """The entry points' own guard: today the commands import no third-party package at
    import time (the frame explains one a task needs), so a command module that fails as a
    top-level `import yaml` would (a sitecustomize makes it so) must still give one line."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        _IMPORT_FAILS.format(module=("scoring" if command == "score" else "organizing") +
                             ".commands." + command))
    proc = subprocess.run([sys.executable, entry_point(command + ".py"), "--help"],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(blocker)))
    _one_line(proc, "PyYAML", "5.1")
    assert proc.stdout == ""


@pytest.mark.compat
@pytest.mark.parametrize("command", ["score.py", "pack.py"])
def test_without_pyyaml(tmp_path, command):
    ref, res = sample("planetscapes-vqa")
    args = ["--ref", ref, "--res", res] if command == "score.py" else [ref, str(tmp_path / "p")]
    proc = subprocess.run([sys.executable, entry_point(command)] + args,
                          capture_output=True, text=True, timeout=120,
                          env=_blocked(tmp_path, "yaml"))
    _one_line(proc, "PyYAML", "5.1")
    assert proc.stdout == "" and not (tmp_path / "p").exists()


@pytest.mark.compat
@pytest.mark.parametrize("module,pip_name,minimum", [("numpy", "numpy", "1.16"),
                                                     ("PIL", "Pillow", "6.1")])
@pytest.mark.parametrize("command", ["score.py", "pack.py"])
def test_an_image_task_without_numpy_or_pillow(tmp_path, command, module, pip_name, minimum):
    ref, res = sample("agriculture-vision")
    out = tmp_path / "out"
    args = ["--ref", ref, "--res", res, "--out", out] if command == "score.py" else [ref, out]
    proc = subprocess.run([sys.executable, entry_point(command)] +
                          [str(a) for a in args], capture_output=True, text=True, timeout=120,
                          env=_blocked(tmp_path, module))
    _one_line(proc, pip_name, minimum)
    assert not os.path.exists(str(out / "scores.json"))
    assert not os.path.exists(str(out / "private"))        # not an internal error
    if command == "pack.py":
        assert not out.exists()


@pytest.mark.parametrize("module,pip_name,minimum", [("yaml", "PyYAML", "5.1"),
                                                     ("numpy", "numpy", "1.16")])
def test_bundle_sh_without_a_package(tmp_path, module, pip_name, minimum):
    """The organizers' bundle.sh says the same one line (its check runs before the builder)."""
    env = _blocked(tmp_path, module)
    env["PYTHON"] = sys.executable
    proc = subprocess.run(["bash", os.path.join(ROOT, "bundle.sh"), "--help"],
                          capture_output=True, text=True, timeout=120, env=env)
    _one_line(proc, pip_name, minimum)
    assert proc.stdout == ""


@pytest.mark.parametrize("module,pip_name,minimum", [("yaml", "PyYAML", "5.1"),
                                                     ("numpy", "numpy", "1.16"),
                                                     ("PIL", "Pillow", "6.1")])
def test_compare_py_without_a_package(tmp_path, module, pip_name, minimum):
    """compare.py keeps deps.py's rule too: one line, exit 2, nothing written (it was a
    traceback without PyYAML and an INTERNAL ERROR without numpy or Pillow)."""
    ref, res = sample("agriculture-vision")
    out = tmp_path / "out"
    other = str(tmp_path / "other")   # compare.py compares two submissions or more
    shutil.copytree(res, other)
    proc = subprocess.run([sys.executable, os.path.join(ORGANIZER, "compare.py"), "--ref", ref,
                           "--out", str(out), res, other], capture_output=True, text=True,
                          timeout=120, env=_blocked(tmp_path, module))
    _one_line(proc, pip_name, minimum)
    assert not out.exists()


@pytest.mark.compat
def test_the_vqa_task_needs_neither_numpy_nor_pillow(tmp_path):
    """score.py and pack.py on a VQA reference, with numpy and Pillow unimportable."""
    ref, res = sample("planetscapes-vqa")
    env = _blocked(tmp_path, "numpy", "PIL")
    proc = subprocess.run([sys.executable, PACK, ref, str(tmp_path / "packed")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    for reference in (ref, str(tmp_path / "packed")):
        proc = subprocess.run([sys.executable, SCORE, "--ref", reference, "--res", res],
                              capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0 and "overall" in proc.stdout, proc.stderr


# --- pack.py's refusals ----------------------------------------------------------------------

def _fifo(path):
    os.mkfifo(str(path))
    return path


PACK_USAGE = {
    "RAW_DIR missing": (lambda t: (t / "nowhere", t / "out"), "RAW_DIR", "does not exist"),
    "RAW_DIR a file": (lambda t: (t / "x.txt", t / "out"), "RAW_DIR", "is not a folder"),
    "OUT_DIR a file": (lambda t: (None, t / "x.txt"), "OUT_DIR", "exists and is not a folder"),
    "OUT_DIR a FIFO": (lambda t: (None, _fifo(t / "fifo")), "OUT_DIR", "is not a folder"),
    "OUT_DIR not empty": (lambda t: (None, t), "OUT_DIR", "is not empty"),
    "OUT_DIR below a file": (lambda t: (None, t / "x.txt" / "out"), "cannot write into OUT_DIR",
                             "(Not a directory)"),
    "OUT_DIR unwritable": (lambda t: (None, "/proc/packed"), "cannot write into OUT_DIR", ""),
}


@pytest.mark.parametrize("case", sorted(PACK_USAGE))
def test_pack_py_usage_errors_are_one_line(tmp_path, case):
    make, *phrases = PACK_USAGE[case]
    (tmp_path / "x.txt").write_text("x")
    raw, out = make(tmp_path)
    raw = raw or sample("planetscapes-vqa")[0]
    # The real command for the FIFO; the other cases through the same main in this process.
    code, stdout, err = pack_either([raw, out], real=case == "OUT_DIR a FIFO")
    assert code == 2 and stdout == "", err
    assert err.startswith("ERROR: ") and err.count("\n") == 1, err
    for phrase in phrases:
        assert phrase in err, err


def test_pack_py_already_packed_and_no_packed_layout(tmp_path):
    ref, _ = sample("planetscapes-vqa")
    assert pack_either([ref, tmp_path / "p"], real=False)[0] == 0   # the same main, in process
    proc = subprocess.run([sys.executable, PACK, str(tmp_path / "p"), str(tmp_path / "q")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "is already packed" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and not (tmp_path / "q").exists()


def test_pack_py_refuses_a_task_without_the_packing_role(tmp_path, monkeypatch):
    """Packing is optional: a task without it is a bad command line for pack.py (exit 2),
    before the reference is read."""
    from scoring.tasks.agrivision.task import AgricultureVision
    monkeypatch.setattr(AgricultureVision, "packing", None)
    code, out, err = run_main(pack_command.main, [sample("agriculture-vision")[0],
                                                  tmp_path / "out"])
    assert code == 2 and "task has no packed layout; score it as it is" in err, err
    assert not (tmp_path / "out").exists()


def test_pack_py_broken_reference_is_the_scorers_message(tmp_path):
    """A raw reference the scorer refuses: pack.py says the same (exit 3) and leaves no
    folder behind."""
    raw = tmp_path / "raw"
    shutil.copytree(sample("planetscapes-vqa")[0], str(raw))
    (raw / "annotations.json").write_text("{")
    proc = subprocess.run([sys.executable, PACK, str(raw), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3 and proc.stderr.startswith("ERROR: the REFERENCE data")
    assert "annotations.json: not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_pack_py_internal_error_is_one_line_and_exit_4(tmp_path, monkeypatch):
    """A bug of ours: exit 4, the exception's type, how to see the traceback; not blamed on
    the reference."""
    from scoring.tasks.planetscapes_vqa import packed

    def bug(*args, **kwargs):
        raise ZeroDivisionError("secret 0.123")
    monkeypatch.setattr(packed, "encode", bug)
    code, out, err = run_main(pack_command.main, [sample("planetscapes-vqa")[0],
                                                  tmp_path / "out"])
    assert code == 4 and err.count("\n") == 1, err
    assert "INTERNAL ERROR in pack.py: ZeroDivisionError" in err and "SCORING_DEBUG=1" in err
    assert "secret" not in err and "Traceback" not in err


def test_pack_py_workers_must_be_positive(tmp_path):
    proc = subprocess.run([sys.executable, PACK, sample("planetscapes-vqa")[0],
                           str(tmp_path / "out"), "--workers", "0"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "--workers must be at least 1" in proc.stderr
