#!/usr/bin/env python3
"""Deterministic synthetic sample of a Planetscapes VQA reference and a submission for it.

Writes, under --out DIR (the reference, official VQA v2 formats):

    config.yaml          task: planetscapes-vqa
    questions.json       {"questions": [{image_id, question, question_id}], ...}   (public)
    annotations.json     {"annotations": [{question_id, image_id, question_type, answer_type,
                          multiple_choice_answer, answers: ten {answer, answer_confidence,
                          answer_id}}], ...}                                         (hidden)

and, with --submission FILE, a results file answering every question ([{question_id, answer}]).
(The starting kit's questions.json is the bundled reference's: bundle.sh copies it.)

Human answers vary as real ones do, so every normalization rule is exercised: case, trailing
periods, number words ("two"), articles ("a crater"), contractions ("dont know"), punctuation
("red-brown", "(rover)"), stray spaces and newlines, disagreeing humans, and unanimous questions
where only the exact string scores. Question k is drawn from its own random.Random seeded from
(seed, k): question k is the same whatever --questions is. Standard library only.

Usage:
    python3 competitions/planetscapes/make_vqa_sample.py --out competitions/planetscapes/reference_data/vqa \\
        --questions 300 --seed 2021 \\
        --submission competitions/planetscapes/starting_kit/vqa/sample_submission/results.json
"""
import argparse
import json
import os
import random
import sys
from typing import Dict, List, Tuple

CONFIG_YAML = "# Planetscapes visual question answering (official VQA accuracy)\ntask: planetscapes-vqa\n"

# (question type, answer type, question template, canonical answers)
QUESTION_KINDS: List[Tuple[str, str, str, List[str]]] = [
    ("is the", "yes/no", "Is the {thing} covered in dust?", ["yes", "no"]),
    ("is there a", "yes/no", "Is there a {thing} in this scene?", ["yes", "no"]),
    ("are there", "yes/no", "Are there any {thing}s near the horizon?", ["yes", "no"]),
    ("does the", "yes/no", "Does the {thing} cast a shadow?", ["yes", "no"]),
    ("how many", "number", "How many {thing}s are visible?", ["0", "1", "2", "3", "4", "5", "10"]),
    ("how many", "number", "How many {thing}s can you count?", ["2", "3", "6", "12"]),
    ("what color is the", "other", "What color is the {thing}?",
     ["red", "orange", "red brown", "white", "grey", "black", "blue"]),
    ("what is the", "other", "What is the {thing} made of?", ["rock", "ice", "sand", "metal"]),
    ("what is in the", "other", "What is in the {thing}?",
     ["crater", "rover", "dust devil", "boulder", "nothing"]),
    ("where is the", "other", "Where is the {thing}?",
     ["on left", "on right", "in sky", "on ground", "in crater"]),
    ("what time", "other", "What time of day is it near the {thing}?",
     ["noon", "sunset", "night", "1:30"]),
    ("why", "other", "Why is the {thing} dark?", ["shadow", "dont know", "night"]),
]
THINGS = ["crater", "rover", "ridge", "moon", "boulder", "dune", "canyon", "lander", "plume",
          "cliff", "ice cap", "volcano"]
# Free-form answers (real VQA answers are long-tailed: most distinct strings are rare): words
# built from syllables, deterministic.
SYLLABLES = ["ka", "ro", "mi", "te", "su", "lo", "ve", "ni", "da", "pu", "sha", "gri", "on",
             "el", "ar", "ix"]
VOCABULARY = sorted({a + b + c for a in SYLLABLES for b in SYLLABLES for c in ("", "n", "s")})
FREE_SHARE = 0.08  # of the human answers, and of a participant's wrong answers
NUMBER_WORDS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five",
                "6": "six", "10": "ten"}


def free_answer(rng: random.Random) -> str:
    """A rare, free-form answer: 1 to 4 words, sometimes with punctuation or a number."""
    words = [rng.choice(VOCABULARY) for _ in range(rng.randint(1, 4))]
    r = rng.random()
    if r < 0.2:
        words.insert(rng.randrange(len(words) + 1), str(rng.randint(0, 2000)))
    elif r < 0.3:
        words[-1] += rng.choice([".", "!", "?", ","])
    return " ".join(words)


def variant(answer: str, rng: random.Random) -> str:
    """A human's way of writing a canonical answer (same meaning after normalization, mostly)."""
    r = rng.random()
    if r < 0.45:
        return answer
    if r < 0.55:
        return answer.capitalize()
    if r < 0.62:
        return answer + "."
    if r < 0.70 and answer in NUMBER_WORDS:
        return NUMBER_WORDS[answer] if rng.random() < 0.7 else NUMBER_WORDS[answer].capitalize()
    if r < 0.76 and " " not in answer and not answer.isdigit():
        return rng.choice(["a ", "the ", "an "]) + answer
    if r < 0.80 and " " in answer:
        return answer.replace(" ", rng.choice(["-", ", ", "/"]), 1)
    if r < 0.84 and answer == "dont know":
        return rng.choice(["don't know", "Dont know", "dont know!"])
    if r < 0.88:
        return rng.choice([" ", ""]) + answer + rng.choice(["\n", " ", "\t"])
    if r < 0.92:
        return "(" + answer + ")"
    return answer


def make_question(seed: int, k: int) -> Tuple[dict, dict, str]:
    """(question, annotation, a participant's answer) of question k."""
    rng = random.Random("{}:{}".format(seed, k))
    qtype, atype, template, answers = QUESTION_KINDS[rng.randrange(len(QUESTION_KINDS))]
    thing = rng.choice(THINGS)
    image_id = 1000 + k // 3
    qid = image_id * 10 + k % 3
    canonical = rng.choice(answers)
    style = rng.random()
    humans: List[str] = []
    if style < 0.25:   # unanimous, written the same way ten times
        humans = [canonical] * 10
    else:              # mostly agreeing, written in several ways, some disagreeing
        agree = rng.randint(2, 10)
        for i in range(10):
            if i >= agree and rng.random() < FREE_SHARE * 2:
                humans.append(free_answer(rng))
            else:
                humans.append(variant(canonical, rng) if i < agree else
                              variant(rng.choice(answers), rng))
        rng.shuffle(humans)
    records = [{"answer": a, "answer_confidence": rng.choice(["yes", "yes", "maybe", "no"]),
                "answer_id": i + 1} for i, a in enumerate(humans)]
    question = {"image_id": image_id, "question": template.format(thing=thing), "question_id": qid}
    annotation = {"question_id": qid, "image_id": image_id, "question_type": qtype,
                  "answer_type": atype, "multiple_choice_answer": canonical, "answers": records}
    # A participant: right most of the time, in their own spelling; sometimes wrong or empty.
    r = rng.random()
    if r < 0.6:
        guess = variant(canonical, rng)
    elif r < 0.6 + 0.37 * (1 - FREE_SHARE):
        guess = variant(rng.choice(answers), rng)
    elif r < 0.97:
        guess = free_answer(rng)
    else:
        guess = ""
    return question, annotation, guess


def generate(n: int, seed: int) -> Tuple[dict, dict, List[Dict[str, object]]]:
    questions, annotations, results = [], [], []
    for k in range(n):
        q, a, guess = make_question(seed, k)
        questions.append(q)
        annotations.append(a)
        results.append({"question_id": q["question_id"], "answer": guess})
    info = {"description": "Planetscapes VQA synthetic sample", "seed": seed}
    return ({"info": info, "task_type": "Open-Ended", "data_type": "planetscapes",
             "data_subtype": "sample", "license": {}, "questions": questions},
            {"info": info, "data_type": "planetscapes", "data_subtype": "sample",
             "license": {}, "annotations": annotations},
            results)


def write_json(path: str, doc: object) -> None:
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="reference folder to write")
    p.add_argument("--questions", type=int, default=300)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--submission", help="results file to write (a participant's answers)")
    args = p.parse_args(argv)
    if args.questions < 1:
        p.error("--questions must be at least 1")
    questions, annotations, results = generate(args.questions, args.seed)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.yaml"), "w") as f:
        f.write(CONFIG_YAML)
    write_json(os.path.join(args.out, "questions.json"), questions)
    write_json(os.path.join(args.out, "annotations.json"), annotations)
    if args.submission:
        write_json(args.submission, results)
    sys.stdout.write("Wrote {:,} questions to {}{}\n".format(
        args.questions, args.out, " and a submission to " + args.submission
        if args.submission else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
