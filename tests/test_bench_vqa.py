"""bench/vqa.py end to end at a tiny scale. Not a timed test: nothing about speed is asserted,
only that the measurements run, the scorer agrees with the baseline on both reference layouts,
the packed reference is cached, and the report has its rows."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench", "vqa.py")


def test_vqa_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = subprocess.run([sys.executable, BENCH, "--questions", "200", "--repeat", "1",
                           "--memory-sizes", "100", "--data", str(tmp_path / "data"),
                           "--report", str(report)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for row in ("| (a) floor", "| (b) baseline", "| (c) scorer, packed reference",
                "| (d) scorer, raw reference", "| startup", "Packing (once, at bundle time",
                "- scorer / floor:", "- baseline / scorer:", "- raw reference (d)",
                "packed == raw exactly, == baseline", "| 100 |", "| 200 |"):
        assert row in out, row
    assert report.read_text() in out and "pack.py: packed" in out
    assert os.path.isfile(str(tmp_path / "data" / "vqa-200-2021" / "packed" / "packed.json"))
    # A second run reuses the generated sets and their packed references.
    proc = subprocess.run([sys.executable, BENCH, "--questions", "200", "--repeat", "1",
                           "--memory-sizes", "", "--skip-baseline", "--data",
                           str(tmp_path / "data")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "generated" not in proc.stdout and "pack.py: packed" not in proc.stdout, proc.stdout
