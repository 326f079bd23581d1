"""bench/compare.py end to end at a tiny scale. Not a timed test: nothing about speed is
asserted."""
import os
import subprocess
import sys

from conftest import ROOT

BENCH = os.path.join(ROOT, "bench", "compare.py")


def test_compare_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = subprocess.run([sys.executable, BENCH, "--images", "12", "--counts", "2,3",
                           "--data", str(tmp_path / "data"), "--report", str(report)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "# compare.py benchmark: 12 images, packed reference" in out
    assert "| submissions N | compare.py wall (s) |" in out
    for n in (2, 3):
        assert any(line.startswith("| {} | ".format(n)) for line in out.splitlines()), n
    assert report.read_text() in out
