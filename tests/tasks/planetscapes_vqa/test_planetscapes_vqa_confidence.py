"""The accuracy's confidence interval through the real command, against the naive oracle: each
question's accuracy from vqa_oracle (rule by rule, exact fractions), resampled questions from the
same seed (bootstrap_oracle), each resample's accuracy as the mean of its questions'."""
import json
import random
import subprocess
import sys

import pytest

import bootstrap_oracle
import vqa_oracle
from conftest import ROOT, run_score
from scoring.metrics import bootstrap
from vqa_util import write_vqa_reference

# The interval against the oracle and the VQA path without numpy are marked compat: CI runs them
# on the oldest versions too.

POOL = ["yes", "no", "2", "two", "Red", "red.", "a crater", "dont know", "1,000", "blue"]


def make_set(tmp_path, questions, seed=4, config=""):
    rng = random.Random(seed)
    anns, results = [], []
    for k in range(questions):
        qid = 90000 + 37 * k
        humans = [rng.choice(POOL[:4 + k % 6]) for _ in range(10)]
        anns.append({"question_id": qid, "image_id": k // 3, "question_type": "what",
                     "answer_type": ["yes/no", "number", "other"][k % 3],
                     "multiple_choice_answer": humans[0],
                     "answers": [{"answer": a, "answer_confidence": "yes", "answer_id": i + 1}
                                 for i, a in enumerate(humans)]})
        results.append({"question_id": qid, "answer": rng.choice(POOL)})
    rng.shuffle(anns)  # the reference's order is not the ids' (units are resampled by id)
    ref = write_vqa_reference(str(tmp_path / "ref"), anns)
    if config:
        with open(str(tmp_path / "ref" / "config.yaml"), "a") as f:
            f.write(config)
    res = tmp_path / "res"
    res.mkdir()
    (res / "results.json").write_text(json.dumps(results))
    per_question = vqa_oracle.evaluate({r["question_id"]: r["answer"] for r in results},
                                       anns)["per_question"]
    return ref, str(res), per_question


def oracle_interval(per_question):
    """The studentized interval: each resample's accuracy, a mean of its questions' (a ratio
    of their accuracy in percent to 1 per question for the spread)."""
    values, spreads = [], []
    for sample in bootstrap_oracle.resamples(list(per_question.items()),
                                             lambda acc: (int(acc * 30),)):
        values.append(float(100 * sum(sample) / len(sample)))
        spreads.append(bootstrap_oracle.ratio_spread(sample, lambda a: [(100 * a, 1)]))
    accuracies = list(per_question.values())
    return bootstrap_oracle.studentized_interval(
        values, spreads, float(100 * sum(accuracies) / len(accuracies)),
        bootstrap_oracle.ratio_spread(accuracies, lambda a: [(100 * a, 1)]), (0.0, 100.0))


@pytest.mark.compat
@pytest.mark.parametrize("questions", [40, 900])
def test_interval_equals_the_oracle(tmp_path, questions):
    """40 questions: unit draws; 900 questions in a few accuracy levels: the group sampler."""
    ref, res, per_question = make_set(tmp_path, questions)
    levels = {int(a * 30) for a in per_question.values()}
    assert bootstrap.uses_groups(questions, len(levels)) == (questions == 900)
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", res, "--out", out)
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((out / "scores.json").read_text())
    low, high = oracle_interval(per_question)
    assert scores["accuracy_ci_low"] == pytest.approx(low, abs=1e-9)
    assert scores["accuracy_ci_high"] == pytest.approx(high, abs=1e-9)
    assert low < high
    page = (out / "detailed_results.html").read_text()
    assert "95% CI {:.2f}\u2013{:.2f} over {:,} questions".format(low, high, questions) in page


def test_packed_reference_gives_the_same_interval(tmp_path):
    ref, res, _ = make_set(tmp_path, 30)
    packed = str(tmp_path / "packed")
    proc = subprocess.run([sys.executable, str(ROOT) + "/organizer/pack.py", ref, packed],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    texts = []
    for i, r in enumerate((ref, packed)):
        assert run_score("--ref", r, "--res", res, "--out", tmp_path / str(i)).returncode == 0
        texts.append((tmp_path / str(i) / "scores.txt").read_text())
    assert texts[0] == texts[1] and "accuracy_ci_low" in texts[0]


def test_confidence_false_writes_no_interval(tmp_path):
    ref, res, _ = make_set(tmp_path, 20, config="confidence: false\n")
    out = tmp_path / "out"
    assert run_score("--ref", ref, "--res", res, "--out", out).returncode == 0
    assert not [k for k in json.loads((out / "scores.json").read_text()) if "_ci_" in k]


@pytest.mark.compat
def test_no_numpy_on_the_vqa_path(tmp_path):
    """The interval keeps the VQA scorer free of numpy (its import alone costs a quarter of a
    100,000-question run)."""
    ref, res, _ = make_set(tmp_path, 700)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from scoring.commands.score import main; "
            "assert main(['--ref', sys.argv[2], '--res', sys.argv[3], '--quiet']) == 0; "
            "print(sorted(m for m in ('numpy', 'PIL') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT) + "/scoring_program", ref, res],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_questions_of_one_image_resampled_together(tmp_path):
    """resample_by: image: the 40 questions of 14 images (3 per image, from questions.json's
    image ids) resampled by image; each resample's accuracy is the mean over the questions it
    holds (their number varies)."""
    ref, res, per_question = make_set(tmp_path, 40, config="resample_by: image\n")
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", res, "--out", out)
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((out / "scores.json").read_text())
    image = {90000 + 37 * k: str(k // 3) for k in range(40)}  # clusters in the order of their key as text
    units = bootstrap_oracle.clusters(per_question.items(), image.__getitem__)
    values, spreads = [], []

    def terms(accs):  # an image: its questions' accuracies in percent over its question count
        return [(100 * sum(accs), len(accs))]
    for sample in bootstrap_oracle.resamples(
            units, lambda accs: (len(accs), sum(int(a * 30) for a in accs))):
        accs = [a for group in sample for a in group]
        values.append(float(100 * sum(accs) / len(accs)))
        spreads.append(bootstrap_oracle.ratio_spread(sample, terms))
    accuracies = list(per_question.values())
    low, high = bootstrap_oracle.studentized_interval(
        values, spreads, float(100 * sum(accuracies) / len(accuracies)),
        bootstrap_oracle.ratio_spread([accs for _, accs in units], terms), (0.0, 100.0))
    assert scores["accuracy_ci_low"] == pytest.approx(low, abs=1e-9)
    assert scores["accuracy_ci_high"] == pytest.approx(high, abs=1e-9)
    assert "1,000 resamples of the 14 images of 40 questions" in proc.stdout


def test_a_bad_grouping_is_the_organizers_mistake(tmp_path):
    ref, res, _ = make_set(tmp_path, 9, config="resample_by: prefix 1\n")
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 3
    assert "resample_by must be one of question, image, not" in proc.stderr
