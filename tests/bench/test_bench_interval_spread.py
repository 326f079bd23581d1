"""bench/interval_spread.py end to end at a tiny scale: the four rows (by tile and by field,
basic and studentized) and the report file."""
import os
import subprocess
import sys

from conftest import ROOT


def test_interval_spread_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "interval_spread.py"),
                           "--tiles", "200", "--repeat", "1", "--report", str(report)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for row in ("| by tile | basic | ", "| by tile | studentized | ",
                "| by field (10 fields) | basic | ", "| by field (10 fields) | studentized | "):
        assert row in proc.stdout
    assert report.read_text() == proc.stdout


def test_interval_spread_bench_refuses_bad_sizes():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "interval_spread.py"),
                           "--tiles", "1"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--tiles must be >= 2" in proc.stderr
