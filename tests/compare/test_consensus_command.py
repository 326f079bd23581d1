"""consensus.py through the real command: two tasks' comparison.json files, a ranking by mean
rank worked out by hand, a submission absent from one task listed apart, bad inputs exit 2."""
import json
import re
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


def test_the_page_like_every_organizer_command(tmp_path):
    """Issue 32: consensus.py wrote no page. consensus.html holds the ranking, each task's rank,
    what was left out and the inputs, on the shared page frame; every name from a
    comparison.json (file names) shown escaped on the page and on the console."""
    evil = "<script>x</script>\x1b[2J\nFORGED"
    sem = comparison(tmp_path / "sem", "planetscapes-semantic",
                     {"a": 1, evil: 2, "c": 3, "only_sem": 4})
    vqa = comparison(tmp_path / "vqa", "planetscapes-vqa", {"a": 3, evil: 1, "c": 2})
    out = tmp_path / "out"
    proc = run("--out", out, sem, vqa)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(str(out))) == ["consensus.html", "consensus.json"]
    page = (out / "consensus.html").read_text(encoding="utf-8")
    assert "<script" not in page and "\x1b" not in page and "FORGED" in page
    assert "&lt;script&gt;x&lt;/script&gt;\\x1b[2J\\nFORGED" in page
    for text in ("Consensus ranking of 3 submissions over 2 tasks", "Rank in planetscapes-vqa",
                 "<h2>Left out</h2>", "only_sem", "<h2>How to read this</h2>",
                 "<h2>Run information</h2>", "mean of its ranks"):
        assert text in page, text
    # the ranking's rows, in order: evil (1.5), a (2.0), c (2.5)
    cells = re.findall(r"<tr><td class=\"num\">(\d)</td><td>([^<]*)</td><td class=\"num\">"
                       r"([\d.]+)</td>", page)
    assert [(r, m[:4], mean) for r, m, mean in cells] == [
        ("1", "&lt;", "1.50"), ("2", "a", "2.00"), ("3", "c", "2.50")], cells
    assert "\x1b" not in proc.stdout and "\nFORGED" not in proc.stdout
    assert "<script>x</script>\\x1b[2J\\nFORGED" in proc.stdout
    assert "Wrote consensus.json and consensus.html to" in proc.stdout
