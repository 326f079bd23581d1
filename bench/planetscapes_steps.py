#!/usr/bin/env python3
"""Where the CPU time of the Planetscapes raw path goes, step by step, in one process.

    python3 bench/planetscapes_steps.py [--data DIR] [--images N] [--repeat R] [--code ROOT]

On the data bench/planetscapes.py generated (--data, default its cache), for every image: the
decode floor of each of its three PNGs (np.asarray(Image.open(path)), as the bench's floor row),
then the scorer's own steps, each timed with time.process_time(): decoding the label image and
the instance image (reference.read_png), the reference checks (check_truth), reading and
checking the prediction (the submission format's read), the confusion count (an update whose
truth has no instance pixels) and the instance counts (the rest of a full update). --code ROOT
times the scoring program of another checkout (e.g. `git worktree add /tmp/before HEAD~3`): the
steps are found by the same names there. The best of --repeat passes is kept, per step.
Prints a Markdown table (ms of CPU per image) and the process's system time and minor page
faults per image.
"""
import argparse
import os
import resource
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class Clock:
    """CPU seconds (time.process_time) summed per step name."""

    def __init__(self):
        self.seconds, self.last = {}, time.process_time()

    def start(self):
        self.last = time.process_time()

    def tick(self, name):
        now = time.process_time()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - self.last
        self.last = now


def floor(path):
    """The bench's floor row for one PNG: Pillow's decode into an array."""
    import numpy as np
    from PIL import Image
    with Image.open(path) as img:
        np.asarray(img)


def one_pass(task, config, raw, fmt, ids, ref, pred):
    """One timed pass over the images: (CPU seconds per step, (system seconds, minor page
    faults) per image)."""
    import numpy as np
    from scoring.tasks.planetscapes_semantic import reference as ps_reference

    clock = Clock()
    state = task.new_state(config)
    state.row_layout = None  # the metric's steps alone: the interval's rows are timed apart
    before = resource.getrusage(resource.RUSAGE_SELF)
    for i in ids:
        paths = {"labels": os.path.join(ref, "labels", i + ".png"),
                 "instances": os.path.join(ref, "instances", i + ".png"),
                 "prediction": os.path.join(pred, i + ".png")}
        clock.start()
        for what in ("labels", "instances", "prediction"):
            floor(paths[what])
            clock.tick("floor: " + what)
        labels = ps_reference.read_png(paths["labels"], "l", ps_reference.LABEL_MODES)
        clock.tick("decode label image")
        instances = ps_reference.read_png(paths["instances"], "i",
                                          ps_reference.INSTANCE_MODES)
        clock.tick("decode instance image")
        truth = ps_reference.check_truth(labels, instances, raw.spec, "l", "i")
        clock.tick("reference checks")
        prediction = fmt.read(paths["prediction"], truth.shape)
        clock.tick("read and check the prediction")
        # The full update first (it meets fresh memory as the scorer's does), then one
        # without instance pixels: the difference is the instance counts.
        state.update(i, prediction, truth)
        clock.tick("full update")
        none = np.zeros(truth.shape, dtype=bool)
        state.update(i + " again", prediction,
                     truth._replace(where=none, ids=truth.instances[none]))
        clock.tick("confusion count")
    after = resource.getrusage(resource.RUSAGE_SELF)
    steps = clock.seconds
    steps["instance counts"] = steps.pop("full update") - steps["confusion count"]
    n = len(ids)
    return steps, ((after.ru_stime - before.ru_stime) / n, (after.ru_minflt - before.ru_minflt) / n)


ORDER = ["decode label image", "decode instance image", "reference checks",
         "read and check the prediction", "confusion count", "instance counts"]


def write_table(args, best, usage, n):
    """The Markdown table of the best pass's steps and the summary line."""
    import numpy as np
    floor_total = sum(v for k, v in best.items() if k.startswith("floor"))
    ours = [k for k in best if not k.startswith("floor")]
    rows = [("floor: " + w, best["floor: " + w]) for w in ("labels", "instances", "prediction")]
    rows.append(("**floor, 3 PNGs**", floor_total))
    rows += [(k, best[k]) for k in ORDER if k in ours]
    total = sum(best[k] for k in ORDER if k in ours)
    rows.append(("**scorer steps, total**", total))
    sys.stdout.write("| step | CPU ms / image |\n|---|---:|\n")
    for name, seconds in rows:
        sys.stdout.write("| {} | {:.1f} |\n".format(name, 1000 * seconds / n))
    sys.stdout.write("\n{} images from {}; code {}; numpy {}; best of {} passes. Scorer steps / "
                     "floor: {:.2f}. Per image, whole pass (floor and steps): system time {:.2f} "
                     "ms, {:.0f} minor page faults.\n".format(
                         n, args.data, os.path.abspath(args.code), np.__version__, args.repeat,
                         total / floor_total, 1000 * usage[0], usage[1]))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "planetscapes-bench"))
    p.add_argument("--images", type=int, default=40)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--code", default=os.path.dirname(HERE))
    args = p.parse_args(argv)
    sys.path.insert(0, os.path.join(os.path.abspath(args.code), "scoring_program"))
    import yaml
    from scoring.registry import TASKS

    task = TASKS["planetscapes-semantic"]
    ref, pred = os.path.join(args.data, "ref"), os.path.join(args.data, "pred")
    with open(os.path.join(ref, "config.yaml")) as f:
        config = task.configure({}, yaml.safe_load(f))
    raw = task.open_reference(ref, config)
    fmt = task.submission_format(config)
    ids = raw.ids[:args.images]
    best, usage = {}, None
    for _ in range(args.repeat):
        steps, pass_usage = one_pass(task, config, raw, fmt, ids, ref, pred)
        for name, seconds in steps.items():
            best[name] = min(best.get(name, seconds), seconds)
        usage = pass_usage if usage is None else min(usage, pass_usage)
    write_table(args, best, usage, len(ids))
    return 0

if __name__ == "__main__":
    sys.exit(main())
