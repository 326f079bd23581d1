"""The seam between the shared engine and one challenge's task: everything a task provides, with
its default where it has one. Nothing else is looked up on a task.

The engine (engine.py), the commands (commands/), the label-free check (validate.py) and the
bundle know nothing of pixels, PNGs, class ids or questions: they move *units* (an image; for a
task scored from one results file, that file) through the objects a task provides. For every
unit, in a worker process:

    truth       = reference.read(unit_id)                # hidden ground truth (ReferenceProblem)
    expectation = reference.expect(unit_id, truth)       # public facts a prediction must meet
    prediction  = fmt.read(path, expectation)            # checked prediction (PredictionProblem)
    state.update(unit_id, prediction, truth)             # the one entry point of a state

and the main process merges the workers' states. A state is additive (update on one unit, merge
two states, compute at the end: the torchmetrics shape), so the result is the same for any worker
count and unit order. Checking a submission without the ground truth (validate.py) runs the same
loop with a stand-in reference built from a public manifest, whose read() returns None.

A task is one object with a scoring core (`Task`: configure, open the reference, the submission
format, a new state, summarize) and its roles, each an object of its own:

    task.report      Report     required   the console table and detailed_results.html
    task.manifest    Manifest   required   the label-free check's public manifest (the kit)
    task.intervals   Intervals  optional   the confidence interval of its ranking score(s)
    task.packing     Packing    optional   a packed reference layout (pack.py, the bundle)

A task is a package under scoring/tasks/ (task.py, reference.py, metric.py, report.py,
problems.py, plus intervals.py and packed.py for the optional roles and its own tables) and one
line in scoring/registry.py. Its package __init__ stays light (no numpy, no Pillow) and may
declare its command-line options as data, `OPTIONS` (registry.py): the command line is built
before any task is imported, and the command hands the task the values given as plain data
(Task.configure's options), never its argparse namespace.

Names: a task's `settings` are what its configure() returns (its own typed value); `ref_config`
is the reference's config.yaml as a mapping (config.py).
"""
import abc
import copy
import os
from typing import AbstractSet, Any, Callable, Dict, Generic, List, Mapping, NamedTuple, \
    Optional, Sequence, Tuple, TypeVar, Union

from .problems import Kind, ProblemLog

# (leaderboard key, value or None); None means undefined: never written, never NaN.
Scores = List[Tuple[str, Optional[float]]]
# The task options given on the command line, as plain data: option name -> value (only those
# given). The names are those a task package declares in OPTIONS (registry.py).
Options = Mapping[str, Any]


class PredictionProblem(Exception):
    """One submitted file is unusable; kind is a problems.Kind, detail a short phrase.

    A file that holds many predictions (a VQA results file) can have many problems at once:
    then `log` holds them all (named by entry or question id) and the engine reports the log
    instead of (kind, detail)."""

    log: Optional[ProblemLog] = None

    def __init__(self, kind: Kind, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail

    def __reduce__(self):
        # Raised in a worker process, it must unpickle in the main one: Exception's default
        # would call the class with args = (detail,) alone.
        return (type(self), (self.kind, self.detail), self.__dict__)


class ReferenceProblem(Exception):
    """One unit of the reference is broken (the organizers' data): name says which file."""

    def __init__(self, kind: Kind, name: str, detail: str = "") -> None:
        super().__init__(detail)
        self.kind, self.name, self.detail = kind, name, detail

    def __reduce__(self):
        return (type(self), (self.kind, self.name, self.detail), self.__dict__)


class Submission(NamedTuple):
    """What discovery found: the folder holding the predictions, unit id -> file, problems."""

    root: str
    files: Dict[str, str]
    log: ProblemLog


class RunFacts(NamedTuple):
    """Facts of one run, gathered by the command for the page; the task's settings travel
    apart (the page gets them too)."""

    units: int                 # units scored
    unit_noun: str             # "images", "results file"...
    workers: int
    seconds: float
    reference_layout: str      # "raw", "packed"
    scorer_version: str
    finished: str              # "YYYY-MM-DD HH:MM:SS UTC"
    task_facts: List[Tuple[str, Any]]  # Report.run_facts(state): e.g. [("Pixels scored", 123)]
    # What the scores are computed over, for the page's notes: "" = the whole test set; a
    # public part's reference (public_part.py): "the public part's 20 images (of the test
    # set's 40; ...)".
    scored_on: str = ""

    def over(self, noun: str) -> str:
        """"all test images", or the public part's phrase."""
        return self.scored_on or "all test {}".format(noun)


# --- the metric state -----------------------------------------------------------------------

# A state's own class, in merge(): a state merges only states of its own task.
_Self = TypeVar("_Self", bound="MetricState")


# How a declared field of a metric state merges (MetricState.fields), as torchmetrics' add_state
# declares each state with its reduction (dist_reduce_fx "sum" or "cat"): merge() is written
# once, here.
SUM = "sum"   # numbers and numpy arrays added; dicts key by key (any depth); lists element-wise
# Per-unit records: a dict {unit id: record}, one entry per unit folded in. Merging joins the
# two dicts (a unit in both is a bug: ValueError), so the merged records are the same for any
# worker count and unit order; read them in unit-id order (MetricState.in_unit_order), never
# in the dict's own order, which follows the merges.
CAT = "cat"


def _added(mine: Any, theirs: Any) -> Any:
    if isinstance(mine, dict):
        for key, value in theirs.items():
            mine[key] = _added(mine[key], value) if key in mine else copy.deepcopy(value)
        return mine
    if isinstance(mine, list):
        if len(mine) != len(theirs):
            raise ValueError("a summed list field has two lengths")
        for i, value in enumerate(theirs):
            mine[i] = _added(mine[i], value)
        return mine
    mine += theirs           # in place for a numpy array, a new value for a number
    return mine


def _joined(mine: Dict[Any, Any], theirs: Dict[Any, Any]) -> Dict[Any, Any]:
    twice = [unit for unit in theirs if unit in mine]
    if twice:
        raise ValueError("unit {!r} folded into two states that are merged".format(min(twice)))
    mine.update(theirs)
    return mine


class MetricState(abc.ABC):
    """Additive metric state. `units` counts the units folded in. A state declares its fields
    with their reduction (`fields`: name -> SUM or CAT) and the shared merge() combines them;
    every other attribute is configuration, the same in every state of a run."""

    units = 0
    fields: Dict[str, str] = {}

    @abc.abstractmethod
    def update(self, unit_id: str, prediction: Any, truth: Any) -> None:
        """Fold in one unit: its id (the key of its records in a CAT field), its checked
        prediction (SubmissionFormat.read) and its truth (Reference.read)."""

    def merge(self: _Self, other: _Self) -> _Self:
        """Add another state of the same task into this one; return self."""
        if type(other) is not type(self):
            raise TypeError("a {} cannot merge a {}".format(type(self).__name__,
                                                            type(other).__name__))
        for name, how in self.fields.items():
            if how == CAT:
                setattr(self, name, _joined(getattr(self, name), getattr(other, name)))
            else:
                setattr(self, name, _added(getattr(self, name), getattr(other, name)))
        return self

    def in_unit_order(self, name: str) -> List[Tuple[Any, Any]]:
        """A CAT field's (unit id, record) pairs in unit-id order: what every reader of
        per-unit records iterates, so nothing depends on the order units were merged in."""
        field: Dict[Any, Any] = getattr(self, name)
        return sorted(field.items(), key=lambda item: item[0])


# --- what summarize() gives, and what the intervals resample --------------------------------

class Summary(NamedTuple):
    """What Task.summarize gives: the scores, and what the task's own reports read. The command
    adds the confidence intervals (confidence.py) before the reports are made."""

    scores: Sequence[Tuple[str, Optional[float]]]   # the leaderboard's, the ranking score first
    details: Any = None        # the task's own (its counts, its result tables): for its reports
    confidence: Any = None     # confidence.Confidence, or None: no interval this run


class Resampling(NamedTuple):
    """The interval's sum form (metrics/bootstrap.py, docs/confidence.md): per resampling unit
    (an image; a question) a row of integers whose column sums give the scores of the
    interval's keys, and that function. Units are independent and equally likely."""

    noun: str           # the units, plural: "images", "questions"
    units: int          # how many
    # -> (unit ids sorted, their rows in that order: a list of tuples or a 2-D integer array)
    rows: Callable[[], Tuple[List[Any], Any]]
    # column sums of a resample -> the values of the interval's keys (None: undefined)
    scores: Callable[[Sequence[int]], List[Optional[float]]]
    # {row: units having it} when the state counts it anyway (saves building rows)
    distinct: Optional[Dict[Tuple[int, ...], int]] = None
    # unit id -> its cluster (resample_units.py): units of one cluster are resampled together;
    # None: every unit is independent
    group: Optional[Callable[[Any], Any]] = None
    group_noun: str = ""  # the clusters, plural: "fields"
    bounds: Tuple[float, float] = (0.0, 1.0)  # every score's range (an interval stays inside)
    # column sums -> per key the gradient of its score with respect to the sums (None where
    # undefined): each resample's own standard error, for the studentized interval
    # (metrics/spread.py); None: the basic interval
    gradient: Optional[Callable[[Sequence[int]], Sequence[Optional[Sequence[float]]]]] = None
    # (key index, interval, the test set's column sums) -> the interval allowing what the test
    # set holds no evidence for (metrics/unseen.py: a class without reference pixels)
    widen: Optional[Callable[[int, Tuple[float, float], Sequence[int]],
                             Tuple[float, float]]] = None


class Rescoring(NamedTuple):
    """The interval's re-scoring form, for a score that is no function of column sums (an
    average precision ranks every prediction of the test set): each resample is scored again
    from the units' own records, weighted by how often the resample draws each unit. The same
    unit draws as the sum form's unit sampler (metrics/bootstrap.py), so a score that is a sum
    gets the same interval either way; the basic interval (confidence.py)."""

    noun: str           # the units, plural: "images"
    ids: Sequence[Any]  # the units, sorted (the order of rescore's weights)
    # how often each unit (in ids' order) is in the resample -> the values of the interval's
    # keys (None: undefined); every weight 1 is the test set itself
    rescore: Callable[[Sequence[int]], List[Optional[float]]]
    group: Optional[Callable[[Any], Any]] = None   # as Resampling's: clusters drawn together
    group_noun: str = ""
    bounds: Tuple[float, float] = (0.0, 1.0)

    @property
    def units(self) -> int:
        return len(self.ids)


# What an Intervals role gives for one run.
ResampleForm = Union[Resampling, Rescoring]


# --- the reference and the submission format -------------------------------------------------

class Reference(abc.ABC):
    """The ground truth, opened once in the main process and pickled to the workers (keep it
    small: paths and tables, not data)."""

    layout = "raw"             # "raw", "packed", or "manifest" for the label-free check's stand-in
    ids: Sequence[str] = ()  # the units, sorted
    root: Optional[str] = None  # the reference folder (None: a stand-in)
    # Attributes that stay in the main process when the reference is pickled to a worker: the id
    # list grows with the test set, and workers read units by id.
    main_process_only: Tuple[str, ...] = ("ids",)

    def __getstate__(self) -> Dict[str, Any]:
        return {k: (None if k in self.main_process_only else v) for k, v in self.__dict__.items()}

    @abc.abstractmethod
    def read(self, unit_id: str) -> Any:
        """The hidden truth of one unit; raise ReferenceProblem if it is broken."""

    @abc.abstractmethod
    def expect(self, unit_id: str, truth: Any) -> Any:
        """What a prediction for this unit must match (e.g. (height, width)). `truth` is what
        read() returned; a manifest's stand-in gets None and answers from the manifest."""

    def size(self) -> Tuple[int, str]:
        """(how many, what) the test set holds, as the pages, pack.py and the bundle count it:
        its images by default (a VQA reference: its questions, not its one results file)."""
        return len(self.ids), "images"

    # --- a part of the test set (public_part.py, the organizer's split) ---

    def split_units(self) -> Sequence[Any]:
        """The units a public/private split is drawn over and counted in, whose labels this
        reference holds: its ids by default (a VQA reference: its question ids)."""
        return list(self.ids)

    def restricted(self, units: AbstractSet[str]) -> "Reference":
        """This reference scoring only the split units in `units` (as strings), still
        expecting predictions for the whole test set: by default a copy whose ids are cut."""
        cut = copy.copy(self)
        cut.ids = [u for u in self.ids if str(u) in units]
        return cut

    def covering(self, stand_in: "Reference") -> "Reference":
        """This reference of a public part checking each held unit's prediction against the
        whole test set (stand_in: the manifest's): itself by default (a held unit's
        expectation is its own; the units it lacks are checked on the stand-in)."""
        return self


class SubmissionFormat(abc.ABC):
    """How a task's predictions are found in a submission folder and read, with their checks.
    Needs no ground truth: the participant's local check runs it too."""

    # Words for the shared problem messages (problems.py), e.g. {"files": "PNG files"}.
    words: Dict[str, str] = {}

    @abc.abstractmethod
    def discover(self, res_dir: str, expected_ids: Optional[Sequence[str]]) -> Submission:
        """Locate the prediction of every unit; expected_ids None accepts any name."""

    @abc.abstractmethod
    def read(self, path: str, expectation: Any) -> Any:
        """The checked prediction in the form the state's update() takes; raise
        PredictionProblem if it is unusable."""

    def comparable(self, prediction: Any) -> Any:
        """What read() gave, as an array of one value per pixel that is equal for two
        predictions exactly when they predict the same (verify.py compares a prize winner's
        results with the submission the platform scored): by default the prediction itself."""
        return prediction

    def zip_entries(self, found: Submission) -> List[Tuple[str, str]]:
        """(file, name in the zip) of every file a submission's zip holds, for the kit's
        make_submission.py: by default each prediction at the zip's root; a format whose
        predictions are more than one file per unit (the panoptic JSON beside its folder of
        PNGs) or name other files (the instance task's masks) says where each goes."""
        return [(path, os.path.basename(path)) for path in found.files.values()]


# A task's metric state (what its new_state() returns), its reference (what its
# open_reference() returns) and its settings (what its configure() returns): a task declares
# them, e.g. Task[AccuracyState, VQAReference, Settings], so its methods take them as they are.
StateT = TypeVar("StateT", bound=MetricState)
RefT = TypeVar("RefT", bound=Reference)
# A task's settings: a typed value of its own, as pycocotools' Params (e.g. the
# Agriculture-Vision storm_damage policy), read by its own methods and roles only.
SettingsT = TypeVar("SettingsT")


# --- the roles --------------------------------------------------------------------------------

class Report(abc.ABC, Generic[StateT, SettingsT]):
    """Required: what a participant reads of a run. Aggregate results only, nothing per unit."""

    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        """The console table: (headers, rows). By default the leaderboard's keys and values."""
        return ["score", "value"], [[key, "n/a" if value is None else "{:.4f}".format(value)]
                                    for key, value in summary.scores]

    @abc.abstractmethod
    def page(self, summary: Summary, warnings: List[str], run: RunFacts,
             settings: SettingsT) -> str:
        """detailed_results.html (report/ has the building blocks)."""

    def run_facts(self, state: StateT) -> List[Tuple[str, Any]]:
        """Facts of the run beyond the engine's, for the page: (label, value), e.g.
        [("Pixels scored", 262144)]."""
        return []


class Manifest(abc.ABC, Generic[RefT]):
    """Required: the public, label-free facts of a test set (ids, sizes...) with which a
    participant checks a submission without the ground truth (validate.py, the starting kit's
    check_submission.py; manifests.py has the helpers for image tasks)."""

    @abc.abstractmethod
    def make(self, reference: RefT) -> Dict[str, Any]:
        """The manifest of an opened reference, as JSON data. Must hold "task" = the task's
        name."""

    @abc.abstractmethod
    def open(self, manifest: Dict[str, Any]) -> Tuple[Reference, SubmissionFormat]:
        """From make()'s output: a stand-in reference whose expect(unit, None) works and whose
        read() returns None, and the submission format to check against."""


class Intervals(abc.ABC, Generic[StateT, RefT, SettingsT]):
    """Optional (a task without it gives no interval, and says so): the 95% confidence interval
    of the ranking score(s) (docs/confidence.md). What is resampled is config.yaml's
    `resample_by:`, read with `confidence:` by the core (confidence.read_settings) against
    the rules declared here; the task makes the resampling of a run under the rule given."""

    # The leaderboard keys that get an interval (<key>_ci_low, <key>_ci_high): the ranking
    # score(s).
    keys: List[str] = []
    # config.yaml's `resample_by:` values this task takes, its default first: names of its own
    # ("field") and the one under which every unit is on its own ("image", "question").
    resample_by: Tuple[str, ...] = ()
    # Also `prefix N` (the first N `_`-separated parts of a unit id: resample_units.py), where
    # unit ids are names.
    by_prefix: bool = True

    # The rule a test set is split by into a public and a private part when resample_by leaves
    # every unit on its own (organizer/organizing/split/): the task's coarsest group ("field",
    # "image" of a question), "" for none.
    split_by: str = ""

    def clusters(self, reference: RefT, by: str) -> Tuple[List[Any], Optional[Callable[[Any], Any]]]:
        """The reference's resampled units (sorted) and the cluster of each under the rule `by`
        (None: every unit on its own), from the reference's public facts (ids, questions.json),
        never its labels. Default: the reference's ids, and `prefix N`'s key."""
        from . import resample_units   # here: the seam imports nothing at its top
        if by.startswith(resample_units.PREFIX + " "):
            return sorted(reference.ids), resample_units.prefix_of(int(by.split()[1]))
        return sorted(reference.ids), None

    @abc.abstractmethod
    def resampling(self, state: StateT, summary: Summary, reference: RefT, settings: SettingsT,
                   by: str) -> Optional[ResampleForm]:
        """This run's units for the bootstrap under the rule `by` (one of resample_by, or
        `prefix N`): a Resampling where the scores are a function of per-unit integer rows'
        column sums, else a Rescoring; None: no interval for this run."""


class Packing(abc.ABC, Generic[RefT]):
    """Optional: a packed reference layout, converted from the raw one by pack.py and the
    bundle (smaller, faster to score; the task's reference reads both)."""

    layout = ""   # the document describing the layout (pack.py names it after packing)

    @abc.abstractmethod
    def pack(self, reference: RefT, out_dir: str, workers: int,
             progress: Any = None) -> Tuple[int, int]:
        """Convert the raw reference (as open_reference returned it) into the packed layout in
        out_dir, checking it on the way; returns (units converted, bytes written)."""


# --- the task ---------------------------------------------------------------------------------

class Task(abc.ABC, Generic[StateT, RefT, SettingsT]):
    """One challenge task: its scoring core and its roles (see the module docstring)."""

    name = ""         # the `task:` value of the reference's config.yaml
    title = ""        # shown in logs and page titles
    score_keys: List[str] = []  # leaderboard keys, the ranking score first
    # CPU seconds one unit costs in one process on the slowest layout: the engine uses every CPU
    # once a pool pays for its start-up (engine.default_workers). None: one process (a task scored
    # from one file has one unit).
    unit_seconds: Optional[float] = None

    # The roles: required ones are set by every task, optional ones stay None.
    report: Report
    manifest: Manifest
    intervals: Optional[Intervals] = None
    packing: Optional[Packing] = None

    @abc.abstractmethod
    def configure(self, options: Options, ref_config: Mapping[str, Any]) -> SettingsT:
        """The task's settings, from the options given on the command line (plain data; {} if
        none) over the reference's config.yaml, validated (BrokenReference on a bad value)."""

    def keys(self, settings: SettingsT) -> List[str]:
        """Every leaderboard key these settings can produce, the ranking score first (a task
        whose keys follow a label table lists them here)."""
        return list(self.score_keys)

    @abc.abstractmethod
    def open_reference(self, ref_dir: str, settings: SettingsT) -> RefT:
        """Open (and cheaply check) the reference; BrokenReference if it is unusable."""

    @abc.abstractmethod
    def submission_format(self, settings: SettingsT) -> SubmissionFormat:
        """How this task's predictions are found and checked."""

    @abc.abstractmethod
    def new_state(self, settings: SettingsT) -> StateT:
        """An empty metric state."""

    @abc.abstractmethod
    def summarize(self, state: StateT, reference: RefT, settings: SettingsT) -> Summary:
        """The scores (the ranking score first) and the task's details for its reports.
        BrokenReference if the reference makes the ranking score undefined."""
