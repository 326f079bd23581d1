"""VQA accuracy as an additive state of integer counts.

Official rule: a question's accuracy is the mean, over its ten answer records, of
min(1, matches among the OTHER records / 3), where the other records are those not equal to the
one left out. Each term is a multiple of 1/3, so a question's accuracy is n/30 with n an integer
in 0..30. With ten distinct records and m records matching the result answer:
n = m * min(3, m - 1) + (10 - m) * min(3, m), i.e. 0, 9, 18, 27, 30 for m = 0, 1, 2, 3, >= 4
(accuracy 0, 0.3, 0.6, 0.9, 1). The state counts questions per (answer type, question type, n):
every reported number is a sum of these counts, exact, whatever the order of the updates.

For the confidence interval (docs/confidence.md) the state also keeps each question's n with its
id (the lists update() builds anyway), per unit (the results file): the bootstrap resamples
questions.
"""
import operator
from collections import Counter
from typing import Dict, List, Mapping, Sequence, Tuple, cast

from ...task_api import CAT, SUM, MetricState
from .reference import HUMANS, Truth

STEPS = 3 * HUMANS  # a question's accuracy is n / STEPS
# n for m matching records out of ten distinct ones.
NUMERATOR = tuple(m * min(3, max(m - 1, 0)) + (HUMANS - m) * min(3, m) for m in range(HUMANS + 1))
assert NUMERATOR[:5] == (0, 9, 18, 27, 30) and set(NUMERATOR[4:]) == {30}


def numerator_with_twins(form: str, forms: Tuple[str, ...], classes: Tuple[int, ...]) -> int:
    """n for a question whose answer records may repeat. Leaving one record out removes every
    record equal to it (same class, same form), so a matching record sees m minus its twins."""
    m = forms.count(form)
    n = 0
    for cls, f in zip(classes, forms):
        if f == form:
            equal = sum(1 for c2, f2 in zip(classes, forms) if c2 == cls and f2 == form)
            n += min(3, m - equal)
        else:
            n += min(3, m)
    return n


class AccuracyState(MetricState):
    """counts[(answer type, question type, n)] = questions; changed = result answers that the
    normalization changed (their compared form differs from the submitted string)."""

    fields = {"counts": SUM, "changed": SUM, "disagreeing": SUM, "units": SUM,
              "question_rows": CAT}

    def __init__(self) -> None:
        self.counts: Dict[Tuple[str, str, int], int] = {}
        self.changed = 0
        self.disagreeing = 0   # questions whose humans disagree (full normalization applied)
        self.units = 0
        # Per unit, (question ids, their n) in the reference's order, for the bootstrap.
        self.question_rows: Dict[str, Tuple[Sequence[int], List[int]]] = {}

    def update(self, unit_id: str, prediction: Mapping[int, str], truth: Truth) -> None:
        """prediction: question id -> answer, for every question of truth (already checked).

        Whole-list C-level passes, no Python work per question: the answers in the reference's
        order, their cleaned and normalized forms through the caches (a distinct string is
        processed once), the form that applies, the count of humans giving it, and one Counter
        over (answer type, question type, n)."""
        answers = list(map(prediction.__getitem__, truth.qids))
        cleaned = list(map(truth.norm.clean.__getitem__, answers))
        full = truth.norm.full.__getitem__
        forms = [full(a) if d else c for a, c, d in zip(answers, cleaned, truth.disagree)]
        ns = list(map(NUMERATOR.__getitem__, map(tuple.count, truth.forms, forms)))
        for i, classes in truth.twins.items():
            ns[i] = numerator_with_twins(forms[i], truth.forms[i], classes)
        for key, c in Counter(zip(truth.answer_types, truth.question_types, ns)).items():
            self.counts[key] = self.counts.get(key, 0) + c
        self.changed += sum(map(operator.ne, forms, answers))
        self.disagreeing += truth.disagreeing
        self.units += 1
        self.question_rows[unit_id] = (truth.qids, ns)

    def question_table(self) -> Tuple[List[int], List[Tuple[int]]]:
        """(question ids sorted, each question's (n,)): the bootstrap's unit rows."""
        pairs = sorted((q, n) for _, (qids, ns) in self.in_unit_order("question_rows")
                       for q, n in zip(qids, ns))
        return [q for q, _ in pairs], [(n,) for _, n in pairs]

    # --- aggregates (exact integers; floats only in percent()) ---

    def questions(self) -> int:
        return sum(self.counts.values())

    def totals(self, by: int) -> Dict[str, Tuple[int, int]]:
        """{answer type (by=0) or question type (by=1): (questions, sum of n)}."""
        out: Dict[str, List[int]] = {}
        for key, c in self.counts.items():
            t = out.setdefault(cast(str, key[by]), [0, 0])  # by is 0 or 1: a type
            t[0] += c
            t[1] += c * key[2]
        return {k: (v[0], v[1]) for k, v in out.items()}

    def overall(self) -> Tuple[int, int]:
        return (sum(self.counts.values()), sum(c * k[2] for k, c in self.counts.items()))

    def distribution(self) -> Dict[int, int]:
        """{n: questions}; n / 30 is the per-question accuracy."""
        out: Dict[int, int] = {}
        for key, c in self.counts.items():
            out[key[2]] = out.get(key[2], 0) + c
        return out


def percent(total: Tuple[int, int]) -> float:
    """Mean accuracy in percent of (questions, sum of n): one rounding, at the very end."""
    questions, n = total
    return 100 * n / (STEPS * questions)


def summary_scores(state: AccuracyState) -> List[Tuple[str, float]]:
    """Leaderboard keys in order; an answer type with no question has no key."""
    by_type = state.totals(0)
    scores = [("accuracy", percent(state.overall()))]
    for key, atype in (("accuracy_yes_no", "yes/no"), ("accuracy_number", "number"),
                       ("accuracy_other", "other")):
        if atype in by_type:
            scores.append((key, percent(by_type[atype])))
    return scores

