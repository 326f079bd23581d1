"""bench/confidence.py end to end at a tiny scale (3 draws a cell, 100 resamples): every part
runs and reports its rows. Not a statistical test: nothing about coverage is asserted."""
import os
import subprocess
import sys

from conftest import ROOT

BENCH = os.path.join(ROOT, "bench", "confidence.py")


def test_confidence_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = subprocess.run([sys.executable, BENCH, "--draws", "2", "--resamples", "100",
                           "--sizes", "50", "-q", "--report", str(report)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for row in ("| Agriculture-Vision | score | 50 | today | ",
                "| Agriculture-Vision, 5 tiles per field | score | 50 | scorer | ",
                "| Planetscapes semantic | iiou_class | 50 | percentile-clusters | ",
                "| VQA, 5 questions per image | score | 50 | scorer | ",
                "## 2. Duplicated fields", "| Agriculture-Vision | 200 | today | ",
                "| VQA | 1,000 | today | ", "## 4. Power", "## 5. Dependence"):
        assert row in out, row
    assert report.read_text() == out


def test_confidence_bench_refuses_an_unknown_method():
    proc = subprocess.run([sys.executable, BENCH, "--methods", "magic"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "unknown method" in proc.stderr
