#!/usr/bin/env python3
"""Benchmark of the generalist ranking at scale (issue 17).

    python3 bench/generalist.py --report bench/results-generalist.md   # 50 boards x 20,000
    python3 bench/generalist.py --boards 5 --models 300                 # a quick look

1. Generates (once, cached under --data with a stamp) M leaderboards over a pool of N models,
   deterministically from --seed: each board holds each model with probability 0.85, scores
   with 4 decimals (so many ties), in the five layouts the command reads, in turn: a plain CSV
   with a score (higher is better), a plain CSV with a score (lower is better), a plain CSV with
   a rank column, a CodaLab export (`0.5123 (12)` cells, dense ranks) and a Codabench export
   (`<user>-<submission id>` names, 10 decimals, CRLF). 50 x 20,000 is about 21 MB of CSV.
2. Reads every file once, untimed (warm page cache).
3. Runs the real command, `python3 organizer/generalist.py CONFIG --out TMP`, in its own
   process, --repeat times, with every output: the three files and the ranking printed on
   stdout (captured into a file): wall time, CPU time (user + sys, os.wait4: no other process
   mixes in) and peak RSS of that process (its VmHWM); best wall / CPU, largest RSS.
4. Checks its outputs against a reference computation written here from the generated values,
   independently of the program: competition ranks (1 + the number strictly better), s as the
   exact fraction rounded once, C from the logs summed with math.fsum, ranks of C; for every
   model its place, C (bit for bit, from ranking.csv's exact column), its rank on every board,
   and, when the program writes it, its leave-one-leaderboard-out rank range (the whole ranking
   recomputed without each board in turn). ranking.json is checked to hold the same models, C
   and ranks. A mismatch ends the bench with exit status 1.
5. Prints a Markdown report (and writes it to --report). Targets (issue 17), on the full case:
   wall <= 10 s and peak RSS <= 500 MB with every output written.

--program DIR runs another copy of the organizer's folder, with the scoring_program/ and kit/ it
stands on beside it (e.g. an older commit, extracted with
`git archive <commit> organizer scoring_program kit | tar -x -C /tmp/old`, then
--program /tmp/old/organizer) for before/after figures; its
outputs are checked the same way (the rank range only if it writes one).

Exit status: 0 measured (targets may FAIL: reported, not an error, unless --strict); 1 a
correctness check failed or the command failed; 2 bad usage. Linux or macOS (os.wait4).
"""
import argparse
import bisect
import csv
import datetime
import hashlib
import json
import math
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "organizer")
GENERATOR_VERSION = "1"          # bump when the generated files change
PRESENT = 0.85
EPS = 1e-12
MIN_LEADERBOARDS = 2
WALL_TARGET, RSS_TARGET = 10.0, 500.0
KINDS = ("csv-higher", "csv-lower", "csv-rank", "codalab", "codabench")


# ------------------------------------------------------------------ the data

def board_kind(b: int) -> str:
    return KINDS[b % len(KINDS)]


def model_name(k: int) -> str:
    return "model-{:05d}".format(k)


def board_entries(seed: int, b: int, n_models: int) -> List[Tuple[str, int]]:
    """(model, score in 1/10,000) of board b, in a shuffled order; the same for any M."""
    rnd = random.Random("{}-{}".format(seed, b))
    entries = [(model_name(k), rnd.randrange(10000)) for k in range(n_models)
               if rnd.random() < PRESENT]
    rnd.shuffle(entries)
    return entries


def higher_is_better(b: int) -> bool:
    return board_kind(b) not in ("csv-lower", "codabench")


def write_board(path: str, b: int, entries: List[Tuple[str, int]], seed: int) -> dict:
    """Writes the file; returns the board's entry of the configuration."""
    kind = board_kind(b)
    name = "Board {:02d} ({})".format(b + 1, kind)
    spec = {"name": name, "file": os.path.basename(path)}
    value = "{:.4f}".format
    if kind == "codabench":
        rnd = random.Random("{}-{}-ids".format(seed, b))
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\r\n")
            w.writerow(["Username", "fact_sheet_answers", "Bench task(7)-HOTA",
                        "Bench task(7)-IDSW"])
            for model, v in sorted(entries, key=lambda e: e[1]):
                w.writerow(["{}-{}".format(model, rnd.randrange(10 ** 5, 10 ** 6)), "",
                            "{:.10f}".format(rnd.random()), "{:.10f}".format(v / 10000)])
        spec.update(score_column="IDSW", higher_is_better=False)
    elif kind == "codalab":
        distinct = sorted({v for _, v in entries}, reverse=True)
        dense = {v: i + 1 for i, v in enumerate(distinct)}
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["submission_pk", "User", "b'mAP'"])
            for i, (model, v) in enumerate(sorted(entries, key=lambda e: -e[1])):
                w.writerow([1000 + i, model, "{} ({})".format(value(v / 10000), dense[v]), ""])
        spec.update(score_column="mAP", higher_is_better=True)
    else:
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            if kind == "csv-rank":
                ranks = competition(dict(entries), True)
                w.writerow(["team", "rank"])
                for model, _ in entries:
                    w.writerow([model, ranks[model]])
                spec.update(model_column="team", rank_column="rank")
            else:
                w.writerow(["team", "score"])
                for model, v in entries:
                    w.writerow([model, value(v / 10000)])
                spec.update(model_column="team", score_column="score",
                            higher_is_better=kind == "csv-higher")
    return spec


def generate(folder: str, n_boards: int, n_models: int, seed: int) -> str:
    """The case under folder (cached by its stamp); returns the configuration's path."""
    stamp = {"boards": n_boards, "models": n_models, "seed": seed, "version": GENERATOR_VERSION}
    config = os.path.join(folder, "config.yaml")
    stamp_path = os.path.join(folder, "stamp.json")
    try:
        with open(stamp_path, encoding="utf-8") as f:
            cached = json.load(f)
        if {k: cached.get(k) for k in stamp} == stamp and os.path.isfile(config):
            return config
    except (OSError, ValueError):
        pass
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    started = time.perf_counter()
    specs = []
    for b in range(n_boards):
        path = os.path.join(folder, "board{:02d}.csv".format(b + 1))
        specs.append(write_board(path, b, board_entries(seed, b, n_models), seed))
    with open(config, "w", encoding="utf-8") as f:
        f.write("# generated by bench/generalist.py\n")
        f.write("eps: 1e-12\nmin_leaderboards: {}\nleaderboards:\n".format(MIN_LEADERBOARDS))
        for spec in specs:
            f.write("  - " + "\n    ".join("{}: {}".format(k, json.dumps(v))
                                           for k, v in spec.items()) + "\n")
    stamp["seconds"] = round(time.perf_counter() - started, 2)
    with open(stamp_path, "w", encoding="utf-8") as f:
        json.dump(stamp, f)
    say("generated {} boards x {:,} models in {:.1f} s".format(n_boards, n_models,
                                                               stamp["seconds"]))
    return config


# ------------------------------------------------------------------ the reference computation

def competition(values: Dict[str, int], higher: bool) -> Dict[str, int]:
    """1 + the number of entries strictly better."""
    ordered = sorted(values.values())
    n = len(ordered)
    if higher:
        return {m: 1 + n - bisect.bisect_right(ordered, v) for m, v in values.items()}
    return {m: 1 + bisect.bisect_left(ordered, v) for m, v in values.items()}


def reference(seed: int, n_boards: int, n_models: int):
    """(boards: [(N, model -> rank)], models: name -> C, order: [(model, rank or None)],
    ranges: model -> (best, worst) with None = unranked, or None for a model not ranked)."""
    boards = []
    for b in range(n_boards):
        entries = dict(board_entries(seed, b, n_models))
        boards.append((len(entries), competition(entries, higher_is_better(b))))
    names = sorted({m for _, ranks in boards for m in ranks})
    # s per board and rank: the exact fraction rounded once; log of max(eps, s).
    logs = []
    for n, ranks in boards:
        table = [math.log(max(EPS, float(Fraction(max(0, n - r), n - 1)))) for r in range(n + 2)]
        logs.append({m: table[ranks.get(m, n + 1)] for m in names})
    present = {m: sum(1 for _, ranks in boards if m in ranks) for m in names}

    def ranking(keep: List[int]) -> Tuple[Dict[str, float], Dict[str, Optional[int]]]:
        c = {m: min(1.0, max(EPS, math.exp(math.fsum(logs[i][m] for i in keep) / len(keep))))
             for m in names}
        counts = {m: sum(1 for i in keep if m in boards[i][1]) for m in names}
        ranked = sorted(c[m] for m in names if counts[m] >= MIN_LEADERBOARDS)
        rank = {m: (1 + len(ranked) - bisect.bisect_right(ranked, c[m])
                    if counts[m] >= MIN_LEADERBOARDS else None) for m in names}
        return c, rank

    c, rank = ranking(list(range(n_boards)))
    order = sorted(names, key=lambda m: (rank[m] is None, -c[m], m))
    ranges = {m: None for m in names}
    if n_boards - 1 >= MIN_LEADERBOARDS:
        loo = [ranking([i for i in range(n_boards) if i != left])[1] for left in range(n_boards)]
        for m in names:
            if rank[m] is not None:
                got = [r[m] for r in loo]
                ranked = [x for x in got if x is not None]
                ranges[m] = (min(ranked), None if len(ranked) < len(got) else max(ranked))
    return boards, c, [(m, rank[m]) for m in order], ranges, present


def check(out: str, config: str, seed: int, n_boards: int, n_models: int) -> List[str]:
    """Differences between the command's outputs and the reference (empty: equal)."""
    boards, c, order, ranges, _ = reference(seed, n_boards, n_models)
    with open(config, encoding="utf-8") as f:
        board_names = [json.loads(line.split(":", 1)[1]) for line in f
                       if line.startswith("  - name:")]
    problems = []
    with open(os.path.join(out, "ranking.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    if [r["model"] for r in rows] != [m for m, _ in order]:
        problems.append("ranking.csv: the order of the models differs")
    exact = "consistency_exact" if rows and "consistency_exact" in rows[0] else "consistency"
    has_range = bool(rows) and "rank_best_leave_one_out" in rows[0]
    for row, (model, rank) in zip(rows, order):
        if row["model"] != model:
            continue
        if row["rank"] != ("" if rank is None else str(rank)):
            problems.append("{}: rank {} != {}".format(model, row["rank"], rank))
        if float(row[exact]) != c[model]:
            problems.append("{}: C {} != {!r}".format(model, row[exact], c[model]))
        for name, (_, ranks) in zip(board_names, boards):
            want = ranks.get(model)
            if row["{} rank".format(name)] != ("" if want is None else str(want)):
                problems.append("{} on {}: rank {} != {}".format(
                    model, name, row["{} rank".format(name)], want))
        if has_range:
            got = (row["rank_best_leave_one_out"], row["rank_worst_leave_one_out"])
            r = ranges[model]
            want = ("", "") if r is None else (str(r[0]), "unranked" if r[1] is None
                                               else str(r[1]))
            if got != want:
                problems.append("{}: leave-one-out range {} != {}".format(model, got, want))
        if len(problems) > 20:
            break
    problems += check_json(os.path.join(out, "ranking.json"), c, order, ranges)
    return problems[:20]


def check_json(path: str, c: Dict[str, float], order, ranges) -> List[str]:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    got = [(m["model"], m["rank"], m["consistency"]) for m in doc["models"]]
    want = [(m, r, c[m]) for m, r in order]
    if got != want:
        return ["ranking.json: models, ranks or C differ from the reference"]
    if doc["models"] and "rank_range" in doc["models"][0]:
        for m in doc["models"]:
            r = ranges[m["model"]]
            if m["rank_range"] != (None if r is None else list(r)):
                return ["ranking.json: rank_range of {} is {}, not {}".format(
                    m["model"], m["rank_range"], r)]
    return []


# ------------------------------------------------------------------ measuring

def say(msg: str = "") -> None:
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


# Runs a script in this interpreter and records its peak RSS (VmHWM of /proc/self/status, which
# exec resets). ru_maxrss from wait4 alone would not do: Linux folds the RSS of the process that
# forked into the child's maxrss at exec, so a child of a big parent would look big.
LAUNCHER = """
import runpy, sys
hwm_file, sys.argv = sys.argv[1], sys.argv[2:]
code = 0
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    code = exc.code
try:
    with open("/proc/self/status") as f:
        hwm = [line.split()[1] for line in f if line.startswith("VmHWM:")][0]
except OSError:
    hwm = ""
with open(hwm_file, "w") as f:
    f.write(hwm)
sys.exit(code)
"""


def measure_rusage(cmd: List[str], timeout: Optional[float] = None) -> Dict[str, object]:
    """Run the script cmd[1:] with the interpreter cmd[0]: wall and CPU seconds (user + sys,
    os.wait4: that one child) and peak RSS (MB; VmHWM on Linux, else ru_maxrss). With a
    timeout, a run that takes longer is killed and TimeoutError raised (the tests use it)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".hwm") as hwm:
        start = time.perf_counter()
        proc = subprocess.Popen([cmd[0], "-c", LAUNCHER, hwm.name] + cmd[1:], stdout=out,
                                stderr=err)
        while True:
            pid, status, usage = os.wait4(proc.pid, 0 if timeout is None else os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise TimeoutError("{} did not end within {} s".format(cmd[1], timeout))
            time.sleep(0.01)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status) if hasattr(
            os, "waitstatus_to_exitcode") else (status >> 8)
        out.seek(0)
        err.seek(0)
        kb = hwm.read().strip()
        rss = int(kb) / 1024.0 if kb else usage.ru_maxrss / (
            1024.0 * 1024.0 if sys.platform == "darwin" else 1024.0)
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": rss, "rc": code,
                "out": out.read().decode("utf-8", "replace"),
                "err": err.read().decode("utf-8", "replace")}


def load_average() -> str:
    try:
        return "{:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())
    except OSError:
        return "n/a"


def warm(folder: str) -> int:
    """Reads every file once (warm page cache); returns the bytes of the boards' CSV."""
    total = 0
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            size = len(f.read())
        total += size if name.endswith(".csv") else 0
    return total


def program_source(program: str) -> str:
    digest = hashlib.sha1()
    for base, dirs, files in sorted(os.walk(program)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(base, name), "rb") as f:
                    digest.update(f.read())
    return digest.hexdigest()[:12]


def parse_args(argv):
    p = argparse.ArgumentParser(description="Benchmark of the generalist ranking (see the "
                                            "docstring).")
    p.add_argument("--boards", type=int, default=50)
    p.add_argument("--models", type=int, default=20000)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "data"))
    p.add_argument("--program", default=PROGRAM, help="the organizer folder to run")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--no-check", action="store_true", help="skip the reference computation")
    p.add_argument("--report", help="also write the Markdown report here")
    p.add_argument("--strict", action="store_true", help="exit 1 if a target fails")
    args = p.parse_args(argv)
    if args.boards < 2 or args.models < 3 or args.repeat < 1:
        p.error("--boards must be at least 2, --models at least 3, --repeat at least 1")
    return args


def run_command(args, config):
    """The command --repeat times on config, then its outputs checked against the reference
    computation: (runs, output sizes, load averages before and after, problems); runs is None
    if the command failed."""
    command = os.path.join(args.program, "generalist.py")
    runs = []
    tmp = tempfile.mkdtemp(prefix="generalist-bench-")
    try:
        out = os.path.join(tmp, "out")
        load_before = load_average()
        for _ in range(args.repeat):
            shutil.rmtree(out, ignore_errors=True)
            r = measure_rusage([sys.executable, command, config, "--out", out])
            if r["rc"] != 0:
                sys.stderr.write("the command failed (exit {}):\n{}{}".format(
                    r["rc"], r["out"], r["err"]))
                return None, None, None, None
            runs.append(r)
        load_after = load_average()
        outputs = {name: os.path.getsize(os.path.join(out, name)) for name in sorted(os.listdir(out))}
        problems = [] if args.no_check else check(out, config, args.seed, args.boards, args.models)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return runs, outputs, (load_before, load_after), problems


def report_of(args, runs, outputs, loads, size):
    """(the Markdown report, the targets' verdicts, whether this is the full-size case)."""
    wall = min(r["wall"] for r in runs)
    cpu = min(r["cpu"] for r in runs)
    rss = max(r["rss"] for r in runs)
    full = args.boards == 50 and args.models == 20000
    lines = ["# Generalist ranking benchmark: {} leaderboards x {:,} models".format(
        args.boards, args.models), ""]
    lines.append("Measured {} with `python3 bench/generalist.py{}` on {} ({} CPUs, Python {}); "
                 "load average before / after: {} and {}. Program: {} (sha1 of its .py files "
                 "{}). Data: {:,} bytes of CSV in {} files (seed {}). Best of {} run(s), each "
                 "in its own process, warm page cache.".format(
                     datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                     "".join(" --{} {}".format(k, v) for k, v, d in (
                         ("boards", args.boards, 50), ("models", args.models, 20000),
                         ("seed", args.seed, 2024), ("repeat", args.repeat, 1)) if v != d),
                     platform.platform(), os.cpu_count(), platform.python_version(),
                     loads[0], loads[1], os.path.relpath(args.program, ROOT),
                     program_source(args.program), size, args.boards, args.seed, args.repeat))
    lines += ["", "| run | wall (s) | CPU (s) | peak RSS (MB) |", "|---|---:|---:|---:|",
              "| generalist.py CONFIG --out DIR | {:.2f} | {:.2f} | {:.0f} |".format(
                  wall, cpu, rss), ""]
    lines.append("Outputs: " + ", ".join("{} {:,} bytes".format(k, v) for k, v in outputs.items())
                 + ", stdout {:,} bytes.".format(len(runs[0]["out"].encode("utf-8"))))
    lines.append("")
    lines.append("- outputs == reference computation (order, ranks, C bit for bit, ranks per "
                 "board, leave-one-out ranges): {}".format("not checked" if args.no_check
                                                           else "yes"))
    verdicts = [wall <= WALL_TARGET, rss <= RSS_TARGET]
    lines.append("- wall <= {:.0f} s: {}; peak RSS <= {:.0f} MB: {}{}".format(
        WALL_TARGET, "PASS" if verdicts[0] else "FAIL", RSS_TARGET,
        "PASS" if verdicts[1] else "FAIL",
        "" if full else " (targets are for 50 x 20,000; this is a smaller case)"))
    return "\n".join(lines) + "\n", verdicts, full


def main(argv=None) -> int:
    args = parse_args(argv)
    folder = os.path.join(args.data, "generalist-{}x{}-{}".format(args.boards, args.models,
                                                                  args.seed))
    config = generate(folder, args.boards, args.models, args.seed)
    size = warm(folder)
    runs, outputs, loads, problems = run_command(args, config)
    if runs is None:
        return 1
    if problems:
        sys.stderr.write("the outputs differ from the reference computation:\n  {}\n".format(
            "\n  ".join(problems)))
        return 1
    report, verdicts, full = report_of(args, runs, outputs, loads, size)
    say(report)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(report)
    return 1 if args.strict and full and not all(verdicts) else 0

if __name__ == "__main__":
    sys.exit(main())
