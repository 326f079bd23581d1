#!/usr/bin/env python3
"""Benchmark of compare.py at a final leaderboard's size (issue 36): many different submissions
on one test set, its time, its memory and the share of its time spent decoding predictions.

    python3 bench/compare_scale.py --report /tmp/compare-scale.md   # 200 x 1,000; 100 x 19,708
    python3 bench/compare_scale.py --images 40 --submissions 25 --full-images 400 \
        --full-submissions 30                                               # a quick look

1. The Agriculture-Vision synthetic set of bench/run.py (--images, packed reference, cached under
   --data with run.py's stamps), and VARIANTS - 1 degraded copies of every prediction (a
   rectangle of 4%, 12% or 30% of the image predicted background instead), cached beside it.
2. --submissions different submissions, folders of hard links to those files: submission k
   (0 = the best) predicts each image with its best variant with probability
   1 - 0.5 k / (N - 1), else with one of the degraded ones, drawn from a seeded stream: close
   neighbours in the ranking differ little, the leader and the last a lot, as on a leaderboard.
3. The real command, `python3 organizer/compare.py --ref PACKED --out TMP --quiet DOWNLOADS`
   (the N folders in one downloads folder; its default family of pairs), in its own process
   with all usable CPUs: wall, CPU (user + sys of the process and its pool workers, os.wait4),
   peak memory (the largest sum of VmRSS of the process and its workers, sampled every 20 ms,
   which counts pages they share once per process; and the largest single process's, from
   wait4's ru_maxrss: the main process, which holds every submission's rows). Then again with
   the first N / 2 submissions, for how memory grows with submissions x images.
4. Decoding: every prediction file of the set (each variant of each image) read once in this
   process with the scorer's own reader (formats/label_png/prediction.read_prediction: its
   checks and its decoding), timed per file; the CPU the run spent decoding is the sum, over
   the submissions and images, of the time of the file each one names, and its share of the
   command's CPU is reported.
5. The analysis after scoring (each submission's own interval, the paired bootstrap, the
   randomization test of the family, challengeR's analysis: organizing/commands/compare.py's
   _own_scores, _in_rank_order, _analyse), run in a fresh process on per-image rows in the
   scorer's own state (tasks/agrivision/metric.py's LabelSetHistogram, one row of 18 integers
   per image, 4 images per field as in the set), synthetic: each class on an image with
   probability 0.6, its union up to 20,000 pixels, the submission's true positives a binomial
   draw of its quality. Its CPU and its peak memory, with the rows alone and at the end.
   Measured at the real run's size (A_run) and at --full-submissions x --full-images (A_full).
6. Extrapolation to --full-submissions x --full-images (default 100 x 19,708): scoring is
   linear in submissions x images, the analysis is measured:
       CPU_full = (CPU_run - A_run) x (full submissions x full images) / (N x images) + A_full.
   The main process's memory grows linearly with submissions x images (their paths, their
   per-image rows): from the two measured runs, its slope per submission x image,
       MEM_full = MEM_run + slope x (full submissions x full images - N x images);
   the analysis process at full size (every submission's rows as the scorer's state holds
   them, and the analysis) is a lower bound.

Exit status: 0 measured; 1 a run failed; 2 bad usage. Linux (memory from /proc).
"""
import argparse
import datetime
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COMPARE = os.path.join(ROOT, "organizer", "compare.py")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "organizer"))

import run as av_bench  # noqa: E402  (bench/run.py: the data set, its cache, /proc sampling)
import organizing  # noqa: E402,F401  (puts the worker's program on sys.path)
from organizing.compare import family  # noqa: E402

VARIANTS = 4
DEGRADED = (0.04, 0.12, 0.30)  # the area predicted background in variants 1, 2, 3
TILES_PER_FIELD = 4
MB = 1e6


# ------------------------------------------------------------------------ the submissions

def variants(pred_dir, folder):
    """{image file name: [path of variant 0 (the prediction), 1, 2, 3]}; the degraded copies
    are written once into folder."""
    names = sorted(n for n in os.listdir(pred_dir) if n.endswith(".png"))
    out = {}
    for i, name in enumerate(names):
        paths = [os.path.join(pred_dir, name)]
        for v, area in enumerate(DEGRADED, 1):
            path = os.path.join(folder, "v{}".format(v), name)
            paths.append(path)
            if os.path.exists(path):
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with Image.open(paths[0]) as img:
                arr = np.array(img)
            h, w = arr.shape
            side_h, side_w = max(1, int(h * area ** 0.5)), max(1, int(w * area ** 0.5))
            top, left = (i * 37) % max(1, h - side_h + 1), (i * 53) % max(1, w - side_w + 1)
            arr[top:top + side_h, left:left + side_w] = 0
            tmp = path + ".part"
            Image.fromarray(arr).save(tmp, format="PNG")
            os.replace(tmp, path)
        out[name] = paths
    return out


def choices(count, names, seed):
    """choices[k][name]: the variant submission k predicts the image with."""
    out = []
    for k in range(count):
        rand = random.Random(seed * 1000003 + k).random
        keep = 1.0 - 0.5 * k / max(count - 1, 1)
        out.append({n: 0 if rand() < keep else 1 + int(rand() * (VARIANTS - 1)) for n in names})
    return out


def downloads(variant_paths, chosen, folder):
    """A downloads folder of one folder per submission, hard links (copies where links fail)."""
    for k, picks in enumerate(chosen):
        sub = os.path.join(folder, "team_{:03d}".format(k))
        os.makedirs(sub)
        for name, v in picks.items():
            src, dst = variant_paths[name][v], os.path.join(sub, name)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy(src, dst)
    return folder


# ------------------------------------------------------------------------- measurements

def run_compare(ref, subs, out):
    """(wall, CPU of the process and its waited workers, peak tree RSS MB, largest single
    process's max RSS MB) of the real command."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, COMPARE, "--ref", ref, "--out", out, "--quiet",
                             subs], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = av_bench.TreeMemorySampler(proc.pid)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    peak = sampler.finish()
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.stderr.close()
    if os.WEXITSTATUS(status) != 0:
        sys.stderr.write("FAILED: compare.py\n{}\n".format(err))
        raise SystemExit(1)
    return wall, usage.ru_utime + usage.ru_stime, peak, usage.ru_maxrss * 1024 / MB


def decode_seconds(variant_paths):
    """{path: CPU seconds of the scorer's read of that prediction}, each file read once."""
    from scoring.formats.label_png.prediction import read_prediction
    out = {}
    clock = time.process_time
    for paths in variant_paths.values():
        for path in paths:
            started = clock()
            read_prediction(path, None, 8)
            out[path] = clock() - started
    return out


def analysis(submissions, images, seed):
    """The analysis after scoring in a fresh process: its JSON line."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--analysis-only",
                           "--submissions", str(submissions), "--images", str(images),
                           "--seed", str(seed)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write("FAILED: the analysis\n{}\n".format(proc.stderr))
        raise SystemExit(1)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _max_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB


def analysis_only(submissions, images, seed):
    """Build the submissions' states from synthetic rows, then time compare.py's own steps."""
    import argparse as ap
    from organizing.commands import compare as command
    from scoring.registry import TASKS
    from scoring.tasks.agrivision import metric
    from scoring.confidence import read_settings
    from scoring.reference_setup import Setup
    task = TASKS["agriculture-vision"]
    config = task.configure({}, {})
    setup = Setup("reference", {}, task, config, read_settings({}, task.intervals))
    start_mb = _max_rss_mb()  # the interpreter, numpy and the program
    rng = np.random.RandomState(seed)
    ids = ["F{:06d}_{}-0-512-512".format(i // TILES_PER_FIELD, i) for i in range(images)]
    union = rng.randint(1, 20000, size=(images, 9)) * (rng.random_sample((images, 9)) < 0.6)
    valid = []
    for k in range(submissions):
        state = metric.LabelSetHistogram(config.storm_damage)
        quality = 0.85 - 0.3 * k / max(submissions - 1, 1)
        tp = rng.binomial(union, np.clip(quality + 0.1 * rng.standard_normal(union.shape),
                                         0, 1))
        rows = np.hstack([tp, union]).astype(np.int64)
        # as the scorer holds them: per image id, an array of 18 integers
        state.unit_rows = dict(zip(ids, rows))
        state.images = images
        for c in range(9):  # a pixel of each class, right: the summary's classes all present
            state.counts[c, 1 << (c - 1) if c else 0] = 1
        valid.append(("team_{:03d}".format(k), state))
    rows_mb = _max_rss_mb()
    reference = ap.Namespace(ids=ids, root="reference")
    started = time.process_time()
    own_scores = command._own_scores(setup, reference, valid, "miou")
    own = time.process_time() - started
    for row, res in zip(own_scores.rows, own_scores.resamplings):
        # ranked by the mIoU of its rows (the state's pixel counts are a stand-in)
        row["scores"]["miou"] = metric.miou_of_sums(res.rows()[1].sum(axis=0).tolist())
    scored = command._in_rank_order(own_scores, "miou")
    doc = command._analyse(task, "miou", scored, images, "images", "auto")
    cpu = time.process_time() - started
    return {"submissions": submissions, "images": images, "units": doc["units"],
            "pairs": doc["family"]["tested"], "family": doc["family"]["pairs"],
            "marked": sum(1 for p in doc["pairs"] if p["significant"]), "cpu": cpu,
            "own_intervals_cpu": own, "start_mb": start_mb, "rows_peak_mb": rows_mb,
            "peak_mb": _max_rss_mb()}


# -------------------------------------------------------------------------------- report

def report(args, run, run_half, decode_cpu, files, a_run, a_full, command):
    wall, cpu, tree_mb, single_mb = run
    n, images = args.submissions, args.images
    half = n // 2
    entries, full_entries = n * images, args.full_submissions * args.full_images
    slope = (single_mb - run_half[3]) / ((n - half) * images)  # MB per submission x image
    full_mb = single_mb + slope * (full_entries - entries)
    tested = family.choose(family.AUTO, half)
    scoring = cpu - a_run["cpu"]
    full_cpu = scoring * (args.full_submissions * args.full_images) / (n * images) + \
        a_full["cpu"]
    full_decode = decode_cpu * (args.full_submissions * args.full_images) / (n * images)
    lines = [
        "# compare.py at a leaderboard's size: {} submissions x {:,} images".format(n, images),
        "",
        "Measured {} with `{}` on {} ({} usable CPUs, Python {}, numpy {}; load average {} at "
        "the end). Synthetic Agriculture-Vision set of bench/run.py (seed {}, packed reference, "
        "{} images a field); {} different submissions made of {} variants of each prediction "
        "(bench/compare_scale.py's docstring). CPU = user + sys of the process and its pool "
        "workers.".format(
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            command, platform.platform(), av_bench.engine.usable_cpus(),
            platform.python_version(), np.__version__,
            " ".join("{:.2f}".format(x) for x in os.getloadavg()), args.seed, TILES_PER_FIELD,
            n, VARIANTS),
        "",
        "| run | submissions | images | pairs tested | wall (s) | CPU (s) | peak memory (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
        "| compare.py, measured | {} | {:,} | {} ({}) | {:.1f} | {:.1f} | {:.0f} (tree), {:.0f} "
        "(largest process) |".format(n, images, a_run["pairs"], a_run["family"], wall, cpu,
                                      tree_mb or 0, single_mb),
        "| its analysis after scoring, measured apart | {} | {:,} | {} | | {:.1f} | {:.0f} "
        "(program {:.0f}, with the rows {:.0f}) |".format(
            n, images, a_run["pairs"], a_run["cpu"], a_run["peak_mb"], a_run["start_mb"],
            a_run["rows_peak_mb"]),
        "| analysis after scoring, measured at full size | {} | {:,} | {} ({}) | | {:.1f} | "
        "{:.0f} (program {:.0f}, with the rows {:.0f}) |".format(
            args.full_submissions, args.full_images, a_full["pairs"], a_full["family"],
            a_full["cpu"], a_full["peak_mb"], a_full["start_mb"], a_full["rows_peak_mb"]),
        "| compare.py, measured | {} | {:,} | {} ({}) | {:.1f} | {:.1f} | {:.0f} (tree), "
        "{:.0f} (largest process) |".format(half, images, len(tested.pairs), tested.kind,
                                            run_half[0], run_half[1], run_half[2] or 0,
                                            run_half[3]),
        "| compare.py, extrapolated | {} | {:,} | {} | | {:.0f} | about {:.0f} (main process; "
        "at least {:.0f}) |".format(args.full_submissions, args.full_images, a_full["pairs"],
                                    full_cpu, full_mb, a_full["peak_mb"]),
        "",
        "- Decoding the predictions (the scorer's own reader, checks included, each of the "
        "{:,} files of the set timed once): {:.1f} s of CPU for the run's {:,} files, "
        "{:.0%} of compare.py's CPU; extrapolated, {:.0f} s of the {:.0f} s at full size "
        "({:.0%}).".format(files, decode_cpu, n * images, decode_cpu / cpu, full_decode,
                           full_cpu, full_decode / full_cpu),
        "- Scoring (decoding, checks, metric state) took {:.1f} s of the run's CPU, {:.2f} ms "
        "per submission x image; the analysis after it {:.1f} s ({:.0%}), of which each "
        "submission's own interval {:.1f} s.".format(scoring, 1000 * scoring / (n * images),
                                                     a_run["cpu"], a_run["cpu"] / cpu,
                                                     a_run["own_intervals_cpu"]),
        "- Extrapolation: CPU_full = (CPU_run - A_run) x ({} x {:,}) / ({} x {:,}) + A_full = "
        "({:.1f} - {:.1f}) x {:.2f} + {:.1f} = {:.0f} s; on {} CPUs scoring runs in parallel, "
        "the analysis ({:.1f} s) in one process.".format(
            args.full_submissions, args.full_images, n, images, cpu, a_run["cpu"],
            (args.full_submissions * args.full_images) / (n * images), a_full["cpu"], full_cpu,
            av_bench.engine.usable_cpus(), a_full["cpu"]),
        "- Memory: the main process grows by {:.2f} KB per submission x image (the two "
        "measured runs: {:.0f} MB at {} x {:,}, {:.0f} MB at {} x {:,}): its paths, its "
        "per-image row, their share of the pool's traffic; MEM_full = {:.0f} + {:.5f} x "
        "({:,} - {:,}) = {:.0f} MB. Nothing grows with the pairs tested times the shuffles "
        "(the masks and their sums come in blocks of about 4 MB).".format(
            slope * 1000, single_mb, n, images, run_half[3], half, images, single_mb, slope,
            full_entries, entries, full_mb),
        "- Full size: {} resampled fields, {} pairs tested ({}), {} ordered pairs marked; the "
        "main process peaks at {:.0f} MB: the program {:.0f} MB, the submissions' per-image "
        "rows as the scorer holds them {:.0f} MB, the analysis {:.0f} MB more.".format(
            a_full["units"], a_full["pairs"], a_full["family"], a_full["marked"],
            a_full["peak_mb"], a_full["start_mb"], a_full["rows_peak_mb"] - a_full["start_mb"],
            a_full["peak_mb"] - a_full["rows_peak_mb"]),
    ]
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description="Benchmark compare.py at a leaderboard's size.")
    p.add_argument("--images", type=int, default=1000)
    p.add_argument("--submissions", type=int, default=200)
    p.add_argument("--full-images", type=int, default=av_bench.FULL_SCALE)
    p.add_argument("--full-submissions", type=int, default=100)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--data", default=os.path.join(HERE, "data", "compare"))
    p.add_argument("--report", help="also write the Markdown report here")
    p.add_argument("--analysis-only", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if min(args.images, args.full_images) < TILES_PER_FIELD or \
            min(args.submissions, args.full_submissions) < 2:
        p.error("--images must be at least {} and --submissions at least 2".format(
            TILES_PER_FIELD))
    if args.analysis_only:
        sys.stdout.write(json.dumps(analysis_only(args.submissions, args.images, args.seed)) +
                         "\n")
        return 0
    command = "python3 bench/compare_scale.py" + "".join(
        " " + a for a in (sys.argv[1:] if argv is None else argv))
    data = argparse.Namespace(data=os.path.abspath(args.data), images=args.images,
                              seed=args.seed, skip_generate=False, regenerate=False,
                              repack=False)
    ds = av_bench.prepare_data(data, ["packed"])
    variant_paths = variants(ds.pred, os.path.join(ds.dir, "variants"))
    chosen = choices(args.submissions, sorted(variant_paths), args.seed)
    av_bench.warm_up(av_bench._all_files(ds.packed) +
                     [p for paths in variant_paths.values() for p in paths])
    tmp = tempfile.mkdtemp(prefix="bench-compare-scale-")
    try:
        subs = downloads(variant_paths, chosen, os.path.join(tmp, "downloads"))
        sys.stdout.write("compare.py on {} submissions x {:,} images ...\n".format(
            args.submissions, args.images))
        sys.stdout.flush()
        run = run_compare(ds.packed, subs, os.path.join(tmp, "out"))
        half = args.submissions // 2
        for k in range(half, args.submissions):
            shutil.rmtree(os.path.join(subs, "team_{:03d}".format(k)))
        sys.stdout.write("... and on {} submissions\n".format(half))
        sys.stdout.flush()
        run_half = run_compare(ds.packed, subs, os.path.join(tmp, "out"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    seconds = decode_seconds(variant_paths)
    decode_cpu = sum(seconds[variant_paths[name][v]] for picks in chosen
                     for name, v in picks.items())
    a_run = analysis(args.submissions, args.images, args.seed)
    a_full = analysis(args.full_submissions, args.full_images, args.seed)
    text = report(args, run, run_half, decode_cpu, len(seconds), a_run, a_full, command)
    sys.stdout.write("\n" + text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
