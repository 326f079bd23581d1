#!/usr/bin/env python3
"""Benchmark of the Planetscapes semantic task on Cityscapes-sized images (issue 8, section 4).

    python3 bench/planetscapes.py --anchor-python /work/venvs/oldest/bin/python \\
        --report bench/results-planetscapes.md

1. Generates (deterministically, cached under --data) N scenes of 2048 x 1024 in the Cityscapes
   format with the Cityscapes label ids: labels/<id>.png (8-bit), instances/<id>.png (16-bit),
   and a prediction <id>.png each; the anchor's *_gtFine_labelIds.png / *_gtFine_instanceIds.png
   names are symbolic links to the same files. A second reference of N/3 of the images (links
   again) measures whether memory grows with the number of images.
2. Reads every file once, untimed (warm page cache).
3. (a) Decode floor: the three PNGs of every image decoded with Pillow in this one process;
   divided by the CPUs, the ideal all-CPU time of anything that must decode them.
4. (b) cityscapesScripts' evalPixelLevelSemanticLabeling.evaluateImgLists on the same files, in
   --anchor-python (an environment with cityscapesscripts and numpy < 2.4); only the evaluation
   call is timed, not its imports. Its scores are checked against ours (every key).
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
import time

import numpy as np
import PIL
from PIL import Image

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import run as common  # noqa: E402  (bench/run.py: process-tree memory, load, tables)
import make_planetscapes_sample as sample  # noqa: E402
from scoring import engine  # noqa: E402
from scoring.tasks.planetscapes_semantic import cityscapes_labels  # noqa: E402
from scoring.tasks.planetscapes_semantic.labels import key_name  # noqa: E402

H, W = 1024, 2048  # Cityscapes' frame (--height / --width change it, for tests)
STAMP_FORMAT = 2
PACK = os.path.join(ROOT, "scoring_program", "pack.py")
LAYOUTS = ("raw", "packed")
SPEEDUP_VS_ANCHOR = 4.0
FLOOR_FACTOR = 1.5
FLAT_MEMORY_FACTOR = 1.25  # peak at N images within this factor of the peak at N/3

# Cityscapes ids for the synthetic scenes: ground and structures, sky, things with their sizes
# (min, max radius as a fraction of the height), a few void ids.
STUFF = [7, 8, 11, 21, 22, 7, 12, 13, 17, 20, 9, 6]
THINGS = {24: (0.01, 0.06), 25: (0.01, 0.05), 26: (0.02, 0.1), 27: (0.04, 0.15),
          28: (0.05, 0.2), 29: (0.04, 0.1), 30: (0.03, 0.1), 31: (0.05, 0.2),
          32: (0.01, 0.05), 33: (0.01, 0.05)}
IDS = [lab[1] for lab in cityscapes_labels.LABELS if lab[1] >= 0]
CONFUSIONS = [(26, 27), (27, 26), (24, 25), (7, 8), (26, 29), (21, 22), (11, 12)]

ANCHOR_SCRIPT = r"""
import json, sys, time
import cityscapesscripts.evaluation.evalPixelLevelSemanticLabeling as ev
gt, pred = json.load(open(sys.argv[1]))
args = ev.args
args.quiet, args.JSONOutput, args.evalPixelAccuracy, args.evalInstLevelScore = True, False, False, True
started, cpu = time.perf_counter(), time.process_time()
result = ev.evaluateImgLists(pred, gt, args)
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
keep = {k: result[k] for k in ("classScores", "classInstScores", "categoryScores",
        "categoryInstScores", "averageScoreClasses", "averageScoreInstClasses",
        "averageScoreCategories", "averageScoreInstCategories")}
print(json.dumps({"seconds": seconds, "cpu": cpu, "scores": keep}))
"""


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
    """A reference (config + labels/ + instances/) and predictions of `ids`, as links."""
    ref, pred = os.path.join(data, name, "ref"), os.path.join(data, name, "pred")
    for folder in ("labels", "instances"):
        os.makedirs(os.path.join(ref, folder))
    os.makedirs(pred)
    shutil.copy(os.path.join(data, "ref", "config.yaml"), ref)
    for i in ids:
        for folder in ("labels", "instances"):
            os.symlink(os.path.join(data, "ref", folder, i + ".png"),
                       os.path.join(ref, folder, i + ".png"))
        os.symlink(os.path.join(data, "pred", i + ".png"), os.path.join(pred, i + ".png"))
    return ref, pred


def prepare(data, n, seed, h=H, w=W):
    stamp_path = os.path.join(data, "stamp.json")
    want = {"format": STAMP_FORMAT, "images": n, "seed": seed, "size": [w, h],
            "generator": common.sources_sha1(ROOT, ["tools/make_planetscapes_sample.py",
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


class Run:
    def __init__(self, wall, cpu, peak_mb, other, scores):
        self.wall, self.cpu, self.peak_mb, self.other, self.scores = wall, cpu, peak_mb, other, scores


def run_scorer(ref, pred, workers, repeat):
    """The real command, as bench/run.py runs it (wall, peak memory of the process tree, other
    load), plus the CPU time of the whole tree: the scorer's own (waited for) and its workers'
    as sampled from /proc (started from a fork server, they are not this process's children).
    The fastest of `repeat` runs."""
    best = None
    for _ in range(repeat):
        out = tempfile.mkdtemp(prefix="bench-ps-")
        try:
            cmd = [sys.executable, common.SCORE, "--ref", ref, "--res", pred, "--workers",
                   str(workers), "--quiet", "--out", out]
            before = os.times()
            with common.OtherLoad() as load:
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                sampler = common.TreeMemorySampler(proc.pid)
                sampler.start()
                _, stderr = proc.communicate()
                peak = sampler.finish()
            after = os.times()
            workers_cpu = sampler.descendant_cpu_seconds()
            if load.other is not None:
                load.other = max(0.0, load.other - workers_cpu)
            if proc.returncode != 0:
                raise common.BenchError("the scorer exited {}: {}\n{}".format(
                    proc.returncode, " ".join(cmd), stderr.decode("utf-8", "replace")))
            with open(os.path.join(out, "scores.txt"), "rb") as f:
                scores = f.read()
        finally:
            shutil.rmtree(out, ignore_errors=True)
        cpu = (after[2] + after[3] - before[2] - before[3]) + workers_cpu
        run = Run(load.wall, cpu, peak, load.percent(), scores)
        if best is not None and best.scores != run.scores:
            raise common.BenchError("scores.txt differs between repeats of the same run")
        if best is None or run.wall < best.wall:
            best = run
    return best


def run_anchor(python, data, ids):
    gt = [os.path.join(data, "gt", i + "_gtFine_labelIds.png") for i in ids]
    pred = [os.path.join(data, "pred", i + ".png") for i in ids]
    with tempfile.TemporaryDirectory() as tmp:
        lists = os.path.join(tmp, "lists.json")
        script = os.path.join(tmp, "anchor.py")
        with open(lists, "w") as f:
            json.dump([gt, pred], f)
        with open(script, "w") as f:
            f.write(ANCHOR_SCRIPT)
        with common.OtherLoad() as load:
            proc = subprocess.run([python, script, lists], capture_output=True, cwd=tmp)
    if proc.returncode != 0:
        raise common.BenchError("the anchor failed:\n" + proc.stderr.decode("utf-8", "replace"))
    out = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    return out["seconds"], out["scores"], load.percent(), out["cpu"]


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


def main(argv=None):
    p = argparse.ArgumentParser(description="Planetscapes semantic benchmark (Cityscapes-sized).")
    p.add_argument("--images", type=int, default=60)
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "planetscapes-bench"))
    p.add_argument("--anchor-python", help="a Python with cityscapesscripts and numpy < 2.4 "
                   "(skip the anchor if not given)")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--width", type=int, default=W)
    p.add_argument("--height", type=int, default=H)
    p.add_argument("--report")
    args = p.parse_args(argv)
    cpus = engine.usable_cpus()
    n = args.images

    say("data: {} images of {} x {} under {}".format(n, args.width, args.height, args.data))
    ids, made, gen_seconds = prepare(args.data, n, args.seed, args.height, args.width)
    labels, instances, preds = files_of(args.data, ids)
    all_files = labels + instances + preds
    warm = common.warm_up(all_files + [os.path.join(args.data, "packed", "packed", i + ".png")
                                       for i in ids])
    sizes = {name: sum(os.path.getsize(f) for f in files)
             for name, files in (("labels", labels), ("instances", instances), ("predictions", preds))}

    say("(a) decode floor")
    floor, floor_load, floor_cpu = decode_floor(all_files)
    say("    {:.2f} s".format(floor))

    anchor = None
    if args.anchor_python:
        say("(b) cityscapesScripts' evaluator")
        anchor = run_anchor(args.anchor_python, args.data, ids)
        say("    {:.2f} s".format(anchor[0]))

    say("(c) score.py")
    runs, third = {}, {}
    third_ids = ids[:max(1, n // 3)]
    pred = os.path.join(args.data, "pred")
    for layout in LAYOUTS:
        ref = os.path.join(args.data, "ref" if layout == "raw" else "packed")
        for workers in sorted({1, cpus}):
            r = run_scorer(ref, pred, workers, args.repeat)
            runs[layout, workers] = r
            say("    {} reference, {} worker(s): {:.2f} s, peak {} MB".format(
                layout, workers, r.wall, common.mb(r.peak_mb)))
        third[layout] = run_scorer(
            os.path.join(args.data, "third", "ref" if layout == "raw" else "packed"),
            os.path.join(args.data, "third", "pred"), cpus, args.repeat)
        say("    {} reference, {} images, {} worker(s): peak {} MB".format(
            layout, len(third_ids), cpus, common.mb(third[layout].peak_mb)))
    texts = {r.scores for r in runs.values()}
    if len(texts) != 1:
        raise common.BenchError("scores.txt differs between runs (layouts or worker counts)")
    ours = parse_scores(texts.pop())
    checked = compare(anchor[1], ours) if anchor else None

    # ---------------------------------------------------------------- report
    ideal = floor / cpus
    def cpu_ms(seconds, images):
        return common.f1(1000 * seconds / images)

    rows = [
        ["(a) decode floor: 3 PNGs / image, 1 process", 1, common.f2(floor),
         common.f1(1000 * floor / n), cpu_ms(floor_cpu, n), "-", common.pct(floor_load)],
        ["(a) decode floor / {} CPUs (ideal)".format(cpus), cpus, common.f2(ideal),
         common.f1(1000 * ideal / n), "-", "-", "-"],
    ]
    if anchor:
        rows.append(["(b) cityscapesScripts evaluateImgLists (pure Python path)", 1,
                     common.f2(anchor[0]), common.f1(1000 * anchor[0] / n), cpu_ms(anchor[3], n),
                     "-", common.pct(anchor[2])])
    for (layout, workers), r in sorted(runs.items()):
        rows.append(["(c) score.py, {} reference (start-up included)".format(layout), workers,
                     common.f2(r.wall), common.f1(1000 * r.wall / n), cpu_ms(r.cpu, n),
                     common.mb(r.peak_mb), common.pct(r.other)])
    for layout in LAYOUTS:
        r = third[layout]
        rows.append(["(c) score.py, {} reference, {} of the images".format(layout, len(third_ids)),
                     cpus, common.f2(r.wall), common.f1(1000 * r.wall / len(third_ids)),
                     cpu_ms(r.cpu, len(third_ids)), common.mb(r.peak_mb), common.pct(r.other)])
    targets = []
    for layout in LAYOUTS:
        best = runs[layout, cpus]
        if anchor:
            speedup = anchor[0] / best.wall
            targets.append(["{}: all-CPU scorer >= {:.0f}x faster than cityscapesScripts".format(
                layout, SPEEDUP_VS_ANCHOR), "{:.1f}x ({} s vs {} s)".format(
                    speedup, common.f2(best.wall), common.f2(anchor[0])),
                common.verdict(speedup >= SPEEDUP_VS_ANCHOR)])
        ratio = best.wall / ideal
        targets.append(["{}: all-CPU scorer <= {} x (decode floor / CPUs)".format(
            layout, FLOOR_FACTOR), "{} s vs {} s ({:.2f} x)".format(
                common.f2(best.wall), common.f2(ideal), ratio), common.verdict(ratio <= FLOOR_FACTOR)])
        # The same targets in CPU time: what they become on an idle machine with perfect
        # scaling, and a measure that other processes' load does not distort.
        if anchor:
            targets.append(["{}: (CPU) scorer CPU time <= 1/{:.0f} of cityscapesScripts'".format(
                layout, SPEEDUP_VS_ANCHOR), "{:.1f}x less ({} s vs {} s)".format(
                    anchor[3] / best.cpu, common.f2(best.cpu), common.f2(anchor[3])),
                common.verdict(anchor[3] / best.cpu >= SPEEDUP_VS_ANCHOR)])
        targets.append(["{}: (CPU) scorer CPU time <= {} x decode floor CPU time".format(
            layout, FLOOR_FACTOR), "{} s vs {} s ({:.2f} x)".format(
                common.f2(best.cpu), common.f2(floor_cpu), best.cpu / floor_cpu),
            common.verdict(best.cpu <= FLOOR_FACTOR * floor_cpu)])
        small = third[layout]
        flat = (None if best.peak_mb is None or small.peak_mb is None
                else best.peak_mb <= FLAT_MEMORY_FACTOR * small.peak_mb)
        targets.append(["{}: peak memory flat in the number of images ({} vs {} images)".format(
            layout, n, len(third_ids)), "{} MB vs {} MB".format(
                common.mb(best.peak_mb), common.mb(small.peak_mb)), common.verdict(flat)])
    packed_bytes = common.folder_bytes(os.path.join(args.data, "packed", "packed"))
    lines = [
        "# Planetscapes semantic labeling benchmark: {} images of {} x {}".format(
            n, args.width, args.height),
        "",
        "Machine: {} usable CPUs, {}, {:.0f} GB RAM; Python {}, numpy {}, Pillow {}; {}.".format(
            cpus, common.cpu_model(), common.mem_total_gb() or 0, sys.version.split()[0],
            np.__version__, PIL.__version__, common._now()),
        "",
        "Scorer: {}.".format(common.scorer_identity()),
        "",
        "Data: {} synthetic scenes of {} x {} in the Cityscapes format and ids (bench/planetscapes.py "
        "with tools/make_planetscapes_sample.py's scene drawer, seed {}){}: label ids (8-bit), "
        "instance ids (16-bit), predictions (8-bit). Bytes: labels {:,}, instances {:,}, "
        "predictions {:,}; packed reference (scoring_program/pack.py) {:,}. Every file was read "
        "once, untimed, before the timed steps ({:,} bytes).".format(
            n, args.width, args.height, args.seed, "" if made else " (cached)", sizes["labels"],
            sizes["instances"],
            sizes["predictions"], packed_bytes, warm),
        "",
        common.markdown_table(["measurement", "workers", "wall (s)", "wall ms / image",
                               "CPU ms / image", "peak RSS (MB)", "other load"], rows),
        "",
        "Targets:",
        "",
        common.markdown_table(["target", "measured", "result"], targets, align=["l", "l", "l"]),
        "",
    ]
    if anchor:
        lines.append("Correctness: every scorer run exited 0; scores.txt identical for both "
                     "layouts with 1 and {} workers; {} keys compared with cityscapesScripts' "
                     "results, max abs difference {:.2g} (scores.txt holds 10 decimals).".format(
                         cpus, checked[0], checked[1]))
        lines.append("")
        lines.append("Anchor environment: {} (cityscapesScripts' evaluator, numpy < 2.4; only "
                     "the evaluation call is timed, not its imports).".format(args.anchor_python))
    else:
        lines.append("The anchor was not run (no --anchor-python).")
    report = "\n".join(lines) + "\n"
    say("")
    say(report)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except common.BenchError as exc:
        sys.stderr.write("BENCHMARK CHECK FAILED: {}\n".format(exc))
        sys.exit(1)
