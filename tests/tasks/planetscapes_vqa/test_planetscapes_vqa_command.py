"""Every results-file problem and every broken-reference case through the real command
(scoring_program/score.py in a subprocess; a test over several values runs one of them so, the
others through the same main in this process): exit status, the message, no traceback, and never
a hidden answer in what is printed."""
import json
import math
import os
import zipfile

import pytest

from conftest import run_score, score_either
from vqa_util import write_vqa_reference

# Reading the results as each Python's json module reads them (valid, not JSON, not UTF-8, ids and
# answers of the wrong type, in a zip) is marked compat: CI runs it on the oldest versions too;
# the other refusals are the task's own logic, the same on every version.

SECRET = "zebracorn"  # a hidden answer: must never be printed
QIDS = [1000 + i for i in range(12)]


def make_reference(folder, annotations=None, questions=None):
    os.makedirs(folder, exist_ok=True)
    if annotations is None:
        annotations = []
        for i, qid in enumerate(QIDS):
            answers = [SECRET] * 4 + ["x%d" % k for k in range(6)] if i % 2 else ["yes"] * 10
            annotations.append({
                "question_id": qid, "image_id": qid // 10, "question_type": "what is",
                "answer_type": "other" if i % 2 else "yes/no", "multiple_choice_answer": SECRET,
                "answers": [{"answer": a, "answer_confidence": "yes", "answer_id": k + 1}
                            for k, a in enumerate(answers)]})
    if questions is None:
        questions = [{"image_id": a["question_id"] // 10, "question": "What?",
                      "question_id": a["question_id"]} for a in annotations]
    return write_vqa_reference(folder, annotations, questions)


@pytest.fixture
def ref(tmp_path):
    return make_reference(str(tmp_path / "ref"))


def good_results():
    return [{"question_id": q, "answer": "yes"} for q in QIDS]


def submit(tmp_path, content, name="results.json", sub=None):
    """A submission folder holding `content` (a JSON-able value, or raw bytes/str)."""
    folder = tmp_path / "res"
    target = folder / sub if sub else folder
    target.mkdir(parents=True, exist_ok=True)
    path = target / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    else:
        path.write_text(json.dumps(content))
    return str(folder)


def refused(ref, res, *expected, code=1, real=True):
    """Run the command (the real one, or its main in this process if not real); check it
    refused the submission cleanly; return stderr."""
    rc, stdout, stderr = score_either(["--ref", ref, "--res", res], real)
    out = stdout + stderr
    assert rc == code, out
    assert "Traceback" not in out and "INTERNAL ERROR" not in out
    assert SECRET not in out
    for text in expected:
        assert text.lower() in stderr.lower(), stderr
    return stderr


@pytest.mark.compat
def test_good_results_are_scored(tmp_path, ref):
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", submit(tmp_path, good_results()), "--out", out)
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((out / "scores.json").read_text())
    # 6 of 12 questions right (100 or 0 each). A resample with k right scores 100 k / 12 with
    # standard error (100 / 12) sqrt(k (12 - k) / 12), so z = (k - 6) / sqrt(k (12 - k) / 12);
    # k ~ Binomial(12, 1/2), whose 2.5% and 97.5% quantiles are 3 and 9: z = -2 and 2. The
    # test set's own standard error is (100 / 12) sqrt(3): 50 -+ 2 (100 / 12) sqrt(3).
    half = 2 * 100 / 12 * math.sqrt(3)
    assert scores == {"accuracy": 50.0, "accuracy_yes_no": 100.0, "accuracy_other": 0.0,
                      "accuracy_ci_low": round(50 - half, 10),
                      "accuracy_ci_high": round(50 + half, 10)}
    assert SECRET not in (out / "detailed_results.html").read_text()
    assert SECRET not in proc.stdout


def test_extra_keys_nested_folder_and_platform_files_are_tolerated(tmp_path, ref):
    entries = [dict(e, image_id=1, score=0.5) for e in good_results()]
    res = submit(tmp_path, entries, name="my answers.JSON", sub="deep/er")
    (tmp_path / "res" / "metadata").write_text("exitCode: 0\n")
    (tmp_path / "res" / ".DS_Store").write_text("x")
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.compat
def test_zip_submission(tmp_path, ref):
    z = tmp_path / "sub.zip"
    with zipfile.ZipFile(str(z), "w") as zf:
        zf.writestr("results/answers.json", json.dumps(good_results()))
    assert run_score("--ref", ref, "--res", z).returncode == 0


@pytest.mark.compat
def test_not_json_gives_line_and_column(tmp_path, ref):
    text = '[\n {"question_id": 1000, "answer": "yes"}\n {"question_id": 1001}]'
    err = refused(ref, submit(tmp_path, text), "not valid JSON", "line 3, column 2")
    assert "Fix:" in err


@pytest.mark.compat
def test_not_utf8(tmp_path, ref):
    refused(ref, submit(tmp_path, b'[{"question_id": 1000, "answer": "\xff"}]'),
            "not valid JSON", "not UTF-8")


@pytest.mark.parametrize("doc, phrase", [({"results": []}, "an object"), ("yes", "a string"),
                                         (None, "null")])
def test_not_a_list(tmp_path, ref, doc, phrase):
    refused(ref, submit(tmp_path, json.dumps(doc)), "not a JSON list", phrase,
            real=doc is None)


def test_entry_not_an_object(tmp_path, ref):
    entries = good_results() + [[1000, "yes"], "1001: yes"]
    refused(ref, submit(tmp_path, entries), "entries that are not JSON objects (2)",
            "entry 13: it is a list", "entry 14: it is a string")


@pytest.mark.compat
@pytest.mark.parametrize("bad, phrase, missing", [
    ("1000", 'a string ("1000"): write it as an integer (1000)', False),
    (1000.0, "a number with a fraction or exponent (1000.0): write it as an integer (1000)",
     False),
    (True, "true", True), (None, "null", True)])
def test_question_id_not_an_integer(tmp_path, ref, bad, phrase, missing):
    """An id written as text or with a fraction is named with the integer it stands for, and
    that question is not also reported as unanswered (a second message that would mislead)."""
    entries = good_results()
    entries[0] = {"question_id": bad, "answer": "yes"}
    err = refused(ref, submit(tmp_path, entries), "question_id is not an integer (1)",
                  "entry 01: question_id is " + phrase, real=bad == "1000")
    assert ("test questions without an answer (1)" in err.lower()) == missing
    assert ("question_id 1000" in err) == missing


def test_json_lines_are_told_to_write_one_list(tmp_path, ref):
    text = "\n".join(json.dumps(e) for e in good_results()) + "\n"
    refused(ref, submit(tmp_path, text), "line 2, column 1: extra data",
            "it looks like json lines (one object per line): write one json list")


@pytest.mark.compat
@pytest.mark.parametrize("bad, phrase", [(2, "a number (2)"), (None, "null"), (True, "true"),
                                         (["yes"], "a list")])
def test_answer_not_a_string(tmp_path, ref, bad, phrase):
    entries = good_results()
    entries[3]["answer"] = bad
    refused(ref, submit(tmp_path, entries), "answer is not a string (1)",
            "entry 04 (question_id 1003): answer is " + phrase, real=bad == 2)


def test_missing_keys(tmp_path, ref):
    entries = good_results()
    entries[0] = {"questionid": 1000, "answer": "yes"}
    entries[1] = {"question_id": 1001, "answers": "yes"}
    refused(ref, submit(tmp_path, entries), 'entries without a "question_id" (1)',
            'entries without an "answer" (1)', "its keys: answers, question_id")


def test_missing_ids_counted_with_first_few(tmp_path, ref):
    err = refused(ref, submit(tmp_path, good_results()[:3]),
                  "test questions without an answer (9)", "question_id 1003", "and 4 more")
    assert "question_id 1011" not in err  # only the first few are listed


def test_duplicated_ids_are_refused(tmp_path, ref):
    entries = good_results() + [{"question_id": 1005, "answer": "no"}] * 2
    refused(ref, submit(tmp_path, entries), "question ids answered more than once (1)",
            "question_id 1005: answered 3 times", "keeps the last one")


def test_unknown_ids(tmp_path, ref):
    entries = good_results() + [{"question_id": 7, "answer": "no"},
                                {"question_id": 99999, "answer": "no"}]
    refused(ref, submit(tmp_path, entries), "question ids that are not test questions (2)",
            "question_id 7", "question_id 99999")


def test_all_problems_reported_together(tmp_path, ref):
    entries = good_results()[2:] + [{"question_id": 1005, "answer": 5}, 17,
                                    {"question_id": "x", "answer": "y"},
                                    {"question_id": 5, "answer": "no"}]
    refused(ref, submit(tmp_path, entries), "not JSON objects (1)", "not an integer (1)",
            "not a string (1)", "more than once (1)", "not test questions (1)",
            "without an answer (2)")


def test_no_json_file(tmp_path, ref):
    res = submit(tmp_path, "yes", name="results.txt")
    refused(ref, res, "no .json results file found", "found 1 other file")


def test_zip_inside_the_submission(tmp_path, ref):
    res = submit(tmp_path, b"PK", name="inner.zip")
    refused(ref, res, "no .json results file found", "inner.zip")


def test_two_json_files(tmp_path, ref):
    res = submit(tmp_path, good_results())
    submit(tmp_path, good_results(), name="other.json", sub="old")
    refused(ref, res, ".json files that each could be the results (2)", "old/other.json",
            "results.json")


def test_file_above_the_size_cap(tmp_path, ref):
    # 12 questions: cap = 1 MiB + 12,000 bytes.
    entries = good_results()
    entries[0]["answer"] = "y" * 1100000
    refused(ref, submit(tmp_path, entries), "results file above the size limit",
            "the limit for 12 questions is 1,060,576 bytes")


# --- broken references: exit 3, the organizers' problem ---

def ref_problem(tmp_path, ref_folder, *expected):
    err = refused(ref_folder, submit(tmp_path, good_results()), *expected, code=3)
    assert "REFERENCE data" in err


def annotations_of(ref_folder):
    with open(os.path.join(ref_folder, "annotations.json")) as f:
        return json.load(f)["annotations"]


@pytest.mark.compat
def test_reference_unreadable_json(tmp_path, ref):
    with open(os.path.join(ref, "annotations.json"), "w") as f:
        f.write('{"annotations": [')
    ref_problem(tmp_path, ref, "annotations.json: not valid JSON: line 1")


def test_reference_missing_file(tmp_path, ref):
    os.remove(os.path.join(ref, "questions.json"))
    ref_problem(tmp_path, ref, "questions.json: it cannot be read")


def test_reference_files_disagree(tmp_path):
    base = make_reference(str(tmp_path / "a"))
    anns = annotations_of(base)
    questions = [{"image_id": a["image_id"], "question": "?", "question_id": a["question_id"]}
                 for a in anns[1:]] + [{"image_id": 1, "question": "?", "question_id": 5}]
    questions[0]["image_id"] = 424242
    ref = make_reference(str(tmp_path / "b"), anns, questions)
    ref_problem(tmp_path, ref, "disagree (3)", "question_id 1000: in annotations.json only",
                "question_id 5: in questions.json only", "image_id 100 in annotations.json")


def test_reference_without_ten_answers(tmp_path):
    anns = annotations_of(make_reference(str(tmp_path / "a")))
    anns[2]["answers"] = anns[2]["answers"][:9]
    anns[3]["answers"] = anns[3]["answers"] + anns[3]["answers"][:1]
    ref_problem(tmp_path, make_reference(str(tmp_path / "b"), anns),
                "annotations without ten human answers (2)", "9 answers", "11 answers")


def test_reference_unknown_answer_type_and_duplicate_id(tmp_path):
    anns = annotations_of(make_reference(str(tmp_path / "a")))
    anns[0]["answer_type"] = "colour"
    anns.append(dict(anns[1]))
    questions = [{"image_id": a["image_id"], "question": "?", "question_id": a["question_id"]}
                 for a in anns[:-1]]
    ref_problem(tmp_path, make_reference(str(tmp_path / "b"), anns, questions),
                "answer_type 'colour' is none of", "listed twice", "question_id 1001")


def test_reference_answer_not_a_string(tmp_path):
    anns = annotations_of(make_reference(str(tmp_path / "a")))
    anns[4]["answers"][0]["answer"] = 3
    ref_problem(tmp_path, make_reference(str(tmp_path / "b"), anns),
                "question_id 1004: every answer must be an object with a string")
