import contextlib
import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import Phase
from hypothesis import settings as hypothesis_settings

# No per-example deadline anywhere: speed is measured by the benchmarks, and on a machine busy
# with four test workers one example of 0.3 ms took 261 ms once (hypothesis' default deadline
# is 200 ms), which failed CI as "Flaky". Tests that set their own settings keep them.
hypothesis_settings.register_profile("suite", deadline=None)
# tests/mutants.py runs each mutant's tests with this profile: a failing example is all it needs,
# so hypothesis does not shrink it (shrinking took up to 2 minutes of CPU for one mutant).
hypothesis_settings.register_profile(
    "mutants", deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
hypothesis_settings.load_profile(os.environ.get("TESTS_HYPOTHESIS_PROFILE", "suite"))

try:
    import fcntl
except ImportError:  # not POSIX: each worker builds its own (built_once)
    fcntl = None

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
PROGRAM = os.path.join(ROOT, "scoring_program")      # the worker's program
ORGANIZER = os.path.join(ROOT, "organizer")          # the organizer's commands
KIT = os.path.join(ROOT, "kit")                      # the kits' tools and final_package
# The Agriculture-Vision samples (competitions/agriculture-vision/): its reference and kit source.
AGRIVISION = os.path.join(ROOT, "competitions", "agriculture-vision")
AV_REF = os.path.join(AGRIVISION, "reference_data")
AV_KIT = os.path.join(AGRIVISION, "starting_kit")
# The Planetscapes samples (competitions/planetscapes/): each task's reference and kit source.
PLANETSCAPES = os.path.join(ROOT, "competitions", "planetscapes")
SEM_REF = os.path.join(PLANETSCAPES, "reference_data", "semantic")
SEM_KIT = os.path.join(PLANETSCAPES, "starting_kit", "semantic")
VQA_REF = os.path.join(PLANETSCAPES, "reference_data", "vqa")
PAN_KIT = os.path.join(PLANETSCAPES, "starting_kit", "panoptic")
VQA_KIT = os.path.join(PLANETSCAPES, "starting_kit", "vqa")
# The scoring program, the tests' shared helpers (oracles, data builders) and this folder (for
# `from conftest import ...` in the test folders, which mirror the source tree).
for p in (PROGRAM, KIT, ORGANIZER, os.path.join(TESTS, "support"), TESTS):
    if p not in sys.path:
        sys.path.insert(0, p)
# The CodaLab v1 worker's form waits 3 s after writing its page (scoring/commands/score.py,
# HTML_SETTLE_SECONDS) for the platform's watcher; the tests dry-run that form dozens of times.
# Every command they start inherits this; the tests of the wait itself set it back.
os.environ.setdefault("SCORING_HTML_SETTLE_SECONDS", "0")


def entry_point(command):
    """The path of a command by its file name: score.py is the worker's, the others the
    organizer's."""
    return os.path.join(PROGRAM if command == "score.py" else ORGANIZER, command)


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


def built_once(tmp_path_factory, name, build):
    """build(folder) -> a JSON value, made once per test run however many xdist workers ask
    for it (a module- or session-scoped fixture is otherwise made again by every worker that
    runs one of its tests): the first caller builds into a folder of the run's shared
    temporary folder under a lock, and writes the value beside it; the others wait for the
    lock and take both. A build that fails writes nothing: the next caller builds again (and
    fails the same way). What it made is shared: never change it (copy first)."""
    if name in _BUILT_ONCE:
        return _BUILT_ONCE[name]
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") and fcntl is not None:
        base = base.parent   # the run's folder, above each worker's popen-gwN
    folder = os.path.join(str(base), "built-once-" + name)
    record = folder + ".json"
    with open(folder + ".lock", "a") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)   # released when the file is closed
        if not os.path.isfile(record):
            if os.path.isdir(folder):
                shutil.rmtree(folder)   # what a failed build left
            os.makedirs(folder)
            value = build(folder)
            with open(record + ".tmp", "w") as f:
                json.dump({"value": value}, f)
            os.replace(record + ".tmp", record)
        with open(record) as f:
            _BUILT_ONCE[name] = json.load(f)["value"]
    return _BUILT_ONCE[name]


_BUILT_ONCE = {}  # name -> value, this process's


def built_twice(tmp_path_factory, name, build):
    """built_once of a build(folder) that returns [first CompletedProcess (completed()), second,
    first's folder, second's folder], decoded: (CompletedProcess, CompletedProcess, Path,
    Path)."""
    import pathlib
    first, second, a, b = built_once(tmp_path_factory, name, build)
    return as_completed(first), as_completed(second), pathlib.Path(a), pathlib.Path(b)


def completed(proc):
    """A CompletedProcess as a JSON value (built_once), and back: as_completed."""
    return {"args": [str(a) for a in proc.args], "returncode": proc.returncode,
            "stdout": proc.stdout, "stderr": proc.stderr}


def as_completed(value):
    return subprocess.CompletedProcess(value["args"], value["returncode"], value["stdout"],
                                       value["stderr"])


def bundle_in_process(argv, now=None):
    """organizer/bundle.py's main (what bundle.sh execs) on argv in this process, BUNDLE_NOW set
    to now or unset as the tests' bash bundle.sh runs have it, output captured, the environment
    restored: a CompletedProcess like theirs (a test that builds several times builds one of
    them for real)."""
    from organizing.bundle import command as bundle
    argv = [str(a) for a in argv]
    saved = os.environ.pop("BUNDLE_NOW", None)
    if now:
        os.environ["BUNDLE_NOW"] = now
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = bundle.main(argv)
            except SystemExit as exc:   # argparse's usage errors
                code = exc.code
    finally:
        os.environ.pop("BUNDLE_NOW", None)
        if saved is not None:
            os.environ["BUNDLE_NOW"] = saved
    return subprocess.CompletedProcess(["bundle.py"] + argv, code, out.getvalue(),
                                       err.getvalue())


def run_pack(*args, timeout=300):
    """pack.py as a subprocess; returns CompletedProcess with text output."""
    return subprocess.run([sys.executable, os.path.join(ORGANIZER, "pack.py")] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=timeout)


def pack_either(argv, real):
    """pack.py on argv, as the real command (real=True: a subprocess) or in this process:
    (exit code, stdout, stderr), as score_either."""
    if real:
        proc = run_pack(*argv)
        return proc.returncode, proc.stdout, proc.stderr
    from organizing.commands import pack as cli
    return run_main(cli.main, argv)


@pytest.fixture
def score():
    return run_score


def pytest_configure(config):
    # CI (.ci/run) runs the whole suite on current versions and, beside it, only the tests
    # marked `compat` on the oldest numpy / Pillow / PyYAML and the worker's Python 3.7: those
    # whose result can depend on those versions (decoding, numpy arithmetic and random streams,
    # YAML, JSON numbers, pickling across the pool, the scorer, the kits, the dry run and each
    # organizer command end to end). A module opts in with `pytestmark = pytest.mark.compat`, a
    # test with `@pytest.mark.compat`; refusals whose logic no version changes (special files,
    # messages, argument handling) stay out. tests/docs/test_ci.py names the parts that must.
    config.addinivalue_line(
        "markers", "compat: can differ with numpy / Pillow / PyYAML / Python versions; CI runs "
                   "it on the oldest supported versions too")
