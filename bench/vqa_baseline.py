"""Baseline for bench/vqa.py: the official VQA evaluation's algorithm, in this Python.

Written from ../shared/spec/planetscapes.md (not copied): questions are indexed by id as the
official VQA helper does, then evaluated one by one; every answer of every question is cleaned,
and when the humans disagree every answer (and the result's) goes through the punctuation and
digit/article steps with the regexes, without any cache; the leave-one-out builds the list of
other records for each of the ten; per-question accuracies are rounded and kept per question,
per question type and per answer type, and the means are taken at the end. Only the tables come
from the scorer (they are data).
"""
import json
import os
import re
import sys

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


def load(annotations_path, results_path):
    """The two files, indexed by question id (as the official helper's createIndex/loadRes)."""
    with open(annotations_path) as f:
        gts = {a["question_id"]: a for a in json.load(f)["annotations"]}
    with open(results_path) as f:
        res = {r["question_id"]: r for r in json.load(f)}
    assert set(res) == set(gts), "results do not correspond to the annotations"
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
    """python3 bench/vqa_baseline.py ANNOTATIONS RESULTS: prints the scores as JSON."""
    gts, res = load(argv[0], argv[1])
    out = evaluate(gts, res)
    sys.stdout.write(json.dumps({"overall": out["overall"], "perAnswerType": out["perAnswerType"]})
                     + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
