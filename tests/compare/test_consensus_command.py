"""consensus.py through the real command: two tasks' comparison.json files, a ranking by mean
rank worked out by hand, a submission absent from one task listed apart, bad inputs exit 2."""
import json
import os
import subprocess
import sys

from conftest import ORGANIZER

CONSENSUS = os.path.join(ORGANIZER, "consensus.py")


def run(*args):
    return subprocess.run([sys.executable, CONSENSUS] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=60)


def comparison(folder, task, ranks):
    folder.mkdir()
    doc = {"task": task, "key": "k", "models": [{"model": m, "rank": r, "score": 0.0}
                                                for m, r in ranks.items()], "pairs": []}
    (folder / "comparison.json").write_text(json.dumps(doc))
    return folder


def test_consensus_of_two_tasks_by_hand(tmp_path):
    sem = comparison(tmp_path / "sem", "planetscapes-semantic", {"a": 1, "b": 2, "c": 3})
    vqa = comparison(tmp_path / "vqa", "planetscapes-vqa", {"a": 3, "b": 1, "c": 2, "d": 4})
    out = tmp_path / "out"
    proc = run("--out", out, sem, vqa / "comparison.json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "consensus.json").read_text())
    # mean ranks: a (1 + 3) / 2 = 2, b 1.5, c 2.5 -> b, a, c
    assert [(r["model"], r["mean_rank"], r["rank"]) for r in doc["ranking"]] == \
        [("b", 1.5, 1), ("a", 2.0, 2), ("c", 2.5, 3)]
    assert doc["left_out"] == ["d"]
    assert "Not ranked in every task, left out: d" in proc.stdout


def test_bad_inputs_are_exit_2(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    proc = run("--out", tmp_path / "out", tmp_path / "x.json")
    assert proc.returncode == 2 and "is not a comparison.json" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run("--out", tmp_path / "out", tmp_path / "missing")
    assert proc.returncode == 2
