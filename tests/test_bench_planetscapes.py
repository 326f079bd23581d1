"""bench/planetscapes.py end to end at a tiny scale. Not a timed test: nothing about speed is
asserted, only that the benchmark runs, checks and reports (with the anchor where installed)."""
import importlib.util
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench", "planetscapes.py")


def test_bench_end_to_end(tmp_path):
    anchor = (hasattr(np, "in1d") and
              importlib.util.find_spec("cityscapesscripts") is not None)
    report = tmp_path / "report.md"
    cmd = [sys.executable, BENCH, "--images", "3", "--width", "256", "--height", "128",
           "--data", str(tmp_path / "data"), "--report", str(report)]
    if anchor:
        cmd += ["--anchor-python", sys.executable]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = report.read_text()
    for row in ("| (a) decode floor: 3 PNGs / image", "| (c) score.py, raw reference",
                "| (c) score.py, packed reference", "peak memory flat"):
        assert row in text, row
    assert ("88 keys compared" in text) == anchor
