#!/usr/bin/env python3
"""How wide the ranking score's interval is on each part of a split test set (issue 35,
docs/bundle.md "A private part"): for each private share, the split of bundle.sh
--private-share drawn with several seeds, one submission scored on each part with the
organizer's full reference (compare.py --split's code: organizing/split/), and the 95%
interval of its score on that part by the bootstrap over the task's groups (Agriculture-
Vision: fields), as score.py computes it.

    python3 bench/split_widths.py                        # the 40-image sample, its sample submission
    python3 bench/split_widths.py --images 2000          # a synthetic set (make_sample.py), cached
    python3 bench/split_widths.py --reference DIR --submission DIR   # your own

Prints a Markdown table: per share, the groups and units of each part, and the interval's width
on the private part (mean, min, max over the seeds) and on the public part (mean), beside the
whole test set's.
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "organizer"))

import organizing  # noqa: E402,F401  (puts scoring_program/ on sys.path)
from organizing.split import choose, grouping, selection, side_by_side  # noqa: E402
from scoring import engine, reference_setup  # noqa: E402

SAMPLE_REF = os.path.join(ROOT, "competitions", "agriculture-vision", "reference_data")
SAMPLE_SUB = os.path.join(ROOT, "competitions", "agriculture-vision", "starting_kit",
                          "sample_submission")


def synthetic(images: int, data: str):
    """make_sample.py's set of `images` images (seed 2021) and its degraded predictions."""
    folder = os.path.join(data, "split-{}".format(images))
    ref, sub = os.path.join(folder, "reference"), os.path.join(folder, "submission")
    if not os.path.isdir(sub):
        subprocess.run([sys.executable, os.path.join(ROOT, "competitions", "agriculture-vision",
                                                     "make_sample.py"), "--out", ref,
                        "--images", str(images), "--submission", sub], check=True)
    return ref, sub


def width(ends):
    return None if ends is None else ends[1] - ends[0]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reference", default=None)
    p.add_argument("--submission", default=None)
    p.add_argument("--images", type=int, default=0, help="a synthetic set of this many images")
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "data"))
    p.add_argument("--shares", default="0.2,0.3,0.5,0.7")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--workers", type=int, default=engine.usable_cpus())
    args = p.parse_args(argv)
    if args.images:
        ref, sub = synthetic(args.images, args.data)
    else:
        ref, sub = args.reference or SAMPLE_REF, args.submission or SAMPLE_SUB
    started = time.time()
    setup = reference_setup.configure(ref)
    reference = setup.open()
    fmt = setup.task.submission_format(setup.settings)
    key = setup.task.keys(setup.settings)[0]
    found = fmt.discover(sub, reference.ids)
    files = {u: (path, os.path.basename(path)) for u, path in found.files.items()}
    groups = grouping.grouping_of(setup, reference)

    def on(units):
        cut = selection.restricted(reference, set(units))
        points, ends = side_by_side.score_part(setup, cut, fmt, [selection.files_of(files, cut)],
                                               args.workers, key)
        return points[0], ends[0]

    whole, whole_ends = on(reference.ids)
    print("Reference {} ({:,} {}, {:,} {}), submission {}; {} on the whole test set {:.4f}, "
          "95% interval width {:.4f} (bootstrap over {}, {} seeds per share)\n".format(
              os.path.relpath(ref, ROOT), len(groups.units), groups.unit_noun,
              len(set(map(groups.key, groups.units))), groups.group_noun,
              os.path.relpath(sub, ROOT), key, whole, width(whole_ends), groups.group_noun,
              args.seeds))
    print("| private share | private {g} | private {u} | width on the private part: mean "
          "(min-max) | width on the public part: mean |".format(g=groups.group_noun,
                                                                  u=groups.unit_noun))
    print("|---|---|---|---|---|")
    for share in [float(s) for s in args.shares.split(",")]:
        priv_w, pub_w, priv_g, priv_u = [], [], [], []
        for seed in range(args.seeds):
            split = choose.choose(groups, share, seed)
            priv_w.append(width(on(split.private)[1]))
            pub_w.append(width(on(split.public)[1]))
            priv_g.append(len(split.private_groups))
            priv_u.append(len(split.private))
        print("| {} | {:.1f} | {:.1f} | {:.4f} ({:.4f}-{:.4f}) | {:.4f} |".format(
            share, sum(priv_g) / len(priv_g), sum(priv_u) / len(priv_u),
            sum(priv_w) / len(priv_w), min(priv_w), max(priv_w), sum(pub_w) / len(pub_w)))
    print("\n({:.0f} s)".format(time.time() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
