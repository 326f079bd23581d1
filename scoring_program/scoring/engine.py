"""Score every unit (image) through a process pool, merging additive per-chunk state.

Each chunk of units is scored into its own fresh state and problem logs; the main process merges
them as they arrive. Merges are exact integer sums and problem logs keep sorted examples, so the
result is the same for any worker count, chunking and completion order. Memory is one state per
worker plus the chunk in flight: flat in the number of images.
"""
import multiprocessing
import os
import time
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

from .problems import ProblemLog
from .task_api import PredictionProblem, ReferenceProblem

# (unit id, prediction path, name shown in messages)
Item = Tuple[str, str, str]


class Accumulated(NamedTuple):
    state: object
    submission_log: ProblemLog
    reference_log: ProblemLog
    units: int  # units processed (scored or refused)


def _cgroup_cpus() -> Optional[int]:
    """CPU quota of this container (cgroup v2 or v1), rounded up; None if unlimited."""
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
            return max(1, -(-int(quota) // int(period)))
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


# Below this many images per worker, starting a worker costs more than it saves (about 0.25 s
# for the fork server and its imports, against 1-4 ms an image).
MIN_IMAGES_PER_WORKER = 150


def default_workers(images: int) -> int:
    """Workers for a run of `images` when the user did not say: the usable CPUs, fewer for
    small runs."""
    return max(1, min(usable_cpus(), images // MIN_IMAGES_PER_WORKER))


_CONTEXT: dict = {}


def _context():
    """Start workers from a fork server where the platform has one: a fork of the main process
    would inherit (and count in its memory) the main's per-image lists, so workers' memory would
    grow with the test set. The server is a clean process that has imported the scorer once, so
    workers still start fast. Elsewhere (Windows), spawn."""
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["numpy", "PIL.Image", "scoring.engine", "scoring.tasks"])
        return ctx
    return multiprocessing.get_context("spawn")


def _init_worker(context: dict) -> None:
    _CONTEXT.clear()
    _CONTEXT.update(context)


def _score_chunk(items: Sequence[Item]):
    """The task interface's loop (task_api.py) over one chunk, into a fresh state."""
    reference, fmt = _CONTEXT["reference"], _CONTEXT["format"]
    state = _CONTEXT["task"].new_state(_CONTEXT["config"])
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
        state.update(prediction, truth)
    return state, sub_log, ref_log, len(items)


# Images per chunk at most. Each chunk costs the main process a pickled task and a pickled
# state (36 KB); with 2 workers on 2 CPUs that CPU time is taken from the workers. 128 images
# are 0.1-0.5 s of work: progress still moves and the load still balances (measured at 19,708
# images: main process CPU 1.0 s with chunks of 32, 0.35 s with 128).
CHUNK = 128


def chunked(items: list, workers: int) -> list:
    # Enough chunks to balance load and report progress, few enough to keep overhead negligible.
    size = max(1, min(CHUNK, len(items) // (workers * 8) or 1))
    return [items[i:i + size] for i in range(0, len(items), size)]


def map_chunks(function: Callable, context: dict, chunks: list, workers: int,
               absorb: Callable) -> None:
    """absorb(function(chunk)) for every chunk, in worker processes that see `context` as
    engine._CONTEXT. Results arrive in completion order: absorb must be order-independent."""
    if workers <= 1 or len(chunks) <= 1:
        _init_worker(context)
        for chunk in chunks:
            absorb(function(chunk))
        return
    pool = _context().Pool(min(workers, len(chunks)), _init_worker, (context,))
    try:
        for result in pool.imap_unordered(function, chunks):
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
