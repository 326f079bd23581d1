#!/usr/bin/env python3
"""Benchmark of compare.py (issue 18 part 2): N submissions on one test set in one command,
against N runs of score.py.

    python3 bench/compare.py                        # 1,000 images, N = 1, 5, 20, packed
    python3 bench/compare.py --images 200 --counts 1,3 --layout raw

1. The Agriculture-Vision synthetic set of bench/run.py (generated and packed once, cached under
   --data with run.py's stamps; a separate folder from run.py's full-scale set by default).
2. N submissions: hard links to the same predictions under N names (every file is read and
   decoded once per submission, as for N different submissions; the cost does not depend on the
   labels).
3. Times, each in its own process and with all usable CPUs (wall; CPU = user + sys of the
   process and its pool workers, from wait4), warm page cache:
   compare.py --ref REF --out TMP SUB_1 .. SUB_N, and score.py --ref REF --res SUB_k --out TMP
   for k = 1..N one after another.
4. Prints a Markdown table (and writes it to --report).

Exit status: 0 measured; 1 a run failed; 2 bad usage. Linux or macOS (os.wait4).
"""
import argparse
import datetime
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COMPARE = os.path.join(ROOT, "organizer", "compare.py")
SCORE = os.path.join(ROOT, "scoring_program", "score.py")
sys.path.insert(0, HERE)

import run as av_bench  # noqa: E402  (bench/run.py: the data set and its cache)


def measure(cmd):
    """(wall, CPU of the process tree) of one run; exit 1 on failure."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.stderr.close()
    if os.WEXITSTATUS(status) != 0:
        sys.stderr.write("FAILED: {}\n{}\n".format(" ".join(cmd), err))
        raise SystemExit(1)
    return wall, usage.ru_utime + usage.ru_stime


def submissions(pred: str, count: int, folder: str):
    """count submission folders of hard links (copies where links fail) to the predictions."""
    names = sorted(n for n in os.listdir(pred) if n.endswith(".png"))
    paths = []
    for k in range(count):
        sub = os.path.join(folder, "model_{:02d}".format(k + 1))
        os.makedirs(sub)
        for n in names:
            try:
                os.link(os.path.join(pred, n), os.path.join(sub, n))
            except OSError:
                shutil.copy(os.path.join(pred, n), os.path.join(sub, n))
        paths.append(sub)
    return paths


def parse_args(argv):
    p = argparse.ArgumentParser(description="Benchmark compare.py against N runs of score.py.")
    p.add_argument("--images", type=int, default=1000)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--counts", default="2,5,20", help="submission counts N, 2 or more (compare.py "
                   "compares two or more; default 2,5,20)")
    p.add_argument("--layout", choices=("packed", "raw"), default="packed")
    p.add_argument("--data", default=os.path.join(HERE, "data", "compare"))
    p.add_argument("--repeat", type=int, default=1, help="runs of each command (best kept)")
    p.add_argument("--report", help="also write the Markdown report here")
    args = p.parse_args(argv)
    counts = sorted({int(c) for c in args.counts.split(",") if c.strip()})
    if args.images < 1 or not counts or min(counts) < 2 or args.repeat < 1:
        p.error("--images and --repeat must be at least 1, --counts at least 2")
    return args, counts


def time_one_count(ref, subs, n, repeat, tmp):
    """compare.py on n submissions against n runs of score.py, each the best of repeat:
    ((wall, CPU) of compare.py, (wall, CPU) of the n runs)."""
    best_c = best_s = None
    for _ in range(repeat):
        out = os.path.join(tmp, "out")
        c = measure([sys.executable, COMPARE, "--ref", ref, "--out", out, "--quiet"] + subs[:n])
        shutil.rmtree(out, ignore_errors=True)
        wall = cpu = 0.0
        for sub in subs[:n]:
            w, u = measure([sys.executable, SCORE, "--ref", ref, "--res", sub, "--out",
                            out, "--quiet"])
            wall, cpu = wall + w, cpu + u
            shutil.rmtree(out, ignore_errors=True)
        best_c = c if best_c is None or c[0] < best_c[0] else best_c
        best_s = (wall, cpu) if best_s is None or wall < best_s[0] else best_s
    return best_c, best_s


def report_of(args, argv, rows):
    lines = ["# compare.py benchmark: {:,} images, {} reference".format(args.images, args.layout),
             "",
             "Measured {} with `python3 bench/compare.py{}` on {} ({} usable CPUs, Python {}; "
             "load average {} at the end). Synthetic Agriculture-Vision set of bench/run.py (seed "
             "{}); the N submissions are the same predictions under N names. Every command uses "
             "all usable CPUs; wall is the best of {} run(s); CPU = user + sys of the process "
             "and its pool workers.".format(
                 datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 "".join(" " + a for a in (sys.argv[1:] if argv is None else argv)),
                 platform.platform(),
                 av_bench.engine.usable_cpus(), platform.python_version(),
                 " ".join("{:.2f}".format(x) for x in os.getloadavg()), args.seed, args.repeat),
             "",
             "| submissions N | compare.py wall (s) | CPU (s) | N runs of score.py wall (s) | "
             "CPU (s) | compare / N runs (wall) | (CPU) |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for n, (cw, cc), (sw, sc) in rows:
        lines.append("| {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |".format(
            n, cw, cc, sw, sc, cw / sw, cc / sc))
    lines.append("")
    lines.append("compare.py reads each image's reference once for all N submissions (in one "
                 "pass of the process pool), scores each submission's prediction of it, then "
                 "runs each submission's interval and the paired bootstrap; N runs of score.py "
                 "read the reference N times and start N interpreters and pools.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args, counts = parse_args(argv)
    data = argparse.Namespace(data=os.path.abspath(args.data), images=args.images,
                              seed=args.seed, skip_generate=False, regenerate=False,
                              repack=False)
    ds = av_bench.prepare_data(data, [args.layout])
    ref = ds.packed if args.layout == "packed" else ds.raw
    av_bench.warm_up(av_bench._all_files(ref) + av_bench._all_files(ds.pred))
    tmp = tempfile.mkdtemp(prefix="bench-compare-")
    rows = []
    try:
        subs = submissions(ds.pred, max(counts), os.path.join(tmp, "subs"))
        for n in counts:
            best_c, best_s = time_one_count(ref, subs, n, args.repeat, tmp)
            rows.append((n, best_c, best_s))
            sys.stdout.write("N = {}: compare.py {:.2f} s ({:.2f} s CPU); {} x score.py {:.2f} s "
                             "({:.2f} s CPU)\n".format(n, best_c[0], best_c[1], n, best_s[0],
                                                       best_s[1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report = report_of(args, argv, rows)
    sys.stdout.write("\n" + report)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    return 0

if __name__ == "__main__":
    sys.exit(main())
