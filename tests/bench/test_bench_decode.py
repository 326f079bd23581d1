"""bench/decode.py end to end at a tiny scale: both kinds of file, both paths, one row each (it
also checks that the two paths give the same values, and exits non-zero if not)."""
import os
import subprocess
import sys

from conftest import ROOT


def test_decode_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "decode.py"), "--images",
                           "10", "--repeat", "1", "--report", str(report)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| 8-bit labels, 512 x 512 | 10 | " in proc.stdout
    assert "| 16-bit instances, 2048 x 1024 | 1 | " in proc.stdout
    assert report.read_text() == proc.stdout + "\n"


def test_decode_bench_refuses_too_few_images():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "decode.py"), "--images",
                           "3"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--images must be >= 10" in proc.stderr
