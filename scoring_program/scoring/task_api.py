"""The seam between the shared engine and one challenge's task: everything a task provides, with
its default where it has one. Nothing else is looked up on a task.

The engine (engine.py), the command line (cli.py), the label-free check (validate.py) and
pack.py know nothing of pixels, PNGs, class ids or questions: they move *units* (an image; for a
task scored from one results file, that file) through four objects a task provides. For every
unit, in a worker process:

    truth       = reference.read(unit_id)              # hidden ground truth (ReferenceProblem)
    expectation = reference.expect(unit_id, truth)     # public facts a prediction must meet
    prediction  = fmt.read(path, expectation)          # checked prediction (PredictionProblem)
    state.update_unit(unit_id, prediction, truth)      # = state.update(prediction, truth)

and the main process merges the workers' states. A state is additive (update on one unit, merge
two states, compute at the end: the torchmetrics shape), so the result is the same for any worker
count and unit order. Checking a submission without the ground truth (validate.py) runs the same
loop with a stand-in reference built from a public manifest, whose read() returns None.

A task is a package under scoring/tasks/ with the same files (task.py, reference.py, metric.py,
report.py, problems.py, packed.py when it has a packed layout, plus its own tables) and one line
in scoring/registry.py. Its package __init__ stays light (no numpy, no Pillow) and may define one
module-level hook, `add_options(parser)`: the command line is built before any task is imported,
so a task's command-line options are added from there (the registry calls it for every task).
"""
import abc
import copy
from typing import Any, Callable, Dict, Generic, List, NamedTuple, Optional, Sequence, Tuple, TypeVar

from .problems import Kind, ProblemLog

# (leaderboard key, value or None); None means undefined: never written, never NaN.
Scores = List[Tuple[str, Optional[float]]]


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
    """Facts of one run, gathered by the command line for the page; the task's configuration
    travels apart (Task.config_facts)."""

    units: int                 # units scored
    unit_noun: str             # "images", "results file"...
    workers: int
    seconds: float
    reference_layout: str      # "raw", "packed"
    scorer_version: str
    finished: str              # "YYYY-MM-DD HH:MM:SS UTC"
    task_facts: List[Tuple[str, Any]]  # Task.run_facts(state): e.g. [("Pixels scored", 123)]


# A state's own class, in merge(): a state merges only states of its own task.
_Self = TypeVar("_Self", bound="MetricState")


# How a declared field of a metric state merges (MetricState.fields), as torchmetrics' add_state
# declares each state with its reduction: merge() is then written once, here.
SUM = "sum"   # numbers and numpy arrays added; dicts key by key (any depth); lists element-wise
CAT = "cat"   # lists: the other's items after this one's (their readers sort them: order-free)


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


class MetricState(abc.ABC):
    """Additive metric state. `units` counts the units folded in. A state declares its fields
    with their reduction (`fields`: name -> SUM or CAT) and the shared merge() adds them; every
    other attribute is configuration, the same in every state of a run."""

    units = 0
    fields: Dict[str, str] = {}

    @abc.abstractmethod
    def update(self, prediction: Any, truth: Any) -> None:
        """Fold in one unit."""

    def merge(self: _Self, other: _Self) -> _Self:
        """Add another state of the same task into this one; return self."""
        if type(other) is not type(self):
            raise TypeError("a {} cannot merge a {}".format(type(self).__name__,
                                                            type(other).__name__))
        for name, how in self.fields.items():
            if how == CAT:
                getattr(self, name).extend(getattr(other, name))
            else:
                setattr(self, name, _added(getattr(self, name), getattr(other, name)))
        return self

    def update_unit(self, unit_id: str, prediction: Any, truth: Any) -> None:
        """The engine's call for one unit: update(prediction, truth). A state that keeps a row
        per unit for the confidence interval (Task.resampling) keys it by unit_id here."""
        self.update(prediction, truth)


class Summary(NamedTuple):
    """What Task.summarize gives: the scores, and what the task's own reports read. The command
    adds the confidence intervals (confidence.py) before the reports are made."""

    scores: Sequence[Tuple[str, Optional[float]]]   # the leaderboard's, the ranking score first
    details: Any = None        # the task's own (its counts, its result tables): for its reports
    confidence: Any = None     # confidence.Confidence, or None: no interval this run


class Resampling(NamedTuple):
    """What the bootstrap (metrics/bootstrap.py, docs/confidence.md) needs from a task: per
    resampling unit (an image; a question) a row of integers whose column sums give the scores
    of interval_keys, and that function. Units are independent and equally likely."""

    noun: str           # the units, plural: "images", "questions"
    units: int          # how many
    # -> (unit ids sorted, their rows in that order: a list of tuples or a 2-D integer array)
    rows: Callable[[], Tuple[List[Any], Any]]
    # column sums of a resample -> the values of interval_keys (None: undefined)
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


# A task's metric state (what its new_state() returns) and its reference (what its
# open_reference() returns) and its settings (configure()): a task declares them, e.g.
# Task[AccuracyState, VQAReference, VQASettings], so its
# methods take them as they are.
StateT = TypeVar("StateT", bound=MetricState)
RefT = TypeVar("RefT", bound=Reference)
# A task's settings (what its configure() returns): a typed value of its own, as pycocotools'
# Params (e.g. the Agriculture-Vision storm_damage policy), read by its other methods only.
SettingsT = TypeVar("SettingsT")


class Task(abc.ABC, Generic[StateT, RefT, SettingsT]):
    """One challenge task: everything the shared pipeline needs to score and report it."""

    name = ""         # the `task:` value of the reference's config.yaml
    title = ""        # shown in logs and page titles
    score_keys: List[str] = []  # leaderboard keys, the ranking score first
    # CPU seconds one unit costs in one process on the slowest layout: the engine uses every CPU
    # once a pool pays for its start-up (engine.default_workers). None: one process (a task scored
    # from one file has one unit).
    unit_seconds: Optional[float] = None
    # The document describing the task's packed reference layout; None: the task has none (and
    # pack() is not implemented).
    packed_layout: Optional[str] = None  # pack.py names it after packing

    # -- configuration ---------------------------------------------------------------------

    @abc.abstractmethod
    def configure(self, args: Any, ref_config: Dict[str, Any]) -> SettingsT:
        """The task's settings, from the command line (args: argparse's namespace, or None) and
        the reference's config.yaml, validated (BrokenReference on a bad value)."""

    def config_facts(self, config: SettingsT) -> List[Tuple[str, str]]:
        """What the page shows of the configuration: (label, value) rows."""
        return []

    def keys(self, config: SettingsT) -> List[str]:
        """Every leaderboard key this configuration can produce, the ranking score first (a
        task whose keys follow a label table lists them here)."""
        return list(self.score_keys)

    # -- scoring ---------------------------------------------------------------------------

    @abc.abstractmethod
    def open_reference(self, ref_dir: str, config: SettingsT) -> RefT:
        """Open (and cheaply check) the reference; BrokenReference if it is unusable."""

    @abc.abstractmethod
    def submission_format(self, config: SettingsT) -> SubmissionFormat:
        """How this task's predictions are found and checked."""

    @abc.abstractmethod
    def new_state(self, config: SettingsT) -> StateT:
        """An empty metric state."""

    @abc.abstractmethod
    def summarize(self, state: StateT, reference: RefT, config: SettingsT) -> Summary:
        """The scores (the ranking score first) and the task's details for its reports.
        BrokenReference if the reference makes the ranking score undefined."""

    # -- confidence intervals (docs/confidence.md) -------------------------------------------

    # The leaderboard keys that get a bootstrap interval (<key>_ci_low, <key>_ci_high): the
    # ranking score(s). Empty: the task gives no interval (resampling() is not needed).
    interval_keys: List[str] = []

    def resampling(self, state: StateT, summary: Summary,
                   config: SettingsT) -> Optional[Resampling]:
        """The per-unit rows of this run for the bootstrap; None: no interval."""
        return None

    def run_facts(self, state: StateT) -> List[Tuple[str, Any]]:
        """Facts of the run beyond the engine's, for the page: (label, value), e.g.
        [("Pixels scored", 262144)]."""
        return []

    # -- reports ---------------------------------------------------------------------------

    @abc.abstractmethod
    def table(self, summary: Summary) -> Tuple[List[str], List[List[str]]]:
        """Console table: (headers, rows)."""

    @abc.abstractmethod
    def render_html(self, summary: Summary, warnings: List[str], run: RunFacts,
                    config: SettingsT) -> str:
        """detailed_results.html: aggregate results only, nothing per unit."""

    # -- the label-free check --------------------------------------------------------------

    @abc.abstractmethod
    def make_manifest(self, reference: RefT) -> Dict[str, Any]:
        """Public, label-free facts (ids, sizes...) that let a participant check a submission
        (validate.py). Must hold "task" = self.name."""

    @abc.abstractmethod
    def open_manifest(self, manifest: Dict[str, Any]) -> Tuple[Reference, SubmissionFormat]:
        """From make_manifest()'s output: a stand-in reference whose expect(unit, None) works and
        whose read() returns None, and the submission format to check against."""

    # -- packing (pack.py), for tasks with a packed_layout ----------------------------------

    def pack(self, reference: RefT, out_dir: str, workers: int,
             progress: Any = None) -> Tuple[int, int]:
        """Convert the raw reference (as open_reference returned it) into the packed layout in
        out_dir, checking it on the way; returns (units converted, bytes written). Only if
        packed_layout is set."""
        raise NotImplementedError("{} has no packed layout".format(self.name))

    def pack_units(self, reference: RefT) -> Tuple[int, str]:
        """(how many, what) pack() converts, for pack.py's progress: the reference's images by
        default."""
        return len(reference.ids), "images"
