"""CI runs what the README promises: its test command verbatim, and the `compat` selection on
the oldest versions holds tests from every part of the program that can differ there."""
import os
import re
import subprocess
import sys

from conftest import ROOT


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def readme_commands():
    return re.findall(r"^```\n(.*?)\n```", read("README.md"), re.S | re.M)


def test_ci_runs_the_readmes_test_command_verbatim():
    test_command = readme_commands()[1]
    assert "-m pytest" in test_command and "-m compat" not in test_command, "the whole suite"
    ci = read(".ci/run")
    assert any(line.strip() == test_command for line in ci.splitlines()), test_command


def test_the_oldest_versions_run_the_compat_tests():
    ci = read(".ci/run")
    for venv in (".venv-oldest", ".venv-py37"):
        runs = [line for line in ci.splitlines() if venv + "/bin/python -m pytest" in line]
        assert runs and all("-m compat" in line for line in runs), venv


def test_the_compat_selection_covers_every_part_that_can_differ():
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "compat",
                          "-p", "no:cacheprovider", "tests"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120).stdout
    selected = {line.split("::")[0] for line in out.splitlines() if "::" in line}
    folders = {os.path.dirname(path) for path in selected}
    for folder in ("tests/core", "tests/kits", "tests/generalist", "tests/compare",
                   "tests/tasks/agrivision", "tests/tasks/planetscapes_semantic",
                   "tests/tasks/planetscapes_vqa"):
        assert folder in folders, folder
    # The dry run is what participants run on their own Python; the anchor test needs the
    # oldest environment's cityscapesScripts.
    assert "tests/tools/test_dry_run.py" in selected
    # (skipped at collection where numpy has no np.in1d, so read from the module itself)
    anchor = read("tests/tasks/planetscapes_semantic/test_planetscapes_semantic_anchor.py")
    assert "pytestmark = pytest.mark.compat" in anchor
