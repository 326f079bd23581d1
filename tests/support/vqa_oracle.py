"""Deliberately naive VQA accuracy, written from ../shared/spec/planetscapes.md, rule by rule.

No caching, no shortcut: every answer of every question is normalized with the regexes, and the
leave-one-out compares whole answer records (dicts) as the rules say. The tables are the only
thing shared with the scorer (they are data, reproduced from the official evaluation).
"""
import re
from fractions import Fraction
from typing import Dict, List

from scoring.tasks.planetscapes_vqa.tables import ARTICLES, CONTRACTIONS, NUMBER_WORDS, PUNCTUATION

DIGIT_COMMA_DIGIT = re.compile(r"[0-9],[0-9]")        # digits are ASCII digits only
PERIOD = re.compile(r"(?!<=[0-9])(\.)(?![0-9])")      # the official pattern, ASCII digits


def rule1_clean(text: str) -> str:
    text = text.replace("\n", " ")
    text = text.replace("\t", " ")
    return text.strip()


def rule3_punctuation(original: str) -> str:
    out = original
    for mark in PUNCTUATION:
        if (mark + " " in original) or (" " + mark in original) or \
                DIGIT_COMMA_DIGIT.search(original) is not None:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return PERIOD.sub("", out, count=32)


def rule4_digits_articles(text: str) -> str:
    words = []
    for word in text.lower().split():
        if word in NUMBER_WORDS:
            word = NUMBER_WORDS[word]
        if word in ARTICLES:
            continue
        words.append(word)
    for i in range(len(words)):
        if words[i] in CONTRACTIONS:
            words[i] = CONTRACTIONS[words[i]]
    return " ".join(words)


def question_accuracy(result_answer: str, records: List[dict]) -> Fraction:
    """Accuracy of one result answer against the question's answer records (copied, then
    modified in place as the rules say)."""
    records = [dict(r) for r in records]
    for r in records:
        r["answer"] = rule1_clean(r["answer"])
    res = rule1_clean(result_answer)
    if len(set(r["answer"] for r in records)) > 1:
        for r in records:
            r["answer"] = rule4_digits_articles(rule3_punctuation(r["answer"]))
        res = rule4_digits_articles(rule3_punctuation(res))
    accs = []
    for r in records:
        others = [o for o in records if o != r]
        matches = [o for o in others if o["answer"] == res]
        accs.append(min(Fraction(1), Fraction(len(matches), 3)))
    return sum(accs) / len(accs)


def evaluate(results: Dict[int, str], annotations: List[dict]) -> dict:
    """Exact scores in percent (Fractions): overall, per answer type, per question type."""
    per_q: Dict[int, Fraction] = {}
    by_atype: Dict[str, List[Fraction]] = {}
    by_qtype: Dict[str, List[Fraction]] = {}
    for ann in annotations:
        acc = question_accuracy(results[ann["question_id"]], ann["answers"])
        per_q[ann["question_id"]] = acc
        by_atype.setdefault(ann["answer_type"], []).append(acc)
        by_qtype.setdefault(ann["question_type"], []).append(acc)

    def pct(values: List[Fraction]) -> Fraction:
        return 100 * sum(values) / len(values)

    return {
        "overall": pct(list(per_q.values())),
        "per_answer_type": {k: pct(v) for k, v in by_atype.items()},
        "per_question_type": {k: pct(v) for k, v in by_qtype.items()},
        "per_question": per_q,
    }
