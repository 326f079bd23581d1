"""Baseline for bench/vqa.py: the official VQA evaluation's algorithm, in this Python.

Written from ../shared/spec/planetscapes.md (not copied). The official pipeline
(vqaEvalDemo.py: VQA(annotations, questions), loadRes(results, questions), VQAEval.evaluate())
loads and indexes the files as load() does here, then evaluates the questions one by one: every
answer of every question is cleaned, and when the humans disagree every answer (and the
result's) goes through the punctuation and digit/article steps with the regexes, without any
cache; the leave-one-out builds the list of other records for each of the ten; per-question
accuracies are rounded and kept per question, per question type and per answer type, and the
means are taken at the end. Only the tables come from the scorer (they are data).
"""
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scoring_program"))

from scoring.tasks.planetscapes_vqa.tables import (ARTICLES, CONTRACTIONS, NUMBER_WORDS,  # noqa: E402
                                                   PUNCTUATION)

PERIOD = re.compile(r"(?!<=\d)(\.)(?!\d)", re.ASCII)
COMMA = re.compile(r"(\d)(\,)(\d)", re.ASCII)


def punctuation(text):
    out = text
    for p in PUNCTUATION:
        if (p + " " in text or " " + p in text) or COMMA.search(text) is not None:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return PERIOD.sub("", out, 32)


def digits_articles(text):
    out = []
    for word in text.lower().split():
        word = NUMBER_WORDS.get(word, word)
        if word not in ARTICLES:
            out.append(word)
    for i, word in enumerate(out):
        if word in CONTRACTIONS:
            out[i] = CONTRACTIONS[word]
    return " ".join(out)


def _index(annotations, questions):
    """The official helper's createIndex: by image, by question id, questions by id."""
    img_to_qa = {a["image_id"]: [] for a in annotations}
    qa = {a["question_id"]: [] for a in annotations}
    qqa = {a["question_id"]: [] for a in annotations}
    for a in annotations:
        img_to_qa[a["image_id"]] += [a]
        qa[a["question_id"]] = a
    for q in questions:
        qqa[q["question_id"]] = q
    return img_to_qa, qa, qqa


def load(annotations_path, questions_path, results_path):
    """As the official pipeline runs: VQA(annotations, questions) loads and indexes both files;
    loadRes(results, questions) loads the questions again and the results, checks the id sets,
    copies three fields of the annotation into each result and indexes the results."""
    with open(annotations_path) as f:
        dataset = json.load(f)
    with open(questions_path) as f:
        questions = json.load(f)
    _, gts, _ = _index(dataset["annotations"], questions["questions"])
    with open(questions_path) as f:
        res_questions = json.load(f)
    with open(results_path) as f:
        anns = json.load(f)
    assert isinstance(anns, list), "results is not an array of objects"
    assert set(a["question_id"] for a in anns) == set(gts), "results do not correspond"
    for a in anns:
        qa = gts[a["question_id"]]
        a["image_id"] = qa["image_id"]
        a["question_type"] = qa["question_type"]
        a["answer_type"] = qa["answer_type"]
    _, res, _ = _index(anns, res_questions["questions"])
    return gts, res


def evaluate(gts, res):
    acc_qa, acc_qtype, acc_atype = [], {}, {}
    eval_qa, eval_qtype, eval_atype = {}, {}, {}
    for qid in list(gts):
        answers = gts[qid]["answers"]
        for a in answers:
            a["answer"] = a["answer"].replace("\n", " ").replace("\t", " ").strip()
        res_ans = res[qid]["answer"].replace("\n", " ").replace("\t", " ").strip()
        if len(set(a["answer"] for a in answers)) > 1:
            for a in answers:
                a["answer"] = digits_articles(punctuation(a["answer"]))
            res_ans = digits_articles(punctuation(res_ans))
        gt_acc = []
        for left_out in answers:
            others = [item for item in answers if item != left_out]
            matching = [item for item in others if item["answer"] == res_ans]
            gt_acc.append(min(1, float(len(matching)) / 3))
        qtype, atype = gts[qid]["question_type"], gts[qid]["answer_type"]
        avg = float(sum(gt_acc)) / len(gt_acc)
        acc_qa.append(avg)
        acc_qtype.setdefault(qtype, []).append(avg)
        acc_atype.setdefault(atype, []).append(avg)
        eval_qa[qid] = round(100 * avg, 2)
        eval_qtype.setdefault(qtype, {})[qid] = round(100 * avg, 2)
        eval_atype.setdefault(atype, {})[qid] = round(100 * avg, 2)
    return {
        "overall": 100 * float(sum(acc_qa)) / len(acc_qa),
        "perQuestionType": {k: 100 * float(sum(v)) / len(v) for k, v in acc_qtype.items()},
        "perAnswerType": {k: 100 * float(sum(v)) / len(v) for k, v in acc_atype.items()},
    }


def main(argv):
    """python3 bench/vqa_baseline.py ANNOTATIONS QUESTIONS RESULTS: prints the scores and the
    split of the CPU time (loading and indexing / evaluating) as JSON."""
    start = time.process_time()
    gts, res = load(argv[0], argv[1], argv[2])
    loaded = time.process_time()
    out = evaluate(gts, res)
    sys.stdout.write(json.dumps({"overall": out["overall"], "perAnswerType": out["perAnswerType"],
                                 "cpu_load": loaded - start,
                                 "cpu_evaluate": time.process_time() - loaded}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
