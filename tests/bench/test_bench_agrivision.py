"""bench/run.py end to end at a tiny scale. Not a timed test: nothing about speed is asserted."""
import json
import os
import subprocess
import sys

from conftest import ROOT  # noqa: E402
BENCH = os.path.join(ROOT, "bench", "run.py")

ROWS = (
    "| scorer, raw reference ",
    "| scorer, packed reference ",
    "| scorer start-up alone ",
    "| decode floor, raw (",
    "| decode floor, raw / ",
    "| decode floor, packed (",
    "| decode floor, packed / ",
    "| confidence interval: rows kept per image (",
    "| confidence interval: bootstrap, 1,000 resamples of 12 images, main process (CPU ",
    "| dense baseline, measured on 4 images ",
    "| dense baseline, extrapolated to 12 images ",
    "| raw: all-CPU wall <= 1.3 x (decode floor / CPUs) ",
    "| raw: all-CPU >= 6x faster than dense ",
    "| packed: all-CPU wall <= 1.5 x (decode floor / CPUs) ",
    "| packed: all-CPU >= 15x faster than dense ",
    "| peak memory of the process tree (any run) < 500 MB ",
    "| raw: speed-up 1 -> ",
    "| packed: speed-up 1 -> ",
    "| confidence interval <= 5% of the all-CPU packed scorer run ",
    "| confidence interval memory <= 50 MB (bootstrap peak + rows kept) ",
    "| raw reference ",
    "| packed reference ",
    "| predictions ",
)


def run_bench(*args):
    return subprocess.run([sys.executable, BENCH] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=600)


def test_bench_end_to_end(tmp_path):
    data, report = tmp_path / "data", tmp_path / "report.md"
    proc = run_bench("--images", 12, "--dense-images", 4, "--data", data, "--report", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    lines = out.splitlines()
    for row in ROWS:
        assert any(line.startswith(row) for line in lines), row
    # one row per scorer run: 1 worker and all CPUs, for each layout
    for layout in ("raw", "packed"):
        assert sum(line.startswith("| scorer, {} reference ".format(layout)) for line in lines) == 2
    assert "scores.txt: identical across the 4 runs" in out
    assert "Dense baseline confusion matrix == scorer's on 4 images (raw, packed reference): OK" in out
    assert "Generation took" in out
    assert "Page cache: warm" in out
    assert "| other load |" in out
    assert "the machine was otherwise idle" in out or "WARNING: the machine was busy" in out
    for verdict_line in (line for line in lines if line.startswith("| raw: ") or
                         line.startswith("| packed: ") or line.startswith("| peak memory")):
        assert verdict_line.rstrip(" |").endswith(("PASS", "FAIL", "n/a",
                                                   "(BUSY: measured under load)")), verdict_line
    with open(str(report)) as f:
        assert f.read() in out  # the report file is the printed report
    stamp = json.loads((data / "stamp.json").read_text())
    assert (stamp["images"], stamp["seed"]) == (12, 2021)

    # A second run reuses the generated and packed set. Without --report the report goes
    # beside the set (bench/data/ by default, which git ignores), never to a tracked file; a
    # limit every step exceeds marks every timed row, target and the summary as measured under
    # load.
    tracked = subprocess.run(["git", "ls-files", "bench"], cwd=ROOT, capture_output=True,
                             text=True).stdout
    before = {name: os.path.getmtime(os.path.join(ROOT, name)) for name in tracked.split()}
    proc = run_bench("--images", 12, "--dense-images", 2, "--data", data, "--layouts", "packed",
                     "--busy-above", -1)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Reusing the set in" in proc.stdout and "Generation took" not in proc.stdout
    assert "Reusing the packed reference" in proc.stdout
    assert "| scorer, raw reference " not in proc.stdout
    assert "scores.txt: identical across the 2 runs" in proc.stdout
    assert "Report written to {} (give --report FILE".format(data / "results-12.md") in proc.stdout
    with open(str(data / "results-12.md")) as f:
        assert f.read() in proc.stdout
    assert {name: os.path.getmtime(os.path.join(ROOT, name)) for name in before} == before
    lines = proc.stdout.splitlines()
    timed = [line for line in lines if line.startswith(("| scorer, packed", "| decode floor, "
             "packed (", "| dense baseline, measured"))]
    assert len(timed) == 4 and all(" BUSY |" in line for line in timed), timed
    targets = [line for line in lines if line.startswith("| packed: ")]
    assert targets and all("(BUSY: measured under load)" in line for line in targets), targets
    assert "WARNING: the machine was busy** during 4 timed steps" in proc.stdout
    assert "measured under load (BUSY), not reliable." in proc.stdout
