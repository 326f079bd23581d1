"""The Planetscapes VQA task: what the shared engine needs to score one results file.

A submission is one unit (its results file). The reference is read and checked completely when
it is opened, so a broken reference is reported whole (exit 3) before the submission is looked
at; scoring is then one pass over the questions in the process that opened it. The reference is
raw (questions.json + annotations.json) or packed by pack.py (packed.py: packed.json marks it),
detected from the folder; both give the same Truth, so the same scores.
"""
import os
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple, cast

from ... import resample_units
from ...task_api import Reference, Resampling, RunFacts, Submission, SubmissionFormat, Summary, \
    Task
from . import packed, report
from .metric import STEPS, AccuracyState, percent, summary_scores
from .files import UNIT, WORDS, find_results
from .normalize import Normalizer
from .reference import Truth, find_root, read_annotations, read_questions
from .results import read_results

MANIFEST_VERSION = 1


class VQAReference(Reference):
    ids = (UNIT,)

    def __init__(self, root: Optional[str], question_ids: FrozenSet[int],
                 truth: Optional[Truth], layout: str = "raw") -> None:
        self.root = root
        self.question_ids = question_ids
        self._truth = truth
        self.layout = layout  # "raw", "packed", or "manifest" for the label-free check

    # Pickled to a worker process (never with one unit, in practice): ship paths, not data.
    main_process_only = ("_truth",)

    def read(self, unit_id: str) -> Optional[Truth]:
        if self._truth is None and self.root is not None:
            questions = read_questions(self.root)
            if self.layout == "packed":
                self._truth = packed.read_packed(self.root, questions)
            else:
                self._truth = read_annotations(self.root, questions, Normalizer())
        return self._truth

    def expect(self, unit_id: str, truth: Any) -> FrozenSet[int]:
        return self.question_ids


class ResultsFormat(SubmissionFormat):
    words = WORDS

    def discover(self, res_dir: str, expected_ids: Optional[Sequence[str]]) -> Submission:
        files, log = find_results(res_dir)
        return Submission(res_dir, files, log)

    def read(self, path: str, expectation: FrozenSet[int]) -> Dict[int, str]:
        return read_results(path, os.path.basename(path), expectation)


class Settings(NamedTuple):
    """The task's settings (configure): the official evaluation has no options; the interval's
    resampling unit (resample_units.py)."""

    resample_by: Any = "question"


class Details(NamedTuple):
    """Summary.details: the state, and for resampling by image each question's image id."""

    state: AccuracyState
    image_of: Optional[Dict[int, Any]] = None


class PlanetscapesVQA(Task[AccuracyState, VQAReference, Settings]):
    name = "planetscapes-vqa"
    title = "Planetscapes VQA"
    score_keys = ["accuracy", "accuracy_yes_no", "accuracy_number", "accuracy_other"]
    packed_layout = "docs/vqa-packed-format.md"

    def configure(self, args, ref_config: Dict[str, Any]) -> Settings:
        """config.yaml's resample_by: question (default) or image (the questions of one image
        resampled together, from questions.json's image ids)."""
        return Settings(resample_units.read_rule(ref_config, "question", ("question", "image"),
                                                 prefix=False))

    def open_reference(self, ref_dir: str, config: Settings) -> VQAReference:
        """Raw or packed layout, detected from the folder's contents (packed.json)."""
        root = find_root(ref_dir)
        questions = read_questions(root)
        if packed.is_packed(root):
            return VQAReference(root, frozenset(questions), packed.read_packed(root, questions),
                                "packed")
        truth = read_annotations(root, questions, Normalizer())
        return VQAReference(root, frozenset(questions), truth)

    def pack(self, reference: VQAReference, out_dir: str, workers: int,
             progress=None) -> Tuple[int, int]:
        """Checked as the scorer checks it; one process (workers is not used). Returns
        (questions, payload bytes)."""
        # open_reference's root is a folder (None is the label-free check's stand-in).
        return packed.pack(cast(str, reference.root), out_dir, progress)

    def pack_units(self, reference: VQAReference) -> Tuple[int, str]:
        """What pack.py counts: the questions (the engine's unit is the results file)."""
        return len(reference.question_ids), "questions"

    def submission_format(self, config: Settings) -> ResultsFormat:
        return ResultsFormat()

    def new_state(self, config: Settings) -> AccuracyState:
        return AccuracyState()

    def summarize(self, state: AccuracyState, reference: VQAReference,
                  config: Settings) -> Summary:
        image_of = None
        if config.resample_by == "image" and reference.root is not None:
            image_of = read_questions(reference.root)  # public: questions.json
        return Summary(summary_scores(state), Details(state, image_of))

    interval_keys = ["accuracy"]

    def resampling(self, state: AccuracyState, summary: Summary,
                   config: Settings) -> Optional[Resampling]:
        """Questions, each with its accuracy numerator n (accuracy = n / 30); the state's counts
        by n are the distinct rows already."""
        questions = state.questions()
        if sum(len(ns) for _, ns in state.question_rows) != questions:
            return None
        image_of = summary.details.image_of
        if image_of is not None:
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

    def run_facts(self, state: AccuracyState) -> List[Tuple[str, Any]]:
        return [("Questions scored", state.questions())]

    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        state = summary.details.state
        by_type = state.totals(0)
        rows = [["overall", "{:,}".format(state.questions()), "{:.2f}".format(
            percent(state.overall()))]]
        for label, atype in (("yes/no", "yes/no"), ("number", "number"), ("other", "other")):
            if atype in by_type:
                rows.append([label, "{:,}".format(by_type[atype][0]),
                             "{:.2f}".format(percent(by_type[atype]))])
        return ["answer type", "questions", "accuracy (%)"], rows

    def render_html(self, summary: Summary, warnings: List[str], run: RunFacts,
                    config: Settings) -> str:
        return report.render(self.title + " - detailed results", summary.details.state, warnings, run,
                             summary.confidence)

    def make_manifest(self, reference: VQAReference) -> Dict[str, Any]:
        """The test question ids (public: questions.json holds them too)."""
        return {"version": MANIFEST_VERSION, "task": self.name,
                "question_ids": sorted(reference.question_ids)}

    def open_manifest(self, manifest: Dict[str, Any]) -> Tuple[VQAReference, ResultsFormat]:
        ids = frozenset(int(i) for i in manifest["question_ids"])
        return VQAReference(None, ids, None, "manifest"), ResultsFormat()


def ratio_gradient(sums: Sequence[int]) -> List[Optional[List[float]]]:
    """The gradient of percent((questions, n)) with respect to (questions, n) (None without
    questions): the accuracy of a resample of images, 100 n / (30 q)."""
    q, n = sums
    if not q:
        return [None]
    return [[-100.0 * n / (STEPS * q * q), 100.0 / (STEPS * q)]]
