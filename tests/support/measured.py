"""Run a command of the program and measure it: exit status, output, wall time and the peak RSS
of the interpreter that ran it, through the bench's own launcher (bench/generalist.py's
measure_rusage: the command's own VmHWM, not its parent's), with a timeout.

With MEASURED_LOG=FILE in the environment, every measurement is also appended to FILE as a JSON
line (the test, the command, exit status, wall seconds, peak RSS in MB): the figures of the
refusals' bounds come from there, e.g.
    MEASURED_LOG=/tmp/m.jsonl python3 -m pytest -q tests/core/test_reference_config.py
"""
import importlib.util
import json
import os
import sys

from conftest import ROOT, entry_point

_BENCH = []


def _bench():
    if not _BENCH:
        path = os.path.join(ROOT, "bench", "generalist.py")
        spec = importlib.util.spec_from_file_location("generalist_bench_launcher", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _BENCH.append(module)
    return _BENCH[0]


def run_measured(command, *args, timeout=60):
    """command: 'score.py', 'pack.py' (in scoring_program/) or a path. Returns a dict: rc, out,
    err, wall (s), rss (MB)."""
    path = command if os.sep in command else entry_point(command)
    try:
        r = _bench().measure_rusage([sys.executable, path] + [str(a) for a in args],
                                    timeout=timeout)
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from None
    log = os.environ.get("MEASURED_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"test": os.environ.get("PYTEST_CURRENT_TEST", ""),
                                "command": os.path.basename(path), "rc": r["rc"],
                                "wall": round(r["wall"], 3), "cpu": round(r["cpu"], 3),
                                "rss": round(r["rss"], 1)}) + "\n")
    return r
