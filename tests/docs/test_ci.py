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
    """In two halves: the venv first (step 0, before the lint), then the tests in it (step 2), so
    that the venv is made once."""
    test_command = readme_commands()[1]
    assert "-m pytest" in test_command and "-m compat" not in test_command, "the whole suite"
    venv, sep, tests = test_command.rpartition(" && ")
    assert sep and "python3 -m venv .venv" in venv and tests.startswith(".venv/bin/python -m pytest")
    lines = [line.strip() for line in read(".ci/run").splitlines()]
    assert venv in lines and tests in lines, test_command
    assert lines.index(venv) < lines.index(tests)
    # Nothing between them makes another .venv.
    between = lines[lines.index(venv) + 1:lines.index(tests)]
    assert not [line for line in between if "-m venv .venv " in line + " "], between


def test_ci_installs_chromium_and_requires_the_browser_tests():
    """Debian's chromium, and the browser tests fail in CI instead of skipping without it."""
    ci = read(".ci/run")
    assert "apt-get update" in ci
    assert "apt-get install -y -q --no-install-recommends chromium" in ci
    assert "export PAGES_IN_BROWSER=required" in ci
    browser = read("tests/core/test_pages_in_browser.py")
    assert 'os.environ.get("PAGES_IN_BROWSER") == "required"' in browser


def test_the_oldest_versions_run_the_compat_tests():
    """On the worker image's versions when a python3.7 exists, else on the oldest wheels for
    CI's Python: one venv either way, the compat tests in it, the anchor installed there and
    refused to skip."""
    ci = read(".ci/run")
    runs = [line for line in ci.splitlines() if " -m pytest " in line
            and not line.startswith(".venv/")]
    assert len(runs) == 1 and '"$OLD/bin/python" -m pytest' in runs[0], runs
    assert "-m compat" in runs[0] and "-rs" in runs[0], runs
    for venv, requirements in ((".venv-py37", "requirements-worker-py37.txt"),
                               (".venv-oldest", "requirements-oldest.txt")):
        assert "OLD={}; OLD_REQ={}".format(venv, requirements) in ci, venv
    assert '"$OLD/bin/pip" install -q --no-deps -r requirements-anchor.txt' in ci
    assert 'grep -q "SKIPPED.*planetscapes_semantic_anchor"' in ci


def compat_selection(session):
    """The test files `-m compat` selects: read from this session's own collection when it
    collected the whole suite (each xdist worker collects all of it), else from a collection
    of its own (a subprocess, about 5 s)."""
    items = session.items
    files = {item.nodeid.split("::")[0] for item in items}
    if len(files) > 50 and "tests/docs/test_readme_commands.py" in files:
        return {item.nodeid.split("::")[0] for item in items
                if item.get_closest_marker("compat") is not None}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "compat",
                          "-p", "no:cacheprovider", "tests"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120).stdout
    return {line.split("::")[0] for line in out.splitlines() if "::" in line}


def test_the_compat_selection_covers_every_part_that_can_differ(request):
    selected = compat_selection(request.session)
    folders = {os.path.dirname(path) for path in selected}
    for folder in ("tests/core", "tests/kits", "tests/generalist", "tests/compare",
                   "tests/tasks/agrivision", "tests/tasks/planetscapes_semantic",
                   "tests/tasks/planetscapes_vqa"):
        assert folder in folders, folder
    # The dry run is what participants run on their own Python; the anchor test needs the
    # oldest environment's cityscapesScripts.
    assert "tests/kits/test_dry_run.py" in selected
    # (skipped at collection where numpy has no np.in1d, so read from the module itself)
    anchor = read("tests/tasks/planetscapes_semantic/test_planetscapes_semantic_anchor.py")
    assert "pytestmark = pytest.mark.compat" in anchor
