"""The VQA starting kit's tools, run as participants run them (in the kit bundle.sh builds from
the repository's sample), and the sample generator."""
import json
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, VQA_KIT, VQA_REF, run_score, score_either
from kits_util import session_kits

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

SAMPLE = os.path.join(VQA_KIT, "sample_submission", "results.json")
QUESTIONS = os.path.join(VQA_REF, "questions.json")   # the kit's copy is the reference's


@pytest.fixture
def kits(tmp_path_factory):
    """The starting kits as built by bundle.sh --kits (once per session)."""
    return session_kits(tmp_path_factory)


@pytest.fixture
def kit(kits):
    """kit(tool, *args): a tool of the built VQA kit, run in the kit's folder."""
    folder = os.path.join(kits, "vqa")

    def run(tool, *args):
        return subprocess.run([sys.executable, os.path.join(folder, tool)] +
                              [str(a) for a in args], capture_output=True, text=True,
                              timeout=60, cwd=folder)
    run.folder = folder
    return run


def test_the_kit_holds_the_references_questions_and_the_sample(kit):
    for ours, theirs in ((QUESTIONS, "questions.json"),
                         (SAMPLE, os.path.join("sample_submission", "results.json"))):
        with open(ours, "rb") as a, open(os.path.join(kit.folder, theirs), "rb") as b:
            assert a.read() == b.read(), theirs


def test_check_results_accepts_the_sample_file_folder_and_zip(kit, tmp_path):
    assert kit("check_results.py", SAMPLE, "--questions", QUESTIONS).returncode == 0
    assert kit("check_results.py", os.path.dirname(SAMPLE)).returncode == 0
    z = tmp_path / "submission.zip"
    with zipfile.ZipFile(str(z), "w") as zf:
        zf.write(SAMPLE, "results.json")
    proc = kit("check_results.py", z)
    assert proc.returncode == 0 and proc.stdout.startswith("OK: results.json"), proc.stderr


def test_a_results_file_named_through_a_link_is_checked(kit, tmp_path):
    """The file the participant names is theirs, link or not; links inside a submission folder
    are never followed (test_planetscapes_vqa_hostile.py)."""
    link = tmp_path / "latest.json"
    os.symlink(SAMPLE, str(link))
    proc = kit("check_results.py", link, "--questions", QUESTIONS)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "res"
    folder.mkdir()
    os.symlink(SAMPLE, str(folder / "results.json"))
    proc = kit("check_results.py", folder, "--questions", QUESTIONS)
    assert proc.returncode == 1 and "symbolic link" in proc.stderr, proc.stderr


def test_check_results_refuses_what_the_scorer_refuses(kit, tmp_path):
    with open(SAMPLE) as f:
        entries = json.load(f)
    entries[0]["question_id"] = str(entries[0]["question_id"])
    entries.append(dict(entries[5]))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(entries))
    proc = kit("check_results.py", bad, "--questions", QUESTIONS)
    assert proc.returncode == 1
    for text in ("question_id is not an integer (1)", "answered more than once (1)",
                 "write it as an integer"):
        assert text in proc.stderr.lower(), proc.stderr
    assert "without an answer" not in proc.stderr  # the id written as text is not missing
    assert "Traceback" not in proc.stderr
    # The scorer says the same about the same file.
    res = tmp_path / "res"
    res.mkdir()
    (res / "bad.json").write_text(bad.read_text())
    # (score.py's main in process: the kit's tool above is the real command)
    code, _, err = score_either(["--ref", VQA_REF, "--res", res], real=False)
    assert code == 1
    def paragraphs(text):
        return [p.strip() for p in text.split("\n\n")]
    assert paragraphs(err)[1:] == paragraphs(proc.stderr)[1:-1]


def test_json_lines_and_other_names_are_checked_by_content_and_named(kit, tmp_path):
    """Issue 26 item 9: a results file that is not a zip is read whatever its name: JSON Lines
    gets its hint, valid content under another name is refused with the name to give; a zip or
    a folder holding results.jsonl gets the hint too, from the kit and from the scorer."""
    with open(SAMPLE) as f:
        entries = json.load(f)
    lines = tmp_path / "lines.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in entries))
    proc = kit("check_results.py", lines)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "neither a folder nor a zip" not in proc.stderr
    assert "lines.jsonl: line 2, column 1: Extra data - it looks like JSON Lines" in proc.stderr
    assert "Fix: name it lines.json" in proc.stderr
    named = tmp_path / "results.txt"
    named.write_text(json.dumps(entries))
    proc = kit("check_results.py", named)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("ERROR: results.txt passes every check of its content, but it "
                                  "would not be scored"), proc.stderr
    assert "Fix: name it results.json" in proc.stderr
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "results.jsonl").write_text(lines.read_text())
    z = tmp_path / "sub.zip"
    with zipfile.ZipFile(str(z), "w") as zf:
        zf.write(str(lines), "results.jsonl")
    hint = "results.jsonl: JSON Lines (one object per line) is not read: write one JSON list"
    for given in (z, folder):
        proc = kit("check_results.py", given)
        assert proc.returncode == 1 and hint in proc.stderr, proc.stderr
        assert "No .json results file found in the submission (1)" in proc.stderr
    # (score.py's main in process: the kit's tool above is the real command)
    code, _, err = score_either(["--ref", VQA_REF, "--res", z], real=False)
    assert code == 1 and hint in err, err
    assert "Traceback" not in err


def test_check_results_without_questions_file(kit, tmp_path):
    proc = kit("check_results.py", SAMPLE, "--questions", tmp_path / "none.json")
    assert proc.returncode == 2 and "no questions file" in proc.stderr


def test_normalize_tool(kit):
    proc = kit("normalize.py", "Two dogs.")
    assert proc.returncode == 0
    assert "agree exactly: compared as 'Two dogs.'" in proc.stdout
    assert "disagree:         compared as '2 dogs'" in proc.stdout
    humans = ["2 dogs", "two dogs", "2", "dogs", "2 dogs", "two", "2 dogs", "3 dogs", "2 dogs",
              "Two dogs"]
    proc = kit("normalize.py", "Two dogs.", "--humans", *humans)
    assert "6 of them give '2 dogs': accuracy 1" in proc.stdout
    proc = kit("normalize.py", "Yes", "--humans", *(["yes"] * 10))
    assert "0 of them give 'Yes': accuracy 0" in proc.stdout


def test_sample_submission_scores(tmp_path):
    out = tmp_path / "out"
    proc = run_score("--ref", VQA_REF, "--res",
                     os.path.dirname(SAMPLE), "--out", out)
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((out / "scores.json").read_text())
    assert list(scores) == ["accuracy", "accuracy_yes_no", "accuracy_number", "accuracy_other",
                            "accuracy_ci_low", "accuracy_ci_high"]
    assert all(0 <= v <= 100 for v in scores.values())
    page = (out / "detailed_results.html").read_text()
    assert "Accuracy per question type" in page and "Distribution of per-question" in page


def test_generator_is_deterministic_and_committed_sample_is_current(tmp_path):
    args = [sys.executable, os.path.join(ROOT, "competitions", "planetscapes",
                                         "make_vqa_sample.py"), "--questions", "300", "--seed",
            "2021"]
    for run in ("a", "b"):
        subprocess.run(args + ["--out", str(tmp_path / run), "--submission",
                               str(tmp_path / run / "results.json")], check=True,
                       capture_output=True)
    for name in ("questions.json", "annotations.json", "config.yaml", "results.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    for name in ("questions.json", "annotations.json", "config.yaml"):
        with open(os.path.join(VQA_REF, name), "rb") as f:
            assert f.read() == (tmp_path / "a" / name).read_bytes(), name
    with open(SAMPLE, "rb") as f:
        assert f.read() == (tmp_path / "a" / "results.json").read_bytes()


def test_the_vqa_texts_agree_on_decimals(kits, tmp_path):
    """Issue 32: the kit's README said 10 decimals, the evaluation page 2, the detailed page
    "unrounded". One rule: ranked unrounded (scores.txt: 10 decimals), shown with the precision
    the bundle gives the leaderboard's columns; every text says that number and the page and the
    console show it."""
    import re
    import yaml
    from kits_util import built_bundle
    folder = built_bundle(kits, "planetscapes", "")
    shown = set()
    for name in sorted(n for n in os.listdir(folder) if "vqa" in n or "merged" in n):
        with zipfile.ZipFile(os.path.join(folder, name)) as zf:
            doc = yaml.safe_load(zf.read("competition.yaml"))
            if doc.get("version") == 2:
                columns = [c for board in doc["leaderboards"] for c in board["columns"]]
                shown |= {c["precision"] for c in columns if c["key"].startswith("accuracy")}
                pages = [p["file"] for p in doc["pages"] if p["title"] == "Evaluation"]
            else:
                columns = doc["leaderboard"]["columns"]
                shown |= {c["numeric_format"] for k, c in columns.items()
                          if k.startswith("accuracy")}
                pages = [doc["html"]["evaluation"]]
            evaluation = " ".join(zf.read(pages[0]).decode("utf-8").split())
        said = re.findall(r"show them with (\d+) decimals", evaluation)
        assert said, (name, evaluation)
        shown |= {int(d) for d in said}
    assert len(shown) == 1, shown
    decimals = shown.pop()
    readme = " ".join(open(os.path.join(kits, "vqa", "README.md"), encoding="utf-8")
                      .read().split())
    assert "shown with {} decimals, as the official code displays them, on the leaderboard, " \
           "on the detailed results page and on the console".format(decimals) in readme
    assert "Ranked unrounded (`scores.txt` holds 10 decimals" in readme
    out = tmp_path / "out"
    proc = run_score("--ref", VQA_REF, "--res", os.path.join(VQA_KIT, "sample_submission"),
                     "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    assert "shown with {} decimals here, on the console and on the leaderboard".format(
        decimals) in page
    table = page.split("Accuracy per answer type")[1].split("</table>")[0]
    cells = re.findall(r'<td class="num">(\d+\.\d+)</td>', table)
    assert len(cells) == 4 and all(len(c.split(".")[1]) == decimals for c in cells), cells
    console = re.findall(r"^(overall|yes/no|number|other) +\d+ +(\d+\.\d+)$", proc.stdout, re.M)
    assert len(console) == 4 and all(len(v.split(".")[1]) == decimals for _, v in console)
    scores = (out / "scores.txt").read_text()
    assert re.search(r"^accuracy: \d+\.\d{10}$", scores, re.M), scores
