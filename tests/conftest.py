import io
import os
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
PROGRAM = os.path.join(ROOT, "scoring_program")
# The Planetscapes samples (competitions/planetscapes/): each task's reference and kit source.
PLANETSCAPES = os.path.join(ROOT, "competitions", "planetscapes")
SEM_REF = os.path.join(PLANETSCAPES, "reference_data", "semantic")
SEM_KIT = os.path.join(PLANETSCAPES, "starting_kit", "semantic")
VQA_REF = os.path.join(PLANETSCAPES, "reference_data", "vqa")
VQA_KIT = os.path.join(PLANETSCAPES, "starting_kit", "vqa")
# The scoring program, the tests' shared helpers (oracles, data builders) and this folder (for
# `from conftest import ...` in the test folders, which mirror the source tree).
for p in (PROGRAM, os.path.join(TESTS, "support"), TESTS):
    if p not in sys.path:
        sys.path.insert(0, p)
# The CodaLab v1 worker's form waits 3 s after writing its page (scoring/commands/score.py,
# HTML_SETTLE_SECONDS) for the platform's watcher; the tests dry-run that form dozens of times.
# Every command they start inherits this; the tests of the wait itself set it back.
os.environ.setdefault("SCORING_HTML_SETTLE_SECONDS", "0")


def run_score(*args, timeout=120):
    """Run the real command as a subprocess; returns CompletedProcess with text output."""
    return subprocess.run([sys.executable, os.path.join(PROGRAM, "score.py")] + [str(a) for a in args],
                          capture_output=True, text=True,
                          timeout=timeout)


def run_main(main, argv):
    """main(argv) in this process with its output captured: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def score_either(argv, real):
    """The scorer on argv, as the real command (real=True: a subprocess) or in this process
    (faster; tests that loop over many cases run one of them for real)."""
    if real:
        proc = run_score(*argv)
        return proc.returncode, proc.stdout, proc.stderr
    from scoring.commands import score as cli
    return run_main(cli.main, argv)


def run_pack(*args, timeout=300):
    """pack.py as a subprocess; returns CompletedProcess with text output."""
    return subprocess.run([sys.executable, os.path.join(PROGRAM, "pack.py")] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=timeout)


def pack_either(argv, real):
    """pack.py on argv, as the real command (real=True: a subprocess) or in this process:
    (exit code, stdout, stderr), as score_either."""
    if real:
        proc = run_pack(*argv)
        return proc.returncode, proc.stdout, proc.stderr
    from scoring.commands import pack as cli
    return run_main(cli.main, argv)


@pytest.fixture
def score():
    return run_score


def pytest_configure(config):
    # CI (.ci/run) runs the whole suite once on current versions, then only the tests marked
    # `compat` on the oldest numpy / Pillow / PyYAML and on the worker's Python 3.7: the modules
    # whose results can depend on those versions (decoding, numpy arithmetic and random streams,
    # YAML, the scorer and the starting kits end to end). A module opts in with
    # `pytestmark = pytest.mark.compat`.
    config.addinivalue_line(
        "markers", "compat: can differ with numpy / Pillow / PyYAML / Python versions; CI runs "
                   "it on the oldest supported versions too")
