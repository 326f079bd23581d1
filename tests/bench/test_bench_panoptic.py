"""bench/panoptic.py end to end at a tiny scale (2 images of 64 x 128, no anchor): its rows are
written. Not a timing test: nothing about speed is asserted."""
import os
import subprocess
import sys

from conftest import ROOT

BENCH = os.path.join(ROOT, "bench", "panoptic.py")


def test_panoptic_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = subprocess.run([sys.executable, BENCH, "--images", "2", "--height", "64", "--width",
                           "128", "--repeat", "1", "--report", str(report)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for row in ("| floor: decode both PNGs | ", "| score.py --workers 2 | "):
        assert row in proc.stdout, row
    assert report.read_text() == proc.stdout
