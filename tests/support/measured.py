"""Run a command of the program and measure it: exit status, output, wall time and the peak RSS
of the interpreter that ran it, through the bench's own launcher (bench/generalist.py's
measure_rusage: the command's own VmHWM, not its parent's), with a timeout."""
import importlib.util
import os
import sys

from conftest import PROGRAM, ROOT

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
    path = command if os.sep in command else os.path.join(PROGRAM, command)
    try:
        return _bench().measure_rusage([sys.executable, path] + [str(a) for a in args],
                                       timeout=timeout)
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from None
