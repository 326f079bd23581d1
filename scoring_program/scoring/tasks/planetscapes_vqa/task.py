"""The Planetscapes VQA task: what the shared engine needs to score one results file.

A submission is one unit (its results file). The reference is read and checked completely when
it is opened, so a broken reference is reported whole (exit 3) before the submission is looked
at; scoring is then one pass over the questions in the process that opened it. The reference is
raw (questions.json + annotations.json) or packed by pack.py (packed.py: packed.json marks it),
detected from the folder; both give the same Truth, so the same scores.
"""
import copy
import os
from typing import (AbstractSet, Any, Dict, FrozenSet, List, Mapping, NamedTuple, Optional,
                    Sequence, Tuple, cast)

from ...task_api import Manifest, Options, Reference, Submission, SubmissionFormat, Summary, Task
from . import packed
from .files import UNIT, WORDS, find_results
from .intervals import VQAIntervals
from .metric import AccuracyState, summary_scores
from .normalize import Normalizer
from .reference import Truth, find_root, only, read_annotations, read_questions
from .report import VQAReport
from .results import read_results

MANIFEST_VERSION = 1


class VQAReference(Reference):
    ids = (UNIT,)

    def __init__(self, root: Optional[str], question_ids: FrozenSet[int],
                 truth: Optional[Truth], layout: str = "raw") -> None:
        self.root = root
        self.question_ids = question_ids   # the questions scored (whose answers it holds)
        self.expected = question_ids       # the ids a results file must answer
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
            if len(self.question_ids) < len(questions):   # restricted(): read again in a worker
                self._truth = only(self._truth, self.question_ids)
        return self._truth

    def expect(self, unit_id: str, truth: Any) -> FrozenSet[int]:
        return self.expected

    def size(self) -> Tuple[int, str]:
        """The questions (the engine's unit is the results file)."""
        return len(self.question_ids), "questions"

    def split_units(self) -> List[int]:
        """A split is drawn over the questions (grouped by image)."""
        return sorted(self.question_ids)

    def restricted(self, units: AbstractSet[str]) -> "VQAReference":
        """Only the questions in `units` scored; a results file still answers every one."""
        cut = copy.copy(self)
        cut.question_ids = frozenset(q for q in self.question_ids if str(q) in units)
        if self._truth is not None:
            cut._truth = only(self._truth, cut.question_ids)
        return cut

    def covering(self, stand_in: Reference) -> "VQAReference":
        """The public part's answers scored, a results file checked against every test
        question (the manifest's)."""
        whole = copy.copy(self)
        whole.expected = cast(VQAReference, stand_in).question_ids
        return whole


class ResultsFormat(SubmissionFormat):
    words = WORDS

    def discover(self, res_dir: str, expected_ids: Optional[Sequence[str]]) -> Submission:
        files, log = find_results(res_dir)
        return Submission(res_dir, files, log)

    def read(self, path: str, expectation: FrozenSet[int]) -> Dict[int, str]:
        return read_results(path, os.path.basename(path), expectation)


class Settings(NamedTuple):
    """The task's settings (configure): the official evaluation has none."""


class Details(NamedTuple):
    """Summary.details: the state."""

    state: AccuracyState


class VQAManifest(Manifest[VQAReference]):
    """The task's Manifest role: the test question ids (public: questions.json holds them
    too)."""

    def __init__(self, task_name: str) -> None:
        self.task_name = task_name

    def make(self, reference: VQAReference) -> Dict[str, Any]:
        return {"version": MANIFEST_VERSION, "task": self.task_name,
                "question_ids": sorted(reference.question_ids)}

    def open(self, manifest: Dict[str, Any]) -> Tuple[VQAReference, ResultsFormat]:
        ids = frozenset(int(i) for i in manifest["question_ids"])
        return VQAReference(None, ids, None, "manifest"), ResultsFormat()


class PlanetscapesVQA(Task[AccuracyState, VQAReference, Settings]):
    name = "planetscapes-vqa"
    title = "Planetscapes VQA"
    score_keys = ["accuracy", "accuracy_yes_no", "accuracy_number", "accuracy_other"]

    report = VQAReport(title)
    manifest = VQAManifest(name)
    intervals = VQAIntervals()
    packing = packed.VQAPacking()

    def configure(self, options: Options, ref_config: Mapping[str, Any]) -> Settings:
        return Settings()

    def open_reference(self, ref_dir: str, settings: Settings) -> VQAReference:
        """Raw or packed layout, detected from the folder's contents (packed.json)."""
        root = find_root(ref_dir)
        questions = read_questions(root)
        if packed.is_packed(root):
            return VQAReference(root, frozenset(questions), packed.read_packed(root, questions),
                                "packed")
        truth = read_annotations(root, questions, Normalizer())
        return VQAReference(root, frozenset(questions), truth)

    def submission_format(self, settings: Settings) -> ResultsFormat:
        return ResultsFormat()

    def new_state(self, settings: Settings) -> AccuracyState:
        return AccuracyState()

    def summarize(self, state: AccuracyState, reference: VQAReference,
                  settings: Settings) -> Summary:
        return Summary(summary_scores(state), Details(state))
