"""bench/verify_params.py end to end at a tiny scale. Not a timed test: nothing about speed is
asserted; the count of the checkpoint it writes must be exact."""
import os
import subprocess
import sys

from conftest import ROOT

BENCH = os.path.join(ROOT, "bench", "verify_params.py")


def test_verify_params_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = subprocess.run([sys.executable, BENCH, "--sizes-mb", "16", "--tmp", str(tmp_path),
                           "--report", str(report)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "| file (MB) | parameters written | counted |" in out
    assert "| 16 | 4,194,304 | 4,194,304 |" in out and "| yes |" in out
    assert report.read_text() == out
