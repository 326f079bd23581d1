"""bench/split_widths.py end to end at a tiny scale (the sample, two shares, one seed). Not a
timed test: each share gives its row, with the split's counts and widths within [0, 1]."""
import os
import re
import subprocess
import sys

from conftest import ROOT  # noqa: E402

BENCH = os.path.join(ROOT, "bench", "split_widths.py")


def test_the_bench_prints_a_row_per_share():
    proc = subprocess.run([sys.executable, BENCH, "--shares", "0.5,0.7", "--seeds", "1",
                           "--workers", "1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "(40 images, 10 fields)" in proc.stdout
    rows = re.findall(r"^\| (0\.\d) \| (\d+\.\d) \| (\d+\.\d) \| (\d\.\d+) \((\d\.\d+)-(\d\.\d+)\)"
                      r" \| (\d\.\d+) \|$", proc.stdout, re.M)
    assert [(r[0], r[1], r[2]) for r in rows] == [("0.5", "5.0", "20.0"), ("0.7", "7.0", "28.0")]
    for row in rows:   # one seed: mean, min and max are that seed's width, within [0, 1]
        assert row[3] == row[4] == row[5] and 0 < float(row[3]) <= 1 and 0 < float(row[6]) <= 1
