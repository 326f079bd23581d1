"""What scoring/formats/label_png/pillow_array.py earns: decoding label PNGs straight into an
array (load_array) against Pillow's ordinary path (np.asarray(Image.open(path))).

    python3 bench/decode.py [--images 300] [--repeat 7] [--report FILE]

Two kinds of file, each as the tasks read them: 8-bit grayscale label maps of 512 x 512
(Agriculture-Vision's predictions and label layers; Planetscapes' label ids are 8-bit too) and
16-bit grayscale instance maps of 2048 x 1024 (Planetscapes' instances, which Pillow before 10
opens as 32-bit mode 'I' and widens while decoding). Files are generated into a temporary
folder and read once, untimed, before the timing; the two paths then alternate (A B A B ...),
each pass over all files, and the best pass of each is kept (the least disturbed by other
load), with the median beside it. Both paths must give the same values (checked on every file).
Run it with each Python that matters: the worker image's (Python 3.7, numpy 1.16, Pillow 6.1,
the venv `.ci/run` builds) and a current one.
"""
import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scoring_program"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "competitions", "planetscapes"))

from make_semantic_sample import save_16bit  # noqa: E402
from scoring.formats.label_png.pillow_array import load_array  # noqa: E402


def _write_labels(folder, count, rng):
    """8-bit label maps: blocks of 16 x 16 pixels of 9 classes, 2% speckle (a plausible PNG
    compression ratio for a prediction)."""
    paths = []
    for i in range(count):
        a = np.kron(rng.randint(0, 9, (32, 32)), np.ones((16, 16), np.uint8)).astype(np.uint8)
        a[rng.rand(512, 512) < 0.02] = 3
        path = os.path.join(folder, "l%04d.png" % i)
        Image.fromarray(a).save(path)
        paths.append(path)
    return paths


def _write_instances(folder, count, rng):
    """16-bit instance maps (values about class id * 1000 + instance)."""
    paths = []
    for i in range(count):
        a = np.kron(rng.randint(0, 40, (64, 128)), np.ones((16, 16))) + 26000
        path = os.path.join(folder, "i%04d.png" % i)
        save_16bit(a, path)
        paths.append(path)
    return paths


def _direct(path):
    with Image.open(path) as img:
        return load_array(img)


def _ordinary(path):
    with Image.open(path) as img:
        return np.asarray(img)


def _pass(read, paths):
    start = time.perf_counter()
    for p in paths:
        read(p)
    return time.perf_counter() - start


def measure(paths, repeat):
    for p in paths:  # warm the page cache, and the same values from both paths
        a, b = _direct(p), _ordinary(p)
        if not np.array_equal(a, b.astype(a.dtype)) or a.shape != b.shape:
            raise SystemExit("different values from the two paths: " + p)
    direct, ordinary = [], []
    for _ in range(repeat):
        direct.append(_pass(_direct, paths))
        ordinary.append(_pass(_ordinary, paths))
    return direct, ordinary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--images", type=int, default=300, help="8-bit files (16-bit: a tenth)")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--report", help="also write the Markdown report here")
    args = p.parse_args(argv)
    if args.images < 10 or args.repeat < 1:
        p.error("--images must be >= 10 and --repeat >= 1")
    rng = np.random.RandomState(args.seed)
    folder = tempfile.mkdtemp(prefix="decode-bench-")
    try:
        kinds = [("8-bit labels, 512 x 512", _write_labels(folder, args.images, rng)),
                 ("16-bit instances, 2048 x 1024",
                  _write_instances(folder, args.images // 10, rng))]
        import PIL
        lines = ["Python {}, numpy {}, Pillow {}; {} passes each, alternating; per file: best "
                 "(median) of the passes.".format(platform.python_version(), np.__version__,
                                                   PIL.__version__, args.repeat), "",
                 "| files | count | load_array, ms | np.asarray, ms | ratio (best) |",
                 "|---|---|---|---|---|"]
        for name, paths in kinds:
            direct, ordinary = measure(paths, args.repeat)
            n = float(len(paths))
            lines.append("| {} | {:,} | {:.2f} ({:.2f}) | {:.2f} ({:.2f}) | {:.2f} |".format(
                name, len(paths), min(direct) / n * 1e3, statistics.median(direct) / n * 1e3,
                min(ordinary) / n * 1e3, statistics.median(ordinary) / n * 1e3,
                min(direct) / min(ordinary)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.report:
        with open(args.report, "a", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
