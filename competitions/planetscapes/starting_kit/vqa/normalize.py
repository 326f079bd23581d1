#!/usr/bin/env python3
"""Show how the scoring program will compare an answer (the official VQA normalization).

    python3 normalize.py "Two dogs."
    python3 normalize.py "Two dogs." --humans "2 dogs" "two dogs" "2" "dogs" "2 dogs" \\
        "two" "2 dogs" "3 dogs" "2 dogs" "two dogs"

Prints the answer as it is compared in both cases the official evaluation distinguishes:
- all ten human answers identical: only newlines/tabs -> spaces and surrounding spaces trimmed
  (so "Yes" does not match ten "yes");
- humans disagreeing: punctuation, case, number words, articles and contractions normalized.
With --humans (ten answers) it also prints the accuracy your answer would get for that question.
Uses the scoring program's own code. Needs Python 3.7+ only.
"""
import argparse
import sys
from fractions import Fraction

from find_scoring import add_scoring_to_path

add_scoring_to_path()

from scoring import deps  # noqa: E402  (standard library only)

try:
    from scoring.commands import frame  # noqa: E402
    from scoring.tasks.planetscapes_vqa.metric import NUMERATOR, STEPS  # noqa: E402
    from scoring.tasks.planetscapes_vqa.normalize import clean, normalize  # noqa: E402
    from scoring.tasks.planetscapes_vqa.reference import HUMANS  # noqa: E402
except ModuleNotFoundError as exc:   # a package the scorer needs: one line, the install command
    deps.exit_if_missing(exc)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="normalize.py", description="Show how an answer is "
                                "compared by the VQA scorer (official VQA normalization).")
    p.add_argument("answer", nargs="+", help="one or more answers to show")
    p.add_argument("--humans", nargs=HUMANS, metavar="HUMAN",
                   help="ten human answers: also print the accuracy of the (first) answer")
    return p


COMMAND = frame.Command("normalize.py", build_parser, lambda args, io: show(args, io.stdout),
                        batch=False)


def main(argv=None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)


def show(args, stdout) -> int:
    for answer in args.answer:
        stdout.write("{}\n  if the ten humans agree exactly: compared as {}\n"
                     "  if the humans disagree:         compared as {}\n".format(
                         repr(answer), repr(clean(answer)), repr(normalize(clean(answer)))))
    if args.humans:
        cleaned = [clean(h) for h in args.humans]
        unanimous = len(set(cleaned)) == 1
        forms = cleaned if unanimous else [normalize(h) for h in cleaned]
        mine = clean(args.answer[0]) if unanimous else normalize(clean(args.answer[0]))
        k = forms.count(mine)
        acc = Fraction(NUMERATOR[k], STEPS)
        stdout.write("\nHumans {}: {}\n{} of them give {}: accuracy {} = {:.4g}\n".format(
            "agree (nothing normalized)" if unanimous else "disagree (all normalized)",
            ", ".join(repr(f) for f in forms), k, repr(mine), acc, float(acc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
