"""VQA accuracy: the leave-one-out rule, normalization only when humans disagree, exact sums,
additivity; the scorer's reference reader + state against the naive oracle."""
import json
import os
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vqa_oracle as oracle
from vqa_util import write_vqa_reference
from scoring.problems import BrokenReference
from scoring.tasks.planetscapes_vqa.metric import NUMERATOR, AccuracyState, summary_scores
from scoring.tasks.planetscapes_vqa.normalize import Normalizer
from scoring.tasks.planetscapes_vqa.reference import read_annotations, read_questions

from conftest import VQA_KIT, VQA_REF  # noqa: E402

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def records(answers, ids=None, confidence="yes"):
    ids = ids or list(range(1, len(answers) + 1))
    return [{"answer": a, "answer_confidence": confidence, "answer_id": i}
            for a, i in zip(answers, ids)]


def annotation(qid, recs, atype="other", qtype="what is"):
    return {"question_id": qid, "image_id": qid // 10, "question_type": qtype,
            "answer_type": atype, "multiple_choice_answer": "x", "answers": recs}


def score(tmp_path, annotations, results):
    """(scorer's state, scorer's scores, oracle's evaluation)."""
    write_vqa_reference(str(tmp_path), annotations)
    truth = read_annotations(str(tmp_path), read_questions(str(tmp_path)), Normalizer())
    state = AccuracyState()
    state.update("results.json", results, truth)
    return state, dict(summary_scores(state)), oracle.evaluate(results, annotations)


def one(tmp_path, human_answers, result, ids=None):
    """Accuracy of one answer to one question, scorer and oracle (which must agree)."""
    ann = annotation(1, records(human_answers, ids))
    state, scores, ora = score(tmp_path, [ann], {1: result})
    assert scores["accuracy"] == float(ora["overall"])
    return Fraction(ora["per_question"][1]), scores["accuracy"]


@pytest.mark.parametrize("k, expected", [(0, 0), (1, Fraction(3, 10)), (2, Fraction(6, 10)),
                                         (3, Fraction(9, 10)), (4, 1), (9, 1)])
def test_k_agreeing_humans_give_the_published_levels(tmp_path, k, expected):
    humans = ["red"] * k + ["blue%d" % i for i in range(10 - k)]
    acc, pct = one(tmp_path, humans, "red")
    assert acc == expected and pct == float(100 * expected)


def test_numerator_table():
    assert NUMERATOR == (0, 9, 18, 27, 30, 30, 30, 30, 30, 30, 30)


def test_unanimous_humans_no_normalization(tmp_path):
    # Ten identical "yes": nothing is normalized, so "Yes" and "yes." do not match.
    assert one(tmp_path, ["yes"] * 10, "yes")[0] == 1
    assert one(tmp_path, ["yes"] * 10, "Yes")[0] == 0
    assert one(tmp_path, ["yes"] * 10, "yes.")[0] == 0
    # ...but the cleaning (newlines, tabs, strip) applies always.
    assert one(tmp_path, ["yes"] * 10, " yes\n")[0] == 1
    assert one(tmp_path, ["yes\t"] * 9 + [" yes"], "yes")[0] == 1


def test_disagreeing_humans_normalize_both_sides(tmp_path):
    humans = ["Two"] * 3 + ["2."] * 3 + ["three"] * 4
    assert one(tmp_path, humans, "two")[0] == 1       # 6 humans say 2 after normalization
    assert one(tmp_path, humans, "3")[0] == 1
    assert one(tmp_path, humans, "Four")[0] == 0
    # One disagreeing human turns normalization on for the whole question.
    assert one(tmp_path, ["yes"] * 9 + ["no"], "Yes")[0] == 1


def test_leave_one_out_over_whole_records_with_duplicated_records(tmp_path):
    # Records 1 and 2 are the same dict (same answer, confidence and id): leaving either out
    # removes both, so each sees only 2 other "red"s (2/3); records 3 and 4 see 3 (1); the six
    # others see 4 (1).
    humans = ["red", "red", "red", "red"] + ["blue%d" % i for i in range(6)]
    ids = [1, 1, 3, 4, 5, 6, 7, 8, 9, 10]
    acc, _ = one(tmp_path, humans, "red", ids)
    assert acc == Fraction(2 * 2 + 2 * 3 + 6 * 3, 30)
    # Same answer id but different answers: records differ, the usual levels hold.
    humans = ["red", "blue", "red", "green"] + ["x%d" % i for i in range(6)]
    acc, _ = one(tmp_path, humans, "red", [1, 1, 2, 2, 3, 4, 5, 6, 7, 8])
    assert acc == Fraction(6, 10)


def test_records_equal_only_after_normalization_count_as_duplicates(tmp_path):
    # "Red" and "red" with the same id and confidence become equal records once normalized.
    humans = ["Red", "red", "red", "x", "y", "z", "u", "v", "w", "t"]
    acc, _ = one(tmp_path, humans, "red", [1, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert acc == Fraction(1 + 1 + 2 + 7 * 3, 30)


def test_types_and_missing_type_has_no_key(tmp_path):
    anns = [annotation(10, records(["yes"] * 10), "yes/no", "is the"),
            annotation(20, records(["2"] * 4 + ["3"] * 6), "number", "how many"),
            annotation(30, records(["2"] * 4 + ["3"] * 6), "number", "how many")]
    state, scores, ora = score(tmp_path, anns, {10: "yes", 20: "2", 30: "5"})
    assert set(scores) == {"accuracy", "accuracy_yes_no", "accuracy_number"}
    assert scores["accuracy_yes_no"] == 100.0
    assert scores["accuracy_number"] == 50.0
    assert scores["accuracy"] == pytest.approx(200 / 3) and scores["accuracy"] == float(ora["overall"])
    assert state.totals(1) == {"is the": (1, 30), "how many": (2, 30)}
    assert state.distribution() == {30: 2, 0: 1}


def test_changed_answers_are_counted(tmp_path):
    anns = [annotation(10, records(["yes"] * 10)), annotation(20, records(["x"] * 5 + ["y"] * 5))]
    state, _, _ = score(tmp_path, anns, {10: " yes", 20: "The X."})
    assert state.changed == 2 and state.disagreeing == 1
    state, _, _ = score(tmp_path, anns, {10: "yes", 20: "x"})
    assert state.changed == 0
    state, _, _ = score(tmp_path, anns, {10: "Yes", 20: "a"})   # "a" is an article: it goes
    assert state.changed == 1


def test_merge_is_additive(tmp_path):
    anns = [annotation(q, records([random.Random(q).choice(["a", "b", "A"]) for _ in range(10)]),
                       ["yes/no", "number", "other"][q % 3], "t%d" % (q % 4)) for q in range(60)]
    res = {q: random.Random(q + 1).choice(["a", "b", "c"]) for q in range(60)}
    whole, _, _ = score(tmp_path, anns, res)
    write_vqa_reference(str(tmp_path), anns[:25])
    s1 = AccuracyState()
    s1.update("a", res, read_annotations(str(tmp_path), read_questions(str(tmp_path)),
                                         Normalizer()))
    write_vqa_reference(str(tmp_path), anns[25:])
    s2 = AccuracyState()
    s2.update("b", res, read_annotations(str(tmp_path), read_questions(str(tmp_path)),
                                         Normalizer()))
    merged = AccuracyState().merge(s2).merge(s1)
    assert merged.counts == whole.counts and merged.changed == whole.changed
    assert summary_scores(merged) == summary_scores(whole)


def test_sample_reference_and_submission_equal_the_oracle():
    ref = VQA_REF
    with open(os.path.join(VQA_KIT, "sample_submission", "results.json")) as f:
        results = {e["question_id"]: e["answer"] for e in json.load(f)}
    with open(os.path.join(ref, "annotations.json")) as f:
        anns = json.load(f)["annotations"]
    state = AccuracyState()
    state.update("results.json", results,
                 read_annotations(ref, read_questions(ref), Normalizer()))
    scores = dict(summary_scores(state))
    ora = oracle.evaluate(results, anns)
    assert scores["accuracy"] == float(ora["overall"])
    for key, atype in (("accuracy_yes_no", "yes/no"), ("accuracy_number", "number"),
                       ("accuracy_other", "other")):
        assert scores[key] == float(ora["per_answer_type"][atype])
    for qtype, (n, total) in state.totals(1).items():
        assert Fraction(100 * total, 30 * n) == ora["per_question_type"][qtype]


POOL = ["yes", "Yes", "no", "2", "two", "Two.", "a crater", "the crater", "crater", "1,000",
        "1000", " yes ", "yes\n", "dont", "don't", "Im", "3.5", "5.", "red-brown", "red brown",
        "(red)", "none", "0", "\u0663", ""]


@st.composite
def questions(draw):
    n = draw(st.integers(1, 12))
    anns, res = [], {}
    for q in range(n):
        base = draw(st.sampled_from(POOL))
        humans = [base if draw(st.booleans()) else draw(st.sampled_from(POOL)) for _ in range(10)]
        ids = list(range(1, 11))
        if draw(st.integers(0, 4)) == 0:
            ids[draw(st.integers(0, 9))] = draw(st.integers(1, 10))   # duplicated answer ids
        anns.append(annotation(q + 1, records(humans, ids, draw(st.sampled_from(["yes", "no"]))),
                               draw(st.sampled_from(["yes/no", "number", "other"])),
                               draw(st.sampled_from(["a", "b"]))))
        res[q + 1] = draw(st.sampled_from(POOL + humans))
    return anns, res


@settings(max_examples=150, deadline=None)
@given(questions())
def test_scorer_equals_oracle_on_generated_questions(tmp_path_factory, case):
    anns, res = case
    folder = tmp_path_factory.mktemp("ref")
    state, scores, ora = score(folder, anns, res)
    assert scores["accuracy"] == float(ora["overall"])
    for key, atype in (("accuracy_yes_no", "yes/no"), ("accuracy_number", "number"),
                       ("accuracy_other", "other")):
        assert scores.get(key) == (float(ora["per_answer_type"][atype])
                                   if atype in ora["per_answer_type"] else None)
    dist = {}
    for acc in ora["per_question"].values():
        dist[int(acc * 30)] = dist.get(int(acc * 30), 0) + 1
    assert state.distribution() == dist


def test_broken_reference_is_refused(tmp_path):
    write_vqa_reference(str(tmp_path), [annotation(1, records(["a"] * 9))])
    with pytest.raises(BrokenReference) as exc:
        read_annotations(str(tmp_path), read_questions(str(tmp_path)), Normalizer())
    assert "ten human answers" in exc.value.message()


def both_readers(folder):
    from scoring.tasks.planetscapes_vqa import reference
    from scoring.problems import ProblemLog
    questions = reference.read_questions(folder)
    with open(os.path.join(folder, "annotations.json")) as f:
        entries = json.load(f)["annotations"]
    fast = reference._read_fast(entries, questions, Normalizer())
    checking = reference._read_checking(entries, questions, Normalizer(), ProblemLog())
    return fast, checking


def test_fast_and_checking_readers_agree_on_the_sample():
    fast, checking = both_readers(VQA_REF)
    assert fast is not None
    assert fast[:-1] == checking[:-1]  # everything but the caches


@settings(max_examples=60, deadline=None)
@given(questions())
def test_fast_and_checking_readers_agree(tmp_path_factory, case):
    folder = str(tmp_path_factory.mktemp("ref"))
    write_vqa_reference(folder, case[0])
    fast, checking = both_readers(folder)
    assert fast is not None and fast[:-1] == checking[:-1]
