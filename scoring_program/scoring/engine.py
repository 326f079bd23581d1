"""Score every unit (image) through a process pool, merging additive per-chunk state.

Each chunk of units is scored into its own fresh state and problem logs; the main process merges
them as they arrive. Merges are exact integer sums and problem logs keep sorted examples, so the
result is the same for any worker count, chunking and completion order. Memory is one state per
worker plus the chunk in flight: flat in the number of images.
"""
import functools
import multiprocessing
from fractions import Fraction
import os
import sys
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .problems import ProblemLog
from .task_api import MetricState, PredictionProblem, ReferenceProblem

# (unit id, prediction path, name shown in messages)
Item = Tuple[str, str, str]


class Accumulated(NamedTuple):
    state: MetricState
    submission_log: ProblemLog
    reference_log: ProblemLog
    units: int  # units processed (scored or refused)


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
# pool of workers (forked, see FORK_BELOW_IMAGES) costs about POOL_START_SECONDS before the first
# unit is scored in parallel, and one unit costs at most `unit_seconds` in one process (a task's
# `unit_seconds`, else IMAGE_SECONDS: a 512 x 512 Agriculture-Vision image on the raw layout, the
# slowest; the packed one costs about 60% of it). With W CPUs, all of them finish N units sooner
# than one process as soon as N * unit_seconds * (1 - 1/W) > POOL_START_SECONDS. Taking the
# slowest layout's cost puts the switch at the smallest such N, so no set is slower by default
# than with all CPUs (a fast layout just above the switch may lose at most POOL_START_SECONDS
# against one worker).
POOL_START_SECONDS = 0.1
IMAGE_SECONDS = 0.005


def min_images_for_pool(cpus: int, unit_seconds: Optional[float] = None) -> int:
    """The smallest set for which `cpus` workers beat one process."""
    if cpus <= 1:
        return 1 << 62
    # Exactly (decimal fractions), so the switch is the same on every machine.
    start = Fraction(str(POOL_START_SECONDS))
    unit = Fraction(str(IMAGE_SECONDS if unit_seconds is None else unit_seconds))
    return int(start / (unit * (1 - Fraction(1, cpus)))) + 1


def default_workers(images: int, unit_seconds: Optional[float] = None) -> int:
    """Workers for a run of `images` units when the user did not say: all usable CPUs once a
    pool pays for its start-up, else one process."""
    cpus = usable_cpus()
    return cpus if images >= min_images_for_pool(cpus, unit_seconds) else 1


# Below this many images, workers are forked from the main process itself (Linux): a pool then
# starts in about 0.07 s, against 0.3-0.7 s for a fork server, which must start a new Python and
# import numpy, Pillow and the scorer before the first worker exists (bench/workers.py). What the
# forked workers inherit, the main process's per-image lists, is small at that size.
FORK_BELOW_IMAGES = 4000


def _context(images: int = FORK_BELOW_IMAGES, preload: Sequence[str] = ()):
    """Start workers from a fork server where the platform has one: a fork of the main process
    would inherit (and count in its memory) the main's per-image lists, so workers' memory would
    grow with the test set. The server is a clean process that has imported the scorer once, so
    workers still start fast (preload: the modules of the task being scored, as the registry
    imports tasks lazily). Small runs fork directly (see FORK_BELOW_IMAGES). Elsewhere
    (Windows), spawn."""
    methods = multiprocessing.get_all_start_methods()
    if images < FORK_BELOW_IMAGES and "fork" in methods and sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["scoring.engine", "scoring.tasks"] + list(preload))
        return ctx
    return multiprocessing.get_context("spawn")


# What a worker process was started with (map_chunks' context): set once per worker by the pool's
# initializer, read only by _call, which hands it to the chunk function explicitly.
_worker_context = {}  # type: Dict[str, Any]


def _init_worker(context: Dict[str, Any]) -> None:
    _worker_context.clear()
    _worker_context.update(context)


def _call(function: Callable, chunk: Sequence) -> Any:
    return function(_worker_context, chunk)


def _score_chunk(context: Dict[str, Any], items: Sequence[Item]):
    """The task interface's loop (task_api.py) over one chunk, into a fresh state."""
    reference, fmt = context["reference"], context["format"]
    state = context["task"].new_state(context["config"])
    sub_log, ref_log = ProblemLog(), ProblemLog()
    for unit_id, path, shown in items:
        try:
            truth = reference.read(unit_id)
        except ReferenceProblem as exc:
            ref_log.add(exc.kind, exc.name, exc.detail)
            continue
        try:
            prediction = fmt.read(path, reference.expect(unit_id, truth))
        except PredictionProblem as exc:
            if exc.log is not None:
                sub_log.merge(exc.log)
            else:
                sub_log.add(exc.kind, shown, exc.detail)
            continue
        state.update_unit(unit_id, prediction, truth)
    return state, sub_log, ref_log, len(items)


# Images per chunk at most. Each chunk costs the main process a pickled task and a pickled
# state (36 KB); with 2 workers on 2 CPUs that CPU time is taken from the workers. 128 images
# are 0.1-0.5 s of work: progress still moves and the load still balances (measured at 19,708
# images: main process CPU 1.0 s with chunks of 32, 0.35 s with 128).
CHUNK = 128


# Chunks shrink towards the end (guided scheduling): a chunk is at most the items left divided by
# TAIL_SHARES * workers, so the last ones hold a single image and the workers finish together.
# With equal chunks one worker idled for up to a whole chunk at the end: 0.1 s of 1.8 s for 100
# images of 2048 x 1024 on 2 workers (chunks of 6); now the two finish within 5-25 ms.
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
    completion order: absorb must be order-independent."""
    if workers <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            absorb(function(context, chunk))
        return
    images = sum(len(chunk) for chunk in chunks)
    preload = [type(v).__module__ for v in context.values()
               if type(v).__module__.startswith("scoring.")]
    pool = _context(images, preload).Pool(min(workers, len(chunks)), _init_worker, (context,))
    try:
        for result in pool.imap_unordered(functools.partial(_call, function), chunks):
            absorb(result)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def evaluate(task, reference, fmt, config: dict, items: List[Item], workers: int,
             progress: Optional[Callable[[int], None]] = None) -> Accumulated:
    """Score every item: task, reference and fmt (its SubmissionFormat) as in task_api.py."""
    total = task.new_state(config)
    sub_log, ref_log = ProblemLog(), ProblemLog()
    done = [0]

    def absorb(result) -> None:
        state, s_log, r_log, n = result
        total.merge(state)
        sub_log.merge(s_log)
        ref_log.merge(r_log)
        done[0] += n
        if progress:
            progress(done[0])

    map_chunks(_score_chunk,
               {"task": task, "reference": reference, "format": fmt, "config": config},
               chunked(sorted(items), workers), workers, absorb)
    return Accumulated(total, sub_log, ref_log, done[0])


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
