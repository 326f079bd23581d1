#!/usr/bin/env python3
"""Benchmark of the Planetscapes VQA scorer on a test-dev-sized split (issue 9).

    python3 bench/vqa.py --report bench/results-vqa.md          # 100,000 questions
    python3 bench/vqa.py --questions 5000                        # a quick look

1. Generates (once, cached under --data with a stamp) a synthetic reference and a results file
   with competitions/planetscapes/make_vqa_sample.py's generator, written compactly as the official files are;
   question k is the same whatever the size, so smaller sets for the memory table are prefixes.
2. Reads every file once, untimed (warm page cache for every timed run).
3. Times, each in its own process (wall time, CPU time = user + sys, peak RSS from wait4):
   (a) the floor: `json.load` of the annotations and of the results, nothing else;
   (o) with --official-vqaeval PATH: the official evaluation itself, GT-Vision-Lab/VQA's
       vqaEval.py and its helper vqaTools/vqa.py from the user's own checkout, run as its demo
       runs them (bench/vqa_official.py), converted in memory from Python 2 by bench/py2fix.py
       (print statements, leading tabs) and otherwise unchanged;
   (b) the project baseline: the official evaluation's pipeline (bench/vqa_baseline.py,
       written from the spec: loads and indexes the files as the official helper does -
       annotations, questions twice, results - then every answer of every question normalized
       with the regexes, question by question);
   (c) the scorer as the worker runs it: `python3 scoring_program/score.py --ref REF --res RES
       --out TMP --quiet` (it also reads questions.json and writes the three output files), on
       the packed reference the bundle ships (docs/vqa-packed-format.md);
   (d) the same on the raw reference (annotations.json).
   Packing is not timed with the scorer: it happens once, at bundle time. The packed reference
   is made with organizer/pack.py next to the raw set (data/vqa-<n>-<seed>/packed, cached
   with a stamp of the raw set and of the packer's sources, as bench/run.py caches the
   Agriculture-Vision one) and its one-off cost is reported on its own line.
   Both scorer runs must give the same scores, and agree with the baseline and the official
   code (to 1e-9: they sum floats).
4. Peak RSS of the scorers and of the floor against the number of questions.
5. Prints a Markdown report (and writes it to --report). Targets, for the scorer as the worker
   runs it (packed reference): at least 6x faster than the baseline, and within 1.8x of the
   floor, both on CPU time (the machine is shared: CPU time moves less with other processes'
   load than wall time; wall times are shown too), best of --repeat runs.

Exit status: 0 measured (targets may FAIL: reported, not an error, unless --strict); 1 a
correctness check failed; 2 bad usage. Linux or macOS (os.wait4).
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
import time
from typing import Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCORE = os.path.join(ROOT, "scoring_program", "score.py")
PACK = os.path.join(ROOT, "organizer", "pack.py")
# The packed cache is rebuilt when these change (the packer's output depends on them).
PACKER_SOURCES = ("../organizer/organizing/commands/pack.py", "scoring/readers/packed_json.py") + tuple(
    "scoring/tasks/planetscapes_vqa/{}.py".format(m)
    for m in ("packed", "reference", "normalize", "tables", "task"))
BASELINE = os.path.join(ROOT, "bench", "vqa_baseline.py")
OFFICIAL = os.path.join(ROOT, "bench", "vqa_official.py")
# Where the helper sits in a checkout of GT-Vision-Lab/VQA, relative to vqaEval.py's folder
# PythonEvaluationTools/vqaEvaluation/.
OFFICIAL_HELPER = os.path.join("..", "..", "PythonHelperTools", "vqaTools", "vqa.py")
GENERATOR = os.path.join(ROOT, "competitions", "planetscapes", "make_vqa_sample.py")
sys.path.insert(0, os.path.dirname(GENERATOR))

import make_vqa_sample  # noqa: E402

FLOOR_CODE = ("import json, sys\n"
              "with open(sys.argv[1]) as f: json.load(f)\n"
              "with open(sys.argv[2]) as f: json.load(f)\n")
IMPORT_CODE = ("import sys; sys.path.insert(0, sys.argv[1]); "
               "import scoring.commands.score, scoring.registry; "
               "print(sorted(m for m in ('numpy', 'PIL') if m in sys.modules))")
# The VQA task alone (the image tasks import numpy and Pillow): what the VQA path itself needs.
IMPORT_VQA_CODE = ("import sys; sys.path.insert(0, sys.argv[1]); "
                   "import scoring, scoring.engine, scoring.submission.discovery, "
                   "scoring.report.scores_file, argparse, yaml; "
                   "import scoring.tasks.planetscapes_vqa.task; "
                   "print(sorted(m for m in ('numpy', 'PIL') if m in sys.modules))")
SPEEDUP_TARGET = 6.0
FLOOR_TARGET = 1.8
INTERVAL_SHARE = 0.05  # the confidence interval adds at most 5% (issue 18)
INTERVAL_MB = 50.0
INTERVAL_SUFFIXES = ("_ci_low", "_ci_high")


def measure_rusage(cmd: List[str]) -> Dict[str, object]:
    """Run cmd: wall and CPU seconds (user + sys) and peak RSS (MB) of that one child (os.wait4:
    other processes cannot mix in), exit status, stdout and stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(
            os, "waitstatus_to_exitcode") else (status >> 8)
        out.seek(0)
        err.seek(0)
        # ru_maxrss: kilobytes on Linux, bytes on macOS.
        rss = usage.ru_maxrss / (1024.0 * 1024.0 if sys.platform == "darwin" else 1024.0)
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": rss,
                "rc": proc.returncode, "out": out.read().decode(), "err": err.read().decode()}


def best(cmd: List[str], repeat: int) -> Dict[str, object]:
    runs = [measure_rusage(cmd) for _ in range(repeat)]
    for r in runs:
        if r["rc"] != 0:
            sys.stderr.write("FAILED ({}): {}\n{}\n".format(r["rc"], " ".join(cmd), r["err"]))
            raise SystemExit(1)
    return {"wall": min(r["wall"] for r in runs), "cpu": min(r["cpu"] for r in runs),
            "rss": max(r["rss"] for r in runs), "out": runs[0]["out"]}


def generator_digest() -> str:
    with open(GENERATOR, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def packer_digest() -> str:
    digest = hashlib.sha1()
    for rel in PACKER_SOURCES:
        with open(os.path.normpath(os.path.join(ROOT, "scoring_program", rel)), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def make_set(data: str, n: int, seed: int) -> Dict[str, str]:
    """Reference and results for n questions under data/vqa-<n>-<seed>/, cached by a stamp."""
    folder = os.path.join(data, "vqa-{}-{}".format(n, seed))
    paths = {"ref": os.path.join(folder, "ref"), "res": os.path.join(folder, "res"),
             "annotations": os.path.join(folder, "ref", "annotations.json"),
             "results": os.path.join(folder, "res", "results.json"),
             "packed": os.path.join(folder, "packed"), "folder": folder}
    stamp = {"questions": n, "seed": seed, "generator": generator_digest()}
    stamp_path = os.path.join(folder, "stamp.json")
    if os.path.isfile(stamp_path):
        with open(stamp_path) as f:
            if json.load(f) == stamp:
                return paths
    for stale in ("packed-stamp.json", "packed"):  # packed from a set that is about to change
        path = os.path.join(folder, stale)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    # In a child process: the generated documents would otherwise stay in this process's
    # memory, and Linux counts a forked child's peak RSS from the parent's size at fork time.
    t = time.perf_counter()
    subprocess.run([sys.executable, os.path.abspath(__file__), "--generate-into", folder,
                    "--questions", str(n), "--seed", str(seed)], check=True)
    with open(stamp_path, "w") as f:
        json.dump(stamp, f)
    sys.stdout.write("generated {:,} questions in {:.1f} s\n".format(n, time.perf_counter() - t))
    return paths


def make_packed(paths: Dict[str, str]) -> Dict[str, object]:
    """The packed reference of a set (pack.py, in its own process, not timed with the scorer),
    reused while the raw set and the packer's sources are the same. Returns its stamp: how long
    packing took (wall, CPU) when it was made, and the sizes."""
    stamp_path = os.path.join(paths["folder"], "packed-stamp.json")
    with open(os.path.join(paths["folder"], "stamp.json")) as f:
        raw_stamp = json.load(f)
    if os.path.isfile(stamp_path) and os.path.isfile(os.path.join(paths["packed"], "packed.json")):
        with open(stamp_path) as f:
            stamp = json.load(f)
        if stamp.get("raw") == raw_stamp and stamp.get("packer") == packer_digest():
            return stamp
    if os.path.isdir(paths["packed"]):
        shutil.rmtree(paths["packed"])
    r = measure_rusage([sys.executable, PACK, paths["ref"], paths["packed"]])
    if r["rc"] != 0:
        sys.stderr.write("FAILED ({}): pack.py {}\n{}\n".format(r["rc"], paths["ref"], r["err"]))
        raise SystemExit(1)
    stamp = {"raw": raw_stamp, "packer": packer_digest(), "pack_wall": round(r["wall"], 2),
             "pack_cpu": round(r["cpu"], 2), "pack_rss": round(r["rss"]),
             "payload_bytes": os.path.getsize(os.path.join(paths["packed"],
                                                           "packed-annotations.json"))}
    with open(stamp_path, "w") as f:
        json.dump(stamp, f)
    sys.stdout.write("pack.py: packed {} in {:.1f} s\n".format(paths["ref"], r["wall"]))
    return stamp


def generate_into(folder: str, n: int, seed: int) -> None:
    questions, annotations, results = make_vqa_sample.generate(n, seed)
    for sub in ("ref", "res"):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
    with open(os.path.join(folder, "ref", "config.yaml"), "w") as f:
        f.write(make_vqa_sample.CONFIG_YAML)
    for path, doc in (("ref/questions.json", questions), ("ref/annotations.json", annotations),
                      ("res/results.json", results)):
        with open(os.path.join(folder, path), "w") as f:
            json.dump(doc, f)  # compact, as the official files are


def warm(paths: Dict[str, str]) -> None:
    for folder in (paths["ref"], paths["res"], paths["packed"]):
        for name in os.listdir(folder):
            with open(os.path.join(folder, name), "rb") as f:
                while f.read(1 << 24):
                    pass


def run_scorer(paths: Dict[str, str], repeat: int, layout: str) -> Dict[str, object]:
    """score.py as the worker runs it, on the packed or the raw reference of a set."""
    ref = paths["packed"] if layout == "packed" else paths["ref"]
    with tempfile.TemporaryDirectory(prefix="vqa-bench-") as out_dir:
        r = best([sys.executable, SCORE, "--ref", ref, "--res", paths["res"],
                  "--out", out_dir, "--quiet"], repeat)
        with open(os.path.join(out_dir, "scores.json")) as f:
            r["scores"] = json.load(f)
    return r


def expected_scores(anchor: Dict[str, object]) -> Dict[str, float]:
    """An anchor's output (overall, perAnswerType) under the scorer's score keys."""
    expected = {"accuracy": anchor["overall"]}
    for key, atype in (("accuracy_yes_no", "yes/no"), ("accuracy_number", "number"),
                       ("accuracy_other", "other")):
        if atype in anchor["perAnswerType"]:
            expected[key] = anchor["perAnswerType"][atype]
    return expected


def agrees(got: Dict[str, float], anchor: Dict[str, object], name: str) -> bool:
    """The scorer's scores (its confidence interval aside) against an anchor's."""
    got = {k: v for k, v in got.items() if not k.endswith(INTERVAL_SUFFIXES)}
    expected = expected_scores(anchor)
    if set(got) != set(expected) or any(abs(got[k] - expected[k]) > 1e-9 for k in got):
        sys.stderr.write("scores differ: scorer {} {} {}\n".format(got, name, expected))
        return False
    return True


def without_interval(packed: str) -> str:
    """A copy of the packed reference whose config.yaml says `confidence: false` (the A/B of
    the interval through the real command)."""
    copy = packed + "-no-interval"
    if os.path.isdir(copy):
        shutil.rmtree(copy)
    shutil.copytree(packed, copy)
    with open(os.path.join(copy, "config.yaml"), "a") as f:
        f.write("\nconfidence: false\n")
    return copy


def interval_in_process(packed: str, results: str) -> Dict[str, object]:
    """The interval's own cost on the scorer's state, in this process (bench/interval_cost.py):
    the bootstrap's CPU and wall time and memory peak, and the rows the state keeps."""
    sys.path.insert(0, os.path.join(ROOT, "scoring_program"))
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import interval_cost
    from scoring import engine, reference_setup
    setup = reference_setup.configure(packed, "planetscapes-vqa")
    task, settings = setup.task, setup.settings
    reference = setup.open()
    fmt = task.submission_format(settings)
    acc = engine.evaluate(task, reference, fmt, settings, [("results", results, "results.json")],
                          1)
    summary = task.summarize(acc.state, reference, settings)
    cost = interval_cost.bootstrap_cost(task, acc.state, summary, reference, setup)
    cost["kept_mb"] = interval_cost.deep_bytes(
        [ns for _, (_, ns) in acc.state.in_unit_order("question_rows")]) / 1e6
    cost["distinct"] = len(acc.state.distribution())
    return cost


def official_helper_path(vqaeval: str, helper) -> str:
    return helper or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(vqaeval)),
                                                   OFFICIAL_HELPER))


def mb(size: int) -> str:
    return "{:.1f} MB".format(size / 1e6)


def parse_args(argv):
    """(parser, arguments): the parser reports the usage errors found after parsing."""
    p = argparse.ArgumentParser(description="Benchmark of the VQA scorer (see the docstring).")
    p.add_argument("--questions", type=int, default=100000)
    p.add_argument("--seed", type=int, default=2021)
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "data"))
    p.add_argument("--repeat", type=int, default=3, help="runs of floor and scorer (best kept)")
    p.add_argument("--memory-sizes", default="25000,50000",
                   help="smaller sets for the memory table (plus --questions)")
    p.add_argument("--skip-baseline", action="store_true")
    p.add_argument("--official-vqaeval", metavar="PATH",
                   help="the official PythonEvaluationTools/vqaEvaluation/vqaEval.py of your "
                        "checkout of GT-Vision-Lab/VQA: adds its row (run converted in memory)")
    p.add_argument("--official-vqa-helper", metavar="PATH",
                   help="its PythonHelperTools/vqaTools/vqa.py (default: found from "
                        "--official-vqaeval in the same checkout)")
    p.add_argument("--report", help="also write the Markdown report here")
    p.add_argument("--strict", action="store_true", help="exit 1 if a target fails")
    p.add_argument("--generate-into", help=argparse.SUPPRESS)
    p.add_argument("--interval-of", nargs=2, help=argparse.SUPPRESS)
    return p, p.parse_args(argv)


def official_files_of(p, args):
    """[vqaEval.py, vqa.py] of the user's checkout, or None; a usage error if either is
    missing."""
    if args.questions < 10 or args.repeat < 1:
        p.error("--questions must be at least 10 and --repeat at least 1")
    if not args.official_vqaeval:
        if args.official_vqa_helper:
            p.error("--official-vqa-helper needs --official-vqaeval")
        return None
    files = [args.official_vqaeval,
             official_helper_path(args.official_vqaeval, args.official_vqa_helper)]
    for path in files:
        if not os.path.isfile(path):
            p.error("{} is not a file (--official-vqaeval takes the path of vqaEval.py in a "
                    "checkout of GT-Vision-Lab/VQA; --official-vqa-helper that of "
                    "PythonHelperTools/vqaTools/vqa.py)".format(path))
    return files


def measure_runs(args) -> Dict[str, object]:
    """The set, then every timed run of the full set (the floor, the scorer on both layouts,
    without interval, the interval in a child, the start-ups); None if the layouts disagree."""
    m = {}  # type: Dict[str, object]
    m["paths"] = paths = make_set(args.data, args.questions, args.seed)
    m["packing"] = make_packed(paths)
    warm(paths)
    m["floor"] = best([sys.executable, "-c", FLOOR_CODE, paths["annotations"], paths["results"]],
                      args.repeat)
    m["scorer"] = scorer = run_scorer(paths, args.repeat, "packed")
    with tempfile.TemporaryDirectory(prefix="vqa-bench-") as out_dir:
        m["no_interval"] = best([sys.executable, SCORE, "--ref", without_interval(paths["packed"]),
                                 "--res", paths["res"], "--out", out_dir, "--quiet"], args.repeat)
    # In a child process: this one must stay small (a child's peak RSS starts from it).
    m["interval"] = json.loads(subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--interval-of", paths["packed"],
         paths["results"]], check=True, capture_output=True, text=True).stdout)
    m["scorer_raw"] = scorer_raw = run_scorer(paths, args.repeat, "raw")
    if scorer["scores"] != scorer_raw["scores"]:
        sys.stderr.write("packed and raw references score differently: {} {}\n".format(
            scorer["scores"], scorer_raw["scores"]))
        return None
    m["imports"] = best([sys.executable, "-c", IMPORT_CODE, os.path.dirname(SCORE)], args.repeat)
    m["imports_vqa"] = best([sys.executable, "-c", IMPORT_VQA_CODE, os.path.dirname(SCORE)],
                            args.repeat)
    return m


def measure_references(args, official_files, m) -> bool:
    """The project baseline and the official code, each checked against the scorer's scores:
    False if one disagrees."""
    paths = m["paths"]
    inputs = [paths["annotations"], os.path.join(paths["ref"], "questions.json"),
              paths["results"]]
    m["baseline"] = m["official"] = None
    if not args.skip_baseline:
        m["baseline"] = best([sys.executable, BASELINE] + inputs, 1)
        m["base_scores"] = json.loads(m["baseline"]["out"])
        if not agrees(m["scorer"]["scores"], m["base_scores"], "baseline"):
            return False
    if official_files:
        m["official"] = best([sys.executable, OFFICIAL] + official_files + inputs, 1)
        m["official_out"] = official_out = json.loads(m["official"]["out"])
        for f in official_out["files"]:
            sys.stdout.write("official: ran {} (sha256 {}) converted in memory with only these "
                             "fixes: {} print statements made print() calls, {} lines' leading "
                             "tabs expanded\n".format(f["path"], f["sha256"],
                                                      f["fixed"]["print_statements"],
                                                      f["fixed"]["reindented_lines"]))
        if not agrees(m["scorer"]["scores"], official_out, "official vqaEval.py"):
            return False
    return True


def measure_memory(args, m) -> list:
    """(questions, scorer packed RSS, scorer raw RSS, floor RSS, annotations bytes, payload
    bytes) for each smaller set, then the full one."""
    memory = []
    sizes = sorted({int(s) for s in args.memory_sizes.split(",") if s.strip()} - {args.questions})
    for n in [s for s in sizes if s < args.questions]:
        small = make_set(args.data, n, args.seed)
        small_packing = make_packed(small)
        warm(small)
        r = run_scorer(small, 1, "packed")
        r_raw = run_scorer(small, 1, "raw")
        f = best([sys.executable, "-c", FLOOR_CODE, small["annotations"], small["results"]], 1)
        memory.append((n, r["rss"], r_raw["rss"], f["rss"], os.path.getsize(small["annotations"]),
                       small_packing["payload_bytes"]))
    paths = m["paths"]
    memory.append((args.questions, m["scorer"]["rss"], m["scorer_raw"]["rss"], m["floor"]["rss"],
                   os.path.getsize(paths["annotations"]), m["packing"]["payload_bytes"]))
    return memory


def run_lines(args, m) -> List[str]:
    """The title, how it was measured, the table of runs and the packing's cost."""
    paths, packing, official = m["paths"], m["packing"], m["official"]
    lines = ["# VQA scorer benchmark: {:,} questions".format(args.questions), ""]
    lines.append("Measured {} with `python3 bench/vqa.py{}{}` on {} ({} CPUs, Python {}; load "
                 "average {} at the end). Synthetic set from "
                 "competitions/planetscapes/make_vqa_sample.py (seed {}): "
                 "annotations.json {}, results.json {}. Every time is the best of {} runs (the "
                 "baseline and the official code: 1 run), each in its own process, warm page "
                 "cache; CPU = user + sys of that process.".format(
                     datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                     "" if args.questions == 100000 else " --questions {}".format(args.questions),
                     " --official-vqaeval PATH" if official else "",
                     platform.platform(), os.cpu_count(), platform.python_version(),
                     " ".join("{:.2f}".format(x) for x in os.getloadavg()), args.seed,
                     mb(os.path.getsize(paths["annotations"])),
                     mb(os.path.getsize(paths["results"])), args.repeat))
    lines += ["", "| run | wall (s) | CPU (s) | peak RSS (MB) |", "|---|---:|---:|---:|"]
    rows = [("(a) floor: json.load of annotations + results", m["floor"]),
            ("(c) scorer, packed reference: score.py --ref --res --out (worker form)", m["scorer"]),
            ("(c') the same with config.yaml `confidence: false` (no interval)", m["no_interval"]),
            ("(d) scorer, raw reference (annotations.json)", m["scorer_raw"]),
            ("startup: python + import scoring.commands.score, scoring.tasks", m["imports"]),
            ("startup of the VQA path alone (no task registry, see below)", m["imports_vqa"])]
    if m["baseline"]:
        rows.insert(1, ("(b) project baseline: official algorithm (bench/vqa_baseline.py)",
                        m["baseline"]))
    if official:
        rows.insert(1, ("(o) official vqaEval.py + vqa.py (GT-Vision-Lab/VQA; only print and "
                        "indentation converted, in memory)", official))
    for label, r in rows:
        lines.append("| {} | {:.2f} | {:.2f} | {:.0f} |".format(label, r["wall"], r["cpu"],
                                                               r["rss"]))
    lines.append("")
    lines.append("Packing (once, at bundle time; not in the rows above): organizer/pack.py "
                 "took {:.2f} s wall, {:.2f} s CPU, {:.0f} MB peak RSS; annotations.json {} -> "
                 "packed-annotations.json {} ({:.1f}x smaller; questions.json, {}, is copied "
                 "as it is).".format(packing["pack_wall"], packing["pack_cpu"],
                                     packing["pack_rss"], mb(os.path.getsize(paths["annotations"])),
                                     mb(packing["payload_bytes"]),
                                     os.path.getsize(paths["annotations"]) /
                                     max(packing["payload_bytes"], 1),
                                     mb(os.path.getsize(os.path.join(paths["ref"],
                                                                     "questions.json")))))
    lines.append("")
    return lines


def speedup_lines(m) -> List[str]:
    """The scorer's speed-ups against the official code and the baseline, and the official
    code's own times."""
    scorer, scorer_raw = m["scorer"], m["scorer_raw"]
    official, baseline = m["official"], m["baseline"]
    if not (baseline or official):
        return []
    others = (("official vqaEval.py", official), ("project baseline", baseline))
    lines = ["- speed-up of the scorer (c, packed reference), CPU (wall): " + "; ".join(
        "vs {}: **{:.1f}x** ({:.1f}x)".format(name, r["cpu"] / scorer["cpu"],
                                              r["wall"] / scorer["wall"])
        for name, r in others if r),
        "- speed-up of the scorer (d, raw reference), CPU (wall): " + "; ".join(
            "vs {}: {:.1f}x ({:.1f}x)".format(name, r["cpu"] / scorer_raw["cpu"],
                                              r["wall"] / scorer_raw["wall"])
            for name, r in others if r)]
    if official:
        official_out = m["official_out"]
        lines.append("- the official code: {:.2f} s CPU loading and indexing (its vqa.py), {:.2f} s "
                     "evaluating (vqaEval.py); the scorer against its evaluation alone: {:.1f}x. "
                     "Ran from the given files with only two mechanical fixes, in memory "
                     "(bench/py2fix.py): {}. VQAEval(..., n={}) so that the accuracies are not "
                     "rounded to 2 decimals.".format(
                         official_out["cpu_load"], official_out["cpu_evaluate"],
                         official_out["cpu_evaluate"] / scorer["cpu"], "; ".join(
                             "{} (sha256 {}): {} print statements, {} lines re-indented".format(
                                 os.path.basename(f["path"]), f["sha256"],
                                 f["fixed"]["print_statements"], f["fixed"]["reindented_lines"])
                             for f in official_out["files"]), official_out["decimals"]))
    return lines


def baseline_lines(m, verdicts: List[bool]) -> List[str]:
    """The target against the project baseline (its verdict added to verdicts)."""
    baseline, scorer, official = m["baseline"], m["scorer"], m["official"]
    if not baseline:
        return []
    lines = []
    if official:
        lines.append("- official / project baseline: the baseline is {:.2f}x faster (CPU) "
                     "than the official code it follows".format(
                         official["cpu"] / baseline["cpu"]))
    speedup = baseline["cpu"] / scorer["cpu"]
    verdicts.append(speedup >= SPEEDUP_TARGET)
    lines.append("- target, vs project baseline: **{:.1f}x** CPU ({:.1f}x wall); target >= "
                 "{}x: {}".format(speedup, baseline["wall"] / scorer["wall"], SPEEDUP_TARGET,
                                  "PASS" if verdicts[-1] else "FAIL"))
    base_scores = m["base_scores"]
    lines.append("- the baseline's CPU time: {:.2f} s loading and indexing the files as the "
                 "official helper does (annotations, questions twice, results), {:.2f} s "
                 "evaluating; the scorer against the evaluation alone: {:.1f}x".format(
                     base_scores["cpu_load"], base_scores["cpu_evaluate"],
                     base_scores["cpu_evaluate"] / scorer["cpu"]))
    return lines


def interval_and_startup_lines(args, m, verdicts: List[bool]) -> List[str]:
    """The interval's target (its verdict added to verdicts), the raw layout, the scores and
    what the start-up imports."""
    scorer, scorer_raw, floor, interval = m["scorer"], m["scorer_raw"], m["floor"], m["interval"]
    baseline, official = m["baseline"], m["official"]
    imports, imports_vqa = m["imports"], m["imports_vqa"]
    share = interval["cpu"] / scorer["cpu"]
    verdicts.append(share <= INTERVAL_SHARE and interval["peak_mb"] + interval["kept_mb"] <=
                    INTERVAL_MB)
    lines = ["- confidence interval (bootstrap, 1,000 resamples of the {:,} questions drawn "
             "as counts of their {} distinct accuracies), in this process: {:.1f} ms CPU "
             "({:.1f} ms wall) = **{:.1f}%** of the scorer's CPU (c), memory {:.1f} MB peak "
             "+ {:.1f} MB of rows kept; target <= {:.0f}% and <= {:.0f} MB: {}. Through the "
             "command, (c) - (c') = {:+.3f} s CPU (best of {}; within the runs' noise)."
             .format(args.questions, interval["distinct"], 1000 * interval["cpu"],
                     1000 * interval["wall"], 100 * share, interval["peak_mb"],
                     interval["kept_mb"], 100 * INTERVAL_SHARE, INTERVAL_MB,
                     "PASS" if verdicts[-1] else "FAIL", scorer["cpu"] - m["no_interval"]["cpu"],
                     args.repeat)]
    lines.append("- raw reference (d), for comparison: {:.2f}x the floor (CPU)".format(
        scorer_raw["cpu"] / floor["cpu"]))
    if baseline or official:
        lines.append("- scores: packed == raw exactly, == {} (to 1e-9): {}".format(
            " == ".join(name for name, r in (("project baseline", baseline),
                                             ("official vqaEval.py", official)) if r),
            ", ".join("{} {:.4f}".format(k, v) for k, v in sorted(scorer["scores"].items()))))
    without = scorer["cpu"] - (imports["cpu"] - imports_vqa["cpu"])
    lines.append("- numpy / Pillow imported at startup: {} (through the task registry, which "
                 "imports every task); the VQA path alone imports {}. Without them the scorer "
                 "would take about {:.2f} s CPU: {:.2f}x the floor{}.".format(
                     imports["out"].strip(), imports_vqa["out"].strip(), without,
                     without / floor["cpu"],
                     ", {:.1f}x faster than the project baseline".format(baseline["cpu"] / without)
                     if baseline else ""))
    return lines


def memory_lines(memory) -> List[str]:
    lines = ["", "## Memory (peak RSS) against the number of questions", "",
             "| questions | annotations.json | packed payload | scorer, packed | scorer, raw | "
             "floor | scorer raw - floor |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for n, s_rss, r_rss, f_rss, size, payload in memory:
        lines.append("| {:,} | {} | {} | {:.0f} MB | {:.0f} MB | {:.0f} MB | {:.0f} MB |".format(
            n, mb(size), mb(payload), s_rss, r_rss, f_rss, r_rss - f_rss))
    return lines


def main(argv=None) -> int:
    p, args = parse_args(argv)
    if args.interval_of:
        cost = interval_in_process(*args.interval_of)
        print(json.dumps({k: v for k, v in cost.items() if k != "intervals"}))
        return 0
    if args.generate_into:
        generate_into(args.generate_into, args.questions, args.seed)
        return 0
    official_files = official_files_of(p, args)
    m = measure_runs(args)
    if m is None or not measure_references(args, official_files, m):
        return 1
    memory = measure_memory(args, m)
    scorer, floor = m["scorer"], m["floor"]
    verdicts = []  # type: List[bool]
    ratio_floor = scorer["cpu"] / floor["cpu"]
    verdicts.append(ratio_floor <= FLOOR_TARGET)
    lines = run_lines(args, m)
    lines.append("- scorer / floor: **{:.2f}x** CPU ({:.2f}x wall); target <= {}x: {}".format(
        ratio_floor, scorer["wall"] / floor["wall"], FLOOR_TARGET,
        "PASS" if verdicts[-1] else "FAIL"))
    lines += speedup_lines(m) + baseline_lines(m, verdicts)
    lines += interval_and_startup_lines(args, m, verdicts) + memory_lines(memory)
    report = "\n".join(lines) + "\n"
    sys.stdout.write("\n" + report)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    return 1 if args.strict and not all(verdicts) else 0

if __name__ == "__main__":
    sys.exit(main())
