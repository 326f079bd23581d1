#!/usr/bin/env python3
"""Benchmark of the Planetscapes semantic task on Cityscapes-sized images (issue 8, section 4).

    python3 bench/planetscapes.py --anchor-python /venvs/cs-pure/bin/python \\
        --anchor-python /venvs/cs-cython/bin/python --report bench/results-planetscapes.md

1. Generates (deterministically, cached under --data) N scenes of 2048 x 1024 in the Cityscapes
   format with the Cityscapes label ids: labels/<id>.png (8-bit), instances/<id>.png (16-bit),
   and a prediction <id>.png each; the anchor's *_gtFine_labelIds.png / *_gtFine_instanceIds.png
   names are symbolic links to the same files. A second reference of N/3 of the images (links
   again) measures whether memory grows with the number of images.
2. Reads every file once, untimed (warm page cache).
3. (a) Decode floor: the three PNGs of every image decoded with Pillow in this one process;
   its CPU time divided by the CPUs is the ideal all-CPU time of anything that must decode
   them (its CPU time, not its wall time, which other sessions' load may stretch).
4. (b) cityscapesScripts' evalPixelLevelSemanticLabeling.evaluateImgLists on the same files, in
   each --anchor-python (an environment with cityscapesscripts and numpy < 2.4; the option may
   be repeated, e.g. one installation with the compiled evaluation extension and one without),
   through bench/cityscapes_anchor.py; only the evaluation call is timed, not its imports. Each
   row is labelled by the path that installation ran (Cython extension or pure Python, read
   from the evaluator's own flag in the evaluating process). Its scores are checked against
   ours (every key).
   (a) Lower bound (bench/planetscapes_bound.py): the three PNGs decoded with the scorer's own
   decoder, then also one confusion count, nothing else, through the scorer's engine with all
   CPUs, start-up included: no scorer can be faster on this machine, so a target under it shows.
5. (c) The real command `score.py --ref REF --res PRED --workers W --quiet --out TMP` with 1 and
   with all CPUs (wall time includes start-up), peak resident memory of its process tree.
6. Prints one Markdown report (also written to --report FILE).

Exit status: 0 measured (targets may FAIL: reported, not an error); 1 a correctness check failed.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import PIL
from PIL import Image

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(ROOT, "competitions", "planetscapes"))

import interval_cost  # noqa: E402
import run as common  # noqa: E402  (bench/run.py: process-tree memory, load, tables)
import make_semantic_sample as sample  # noqa: E402
from scoring import engine  # noqa: E402
from scoring.tasks.planetscapes_semantic import cityscapes_labels  # noqa: E402
from scoring.tasks.planetscapes_semantic.labels import key_name  # noqa: E402

H, W = 1024, 2048  # Cityscapes' frame (--height / --width change it, for tests)
STAMP_FORMAT = 2
PACK = os.path.join(ROOT, "organizer", "pack.py")
LAYOUTS = ("raw", "packed")
# Targets per layout. Issue 17: the raw layout (what every participant's dry run and every
# cityscapesScripts user meets) at most 1.3 x the decode floor / CPUs and 3x faster than
# cityscapesScripts (the Cython path included); the packed one at most 1.1 x the floor / CPUs
# and, as issue 8 asked, 4x faster than cityscapesScripts.
SPEEDUP_VS_ANCHOR = {"raw": 3.0, "packed": 4.0}
FLOOR_FACTOR = {"raw": 1.3, "packed": 1.1}
FLAT_MEMORY_FACTOR = 1.25  # peak at N images within this factor of the peak at N/3
ANCHOR = os.path.join(BENCH, "cityscapes_anchor.py")  # run by each --anchor-python
INTERVAL_SHARE = 0.05  # the confidence interval's budget (issue 18)
INTERVAL_MB = 50.0
INTERVAL_ROWS_IMAGES = 20  # images update with rows is timed against update without on

# Cityscapes ids for the synthetic scenes: ground and structures, sky, things with their sizes
# (min, max radius as a fraction of the height), a few void ids.
STUFF = [7, 8, 11, 21, 22, 7, 12, 13, 17, 20, 9, 6]
THINGS = {24: (0.01, 0.06), 25: (0.01, 0.05), 26: (0.02, 0.1), 27: (0.04, 0.15),
          28: (0.05, 0.2), 29: (0.04, 0.1), 30: (0.03, 0.1), 31: (0.05, 0.2),
          32: (0.01, 0.05), 33: (0.01, 0.05)}
IDS = [lab[1] for lab in cityscapes_labels.LABELS if lab[1] >= 0]
CONFUSIONS = [(26, 27), (27, 26), (24, 25), (7, 8), (26, 29), (21, 22), (11, 12)]

def say(msg=""):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def image_id(k):
    return "planet_{:06d}_{:06d}".format(k // 100, k % 100)


def make_image(seed, k, h=H, w=W):
    lab, inst = sample.draw_scene(np.random.RandomState([seed, k, 0]), h, w, STUFF, THINGS,
                                  sky=23, ridge=11, max_things=30)
    lab[h - h // 12:] = 1  # ego vehicle (ignored), as at the bottom of Cityscapes frames
    inst[h - h // 12:] = 1
    pred = sample.degrade(np.random.RandomState([seed, k, 1]), lab, IDS, CONFUSIONS, 0)
    return lab, inst, pred


def _link_set(data, name, ids):
    """A reference (config + labels/ + instances/) as links and predictions of `ids` (copies)."""
    ref, pred = os.path.join(data, name, "ref"), os.path.join(data, name, "pred")
    for folder in ("labels", "instances"):
        os.makedirs(os.path.join(ref, folder))
    os.makedirs(pred)
    shutil.copy(os.path.join(data, "ref", "config.yaml"), ref)
    for i in ids:
        for folder in ("labels", "instances"):
            os.symlink(os.path.join(data, "ref", folder, i + ".png"),
                       os.path.join(ref, folder, i + ".png"))
        # Predictions as files: the scorer never follows a link in a submission.
        shutil.copyfile(os.path.join(data, "pred", i + ".png"), os.path.join(pred, i + ".png"))
    return ref, pred


def prepare(data, n, seed, h=H, w=W):
    stamp_path = os.path.join(data, "stamp.json")
    want = {"format": STAMP_FORMAT, "images": n, "seed": seed, "size": [w, h],
            "generator": common.sources_sha1(ROOT, ["competitions/planetscapes/make_semantic_sample.py",
                                                    "bench/planetscapes.py"])}
    ids = [image_id(k) for k in range(n)]
    if common._read_json(stamp_path) == want:
        return ids, False, want.get("seconds")
    if os.path.isdir(data):
        shutil.rmtree(data)
    started = time.perf_counter()
    ref, pred, gt = (os.path.join(data, f) for f in ("ref", "pred", "gt"))
    for folder in (os.path.join(ref, "labels"), os.path.join(ref, "instances"), pred, gt):
        os.makedirs(folder)
    with open(os.path.join(ref, "config.yaml"), "w") as f:
        f.write("task: planetscapes-semantic\nlabels: cityscapes\n")
    for k, i in enumerate(ids):
        lab, inst, p = make_image(seed, k, h, w)
        Image.fromarray(lab).save(os.path.join(ref, "labels", i + ".png"))
        sample.save_16bit(inst, os.path.join(ref, "instances", i + ".png"))
        Image.fromarray(p).save(os.path.join(pred, i + ".png"))
        os.symlink(os.path.join(ref, "labels", i + ".png"),
                   os.path.join(gt, i + "_gtFine_labelIds.png"))
        os.symlink(os.path.join(ref, "instances", i + ".png"),
                   os.path.join(gt, i + "_gtFine_instanceIds.png"))
        if (k + 1) % 20 == 0:
            say("  generated {} / {} images".format(k + 1, n))
    third = ids[:max(1, n // 3)]
    _link_set(data, "third", third)
    subprocess.check_call([sys.executable, PACK, ref, os.path.join(data, "packed")],
                          stdout=subprocess.DEVNULL)
    small = os.path.join(data, "third", "packed")
    os.makedirs(os.path.join(small, "packed"))
    shutil.copy(os.path.join(data, "packed", "config.yaml"), small)
    with open(os.path.join(data, "packed", "packed.json")) as f:
        manifest = json.load(f)
    manifest["ids"] = third
    with open(os.path.join(small, "packed.json"), "w") as f:
        json.dump(manifest, f)
    for i in third:
        os.symlink(os.path.join(data, "packed", "packed", i + ".png"),
                   os.path.join(small, "packed", i + ".png"))
    want["seconds"] = round(time.perf_counter() - started, 1)
    common._write_json(stamp_path, want)
    del want["seconds"]
    return ids, True, None


def files_of(data, ids):
    return ([os.path.join(data, "ref", "labels", i + ".png") for i in ids],
            [os.path.join(data, "ref", "instances", i + ".png") for i in ids],
            [os.path.join(data, "pred", i + ".png") for i in ids])


def decode_floor(paths):
    cpu = time.process_time()
    with common.OtherLoad() as load:
        for p in paths:
            with Image.open(p) as img:
                np.asarray(img)
    return load.wall, load.percent(), time.process_time() - cpu


BOUND = os.path.join(BENCH, "planetscapes_bound.py")


def run_bound(ref, pred, workers, repeat, decode_only):
    """bench/planetscapes_bound.py as a command, timed exactly as the scorer is (the same
    sampling of its process tree, which costs both the same): the fastest of `repeat` runs."""
    cmd = [sys.executable, BOUND, ref, pred, "--workers", str(workers)]
    if decode_only:
        cmd.append("--decode-only")
    best = None
    for _ in range(repeat):
        run, _ = timed_tree(cmd, "the bound")
        if best is None or run.wall < best.wall:
            best = run
    return best


class Run:
    def __init__(self, wall, cpu, peak_mb, other, scores):
        self.wall, self.cpu, self.peak_mb, self.other, self.scores = wall, cpu, peak_mb, other, scores


class OwnTicks(threading.Thread):
    """The CPU ticks of one process (the scorer itself), sampled every `interval` s until it
    exits: the part of the process tree's time that TreeMemorySampler does not record."""

    def __init__(self, pid, interval=0.02):
        threading.Thread.__init__(self, daemon=True)
        self.pid, self.interval, self.ticks = pid, interval, 0
        self._halt = threading.Event()

    def run(self):
        while True:
            self.ticks = max(self.ticks, common.cpu_ticks(self.pid))
            if self._halt.wait(self.interval):
                return

    def finish(self):
        self._halt.set()
        self.join()
        return self.ticks / float(os.sysconf("SC_CLK_TCK"))


def tree_cpu_seconds(waited, own_sampled, descendants_sampled):
    """CPU time of the scorer's process tree. `waited` (this process's RUSAGE_CHILDREN over the
    run) holds the scorer and every descendant it waited for: workers it forked itself, not
    those of a fork server. Sampling /proc sees every process but misses each one's last
    interval. Both are lower bounds of the true time, so the larger one is kept: adding them
    would count forked workers twice (the earlier version did, which made the CPU per image
    look doubled from 1 to 2 workers)."""
    return max(waited, own_sampled + descendants_sampled)


def timed_tree(cmd, what):
    """Run cmd as bench/run.py runs the scorer: (Run without scores, stdout). Wall time, peak
    memory of the process tree, other load, and the tree's CPU time (tree_cpu_seconds)."""
    before = os.times()
    with common.OtherLoad() as load:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        sampler = common.TreeMemorySampler(proc.pid)
        own = OwnTicks(proc.pid)
        sampler.start()
        own.start()
        stdout, stderr = proc.communicate()
        own_cpu = own.finish()
        peak = sampler.finish()
    after = os.times()
    waited = after[2] + after[3] - before[2] - before[3]
    cpu = tree_cpu_seconds(waited, own_cpu, sampler.descendant_cpu_seconds())
    if load.other is not None:  # OtherLoad took the unwaited workers for others
        load.other = max(0.0, load.other - (cpu - waited))
    if proc.returncode != 0:
        raise common.BenchError("{} exited {}: {}\n{}".format(
            what, proc.returncode, " ".join(cmd), stderr.decode("utf-8", "replace")))
    return Run(load.wall, cpu, peak, load.percent(), None), stdout


def run_scorer(ref, pred, workers, repeat):
    """The real command, as bench/run.py runs it (wall, peak memory of the process tree, other
    load), plus the CPU time of the whole tree (tree_cpu_seconds). The fastest of `repeat`
    runs."""
    best = None
    for _ in range(repeat):
        out = tempfile.mkdtemp(prefix="bench-ps-")
        try:
            cmd = [sys.executable, common.SCORE, "--ref", ref, "--res", pred, "--workers",
                   str(workers), "--quiet", "--out", out]
            run, _ = timed_tree(cmd, "the scorer")
            with open(os.path.join(out, "scores.txt"), "rb") as f:
                run.scores = f.read()
        finally:
            shutil.rmtree(out, ignore_errors=True)
        if best is not None and best.scores != run.scores:
            raise common.BenchError("scores.txt differs between repeats of the same run")
        if best is None or run.wall < best.wall:
            best = run
    return best


class Anchor:
    """One cityscapesScripts run: its environment, the path it ran, its times and scores."""

    def __init__(self, python, out, other):
        self.python, self.other = python, other
        self.path, self.extension, self.version = out["path"], out["extension"], out["version"]
        self.wall, self.cpu, self.scores = out["seconds"], out["cpu"], out["scores"]

    @property
    def label(self):
        """What ran, e.g. "cityscapesScripts 2.2.4, Cython path"."""
        return anchor_label(self.version, self.path)

    @property
    def short(self):
        return "cityscapesScripts ({} path)".format(self.path)


def anchor_label(version, path):
    return "cityscapesScripts {}, {} path".format(version, path)


def run_anchor(python, data, ids):
    gt = [os.path.join(data, "gt", i + "_gtFine_labelIds.png") for i in ids]
    pred = [os.path.join(data, "pred", i + ".png") for i in ids]
    with tempfile.TemporaryDirectory() as tmp:
        lists = os.path.join(tmp, "lists.json")
        with open(lists, "w") as f:
            json.dump([gt, pred], f)
        with common.OtherLoad() as load:
            proc = subprocess.run([python, ANCHOR, lists], capture_output=True, cwd=tmp)
    if proc.returncode != 0:
        raise common.BenchError("the anchor failed ({}):\n{}".format(
            python, proc.stderr.decode("utf-8", "replace")))
    return Anchor(python, json.loads(proc.stdout.decode().strip().splitlines()[-1]),
                  load.percent())


def compare(anchor, ours):
    """(keys compared, max abs difference); BenchError on any disagreement beyond rounding."""
    pairs = [(anchor["averageScoreClasses"], "iou_class"),
             (anchor["averageScoreInstClasses"], "iiou_class"),
             (anchor["averageScoreCategories"], "iou_category"),
             (anchor["averageScoreInstCategories"], "iiou_category")]
    for group, prefix in (("classScores", "iou_class_"), ("classInstScores", "iiou_class_"),
                          ("categoryScores", "iou_category_"),
                          ("categoryInstScores", "iiou_category_")):
        pairs += [(v, prefix + key_name(k)) for k, v in anchor[group].items()]
    worst = 0.0
    for value, key in pairs:
        got = ours.get(key)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            if got is not None:
                raise common.BenchError("{}: anchor NaN, ours {}".format(key, got))
            continue
        if got is None:
            raise common.BenchError("{}: anchor {}, ours absent".format(key, value))
        worst = max(worst, abs(got - value))
    if worst > 1e-9:  # scores.txt holds 10 decimals
        raise common.BenchError("scores differ from the anchor by {}".format(worst))
    return len(pairs), worst


def parse_scores(text):
    return {k.strip(): float(v) for k, v in (line.split(":") for line in text.decode().splitlines())}


def parse_args(argv):
    p = argparse.ArgumentParser(description="Planetscapes semantic benchmark (Cityscapes-sized).")
    p.add_argument("--images", type=int, default=60)
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "planetscapes-bench"))
    p.add_argument("--anchor-python", action="append", default=[],
                   help="a Python with cityscapesscripts and numpy < 2.4; repeat it for several "
                   "installations, e.g. with and without the compiled evaluation extension (no "
                   "anchor row if not given)")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--width", type=int, default=W)
    p.add_argument("--height", type=int, default=H)
    p.add_argument("--report")
    return p.parse_args(argv)


class Measured:
    """Everything the report is made of: the set, then each step's measurements."""

    def __init__(self, args):
        self.args, self.n, self.cpus = args, args.images, engine.usable_cpus()


def measure_set(m):
    """The set (generated or reused), its files read once untimed, their sizes."""
    args = m.args
    say("data: {} images of {} x {} under {}".format(m.n, args.width, args.height, args.data))
    m.ids, m.made, _ = prepare(args.data, m.n, args.seed, args.height, args.width)
    labels, instances, preds = files_of(args.data, m.ids)
    m.all_files = labels + instances + preds
    m.warm = common.warm_up(m.all_files + [os.path.join(args.data, "packed", "packed", i + ".png")
                                           for i in m.ids])
    m.sizes = {name: sum(os.path.getsize(f) for f in files) for name, files in
               (("labels", labels), ("instances", instances), ("predictions", preds))}


def measure_floor_and_bounds(m):
    """(a) the decode floor in this process, and the lower bound with and without the
    confusion count."""
    say("(a) decode floor")
    m.floor, m.floor_load, m.floor_cpu = decode_floor(m.all_files)
    say("    {:.2f} s".format(m.floor))
    say("(a) lower bound, {} workers".format(m.cpus))
    m.bounds = {}
    for decode_only in (True, False):
        m.bounds[decode_only] = run_bound(os.path.join(m.args.data, "ref"),
                                          os.path.join(m.args.data, "pred"), m.cpus,
                                          m.args.repeat, decode_only)
        say("    {}: {:.2f} s".format("decode only" if decode_only else "decode and confusion",
                                      m.bounds[decode_only].wall))


def measure_anchors(m):
    """(b) cityscapesScripts' evaluator in each --anchor-python."""
    m.anchors = []
    for python in m.args.anchor_python:
        say("(b) cityscapesScripts' evaluator in {}".format(python))
        m.anchors.append(run_anchor(python, m.args.data, m.ids))
        say("    {}: {:.2f} s".format(m.anchors[-1].label, m.anchors[-1].wall))


def measure_scorer(m):
    """(c) score.py on both layouts with 1 and all CPUs, and on a third of the images (memory);
    the same scores.txt from every run, equal to each anchor's."""
    say("(c) score.py")
    data = m.args.data
    m.runs, m.third = {}, {}
    m.third_ids = m.ids[:max(1, m.n // 3)]
    pred = os.path.join(data, "pred")
    for layout in LAYOUTS:
        ref = os.path.join(data, "ref" if layout == "raw" else "packed")
        for workers in sorted({1, m.cpus}):
            r = run_scorer(ref, pred, workers, m.args.repeat)
            m.runs[layout, workers] = r
            say("    {} reference, {} worker(s): {:.2f} s, peak {} MB".format(
                layout, workers, r.wall, common.mb(r.peak_mb)))
        m.third[layout] = run_scorer(
            os.path.join(data, "third", "ref" if layout == "raw" else "packed"),
            os.path.join(data, "third", "pred"), m.cpus, m.args.repeat)
        say("    {} reference, {} images, {} worker(s): peak {} MB".format(
            layout, len(m.third_ids), m.cpus, common.mb(m.third[layout].peak_mb)))
    texts = {r.scores for r in m.runs.values()}
    if len(texts) != 1:
        raise common.BenchError("scores.txt differs between runs (layouts or worker counts)")
    ours = parse_scores(texts.pop())
    m.checked = [compare(a.scores, ours) for a in m.anchors]


def measure_interval(m):
    """(d) the confidence interval's cost, in this process."""
    say("(d) confidence interval, in this process (packed reference, {} workers)".format(m.cpus))
    m.interval = interval_cost.measure_images("planetscapes-semantic",
                                              os.path.join(m.args.data, "packed"),
                                              os.path.join(m.args.data, "pred"), m.cpus,
                                              INTERVAL_ROWS_IMAGES)
    say("    bootstrap {:.3f} s, rows {:.2f} ms/image".format(
        m.interval["boot"]["wall"], 1000 * m.interval["rows_per_image"]))
    # The floor is one process that only decodes: on an idle machine its wall time is its CPU
    # time. Other sessions' load can only stretch its wall time (which would make any scorer
    # look closer to it than it is), so the ideal is its CPU time / CPUs.
    m.ideal = m.floor_cpu / m.cpus
    m.rows_wall = m.interval["rows_per_image"] * m.n / m.cpus


def measurement_rows(m):
    """The table of every timed step."""
    n, cpus = m.n, m.cpus

    def cpu_ms(seconds, images):
        return common.f1(1000 * seconds / images)

    rows = [
        ["(a) decode floor: 3 PNGs / image, 1 process", 1, common.f2(m.floor),
         common.f1(1000 * m.floor / n), cpu_ms(m.floor_cpu, n), "-", common.pct(m.floor_load)],
        ["(a) decode floor CPU time / {} CPUs (ideal)".format(cpus), cpus, common.f2(m.ideal),
         common.f1(1000 * m.ideal / n), "-", "-", "-"],
    ]
    for decode_only, what in ((True, "3 PNGs decoded by the scorer's decoder"),
                              (False, "the same and one confusion count")):
        b = m.bounds[decode_only]
        rows.append(["(a) lower bound: {}, nothing else, start-up included".format(what), cpus,
                     common.f2(b.wall), common.f1(1000 * b.wall / n), cpu_ms(b.cpu, n),
                     common.mb(b.peak_mb), common.pct(b.other)])
    for a in m.anchors:
        rows.append(["(b) {} (evaluateImgLists)".format(a.label), 1, common.f2(a.wall),
                     common.f1(1000 * a.wall / n), cpu_ms(a.cpu, n), "-", common.pct(a.other)])
    for (layout, workers), r in sorted(m.runs.items()):
        rows.append(["(c) score.py, {} reference (start-up included)".format(layout), workers,
                     common.f2(r.wall), common.f1(1000 * r.wall / n), cpu_ms(r.cpu, n),
                     common.mb(r.peak_mb), common.pct(r.other)])
    third = len(m.third_ids)
    for layout in LAYOUTS:
        r = m.third[layout]
        rows.append(["(c) score.py, {} reference, {} of the images".format(layout, third),
                     cpus, common.f2(r.wall), common.f1(1000 * r.wall / third),
                     cpu_ms(r.cpu, third), common.mb(r.peak_mb), common.pct(r.other)])
    interval = m.interval
    rows.append(["(d) confidence interval: rows kept per image ({} ms/image on {} images) x {} "
                 "/ {} workers".format(common.f2(1000 * interval["rows_per_image"]),
                                       interval["rows_images"], n, cpus), cpus,
                 common.f2(m.rows_wall), common.f2(1000 * m.rows_wall / n), "-", "-", "-"])
    boot = interval["boot"]
    rows.append(["(d) confidence interval: bootstrap, 1,000 resamples of {} images, main "
                 "process".format(n), 1, common.f2(boot["wall"]),
                 common.f2(1000 * boot["wall"] / n), cpu_ms(boot["cpu"], n),
                 "{:.1f} (+{:.1f} kept)".format(boot["peak_mb"], interval["kept_mb"]), "-"])
    return rows


def layout_targets(m, layout, targets, speedups):
    """The targets of one layout's all-CPU run, in wall and in CPU time, and its memory."""
    best, ideal = m.runs[layout, m.cpus], m.ideal
    for a in m.anchors:
        # The anchor is one process: its idle wall time is at most its CPU time.
        anchor_wall = min(a.wall, a.cpu)
        speedup = anchor_wall / best.wall
        targets.append(["{}: all-CPU scorer >= {:.0f}x faster than {}".format(
            layout, SPEEDUP_VS_ANCHOR[layout], a.short), "{:.1f}x ({} s vs {} s)".format(
                speedup, common.f2(best.wall), common.f2(anchor_wall)),
            common.verdict(speedup >= SPEEDUP_VS_ANCHOR[layout])])
    ratio = best.wall / ideal
    targets.append(["{}: all-CPU scorer <= {} x (decode floor / CPUs)".format(
        layout, FLOOR_FACTOR[layout]), "{} s vs {} s ({:.2f} x)".format(
            common.f2(best.wall), common.f2(ideal), ratio),
        common.verdict(ratio <= FLOOR_FACTOR[layout])])
    # The same targets in CPU time: what they become on an idle machine with perfect
    # scaling, and a measure that other processes' load does not distort. The scorer's
    # all-CPU wall is then its tree's CPU time / CPUs, the anchor's its CPU time: "S times
    # faster" is "CPU time <= CPUs / S of the anchor's".
    need = SPEEDUP_VS_ANCHOR[layout] / m.cpus
    for a in m.anchors:
        targets.append(["{}: (CPU) scorer CPU time <= {} / {:.0f} of {}'s".format(
            layout, m.cpus, SPEEDUP_VS_ANCHOR[layout], a.short),
            "{:.1f}x less, {:.2f}x needed ({} s vs {} s)".format(
                a.cpu / best.cpu, need, common.f2(best.cpu), common.f2(a.cpu)),
            common.verdict(a.cpu / best.cpu >= need)])
    if m.anchors:
        speedups.append("- {}, all-CPU scorer: {}".format(layout, "; ".join(
            "vs {}: {:.1f}x wall, {:.1f}x CPU".format(a.short, a.wall / best.wall,
                                                      a.cpu / best.cpu) for a in m.anchors)))
    targets.append(["{}: (CPU) scorer CPU time <= {} x decode floor CPU time".format(
        layout, FLOOR_FACTOR[layout]), "{} s vs {} s ({:.2f} x)".format(
            common.f2(best.cpu), common.f2(m.floor_cpu), best.cpu / m.floor_cpu),
        common.verdict(best.cpu <= FLOOR_FACTOR[layout] * m.floor_cpu)])
    small = m.third[layout]
    flat = (None if best.peak_mb is None or small.peak_mb is None
            else best.peak_mb <= FLAT_MEMORY_FACTOR * small.peak_mb)
    targets.append(["{}: peak memory flat in the number of images ({} vs {} images)".format(
        layout, m.n, len(m.third_ids)), "{} MB vs {} MB".format(
            common.mb(best.peak_mb), common.mb(small.peak_mb)), common.verdict(flat)])


def all_targets(m):
    """(targets table rows, speed-up lines): each layout's, then the interval's."""
    targets, speedups = [], []
    for layout in LAYOUTS:
        layout_targets(m, layout, targets, speedups)
    best = m.runs["packed", m.cpus]
    boot = m.interval["boot"]
    cost = m.rows_wall + boot["wall"]
    targets.append(["confidence interval <= {:.0f}% of the all-CPU packed scorer run".format(
        100 * INTERVAL_SHARE), "{} s of {} s ({:.1f}%)".format(
            common.f2(cost), common.f2(best.wall), 100 * cost / best.wall),
        common.verdict(cost <= INTERVAL_SHARE * best.wall)])
    memory = boot["peak_mb"] + m.interval["kept_mb"]
    targets.append(["confidence interval memory <= {:.0f} MB (bootstrap peak + rows kept)".format(
        INTERVAL_MB), "{:.1f} MB".format(memory), common.verdict(memory <= INTERVAL_MB)])
    return targets, speedups


def header_lines(m, rows, targets):
    """The title, the machine, the scorer, the data, the measurements and the targets."""
    args, n = m.args, m.n
    packed_bytes = common.folder_bytes(os.path.join(args.data, "packed", "packed"))
    return [
        "# Planetscapes semantic labeling benchmark: {} images of {} x {}".format(
            n, args.width, args.height),
        "",
        "Machine: {} usable CPUs, {}, {:.0f} GB RAM; Python {}, numpy {}, Pillow {}; {}.".format(
            m.cpus, common.cpu_model(), common.mem_total_gb() or 0, sys.version.split()[0],
            np.__version__, PIL.__version__, common._now()),
        "",
        "Scorer: {}.".format(common.scorer_identity()),
        "",
        "Data: {} synthetic scenes of {} x {} in the Cityscapes format and ids (bench/planetscapes.py "
        "with competitions/planetscapes/make_semantic_sample.py's scene drawer, seed {}){}: "
        "label ids (8-bit), "
        "instance ids (16-bit), predictions (8-bit). Bytes: labels {:,}, instances {:,}, "
        "predictions {:,}; packed reference (organizer/pack.py) {:,}. Every file was read "
        "once, untimed, before the timed steps ({:,} bytes).".format(
            n, args.width, args.height, args.seed, "" if m.made else " (cached)",
            m.sizes["labels"], m.sizes["instances"],
            m.sizes["predictions"], packed_bytes, m.warm),
        "",
        common.markdown_table(["measurement", "workers", "wall (s)", "wall ms / image",
                               "CPU ms / image", "peak RSS (MB)", "other load"], rows),
        "",
        "Targets:",
        "",
        common.markdown_table(["target", "measured", "result"], targets, align=["l", "l", "l"]),
        "",
    ]


def bound_lines(m):
    """What the lower bound leaves for everything else the scorer must do."""
    ideal, cpus = m.ideal, m.cpus
    bound, decode_only = m.bounds[False].wall, m.bounds[True].wall
    raw_best = m.runs["raw", cpus].wall
    room = FLOOR_FACTOR["raw"] * ideal - bound
    return [
        "Lower bound of the raw layout (bench/planetscapes_bound.py, {} workers, timed as the "
        "scorer is): decoding the three PNGs and counting one confusion matrix, with no check, "
        "no instance count and no report, takes {} s, {:.2f} x (decode floor / CPUs); decoding "
        "alone {} s ({:.2f} x). The raw target ({} x, {} s) {}; the scorer takes {} s more than "
        "the bound.".format(
            cpus, common.f2(bound), bound / ideal, common.f2(decode_only), decode_only / ideal,
            FLOOR_FACTOR["raw"], common.f2(FLOOR_FACTOR["raw"] * ideal),
            "leaves {} s beyond the bound for everything else the scorer must do".format(
                common.f2(room)) if room > 0 else
            "is under the bound itself (by {} s): no scorer can meet it here".format(
                common.f2(-room)), common.f2(raw_best - bound)),
        ""]


def anchor_lines(m, speedups):
    """The speed-ups and the correctness check against each anchor, and its environment."""
    lines = []
    if speedups:
        lines += ["Speed-ups (anchor wall / scorer wall; anchor CPU / scorer CPU, the scorer's "
                  "whole process tree):", ""] + speedups + [""]
    if not m.anchors:
        lines.append("The anchor was not run (no --anchor-python).")
        return lines
    lines.append("Correctness: every scorer run exited 0; scores.txt identical for both "
                 "layouts with 1 and {} workers; {}.".format(m.cpus, "; ".join(
                     "{} keys compared with the results of {}, max abs difference {:.2g}".format(
                         keys, a.label, worst) for a, (keys, worst) in zip(m.anchors, m.checked)))
                 + " (scores.txt holds 10 decimals)")
    lines.append("")
    for a in m.anchors:
        lines.append("Anchor environment: {} -> {}{} (numpy < 2.4; only the evaluation call "
                     "is timed, not its imports; the path is the evaluator's own CSUPPORT "
                     "flag in that process).".format(
                         a.python, a.label, ", extension {}".format(
                             os.path.basename(a.extension)) if a.extension else ""))
        lines.append("")
    return lines


def report_of(m):
    targets, speedups = all_targets(m)
    lines = header_lines(m, measurement_rows(m), targets) + bound_lines(m)
    return "\n".join(lines + anchor_lines(m, speedups)) + "\n"


def main(argv=None):
    m = Measured(parse_args(argv))
    for step in (measure_set, measure_floor_and_bounds, measure_anchors, measure_scorer,
                 measure_interval):
        step(m)
    report = report_of(m)
    say("")
    say(report)
    if m.args.report:
        with open(m.args.report, "w") as f:
            f.write(report)
    return 0

if __name__ == "__main__":
    try:
        sys.exit(main())
    except common.BenchError as exc:
        sys.stderr.write("BENCHMARK CHECK FAILED: {}\n".format(exc))
        sys.exit(1)
