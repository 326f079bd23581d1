"""bench/compare_scale.py end to end at a tiny scale: different submissions made of the
predictions' variants, the real command's row, the analysis measured apart and at the
extrapolated size, the decoding share. Not a timed test: nothing about speed is asserted."""
import os
import subprocess
import sys

from conftest import ROOT

BENCH = os.path.join(ROOT, "bench", "compare_scale.py")


def test_compare_scale_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = subprocess.run([sys.executable, BENCH, "--images", "8", "--submissions", "22",
                           "--full-images", "40", "--full-submissions", "3",
                           "--data", str(tmp_path / "data"), "--report", str(report)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "# compare.py at a leaderboard's size: 22 submissions x 8 images" in out
    # 22 submissions: the neighbours and the leader, 2 x 22 - 3 pairs; 3: every pair
    assert "| compare.py, measured | 22 | 8 | 41 (neighbours) |" in out
    assert "| analysis after scoring, measured at full size | 3 | 40 | 3 (all) |" in out
    assert "| compare.py, measured | 11 | 8 | 55 (all) |" in out
    assert "| compare.py, extrapolated | 3 | 40 | 3 |" in out
    assert "for the run's 176 files" in out and "each of the 32 files of the set" in out
    assert report.read_text() in out


def test_compare_scale_bench_refuses_bad_sizes():
    proc = subprocess.run([sys.executable, BENCH, "--submissions", "1"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "--submissions at least 2" in proc.stderr
