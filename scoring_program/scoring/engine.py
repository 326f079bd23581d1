"""Score every unit (image) through a process pool, merging additive per-chunk state.

Each chunk of units is scored into its own fresh state and problem logs; the main process merges
them as they arrive. Merges are exact integer sums and problem logs keep sorted examples, so the
result is the same for any worker count, chunking and completion order. Memory is one state per
worker plus the chunk in flight: flat in the number of images.
"""
import functools
import multiprocessing
import os
import pickle
import sys
import time
import traceback
from fractions import Fraction
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from . import agreement
from .problems import BrokenReference, ProblemLog, Refusal
from .task_api import MetricState, PredictionProblem, ReferenceProblem


def _cgroup_cpus() -> Optional[int]:
    """Whole CPUs of this container's quota (cgroup v2 or v1), at least 1; None if unlimited.

    A fractional quota is rounded down (as Go's automaxprocs does): with 1.5 CPUs, two busy
    workers would be throttled by CFS in every period, and the main process, which merges and
    reports, needs the half CPU left over."""
    candidates = (("/sys/fs/cgroup/cpu.max", None),
                  ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us"))
    for quota_file, period_file in candidates:
        try:
            with open(quota_file) as f:
                fields = f.read().split()
            if period_file:
                with open(period_file) as f:
                    fields.append(f.read().strip())
            quota, period = fields[0], fields[1]
            if quota in ("max", "-1"):
                return None
            return max(1, int(quota) // int(period))
        except (OSError, ValueError, IndexError):
            continue
    return None


def usable_cpus() -> int:
    """CPUs this process may actually use: affinity mask and container quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        n = os.cpu_count() or 1
    quota = _cgroup_cpus()
    return max(1, min(n, quota) if quota else n)


# The default worker count rests on two measured costs (bench/workers.py, 2 CPUs): starting a
# pool of workers (forked, see FORK_BELOW_UNITS) costs about POOL_START_SECONDS before the first
# unit is scored in parallel, and one unit costs at most its task's `unit_seconds` in one process
# (on the task's slowest layout). With W CPUs, all of them finish N units sooner than one process
# as soon as N * unit_seconds * (1 - 1/W) > POOL_START_SECONDS. Taking the slowest layout's cost
# puts the switch at the smallest such N, so no set is slower by default than with all CPUs (a
# fast layout just above the switch may lose at most POOL_START_SECONDS against one worker).
POOL_START_SECONDS = 0.1


def min_units_for_pool(cpus: int, unit_seconds: float) -> int:
    """The smallest set for which `cpus` workers beat one process."""
    if cpus <= 1:
        return 1 << 62
    # Exactly (decimal fractions), so the switch is the same on every machine.
    start = Fraction(str(POOL_START_SECONDS))
    unit = Fraction(str(unit_seconds))
    return int(start / (unit * (1 - Fraction(1, cpus)))) + 1


def default_workers(units: int, unit_seconds: Optional[float]) -> int:
    """Workers for a run of `units` units when the user did not say: all usable CPUs once a
    pool pays for its start-up, else one process. unit_seconds None (a task that does not say
    what a unit costs, as one scored from a single file): one process."""
    if unit_seconds is None:
        return 1
    cpus = usable_cpus()
    return cpus if units >= min_units_for_pool(cpus, unit_seconds) else 1


# Below this many units, workers are forked from the main process itself (Linux): a pool then
# starts in about 0.07 s, against 0.3-0.7 s for a fork server, which must start a new Python and
# import numpy, Pillow and the scorer before the first worker exists (bench/workers.py). What the
# forked workers inherit, the main process's per-unit lists, is small at that size.
FORK_BELOW_UNITS = 4000


def _context(units: int = FORK_BELOW_UNITS, preload: Sequence[str] = ()):
    """Start workers from a fork server where the platform has one: a fork of the main process
    would inherit (and count in its memory) the main's per-unit lists, so workers' memory would
    grow with the test set. The server is a clean process that has imported the scorer once, so
    workers still start fast (preload: the modules of the task being scored, as the registry
    imports tasks lazily). Small runs fork directly (see FORK_BELOW_UNITS). Elsewhere
    (Windows), spawn."""
    methods = multiprocessing.get_all_start_methods()
    if units < FORK_BELOW_UNITS and "fork" in methods and sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["scoring.engine", "scoring.tasks"] + list(preload))
        return ctx
    return multiprocessing.get_context("spawn")


# What a worker process was started with (map_chunks' context): set once per worker by the pool's
# initializer, read only by _call, which hands it to the chunk function explicitly.
_worker_context: Dict[str, Any] = {}


def _init_worker(context: Dict[str, Any]) -> None:
    _worker_context.clear()
    _worker_context.update(context)


class WorkerFailed(Exception):
    """An exception in a worker process that is not a refusal: a bug of ours, carried to the main
    process as text (its type's name, the frames and the traceback), so that it always unpickles
    and the run ends at once as an internal error."""

    def __init__(self, remote_type: str, remote_frames: List[Tuple[str, Optional[int], str]],
                 remote_traceback: str) -> None:
        super().__init__(remote_type)
        self.remote_type, self.remote_frames = remote_type, remote_frames
        self.remote_traceback = remote_traceback

    def __reduce__(self):
        return (type(self), (self.remote_type, self.remote_frames, self.remote_traceback))

    @classmethod
    def of(cls, exc: BaseException) -> "WorkerFailed":
        frames = [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(exc.__traceback__)]
        return cls(type(exc).__name__, frames,
                   "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


def _portable(exc: BaseException) -> BaseException:
    """What the main process receives for an exception raised in a worker: the exception itself
    if it is a refusal or a problem of the seam and survives pickling, else WorkerFailed. An
    exception that cannot be unpickled would kill the pool's result thread and hang the run
    until the platform's time limit."""
    if isinstance(exc, KeyboardInterrupt):     # Ctrl-C reaches every process of the group
        return KeyboardInterrupt()
    if isinstance(exc, (Refusal, ReferenceProblem)):
        try:
            pickle.loads(pickle.dumps(exc))
            return exc
        except Exception:  # noqa: BLE001  (any failure to travel: send the text instead)
            pass
    return WorkerFailed.of(exc)


def _call(function: Callable, chunk: Sequence) -> Tuple[bool, Any]:
    try:
        return True, function(_worker_context, chunk)
    except BaseException as exc:  # noqa: BLE001  (Ctrl-C included: the main process decides)
        return False, _portable(exc)


def _raise_from_worker(exc: BaseException) -> None:
    """In the main process: a reference problem that escaped the loop is the organizers' (exit
    3); a refusal is itself; anything else is an internal error (exit 4)."""
    if isinstance(exc, ReferenceProblem):
        log = ProblemLog()
        log.add(exc.kind, exc.name, exc.detail)
        raise BrokenReference(log)
    raise exc


# (unit id, [(submission index, prediction path, name shown in messages)])
Unit = Tuple[str, List[Tuple[int, str, str]]]
# (unit id, prediction path, name shown in messages): one submission's prediction of a unit
Item = Tuple[str, str, str]


def _score_chunk(context: Dict[str, Any], units: Sequence[Unit]):
    """The task interface's loop (task_api.py) over one chunk, into fresh states: each unit's
    reference is read once, and every submission's prediction of it is read, checked and folded
    into that submission's own state."""
    reference, fmt, task = context["reference"], context["format"], context["task"]
    states = [task.new_state(context["settings"]) for _ in range(context["submissions"])]
    logs = [ProblemLog() for _ in range(context["submissions"])]
    ref_log = ProblemLog()
    pairs: Dict[Tuple[int, int], List[int]] = {}
    for unit_id, predictions in units:
        read: Dict[int, Any] = {}
        try:
            truth = reference.read(unit_id)
            expectation = reference.expect(unit_id, truth)
        except ReferenceProblem as exc:
            ref_log.add(exc.kind, exc.name, exc.detail)
            continue
        for index, path, shown in predictions:
            try:
                prediction = fmt.read(path, expectation)
            except PredictionProblem as exc:
                if exc.log is not None:
                    logs[index].merge(exc.log)
                else:
                    logs[index].add(exc.kind, shown, exc.detail)
                continue
            if context.get("agreement"):
                read[index] = prediction
            states[index].update(unit_id, prediction, truth)
        _agree(read, pairs)
    return states, logs, ref_log, len(units), pairs


def _agree(read: Dict[int, Any], pairs: Dict[Tuple[int, int], List[int]]) -> None:
    """Add one unit's agreement of every pair of submissions (compare.py, opt-in)."""
    order = sorted(read)
    for k, i in enumerate(order):
        for j in order[k + 1:]:
            found = agreement.counts(read[i], read[j])
            if found is not None:
                total = pairs.setdefault((i, j), [0, 0])
                total[0] += found[0]
                total[1] += found[1]


# Units per chunk at most. Each chunk costs the main process a pickled task and a pickled
# state (36 KB); with 2 workers on 2 CPUs that CPU time is taken from the workers. 128 units
# of 512 x 512 are 0.1-0.5 s of work: progress still moves and the load still balances
# (bench/results-workers.md).
CHUNK = 128


# Chunks shrink towards the end (guided scheduling): a chunk is at most the units left divided by
# TAIL_SHARES * workers, so the last ones hold a single unit and the workers finish together
# (bench/results-planetscapes.md).
TAIL_SHARES = 4


def chunked(items: list, workers: int) -> list:
    """Consecutive chunks covering items in order. Enough chunks to balance load and report
    progress, few enough to keep overhead negligible; with workers, the last chunks shrink."""
    size = max(1, min(CHUNK, len(items) // (workers * 8) or 1))
    if workers <= 1:
        return [items[i:i + size] for i in range(0, len(items), size)]
    chunks, start = [], 0
    while start < len(items):
        left = len(items) - start
        step = max(1, min(size, -(-left // (TAIL_SHARES * workers))))
        chunks.append(items[start:start + step])
        start += step
    return chunks


def map_chunks(function: Callable, context: Dict[str, Any], chunks: list, workers: int,
               absorb: Callable) -> None:
    """absorb(function(context, chunk)) for every chunk, in worker processes (the context is
    pickled once per worker; function must be a module-level function). Results arrive in
    completion order: absorb must be order-independent. An exception in a worker ends the run
    at once (_portable, _raise_from_worker), the pool terminated."""
    if workers <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            absorb(function(context, chunk))
        return
    units = sum(len(chunk) for chunk in chunks)
    preload = [type(v).__module__ for v in context.values()
               if type(v).__module__.startswith("scoring.")]
    pool = _context(units, preload).Pool(min(workers, len(chunks)), _init_worker, (context,))
    try:
        for ok, result in pool.imap_unordered(functools.partial(_call, function), chunks):
            if not ok:
                _raise_from_worker(result)
            absorb(result)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


class Scored(NamedTuple):
    states: List[MetricState]          # per submission
    submission_logs: List[ProblemLog]  # per submission: problems of its predictions
    reference_log: ProblemLog
    units: int                         # units processed (scored or refused)
    # (i, j) -> [identical elements, elements] over the units both predicted (agreement=True)
    agreement: Optional[Dict[Tuple[int, int], List[int]]] = None


class Accumulated(NamedTuple):
    """One submission's run (score.py: evaluate)."""

    state: MetricState
    submission_log: ProblemLog
    reference_log: ProblemLog
    units: int


def evaluate_many(task, reference, fmt, settings: Any,
                  submissions: List[Dict[str, Tuple[str, str]]], workers: int,
                  progress: Optional[Callable[[int], None]] = None,
                  agreement_of_pairs: bool = False) -> Scored:
    """Score every submission (unit id -> (prediction path, name shown in messages)) in one pass
    over the units: task, reference, fmt (its SubmissionFormat) and the task's settings as in
    task_api.py. agreement_of_pairs: also count, per pair of submissions, the identical
    elements of their predictions (agreement.py; compare.py's evidence of copies)."""
    count = len(submissions)
    total = Scored([task.new_state(settings) for _ in range(count)],
                   [ProblemLog() for _ in range(count)], ProblemLog(), 0,
                   {} if agreement_of_pairs else None)
    done = [0]
    units = sorted(set(u for s in submissions for u in s))
    work = [(u, [(i, s[u][0], s[u][1]) for i, s in enumerate(submissions) if u in s])
            for u in units]

    def absorb(result) -> None:
        states, logs, ref_log, n, pairs = result
        for i in range(count):
            total.states[i].merge(states[i])
            total.submission_logs[i].merge(logs[i])
        total.reference_log.merge(ref_log)
        if total.agreement is not None:
            for pair, (same, size) in pairs.items():
                both = total.agreement.setdefault(pair, [0, 0])
                both[0] += same
                both[1] += size
        done[0] += n
        if progress:
            progress(done[0])

    map_chunks(_score_chunk, {"task": task, "reference": reference, "format": fmt,
                              "settings": settings, "submissions": count,
                              "agreement": agreement_of_pairs},
               chunked(work, workers), workers, absorb)
    return total._replace(units=done[0])


def evaluate(task, reference, fmt, settings: Any, items: List[Item], workers: int,
             progress: Optional[Callable[[int], None]] = None) -> Accumulated:
    """One submission (score.py): evaluate_many with N = 1."""
    scored = evaluate_many(task, reference, fmt, settings,
                           [{unit: (path, shown) for unit, path, shown in items}], workers,
                           progress)
    return Accumulated(scored.states[0], scored.submission_logs[0], scored.reference_log,
                       scored.units)


class Progress:
    """A progress line on stdout every `interval` seconds, so the worker's live log moves."""

    def __init__(self, total: int, stream, interval: float = 5.0, verb: str = "scored",
                 noun: str = "images") -> None:
        self.total, self.stream, self.interval, self.verb = total, stream, interval, verb
        self.noun = noun
        self.start = self.last = time.monotonic()

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if now - self.last < self.interval or done >= self.total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        left = (self.total - done) / rate if rate else 0
        self.stream.write("  {} {:,} / {:,} {} ({:.0f}%), {:.0f} {}/s, about {:.0f} s left\n".format(
            self.verb, done, self.total, self.noun, 100.0 * done / self.total, rate, self.noun,
            left))
        self.stream.flush()
