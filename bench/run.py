#!/usr/bin/env python3
"""Benchmark of the scoring program at the challenge's scale (issue 4).

    python3 bench/run.py                      # full scale: 19,708 images
    python3 bench/run.py --images 1000 --report bench/results-1000.md

1. Generates a synthetic reference (raw layout) and a prediction set with
   competitions/agriculture-vision/make_sample.py, and packs the reference with
   organizer/pack.py. Both are cached under --data and reused
   when a stamp file there says they were made with the same --images and --seed.
2. Reads every file once, untimed, so every timed run sees a warm page cache.
3. Times the decode floor (every PNG decoded once with Pillow in this one process).
4. Runs the REAL command `score.py --ref REF --res PRED --workers W --quiet --out TMP` for each
   reference layout with 1 worker and with all usable CPUs, sampling the resident memory of the
   scorer's whole process tree from /proc; checks every run exits 0 and writes the same scores.txt.
5. Times a dense baseline (the metric as participants' own evaluation code usually computes it,
   with H x W x 9 boolean arrays) on a subset, and asserts its confusion matrix equals the
   scorer's on that subset.
6. Prints one Markdown report: the table, the targets with PASS/FAIL, the reference sizes on
   disk and the machine. It is also written to --report FILE, else to <--data>/results-<N>.md
   (bench/data/ is not tracked: a run never overwrites the repository's results-*.md unless
   asked). Every row and target timed while other processes used more than --busy-above % of
   the CPUs is marked BUSY (under load), and the warning names each of them.

Exit status: 0 measured (targets may FAIL: that is reported, not an error, unless --strict);
1 a correctness check failed (a scorer run failed, scores differ, dense != scorer); 2 bad usage.
Needs Python 3.7+, numpy and Pillow (and the scoring program's own requirements for score.py).
Linux: peak memory is read from /proc.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import PIL
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "scoring_program")
ORGANIZER = os.path.join(ROOT, "organizer")
SCORE = os.path.join(PROGRAM, "score.py")
PACK = os.path.join(ORGANIZER, "pack.py")
MAKE_SAMPLE = os.path.join(ROOT, "competitions", "agriculture-vision", "make_sample.py")
if PROGRAM not in sys.path:
    sys.path.insert(0, PROGRAM)

import interval_cost  # noqa: E402
from scoring import engine  # noqa: E402
from scoring.registry import TASKS  # noqa: E402
from scoring.tasks.agrivision import metric as av_metric  # noqa: E402
from scoring.tasks.agrivision.classes import N_CLASSES, PATTERNS, STORM  # noqa: E402

TASK = "agriculture-vision"
FULL_SCALE = 19708
STAMP = "stamp.json"
PACKED_STAMP = "packed-stamp.json"
STAMP_FORMAT = 2
# The packed cache is rebuilt when these change (the packer's output depends on them).
PACKER_SOURCES = ("scoring/tasks/agrivision/packed.py", "scoring/tasks/agrivision/classes.py",
                  "organizer/organizing/commands/pack.py")
LAYOUTS = ("raw", "packed")
MB = 1e6  # memory and the 500 MB target in decimal megabytes

# Targets of issue 4 (name, comparison, limit).
FLOOR_FACTOR = {"raw": 1.3, "packed": 1.5}
DENSE_FACTOR = {"raw": 6.0, "packed": 15.0}
PEAK_LIMIT_MB = 500.0
# The confidence interval's budget (issue 18): at most this share of the scorer's all-CPU run,
# and this much memory.
INTERVAL_SHARE = 0.05
INTERVAL_MB = 50.0
INTERVAL_ROWS_IMAGES = 500  # images the per-image rows are timed on (update with, without)
SPEEDUP_MIN = 1.7
LOAD_WARN_PERCENT = 10.0  # other processes' CPU use during a timed step that makes it unreliable


class BenchError(Exception):
    """A correctness check failed: the run must not be trusted."""


def say(msg=""):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


# ----------------------------------------------------------------------------- data

class Dataset:
    def __init__(self, data_dir):
        self.dir = data_dir
        self.raw = os.path.join(data_dir, "raw")
        self.pred = os.path.join(data_dir, "pred")
        self.packed = os.path.join(data_dir, "packed")
        self.stamp = {}
        self.packed_stamp = {}
        self.generated_now = False
        self.packed_now = False


def _read_json(path):
    try:
        with open(path) as f:
            value = json.load(f)
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def sources_sha1(root, rels):
    """Short sha1 of the names and contents of these files under root (missing = empty)."""
    digest = hashlib.sha1()
    for rel in rels:
        digest.update(rel.replace(os.sep, "/").encode("utf-8") + b"\0")
        try:
            with open(os.path.join(root, rel), "rb") as f:
                digest.update(f.read())
        except OSError:
            pass
        digest.update(b"\0")
    return digest.hexdigest()[:12]


def generator_sha1():
    return sources_sha1(ROOT, [os.path.relpath(MAKE_SAMPLE, ROOT)])


def packer_sha1():
    return sources_sha1(PROGRAM, PACKER_SOURCES)


def scorer_identity():
    """'commit abc1234 + uncommitted changes, scoring_program sha1 ...' (read-only git calls)."""
    files = sorted(os.path.relpath(os.path.join(d, f), PROGRAM)
                   for d, _, fs in os.walk(PROGRAM) for f in fs if f.endswith(".py"))
    source = "scoring_program/**/*.py sha1 {}".format(sources_sha1(PROGRAM, files))
    try:
        head = subprocess.check_output(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                       stderr=subprocess.DEVNULL).decode().strip()
        dirty = subprocess.check_output(["git", "-C", ROOT, "status", "--porcelain", "--",
                                         "scoring_program"], stderr=subprocess.DEVNULL).strip()
        return "commit {}{}, {}".format(head, " + uncommitted changes in scoring_program/"
                                        if dirty else "", source)
    except (OSError, subprocess.CalledProcessError):
        return source


def _same_set(stamp, images, seed):
    return (stamp.get("format") == STAMP_FORMAT and stamp.get("images") == images
            and stamp.get("seed") == seed and stamp.get("generator") == generator_sha1())


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def _run_tool(cmd, what):
    say("$ " + " ".join(cmd))
    started = time.perf_counter()
    rc = subprocess.call(cmd)
    seconds = time.perf_counter() - started
    if rc != 0:
        raise BenchError("{} failed with exit status {}".format(what, rc))
    return seconds


def prepare_data(args, layouts):
    """Generate (or reuse) the raw reference + predictions, then the packed reference."""
    ds = Dataset(args.data)
    os.makedirs(ds.dir, exist_ok=True)
    ds.stamp = _read_json(os.path.join(ds.dir, STAMP))
    cpus = engine.usable_cpus()
    if args.skip_generate:
        if not (os.path.isdir(ds.raw) and os.path.isdir(ds.pred)):
            raise BenchError("--skip-generate: no generated set in {} (raw/ and pred/)".format(ds.dir))
        say("--skip-generate: using the set in {} as it is".format(ds.dir))
    elif _same_set(ds.stamp, args.images, args.seed) and not args.regenerate:
        say("Reusing the set in {} ({:,} images, seed {}; generated in {:.1f} s on {}).".format(
            ds.dir, args.images, args.seed, ds.stamp.get("generate_seconds", 0),
            ds.stamp.get("date", "?")))
    else:
        if ds.stamp.get("images") == args.images and ds.stamp.get("seed") == args.seed:
            say("Regenerating: {}.".format(
                "--regenerate" if args.regenerate else
                "competitions/agriculture-vision/make_sample.py changed since the cached set"))
        for name in (STAMP, PACKED_STAMP, "raw", "pred", "packed"):
            _remove(os.path.join(ds.dir, name))
        say("Generating {:,} images (seed {}) with {} worker(s) into {} ...".format(
            args.images, args.seed, cpus, ds.dir))
        seconds = _run_tool([sys.executable, MAKE_SAMPLE, "--out", ds.raw, "--images",
                             str(args.images), "--seed", str(args.seed), "--submission", ds.pred,
                             "--workers", str(cpus)],
                            "competitions/agriculture-vision/make_sample.py")
        ds.stamp = {"format": STAMP_FORMAT, "images": args.images, "seed": args.seed,
                    "generator": generator_sha1(), "generate_seconds": round(seconds, 2),
                    "generate_workers": cpus, "date": _now()}
        _write_json(os.path.join(ds.dir, STAMP), ds.stamp)
        ds.generated_now = True
        say("Generation took {:.1f} s ({:.2f} ms/image, {} worker(s)).".format(
            seconds, 1000.0 * seconds / args.images, cpus))

    if "packed" in layouts:
        ds.packed_stamp = _read_json(os.path.join(ds.dir, PACKED_STAMP))
        present = os.path.isfile(os.path.join(ds.packed, "packed.json"))
        same_packer = ds.packed_stamp.get("packer") == packer_sha1()
        reusable = (present and not ds.generated_now and ds.packed_stamp.get("raw") == ds.stamp
                    and same_packer and not args.repack)
        if args.skip_generate and present and not args.repack:
            reusable = True
        if present and not reusable and not ds.generated_now:
            say("Re-packing: {}.".format("--repack" if args.repack else
                                         "the packer changed since the cached packed reference"
                                         if not same_packer else "the raw set changed"))
        if reusable:
            say("Reusing the packed reference in {} (packed in {:.1f} s).".format(
                ds.packed, ds.packed_stamp.get("pack_seconds", 0)))
        else:
            _remove(ds.packed)
            _remove(os.path.join(ds.dir, PACKED_STAMP))
            seconds = _run_tool([sys.executable, PACK, ds.raw, ds.packed, "--workers", str(cpus),
                                 "--progress-every", "30"], "organizer/pack.py")
            ds.packed_stamp = {"raw": ds.stamp, "packer": packer_sha1(),
                               "pack_seconds": round(seconds, 2),
                               "pack_workers": cpus}
            _write_json(os.path.join(ds.dir, PACKED_STAMP), ds.packed_stamp)
            ds.packed_now = True
            say("Packing took {:.1f} s.".format(seconds))
    return ds


def _pngs(folder):
    out = []
    for d, _, files in os.walk(folder):
        out.extend(os.path.join(d, f) for f in files if f.endswith(".png"))
    return sorted(out)


def _all_files(folder):
    out = []
    for d, _, files in os.walk(folder):
        out.extend(os.path.join(d, f) for f in files)
    return out


def folder_bytes(folder):
    return sum(os.path.getsize(p) for p in _all_files(folder))


def warm_up(paths):
    """Read every file once (untimed) so the timed runs see a warm page cache."""
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            while True:
                block = f.read(1 << 20)
                if not block:
                    break
                total += len(block)
    return total


def decode_floor(paths):
    """Decode every PNG once with Pillow in this one process. Returns (seconds, other load,
    {"uniform": [files, seconds], "other": [files, seconds]}): the sum of the per-file times
    (open + decode + asarray) split by whether the image turned out uniform (one value)."""
    split = {"uniform": [0, 0.0], "other": [0, 0.0]}
    clock = time.perf_counter
    with OtherLoad() as load:
        for p in paths:
            started = clock()
            with Image.open(p) as img:
                arr = np.asarray(img)
            seconds = clock() - started
            part = split["uniform" if arr.size and arr.min() == arr.max() else "other"]
            part[0] += 1
            part[1] += seconds
    return split["uniform"][1] + split["other"][1], load, split


# ---------------------------------------------------------------- load of other processes

def _system_busy_seconds():
    """CPU-seconds all CPUs spent not idle since boot (/proc/stat); None if unknown."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return (sum(fields[:8]) - idle) / float(os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _own_cpu_seconds():
    """CPU-seconds of this process and of its children already waited for."""
    t = os.times()
    return t[0] + t[1] + t[2] + t[3]


class OtherLoad:
    """CPU time other processes used during a timed step: the system's busy time minus this
    process's and its (waited-for) children's. Exit the block only after waiting for the child."""

    def __enter__(self):
        self.busy, self.own, self.wall = _system_busy_seconds(), _own_cpu_seconds(), \
            time.perf_counter()
        return self

    def __exit__(self, *exc):
        busy = _system_busy_seconds()
        self.wall = time.perf_counter() - self.wall
        self.other = None if busy is None or self.busy is None else \
            max(0.0, (busy - self.busy) - (_own_cpu_seconds() - self.own))
        return False

    def percent(self):
        """Other processes' CPU time, as % of all usable CPUs over the step."""
        if self.other is None or self.wall <= 0:
            return None
        return 100.0 * self.other / (self.wall * engine.usable_cpus())


# -------------------------------------------------------------------- process tree memory

def _ppid_map():
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/{}/stat".format(name)) as f:
                stat = f.read()
        except OSError:
            continue
        try:
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    return children


def process_tree(pid):
    children = _ppid_map()
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, ()))
    return tree


def cpu_ticks(pid):
    """utime + stime of pid so far, in clock ticks (0 if gone)."""
    try:
        with open("/proc/{}/stat".format(pid)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        return 0


def rss_kb(pid):
    try:
        with open("/proc/{}/status".format(pid)) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0  # gone, or a zombie (no VmRSS line)


class TreeMemorySampler(threading.Thread):
    """Max over time of the sum of VmRSS of pid and all its descendants, every `interval` s."""

    def __init__(self, pid, interval=0.02):
        threading.Thread.__init__(self, daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb, self.peak_processes, self.samples = 0, 0, 0
        self.ticks = {}  # last seen CPU ticks of each descendant
        self._halt = threading.Event()
        self.available = os.path.isdir("/proc/{}".format(os.getpid()))

    def run(self):
        if not self.available:
            return
        while True:
            tree = process_tree(self.pid)
            total = sum(rss_kb(p) for p in tree)
            for p in tree:
                if p != self.pid:
                    self.ticks[p] = max(self.ticks.get(p, 0), cpu_ticks(p))
            self.samples += 1
            if total > self.peak_kb:
                self.peak_kb, self.peak_processes = total, len(tree)
            if self._halt.wait(self.interval):
                return

    def descendant_cpu_seconds(self):
        """CPU time of the scorer's descendants, as last sampled. Workers started from a fork
        server are not waited for by the scorer, so their time never reaches this process's
        RUSAGE_CHILDREN: OtherLoad would count it as another process's."""
        return sum(self.ticks.values()) / float(os.sysconf("SC_CLK_TCK"))

    def finish(self):
        self._halt.set()
        self.join()
        return self.peak_kb * 1024.0 / MB if self.available and self.samples else None


# ------------------------------------------------------------------------- scorer runs

class ScorerRun:
    def __init__(self, layout, workers, wall, peak_mb, scores, samples, other):
        self.layout, self.workers, self.wall, self.peak_mb = layout, workers, wall, peak_mb
        self.scores, self.samples, self.other = scores, samples, other


def startup_seconds(repeat=3):
    """Fixed cost of the real command: interpreter start and imports (score.py --version)."""
    best = None
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.check_call([sys.executable, SCORE, "--version"], stdout=subprocess.DEVNULL)
        seconds = time.perf_counter() - started
        best = seconds if best is None else min(best, seconds)
    return best


def run_scorer(ref, pred, workers, layout, repeat):
    walls, peaks, scores, samples, others = [], [], None, 0, []
    for _ in range(repeat):
        out = tempfile.mkdtemp(prefix="bench-score-")
        try:
            cmd = [sys.executable, SCORE, "--ref", ref, "--res", pred, "--workers", str(workers),
                   "--quiet", "--out", out]
            with OtherLoad() as load:
                started = time.perf_counter()
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                sampler = TreeMemorySampler(proc.pid)
                sampler.start()
                stdout, stderr = proc.communicate()
                wall = time.perf_counter() - started
                peak = sampler.finish()
            if load.other is not None:
                load.other = max(0.0, load.other - sampler.descendant_cpu_seconds())
            if load.percent() is not None:
                others.append(load.percent())
            if proc.returncode != 0:
                raise BenchError("the scorer exited {} ({} reference, {} workers): {}\n{}\n{}".format(
                    proc.returncode, layout, workers, " ".join(cmd),
                    stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")))
            with open(os.path.join(out, "scores.txt"), "rb") as f:
                text = f.read()
            if scores is not None and text != scores:
                raise BenchError("scores.txt differs between repeats of the same run")
            scores = text
            walls.append(wall)
            if peak is not None:
                peaks.append(peak)
            samples += sampler.samples
        finally:
            shutil.rmtree(out, ignore_errors=True)
    return ScorerRun(layout, workers, min(walls), max(peaks) if peaks else None, scores, samples,
                     max(others) if others else None)


# ---------------------------------------------------------------------- dense baseline

def _read(path):
    with Image.open(path) as img:
        return np.asarray(img)


def dense_confusion(raw_root, pred_dir, ids, storm_policy="background"):
    """The metric as participants' evaluation code usually computes it: per image, H x W x 9
    multi-hot reference Y and one-hot prediction P, the overlap rule applied densely.
    Returns (9 x 9 int64 matrix M[predicted, reference], seconds)."""
    has_storm = os.path.isdir(os.path.join(raw_root, "labels", STORM))
    classes = np.arange(N_CLASSES, dtype=np.uint8)
    m = np.zeros((N_CLASSES, N_CLASSES), dtype=np.int64)
    diag = np.arange(N_CLASSES)
    started = time.perf_counter()
    for image_id in ids:
        name = image_id + ".png"
        valid = (_read(os.path.join(raw_root, "boundaries", name)) > 0) & \
                (_read(os.path.join(raw_root, "masks", name)) > 0)
        h, w = valid.shape
        y = np.zeros((h, w, N_CLASSES), dtype=bool)
        for k, cls in enumerate(PATTERNS, 1):
            y[:, :, k] = _read(os.path.join(raw_root, "labels", cls, name)) > 0
        y[:, :, 0] = ~y[:, :, 1:].any(-1)  # background where no scored label
        if has_storm:
            storm = _read(os.path.join(raw_root, "labels", STORM, name)) > 0
            if storm_policy == "ignore":  # storm_damage alone: not evaluated
                valid &= ~(storm & y[:, :, 0])
        pred = _read(os.path.join(pred_dir, name))
        p = pred[:, :, None] == classes  # one-hot
        yv, pv = y[valid], p[valid]
        hit = (pv & yv).any(-1)
        m[diag, diag] += yv[hit].sum(0)
        miss = ~hit
        m += pv[miss].T.astype(np.int64) @ yv[miss].astype(np.int64)
    return m, time.perf_counter() - started


def scorer_confusion(ref_dir, pred_dir, ids, storm_policy="background"):
    """The scoring package's own confusion matrix on the same images, in this process."""
    task = TASKS[TASK]
    reference = task.open_reference(ref_dir)
    items = [(i, os.path.join(pred_dir, i + ".png"), i + ".png") for i in ids]
    acc = engine.evaluate(task, reference, task.submission_format(None), None, items, 1)
    if acc.reference_log.fatal or acc.submission_log.fatal:
        raise BenchError("the scorer refused the subset: {} {}".format(
            acc.reference_log.summary_lines(), acc.submission_log.summary_lines()))
    return np.array(av_metric.confusion(acc.state.counts, storm_policy), dtype=np.int64)


def measure_interval(ref_dir, pred_dir, workers, k):
    """The confidence interval's cost on the whole set (bench/interval_cost.py)."""
    out = interval_cost.measure_images(TASK, ref_dir, pred_dir, workers, k)
    out["ends"] = out["intervals"].interval("miou")
    return out


def subset(ids, k):
    """k ids spread evenly over the sorted list."""
    n = len(ids)
    return [ids[i * n // k] for i in range(k)]


# ----------------------------------------------------------------------------- report

def _now():
    return datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def mem_total_gb():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024.0 / 1e9
    except (OSError, ValueError):
        pass
    return None


def markdown_table(headers, rows, align=None):
    align = align or ["l"] + ["r"] * (len(headers) - 1)
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    widths = [max(w, 3) for w in widths]

    def line(cells):
        out = []
        for c, w, a in zip(cells, widths, align):
            out.append(str(c).ljust(w) if a == "l" else str(c).rjust(w))
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2))
                         for w, a in zip(widths, align)) + "|"
    return "\n".join([line(headers), sep] + [line(r) for r in rows])


def f1(x):
    return "{:,.1f}".format(x)


def f2(x):
    return "{:,.2f}".format(x)


def mb(x):
    return "n/a" if x is None else "{:,.0f}".format(x)


def pct(x):
    return "-" if x is None or x == "-" else "{:.0f}%".format(x)


def _busy(other, limit):
    """Whether a timed step was measured under load: other processes' share above limit."""
    return other is not None and other != "-" and other > limit


def _load_note(percent, limit=LOAD_WARN_PERCENT):
    if not _busy(percent, limit):
        return ""
    return "  [WARNING: other processes used {:.0f}% of the CPUs meanwhile]".format(percent)


def verdict(ok):
    if ok is None:
        return "n/a"
    return "PASS" if ok else "FAIL"


def _header_lines(ctx):
    """The title, the machine, the scorer, the data and the page cache."""
    return [
        "# Scoring benchmark: {:,} images".format(ctx["n"]),
        "",
        "Machine: {} usable CPUs (as the scorer counts them), {}{}; Python {}, numpy {}, "
        "Pillow {}; {}.".format(
            ctx["cpus"], ctx["cpu_model"],
            ", {:.0f} GB RAM".format(ctx["mem_gb"]) if ctx["mem_gb"] else "",
            platform.python_version(), np.__version__, PIL.__version__, ctx["date"]),
        "",
        "Scorer: {}.".format(ctx["scorer"]),
        "",
        ctx["data_line"],
        "",
        "Page cache: warm. Every file of the set ({:,} files, {:,} bytes) was read once, "
        "untimed, before any timed step.".format(ctx["warm_files"], ctx["warm_bytes"]),
        "",
    ]


def _measurement_rows(ctx, limit, ideal, rows_wall):
    """(the table's rows, the (other load, label, workers) of every timed step)."""
    n, wall_w = ctx["n"], ctx["workers_all"]
    runs, floors, dense = ctx["runs"], ctx["floors"], ctx["dense"]
    rows, loads = [], []

    def row(label, workers, seconds, count, peak="-", other="-"):
        rows.append([label, workers, f2(seconds), f2(1000.0 * seconds / count),
                     f1(count / seconds) if seconds > 0 else "inf", peak,
                     pct(other) + (" BUSY" if _busy(other, limit) else "")])
        if other is not None and other != "-":
            loads.append((other, label, workers))

    for layout in ctx["layouts"]:
        for r in runs[layout]:
            row("scorer, {} reference".format(layout), str(r.workers), r.wall, n, mb(r.peak_mb),
                r.other)
    rows.append(["scorer start-up alone (score.py --version), included above", "1",
                 f2(ctx["startup"]), "", "", "-", "-"])
    for layout in ctx["layouts"]:
        fl = floors[layout]
        row("decode floor, {} ({}), 1 process".format(layout, fl["what"]), "1", fl["seconds"], n,
            other=fl["other"])
        row("decode floor, {} / {} CPUs (ideal)".format(layout, ideal), str(ideal),
            fl["seconds"] / ideal, n)
    iv = ctx["interval"]
    row("confidence interval: rows kept per image ({:.3f} ms/image on {:,} images) x {:,} / {} "
        "workers".format(1000 * iv["rows_per_image"], iv["rows_images"], n, wall_w),
        str(wall_w), rows_wall, n)
    rows.append(["confidence interval: bootstrap, 1,000 resamples of {:,} images, main process "
                 "(CPU {} s)".format(n, f2(iv["boot"]["cpu"])), "1", f2(iv["boot"]["wall"]),
                 f2(1000.0 * iv["boot"]["wall"] / n), "", "{:.1f} (+{:.1f} kept)".format(
                     iv["boot"]["peak_mb"], iv["kept_mb"]), "-"])
    row("dense baseline, measured on {:,} images".format(dense["images"]), "1", dense["seconds"],
        dense["images"], other=dense["other"])
    row("dense baseline, extrapolated to {:,} images".format(n), "1", dense["extrapolated"], n)
    return rows, loads


def _floor_and_load_lines(ctx, limit, ideal, loads):
    """What the decode floor spends on uniform PNGs, and whether the machine was busy."""
    lines = []
    for layout in ctx["layouts"]:
        fl = ctx["floors"][layout]
        (u_files, u_sec), (o_files, o_sec) = fl["split"]["uniform"], fl["split"]["other"]
        lines.append("Decode floor, {}: {:,} of the {:,} PNGs are uniform (one value) and take "
                     "{:.0f}% of it ({} s); decoding only the others takes {} s ({} s / {} CPUs)."
                     .format(layout, u_files, u_files + o_files,
                             100.0 * u_sec / max(fl["seconds"], 1e-9), f2(u_sec), f2(o_sec),
                             f2(o_sec / ideal), ideal))
    lines.append("")
    busy = [x for x in loads if _busy(x[0], limit)]
    if busy:
        lines.append("**WARNING: the machine was busy** during {} timed step{} (marked BUSY): {}. "
                     "Those timings, and the targets computed from them, are not reliable. Run "
                     "again on an idle machine.".format(
                         len(busy), "" if len(busy) == 1 else "s", "; ".join(
                             "{}, {} worker(s): other processes used {:.0f}% of the CPUs".format(
                                 label, workers, other) for other, label, workers in busy)))
    else:
        lines.append("Other load (CPU time of other processes during each timed step, as % of "
                     "all CPUs) stayed under {:.0f}%: the machine was otherwise idle.".format(
                         limit))
    lines.append("")
    return lines


def _target_rows(ctx, limit, ideal, rows_wall):
    """(the targets' rows, how many FAIL)."""
    wall_w, runs, floors, dense = ctx["workers_all"], ctx["runs"], ctx["floors"], ctx["dense"]
    iv = ctx["interval"]
    t_rows, fails = [], 0

    def timed(ok, *others):
        """The verdict, marked when a step it was computed from was measured under load."""
        loaded = any(_busy(o, limit) for o in others)
        return verdict(ok) + (" (BUSY: measured under load)" if loaded and ok is not None
                              else "")
    for layout in ctx["layouts"]:
        many = runs[layout][-1]
        fl = floors[layout]["seconds"] / ideal
        factor = FLOOR_FACTOR[layout]
        ok = many.wall <= factor * fl
        t_rows.append(["{}: all-CPU wall <= {} x (decode floor / CPUs)".format(layout, factor),
                       "{} s vs {} s ({:.2f} x)".format(f2(many.wall), f2(factor * fl),
                                                        many.wall / fl),
                       timed(ok, many.other, floors[layout]["other"])])
        fails += not ok
        need = DENSE_FACTOR[layout]
        speed = dense["extrapolated"] / many.wall
        ok = speed >= need
        t_rows.append(["{}: all-CPU >= {:.0f}x faster than dense".format(layout, need),
                       "{:.1f}x ({} s vs {} s)".format(speed, f2(many.wall), f2(dense["extrapolated"])),
                       timed(ok, many.other, dense["other"])])
        fails += not ok
    peaks = [r.peak_mb for layout in ctx["layouts"] for r in runs[layout] if r.peak_mb is not None]
    peak = max(peaks) if peaks else None
    ok = None if peak is None else peak < PEAK_LIMIT_MB
    t_rows.append(["peak memory of the process tree (any run) < {:.0f} MB".format(PEAK_LIMIT_MB),
                   "{} MB".format(mb(peak)), verdict(ok)])
    fails += ok is False
    for layout in ctx["layouts"]:
        one, many = runs[layout][0], runs[layout][-1]
        speedup = one.wall / many.wall
        ok = None if wall_w == 1 else speedup >= SPEEDUP_MIN
        t_rows.append(["{}: speed-up 1 -> {} workers >= {}x".format(layout, wall_w, SPEEDUP_MIN),
                       "{:.2f}x ({} s -> {} s)".format(speedup, f2(one.wall), f2(many.wall)),
                       timed(ok, one.other, many.other)])
        fails += ok is False
    layout = ctx["interval_layout"]
    many = runs[layout][-1]
    cost = iv["boot"]["wall"] + rows_wall
    ok = cost <= INTERVAL_SHARE * many.wall
    t_rows.append(["confidence interval <= {:.0f}% of the all-CPU {} scorer run".format(
        100 * INTERVAL_SHARE, layout), "{} s of {} s ({:.1f}%)".format(
            f2(cost), f2(many.wall), 100.0 * cost / many.wall), timed(ok, many.other)])
    fails += not ok
    memory = iv["boot"]["peak_mb"] + iv["kept_mb"]
    ok = memory <= INTERVAL_MB
    t_rows.append(["confidence interval memory <= {:.0f} MB (bootstrap peak + rows kept)".format(
        INTERVAL_MB), "{:.1f} MB".format(memory), verdict(ok)])
    fails += not ok
    return t_rows, fails


def _sizes_and_checks_lines(ctx):
    """The size on disk of each folder and the correctness checks."""
    sizes, dense = ctx["sizes"], ctx["dense"]
    s_rows = [["raw reference", "{:,}".format(sizes["raw"][0]), "{:,}".format(sizes["raw"][1]), ""]]
    if "packed" in sizes:
        s_rows.append(["packed reference", "{:,}".format(sizes["packed"][0]),
                       "{:,}".format(sizes["packed"][1]),
                       "{:.1f}x smaller".format(sizes["raw"][1] / max(sizes["packed"][1], 1))])
    s_rows.append(["predictions", "{:,}".format(sizes["pred"][0]), "{:,}".format(sizes["pred"][1]),
                   ""])
    return [
        "Size on disk (sum of file sizes):",
        "",
        markdown_table(["folder", "files", "bytes", "raw / packed"], s_rows),
        "",
        "Checks: every scorer run exited 0; scores.txt {} across the {} runs; dense "
        "baseline confusion matrix == scorer's on {:,} images ({}).".format(
            ctx["identical"], ctx["n_runs"], dense["images"],
            " and ".join("{} reference".format(x) for x in ctx["layouts"])),
        "",
    ]


def build_report(ctx):
    """(the Markdown report, how many targets FAIL)."""
    limit = ctx.get("busy_above", LOAD_WARN_PERCENT)
    ideal = min(ctx["workers_all"], ctx["cpus"])
    iv = ctx["interval"]
    rows_wall = iv["rows_per_image"] * ctx["n"] / ctx["workers_all"]
    headers = ["measurement", "workers", "wall (s)", "ms / image", "images / s", "peak RSS (MB)",
               "other load"]
    rows, loads = _measurement_rows(ctx, limit, ideal, rows_wall)
    lines = _header_lines(ctx) + [markdown_table(headers, rows), ""]
    lines += _floor_and_load_lines(ctx, limit, ideal, loads)
    t_rows, fails = _target_rows(ctx, limit, ideal, rows_wall)
    lines += ["Targets (all CPUs = {} workers):".format(ctx["workers_all"]), "",
              markdown_table(["target", "measured", "result"], t_rows, ["l", "l", "l"]), ""]
    if iv["ends"]:
        lines += ["Confidence interval of the mIoU: {:.4f} to {:.4f}.".format(*iv["ends"]), ""]
    lines += _sizes_and_checks_lines(ctx)
    loaded = sum(1 for r in t_rows if "BUSY" in r[2])
    lines.append("Targets: {}{}.".format(
        "all PASS" if not fails else "{} FAIL".format(fails),
        "; {} of them measured under load (BUSY), not reliable".format(loaded) if loaded else ""))
    return "\n".join(lines) + "\n", fails


# ------------------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Benchmark the scoring program on a synthetic set (see bench/README.md).")
    p.add_argument("--images", type=int, default=FULL_SCALE,
                   help="images in the synthetic set (default {:,}, the 2021 test set)".format(
                       FULL_SCALE))
    p.add_argument("--seed", type=int, default=2021, help="generator seed (default 2021)")
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "data"), metavar="DIR",
                   help="where the set is generated and cached (default bench/data)")
    p.add_argument("--workers-all", type=int, default=engine.usable_cpus(), metavar="N",
                   help="workers of the 'all CPUs' runs (default: usable CPUs, {})".format(
                       engine.usable_cpus()))
    p.add_argument("--skip-generate", action="store_true",
                   help="use the set already in --data as it is (no stamp check, no generation)")
    p.add_argument("--dense-images", type=int, default=1000, metavar="N",
                   help="images the dense baseline is timed on (default 1,000, or all if fewer)")
    p.add_argument("--regenerate", action="store_true",
                   help="generate the set again even if the cached one matches")
    p.add_argument("--repack", action="store_true",
                   help="pack the reference again even if the cached packed one matches")
    p.add_argument("--report", metavar="FILE",
                   help="write the Markdown report here, e.g. bench/results-19708.md to update "
                        "the tracked results (default: <--data>/results-<N>.md, untracked)")
    p.add_argument("--busy-above", type=float, default=LOAD_WARN_PERCENT, metavar="PERCENT",
                   help="mark a timed step BUSY when other processes used more than this share "
                        "of the CPUs during it (default {:g})".format(LOAD_WARN_PERCENT))
    p.add_argument("--layouts", default="raw,packed",
                   help="reference layouts to time, comma-separated (default raw,packed)")
    p.add_argument("--repeat", type=int, default=1, metavar="R",
                   help="run each scorer configuration R times; report the fastest wall time "
                        "and the largest peak memory (default 1)")
    p.add_argument("--strict", action="store_true", help="exit 1 if any target FAILs")
    args = p.parse_args(argv)
    layouts = [x.strip() for x in args.layouts.split(",") if x.strip()]
    if not layouts or any(x not in LAYOUTS for x in layouts) or len(set(layouts)) != len(layouts):
        p.error("--layouts takes raw, packed or raw,packed")
    if args.images < 1 or args.dense_images < 1 or args.workers_all < 1 or args.repeat < 1:
        p.error("--images, --dense-images, --workers-all and --repeat must be at least 1")
    args.data = os.path.abspath(args.data)
    return args, [x for x in LAYOUTS if x in layouts]


def _data_line(args, ds, n, layouts):
    """Where the set came from (generated, cached or given) and its packing."""
    if ds.stamp and _same_set(ds.stamp, n, ds.stamp.get("seed")):
        line = ("Data: {:,} synthetic images of 512 x 512 "
                "(competitions/agriculture-vision/make_sample.py, seed {}), generated in {:.1f} s "
                "with {} worker(s){}.".format(
                    n, ds.stamp.get("seed"), ds.stamp.get("generate_seconds", 0),
                    ds.stamp.get("generate_workers", "?"),
                    "" if ds.generated_now else " (cached from an earlier run)"))
    else:
        line = "Data: {:,} images from {} (--skip-generate, no stamp).".format(n, ds.dir)
    if "packed" in layouts:
        line += " Packed with organizer/pack.py in {:.1f} s{}.".format(
            ds.packed_stamp.get("pack_seconds", 0), "" if ds.packed_now else " (cached)")
    return line


def _layout_files(ds, layouts):
    """(each layout's reference PNGs, the predictions' PNGs, each folder's (files, bytes))."""
    pred_pngs = _pngs(ds.pred)
    ref_pngs = {"raw": _pngs(ds.raw)}
    if "packed" in layouts:
        ref_pngs["packed"] = _pngs(ds.packed)
    sizes = {"pred": (len(_all_files(ds.pred)), folder_bytes(ds.pred)),
             "raw": (len(_all_files(ds.raw)), folder_bytes(ds.raw))}
    if "packed" in layouts:
        sizes["packed"] = (len(_all_files(ds.packed)), folder_bytes(ds.packed))
    return ref_pngs, pred_pngs, sizes


def _measure_floors(args, layouts, ref_pngs, pred_pngs, n):
    floors = {}
    for layout in layouts:
        paths = ref_pngs[layout] + pred_pngs
        say("Decode floor, {}: decoding {:,} PNGs in one process ...".format(layout, len(paths)))
        seconds, load, split = decode_floor(paths)
        per = len(ref_pngs[layout]) / float(n)
        floors[layout] = {"seconds": seconds, "files": len(paths), "other": load.percent(),
                          "split": split,
                          "what": "{:g} ref PNG{} + 1 prediction / image".format(
                              per, "s" if per != 1 else "")}
        say("  {:.2f} s ({:.2f} ms/image){}".format(seconds, 1000.0 * seconds / n,
                                                   _load_note(load.percent(), args.busy_above)))
    return floors


def _measure_scorer_runs(args, layouts, refs, pred, n):
    """Each layout with 1 and all workers: (runs by layout, how many runs); BenchError unless
    every run wrote the same scores.txt."""
    runs, scores = {}, []
    for layout in layouts:
        runs[layout] = []
        for workers in (1, args.workers_all):
            say("Scorer, {} reference, {} worker(s) ...".format(layout, workers))
            r = run_scorer(refs[layout], pred, workers, layout, args.repeat)
            runs[layout].append(r)
            scores.append(("{} x{}".format(layout, workers), r.scores))
            say("  {:.2f} s ({:.2f} ms/image), peak RSS {} MB ({} samples){}".format(
                r.wall, 1000.0 * r.wall / n, mb(r.peak_mb), r.samples,
                _load_note(r.other, args.busy_above)))
    first = scores[0][1]
    different = [name for name, text in scores if text != first]
    if different:
        detail = "\n".join("--- {}\n{}".format(name, text.decode("utf-8", "replace"))
                           for name, text in scores)
        raise BenchError("scores.txt DIFFERS between runs ({}):\n{}".format(
            ", ".join(different), detail))
    say("scores.txt: identical across the {} runs".format(len(scores)))
    return runs, len(scores)


def _measure_interval(args, refs, pred, interval_layout):
    say("Confidence interval: the state in this process ({} reference, {} workers), the "
        "bootstrap timed on it ...".format(interval_layout, args.workers_all))
    interval = measure_interval(refs[interval_layout], pred, args.workers_all,
                                INTERVAL_ROWS_IMAGES)
    say("  bootstrap {:.2f} s wall, {:.2f} s CPU, peak {} MB, rows kept {} MB; rows in update "
        "{:.3f} ms/image".format(interval["boot"]["wall"], interval["boot"]["cpu"],
                                 mb(interval["boot"]["peak_mb"]), mb(interval["kept_mb"]),
                                 1000 * interval["rows_per_image"]))
    return interval


def _measure_dense(args, ds, refs, layouts, ids):
    """The dense baseline on a subset, timed, and its confusion matrix checked against the
    scorer's on every layout."""
    n = len(ids)
    k = min(args.dense_images, n)
    some = subset(ids, k)
    say("Dense baseline on {:,} images ...".format(k))
    with OtherLoad() as load:
        dense_m, dense_seconds = dense_confusion(ds.raw, ds.pred, some)
    say("  {:.2f} s ({:.2f} ms/image){}".format(dense_seconds, 1000.0 * dense_seconds / k,
                                               _load_note(load.percent(), args.busy_above)))
    for layout in layouts:
        mine = scorer_confusion(refs[layout], ds.pred, some)
        if not np.array_equal(mine, dense_m):
            raise BenchError("the dense baseline's confusion matrix differs from the scorer's "
                             "({} reference) on {} images:\ndense:\n{}\nscorer:\n{}".format(
                                 layout, k, dense_m, mine))
    say("Dense baseline confusion matrix == scorer's on {:,} images ({} reference): OK".format(
        k, ", ".join(layouts)))
    return {"images": k, "seconds": dense_seconds, "extrapolated": dense_seconds * n / k,
            "other": load.percent()}


def _write_report(args, report, n):
    """The tracked results-*.md change only when asked (--report); by default the report goes
    beside the generated set, which git ignores."""
    target = args.report or os.path.join(args.data, "results-{}.md".format(n))
    folder = os.path.dirname(os.path.abspath(target))
    os.makedirs(folder, exist_ok=True)
    with open(target, "w") as f:
        f.write(report)
    say("\nReport written to {}{}".format(target, "" if args.report else
                                            " (give --report FILE to write it elsewhere)"))


def main(argv=None):
    args, layouts = parse_args(argv)
    cpus = engine.usable_cpus()
    ds = prepare_data(args, layouts)
    refs = {"raw": ds.raw, "packed": ds.packed}
    ids = list(TASKS[TASK].open_reference(ds.raw).ids)
    n = len(ids)
    if n != args.images and not args.skip_generate:
        raise BenchError("the raw reference holds {} images, expected {}".format(n, args.images))
    data_line = _data_line(args, ds, n, layouts)
    ref_pngs, pred_pngs, sizes = _layout_files(ds, layouts)
    warm = [p for layout in ref_pngs for p in _all_files(refs[layout])] + _all_files(ds.pred)
    say("Warm-up: reading all {:,} files once, untimed (page cache) ...".format(len(warm)))
    warm_bytes = warm_up(warm)
    floors = _measure_floors(args, layouts, ref_pngs, pred_pngs, n)
    startup = startup_seconds()
    say("Scorer start-up alone (score.py --version): {:.2f} s".format(startup))
    runs, n_runs = _measure_scorer_runs(args, layouts, refs, ds.pred, n)
    interval_layout = "packed" if "packed" in layouts else "raw"
    interval = _measure_interval(args, refs, ds.pred, interval_layout)
    dense = _measure_dense(args, ds, refs, layouts, ids)
    ctx = {"n": n, "cpus": cpus, "workers_all": args.workers_all, "layouts": layouts,
           "runs": runs, "floors": floors, "dense": dense, "sizes": sizes,
           "cpu_model": cpu_model(), "mem_gb": mem_total_gb(), "date": _now(),
           "data_line": data_line, "warm_files": len(warm), "warm_bytes": warm_bytes,
           "identical": "identical", "n_runs": n_runs, "startup": startup,
           "scorer": scorer_identity(), "interval": interval,
           "interval_layout": interval_layout, "busy_above": args.busy_above}
    report, fails = build_report(ctx)
    say("")
    sys.stdout.write(report)
    sys.stdout.flush()
    _write_report(args, report, n)
    return 1 if (fails and args.strict) else 0

if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        sys.stderr.write("\nBENCH FAILED: {}\n".format(exc))
        sys.exit(1)
