"""bench/generalist.py end to end at a tiny scale. Not a timed test: nothing about speed is
asserted, only that the case is generated and cached, the command runs, its outputs equal the
bench's reference computation, and a program that is off by one ulp is caught."""
import os
import shutil
import subprocess
import sys

from conftest import ROOT  # noqa: E402
BENCH = os.path.join(ROOT, "bench", "generalist.py")


def run_bench(*args):
    return subprocess.run([sys.executable, BENCH] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=300)


def test_generalist_bench_end_to_end(tmp_path):
    report = tmp_path / "report.md"
    proc = run_bench("--boards", "6", "--models", "150", "--data", tmp_path / "data",
                     "--report", report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for row in ("| generalist.py CONFIG --out DIR |", "leave-one-out ranges): yes",
                "wall <= 10 s: ", "(targets are for 50 x 20,000", "generated 6 boards"):
        assert row in out, row
    assert report.read_text() in out
    folder = tmp_path / "data" / "generalist-6x150-2024"
    assert sorted(os.listdir(str(folder)))[:2] == ["board01.csv", "board02.csv"]
    # Every layout the command reads is in the case.
    heads = [(folder / "board0{}.csv".format(i)).read_text().splitlines()[0] for i in range(1, 6)]
    assert heads == ["team,score", "team,score", "team,rank", "submission_pk,User,b'mAP'",
                     "Username,fact_sheet_answers,Bench task(7)-HOTA,Bench task(7)-IDSW"]
    # A second run reuses the generated case.
    proc = run_bench("--boards", "6", "--models", "150", "--data", tmp_path / "data")
    assert proc.returncode == 0 and "generated" not in proc.stdout, proc.stdout


def test_generalist_bench_catches_a_wrong_result(tmp_path):
    for folder in ("organizer", "scoring_program", "kit"):
        shutil.copytree(os.path.join(ROOT, folder), str(tmp_path / "code" / folder),
                        ignore=shutil.ignore_patterns("__pycache__"))
    program = tmp_path / "code" / "organizer"
    path = program / "organizing" / "generalist" / "consistency.py"
    text = path.read_text(encoding="utf-8")
    wrong = text.replace("return min(1.0, max(eps, math.exp(log_sum / m)))",
                         "return min(1.0, max(eps, math.exp(log_sum / m) * (1 + 2 ** -52)))")
    assert wrong != text
    path.write_text(wrong, encoding="utf-8")
    proc = run_bench("--boards", "4", "--models", "60", "--data", tmp_path / "data",
                     "--program", program)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the outputs differ from the reference computation" in proc.stderr
