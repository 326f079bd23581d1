"""Exceptions cross the process boundary: every exception of the seam and the core pickles, and
any exception raised in a pool worker, ours or a bug, ends the run in bounded time with the right
exit status (3 for a reference problem, 4 for a bug), with 2 workers. An exception raised in a
worker that cannot be unpickled in the main process ("missing 1 required positional argument")
kills the pool's result thread: the run would hang until the platform's time limit."""
import importlib
import inspect
import os
import pickle
import pkgutil
import subprocess
import sys

import pytest

from conftest import AGRIVISION, PROGRAM

# Pickling and the pool differ between Python versions: CI runs this on the oldest ones too.
pytestmark = pytest.mark.compat

AV_REF = os.path.join(AGRIVISION, "reference_data")
AV_RES = os.path.join(AGRIVISION, "starting_kit", "sample_submission")


def _all_exception_classes():
    import scoring
    found = {}
    for info in pkgutil.walk_packages(scoring.__path__, "scoring."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == info.name:
                found[cls.__module__ + "." + cls.__qualname__] = cls
    return found


def _samples():
    """One instance of every exception class the program defines."""
    from scoring import engine, problems, regular_file, safe_yaml, zips
    from scoring.formats.label_png import kinds as label_png_kinds
    from organizing.commands import compare
    from organizing.generalist.problems import InputProblems
    from scoring.formats.label_png import png
    from scoring.formats.label_png.decode_errors import Undecodable
    from scoring.readers import bounded_json
    from scoring.tasks.agrivision.layers import WrongMode
    from scoring.tasks.planetscapes_semantic.packed import NotPacked
    from scoring.task_api import PredictionProblem, ReferenceProblem
    from scoring.tasks.agrivision.packed import BadTable
    from scoring.tasks.planetscapes_vqa import packed as vqa_packed
    from scoring.tasks.planetscapes_vqa.problems import TWO_RESULTS
    from scoring.tasks.planetscapes_vqa.results import ResultsProblems
    from organizing.verify import leaderboard, run as verify_run
    from final_package import package
    from final_package.params import detect, result as params_result
    log = problems.ProblemLog()
    log.add(problems.MISSING, "a.png", "no file")
    log.add(TWO_RESULTS, "results.json", "and b.json")
    return [
        problems.Refusal(),
        problems.ScoringError(log, files="PNG files"),
        problems.SubmissionError(log, unit="image"),
        problems.BrokenReference(log),
        problems.UsageError("give --ref"),
        PredictionProblem(label_png_kinds.NOT_PNG, "it is a JPEG"),
        ReferenceProblem(problems.REF_CONFIG, "config.yaml", "not a mapping"),
        ResultsProblems(log),
        vqa_packed.PackMismatch(log),
        vqa_packed.Damaged("field 3 is a string"),
        BadTable("not codes"),
        bounded_json.LongInteger(5000),
        png.NotPNG("it is empty"),
        png.CannotOpen("it cannot be read (Permission denied)"),
        Undecodable("image file is truncated"),
        WrongMode("its mode is RGB"),
        NotPacked("not a packed reference image"),
        safe_yaml.YamlError("an alias bomb", 5),
        regular_file.Refused(regular_file.NOT_REGULAR, "not a regular file", "a FIFO"),
        zips.ArchiveProblem("the entry '../x' points outside the archive"),
        InputProblems([("config.yaml", 3, "no score column")]),
        compare.NothingScored("  - a: missing files\n"),
        engine.WorkerFailed("KeyError", [("scoring/x.py", 3, "f")], "Traceback ..."),
        verify_run.InputProblem("team 'carol' is not on the leaderboard"),
        leaderboard.LeaderboardProblem("no score column 'mIoU'"),
        package.PackageRefused("the entry '../x' points outside the archive"),
        params_result.FileRefused("unsafe: the pickle imports os.system"),
        params_result.NotCounted("a TorchScript archive"),
        detect._Ignored(),
    ]


def _same(a, b):
    assert type(a) is type(b)
    assert str(a) == str(b)
    assert vars(a).keys() == vars(b).keys()
    for method in ("message", "detail"):      # what the reports print
        if callable(getattr(a, method, None)):
            try:
                expected = getattr(a, method)()
            except NotImplementedError:
                continue
            assert getattr(b, method)() == expected
    for key in ("kind", "name", "digits", "line", "problem", "what", "reason",
                "remote_type", "remote_frames", "remote_traceback", "listing", "problems"):
        if hasattr(a, key):
            assert getattr(a, key) == getattr(b, key), key
    if isinstance(getattr(a, "detail", None), str):
        assert a.detail == b.detail


def test_every_exception_of_the_program_pickles():
    samples = _samples()
    covered = {type(s).__module__ + "." + type(s).__qualname__ for s in samples}
    missing = set(_all_exception_classes()) - covered
    assert not missing, "add a sample of each to _samples(): {}".format(sorted(missing))
    for exc in samples:
        back = pickle.loads(pickle.dumps(exc))
        _same(exc, back)
    # Kinds keep their identity across a pickle: the log's kinds are the process's own.
    from scoring.problems import MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING


# Each case: what to break (in the main process, before the fork: workers inherit it), and the
# exit status and message the run must end with.
CASE = """
import faulthandler
import sys
# A run that hangs (seen once in CI, under load, not reproduced in 120 runs) prints every
# thread's stack and exits, so the failure says where it waited instead of a bare timeout.
faulthandler.dump_traceback_later(100, exit=True)
sys.path.insert(0, {program!r})
from scoring.commands import score
from scoring.tasks.agrivision import reference, metric
from scoring.formats.label_png import prediction as png_labels
from scoring.problems import REF_CONFIG
from scoring.task_api import ReferenceProblem, PredictionProblem
from scoring import engine
engine.FORK_BELOW_UNITS = {fork_below}

class Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(a)

def expect_fails(self, unit_id, truth):
    if unit_id.endswith("7"):
        raise ReferenceProblem(REF_CONFIG, unit_id + ".png", "broken in expect")
    return truth.labels.shape

def read_unpicklable(self, path, expectation):
    raise Unpicklable("x", "y")

def update_bug(self, unit_id, pred, ref):
    raise ZeroDivisionError("hidden 0.987")

def reference_refusal(self, image_id):
    from scoring.problems import BrokenReference, ProblemLog
    log = ProblemLog()
    log.add(REF_CONFIG, image_id, "refused in a worker")
    raise BrokenReference(log)

case = sys.argv[1]
if case == "expect":
    reference.CodedReference.expect = expect_fails
elif case == "unpicklable":
    png_labels.PngLabels.read = read_unpicklable
elif case == "bug":
    metric.LabelSetHistogram.update = update_bug
elif case == "refusal":
    reference.RawReference.read = reference_refusal
sys.exit(score.main(["--ref", {ref!r}, "--res", {res!r}, "--workers", "2", "-q"]))
"""


@pytest.mark.parametrize("case, code, text", [
    ("expect", 3, "broken in expect"),
    ("unpicklable", 4, "INTERNAL ERROR in score.py: Unpicklable at scoring/engine.py:"),
    # the worker's own frames are named (the last of ours), not the pool's
    ("bug", 4, "INTERNAL ERROR in score.py: ZeroDivisionError at scoring/engine.py:"),
    ("refusal", 3, "refused in a worker"),
])
def test_an_exception_in_a_worker_ends_the_run(case, code, text):
    # Workers are forked (as for every set under engine.FORK_BELOW_UNITS), so they inherit the
    # patch; the timeout bounds a run that would hang.
    script = CASE.format(program=PROGRAM, ref=AV_REF, res=AV_RES, fork_below=4000)
    proc = subprocess.run([sys.executable, "-c", script, case], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and "hidden 0.987" not in proc.stderr
    assert text in proc.stderr, proc.stderr
    assert "in _score_chunk()" in proc.stderr or code == 3
    if case == "expect":
        # Every broken unit is listed, the run going on past the first (the loop's own log).
        broken = [n for n in os.listdir(os.path.join(AV_REF, "boundaries")) if n.endswith("7.png")]
        assert "unusable ({}):".format(len(broken)) in proc.stderr, proc.stderr
