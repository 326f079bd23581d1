"""The cost of the confidence interval (docs/confidence.md), measured in this process for the
benches (run.py, vqa.py, planetscapes.py): what it adds to a scorer run is
  (1) the per-unit rows the state keeps in update() (in the workers): timed as update on the
      scorer's state against update on the same state keeping no rows, on the same units already
      read, best of `repeat`;
  (2) the bootstrap after scoring (in the main process): confidence.compute, CPU and wall time,
      best of `repeat`, and its peak of allocated memory (tracemalloc, numpy's arrays included);
  (3) the memory the kept rows take in the main process.
"""
import os
import sys
import time
import tracemalloc

PROGRAM = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "scoring_program")
if PROGRAM not in sys.path:
    sys.path.insert(0, PROGRAM)

from scoring import confidence  # noqa: E402


def deep_bytes(obj, seen=None) -> int:
    """Bytes of obj and everything in it (lists, tuples, dicts, numpy arrays, numbers, strings),
    each object once."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)  # a numpy array owning its data counts it
    if isinstance(obj, dict):
        size += sum(deep_bytes(k, seen) + deep_bytes(v, seen) for k, v in obj.items())
    elif isinstance(obj, (list, tuple)):
        size += sum(deep_bytes(x, seen) for x in obj)
    return size


def bootstrap_cost(task, state, summary, reference, setup, repeat=3):
    """{"cpu", "wall": best seconds of confidence.compute, "peak_mb": its allocation peak,
    "intervals": the result}; setup: the reference's reference_setup.Setup."""
    cpu = wall = None
    result = None
    settings, by = setup.settings, setup.intervals.by
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        result = confidence.compute(task, state, summary, reference, settings, by)
        c, w = time.process_time() - c, time.perf_counter() - w
        cpu = c if cpu is None else min(cpu, c)
        wall = w if wall is None else min(wall, w)
    tracemalloc.start()
    try:
        confidence.compute(task, state, summary, reference, settings, by)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {"cpu": cpu, "wall": wall, "peak_mb": peak / 1e6, "intervals": result}


def without_rows(state):
    """The same empty state keeping no per-unit rows: an image task's state keeps them under
    its storm_damage policy (Agriculture-Vision) or its row layout (Planetscapes)."""
    for switch in ("row_layout", "storm_policy"):
        if hasattr(state, switch):
            setattr(state, switch, None)
            return state
    raise ValueError("{} keeps its rows unconditionally".format(type(state).__name__))


def rows_cost(task, settings, units, repeat=3):
    """Extra CPU seconds per unit that update() with the rows kept (the scorer's state) costs
    over update() keeping none, on units = [(unit id, prediction, truth)] already read."""
    def timed(keep_rows):
        best = None
        for _ in range(repeat):
            state = task.new_state(settings)
            if not keep_rows:
                state = without_rows(state)
            started = time.process_time()
            for unit_id, prediction, truth in units:
                state.update(unit_id, prediction, truth)
            seconds = time.process_time() - started
            best = seconds if best is None else min(best, seconds)
        return best
    plain, kept = timed(False), timed(True)
    return max(0.0, kept - plain) / max(len(units), 1), plain / max(len(units), 1)


def read_units(task, reference, fmt, items):
    """[(unit id, prediction, truth)] of items = [(unit id, path)], read once (untimed)."""
    out = []
    for unit_id, path in items:
        truth = reference.read(unit_id)
        out.append((unit_id, fmt.read(path, reference.expect(unit_id, truth)), truth))
    return out


def measure_images(task_name, ref_dir, pred_dir, workers, k):
    """For an image task (its state keeps unit_rows): the scorer's state of the whole set in
    this process, the bootstrap timed on it, the rows it keeps, and update with rows against
    update without on the first k images."""
    from scoring import engine, reference_setup
    setup = reference_setup.configure(ref_dir, task_name)
    task, settings = setup.task, setup.settings
    reference = setup.open()
    fmt = task.submission_format(settings)
    files = sorted(fmt.discover(pred_dir, reference.ids).files.items())
    acc = engine.evaluate(task, reference, fmt, settings, [(i, p, i) for i, p in files], workers)
    summary = task.summarize(acc.state, reference, settings)
    boot = bootstrap_cost(task, acc.state, summary, reference, setup)
    kept = deep_bytes(acc.state.unit_rows) / 1e6
    step = max(1, len(files) // max(k, 1))  # spread over the set
    some = read_units(task, reference, fmt, files[::step][:k])
    extra, plain = rows_cost(task, settings, some)
    return {"boot": boot, "kept_mb": kept, "rows_per_image": extra, "update_per_image": plain,
            "rows_images": len(some), "intervals": boot["intervals"]}
