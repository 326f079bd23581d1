"""bench/planetscapes.py end to end at a tiny scale. Not a timed test: nothing about speed is
asserted, only that the benchmark runs, checks and reports (with the anchor where installed),
and that each anchor row is labelled by the evaluation path that installation really runs."""
import importlib.util
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest

from conftest import ROOT  # noqa: E402
BENCH = os.path.join(ROOT, "bench", "planetscapes.py")
ANCHOR = os.path.join(ROOT, "bench", "cityscapes_anchor.py")
BOUND = os.path.join(ROOT, "bench", "planetscapes_bound.py")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


anchor = _load("cityscapes_anchor", ANCHOR)


def _evaluator(csupport, extension):
    """A stand-in for evalPixelLevelSemanticLabeling after its import: its flag and, when the
    import of the compiled extension succeeded, that module."""
    ev = types.ModuleType("evalPixelLevelSemanticLabeling")
    ev.CSUPPORT = csupport
    if extension is not None:
        ev.addToConfusionMatrix = extension
    return ev


def _extension():
    ext = types.ModuleType("cityscapesscripts.evaluation.addToConfusionMatrix")
    ext.__file__ = "/x/addToConfusionMatrix.cpython-311-x86_64-linux-gnu.so"
    ext.cEvaluatePair = lambda pred, gt, matrix, labels: matrix
    return ext


def test_evaluation_path_follows_the_evaluators_flag():
    ext = _extension()
    assert anchor.evaluation_path(_evaluator(True, ext)) == ("Cython", ext.__file__)
    # The import failed: the evaluator set its flag to False and counts with np.unique.
    assert anchor.evaluation_path(_evaluator(False, None)) == ("pure Python", None)
    # The extension imported but the flag is off: evaluatePair takes the Python branch.
    assert anchor.evaluation_path(_evaluator(False, ext)) == ("pure Python", None)
    # A flag without a usable extension cannot run the Cython branch.
    assert anchor.evaluation_path(_evaluator(True, types.ModuleType("x"))) == ("pure Python",
                                                                              None)


# A package laid out as cityscapesscripts is, whose evaluator decides its path at import as the
# real one does (try the compiled extension, flag off when it is missing).
STUB_EVALUATOR = """
try:
    from cityscapesscripts.evaluation import addToConfusionMatrix
    CSUPPORT = True
except ImportError:
    CSUPPORT = False
"""


def _stub_package(root, with_extension):
    pkg = root / "cityscapesscripts"
    (pkg / "evaluation").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "VERSION").write_text("9.8.7\n")
    (pkg / "evaluation" / "__init__.py").write_text("")
    (pkg / "evaluation" / "evalPixelLevelSemanticLabeling.py").write_text(STUB_EVALUATOR)
    if with_extension:  # stands for the compiled module CYTHONIZE_EVAL builds
        (pkg / "evaluation" / "addToConfusionMatrix.py").write_text(
            "def cEvaluatePair(pred, gt, matrix, labels):\n    return matrix\n")


@pytest.mark.parametrize("with_extension,path", [(True, "Cython"), (False, "pure Python")])
def test_detect_in_the_anchor_process(tmp_path, with_extension, path):
    """The anchor script run as the bench runs it (its own interpreter, the installed package
    on its path) reports the path the imported evaluator takes, and the package's version."""
    _stub_package(tmp_path, with_extension)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run([sys.executable, ANCHOR, "--detect"], capture_output=True, text=True,
                          env=env, cwd=str(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["path"] == path and out["version"] == "9.8.7"
    assert (out["extension"] is not None) == with_extension
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        bench = _load("planetscapes_bench", BENCH)
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    out.update(seconds=1.0, cpu=1.0, scores={})
    row = bench.Anchor(sys.executable, out, 0.0)
    assert row.label == "cityscapesScripts 9.8.7, {} path".format(path)
    assert row.short == "cityscapesScripts ({} path)".format(path)


def test_bench_end_to_end(tmp_path):
    has_anchor = (hasattr(np, "in1d") and
                  importlib.util.find_spec("cityscapesscripts") is not None)
    report = tmp_path / "report.md"
    cmd = [sys.executable, BENCH, "--images", "3", "--width", "256", "--height", "128",
           "--data", str(tmp_path / "data"), "--report", str(report)]
    if has_anchor:
        cmd += ["--anchor-python", sys.executable]
    scratch = tmp_path / "tmp"  # the bench's temporary folders, which it must remove
    scratch.mkdir()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, TMPDIR=str(scratch)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert os.listdir(str(scratch)) == []
    text = report.read_text()
    for row in ("| (a) decode floor: 3 PNGs / image", "| (c) score.py, raw reference",
                "| (c) score.py, packed reference", "peak memory flat",
                "| (d) confidence interval: rows kept per image (",
                "| (d) confidence interval: bootstrap, 1,000 resamples of ",
                "| confidence interval <= 5% of the all-CPU packed scorer run ",
                "| confidence interval memory <= 50 MB ",
                "| (a) lower bound: 3 PNGs decoded by the scorer's decoder, nothing else",
                "| (a) lower bound: the same and one confusion count, nothing else",
                "Lower bound of the raw layout (bench/planetscapes_bound.py, "):
        assert row in text, row
    # The bound ran on the bench's images: every pixel of the 3 images counted once.
    data = tmp_path / "data"
    for workers in (1, 2):
        out = subprocess.run([sys.executable, BOUND, str(data / "ref"), str(data / "pred"),
                              "--workers", str(workers)], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [str(3 * 256 * 128)]
    out = subprocess.run([sys.executable, BOUND, str(data / "ref"), str(data / "pred"),
                          "--decode-only"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split() == ["0"], out.stderr
    assert ("88 keys compared" in text) == has_anchor
    if has_anchor:
        import cityscapesscripts.evaluation.evalPixelLevelSemanticLabeling as ev
        path = anchor.evaluation_path(ev)[0]
        assert "| (b) cityscapesScripts {}, {} path".format(anchor.version(), path) in text
        assert "vs cityscapesScripts ({} path): ".format(path) in text


BURN = """
import os, sys, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
pid = os.fork()
if pid == 0:
    burn(0.4)
    os._exit(0)
burn(0.2)
os.waitpid(pid, 0)
"""


def test_tree_cpu_counts_forked_workers_once():
    """A process that forks a worker and waits for it (as the scorer's pool does below 4,000
    images): the worker's time reaches RUSAGE_CHILDREN and is also seen by sampling; the tree's
    CPU time is 0.6 s, not 1.0 s."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        bench = _load("planetscapes_bench", BENCH)
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    before = os.times()
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    sampler = bench.common.TreeMemorySampler(proc.pid)
    own = bench.OwnTicks(proc.pid)
    sampler.start()
    own.start()
    proc.wait()
    own_cpu, _ = own.finish(), sampler.finish()
    after = os.times()
    waited = after[2] + after[3] - before[2] - before[3]
    cpu = bench.tree_cpu_seconds(waited, own_cpu, sampler.descendant_cpu_seconds())
    assert 0.55 <= cpu <= 0.8, (cpu, waited, own_cpu, sampler.descendant_cpu_seconds())
    # a worker nobody waits for (a fork server's) is seen by sampling only
    assert bench.tree_cpu_seconds(0.2, 0.2, 0.4) == pytest.approx(0.6)
