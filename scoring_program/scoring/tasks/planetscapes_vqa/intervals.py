"""The VQA task's confidence interval of the accuracy (docs/confidence.md): the questions
resampled, each with its accuracy numerator n (accuracy = n / 30), by question (default) or by
image (the questions of one image together, from questions.json's image ids)."""
from typing import Any, List, Optional, Sequence, cast

from ...task_api import Intervals, Reference, Resampling, Summary
from .metric import STEPS, AccuracyState, percent
from .reference import read_questions


def ratio_gradient(sums: Sequence[int]) -> List[Optional[List[float]]]:
    """The gradient of percent((questions, n)) with respect to (questions, n) (None without
    questions): the accuracy of a resample of images, 100 n / (30 q)."""
    q, n = sums
    if not q:
        return [None]
    return [[-100.0 * n / (STEPS * q * q), 100.0 / (STEPS * q)]]


class VQAIntervals(Intervals[AccuracyState, Reference, Any]):
    """The task's Intervals role."""

    keys = ["accuracy"]
    resample_by = ("question", "image")
    by_prefix = False   # question ids are numbers, not names
    split_by = "image"  # questions about one image never on both sides of a split

    def clusters(self, reference: Reference, by: str):
        """The questions (questions.json: public) and, by image, each one's image."""
        image_of = read_questions(cast(str, reference.root))
        if by != "image":
            return sorted(image_of), None
        return sorted(image_of), lambda q: str(image_of[q])

    def resampling(self, state: AccuracyState, summary: Summary, reference: Reference,
                   settings: Any, by: str) -> Optional[Resampling]:
        """Questions, each with its n; the state's counts by n are the distinct rows already."""
        questions = state.questions()
        if sum(len(ns) for _, (_, ns) in state.in_unit_order("question_rows")) != questions:
            return None
        if by == "image" and reference.root is not None:
            image_of = read_questions(reference.root)  # public: questions.json

            def rows():  # (1, n): a resample of images knows how many questions it holds
                ids, ns = state.question_table()
                return ids, [(1, r[0]) for r in ns]
            return Resampling("questions", questions, rows,
                              lambda sums: [percent((sums[0], sums[1])) if sums[0] else None],
                              group=lambda q: str(image_of[q]), group_noun="images",
                              bounds=(0.0, 100.0), gradient=ratio_gradient)
        return Resampling("questions", questions, state.question_table,
                          lambda sums: [percent((questions, sums[0]))],
                          {(n,): c for n, c in state.distribution().items()},
                          bounds=(0.0, 100.0),
                          gradient=lambda sums: [[100.0 / (STEPS * questions)]])
