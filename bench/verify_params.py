#!/usr/bin/env python3
"""Benchmark of the parameter counter (issue 24): a PyTorch checkpoint of 2 GB is counted in
seconds, in memory that does not grow with the file (tensor data is never read).

    python3 bench/verify_params.py                     # 16 MB, 256 MB, 2 GB checkpoints
    python3 bench/verify_params.py --sizes-mb 4,16 --report /tmp/r.md

1. Writes, without torch, torch.save-format zips (tests/support/torch_files.py: data.pkl
   assembled opcode by opcode, one stored data/ record per tensor) of the given sizes in a
   temporary folder: float32 tensors of 4 M elements (16 MB) each, plus a BatchNorm-like set of
   buffers, so the 2 GB file holds 128 weight tensors and 512 M parameters.
2. Counts each in a fresh process (final_package.params.count_file), cold process, warm page
   cache; wall time (Python's start and imports included) and the process's peak resident
   memory (VmHWM of /proc/self/status on Linux: ru_maxrss would also count the pages fork
   copied from this process before exec; ru_maxrss elsewhere).
3. Checks the count against the parameters written, prints a Markdown table (and writes it to
   --report).

Exit status: 0 measured; 1 a count was wrong or a run failed; 2 bad usage. Linux or macOS.
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
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))

import torch_files  # noqa: E402  (the hand-made torch.save writer the tests use too)

TENSOR_ELEMENTS = 4 << 20     # 16 MB of float32 per weight tensor
COUNT = """
import sys, json
sys.path[:0] = [{program!r}, {kit!r}]
from final_package.params import count_file
r = count_file(sys.argv[1], "bench.pth")
hwm = None
try:  # this process's own peak (Linux), not counting what fork copied before exec
    with open("/proc/self/status") as f:
        hwm = [int(l.split()[1]) for l in f if l.startswith("VmHWM:")][0] / 1024
except (OSError, IndexError):
    pass
print(json.dumps({{"status": r.status, "reason": r.reason, "figures": r.figures, "hwm": hwm}}))
"""


def build(path: str, size_mb: int) -> int:
    """A checkpoint of about size_mb MB; returns its parameter count."""
    tensors, entries = [], []
    n_weights = max(1, (size_mb << 20) // (TENSOR_ELEMENTS * 4))
    params = 0
    for i in range(n_weights):
        t = torch_files.T(str(len(tensors)), (2048, TENSOR_ELEMENTS // 2048))
        tensors.append(t)
        entries.append(("layer{}.weight".format(i), t.pickle()))
        params += TENSOR_ELEMENTS
        for buf in ("running_mean", "running_var"):
            b = torch_files.T(str(len(tensors)), (2048,))
            tensors.append(b)
            entries.append(("layer{}.bn.{}".format(i, buf), b.pickle()))
        b = torch_files.T(str(len(tensors)), (), kind="LongStorage", numel=1)
        tensors.append(b)
        entries.append(("layer{}.bn.num_batches_tracked".format(i), b.pickle()))
    torch_files.write(path, torch_files.state_dict(entries), torch_files.records_for(tensors))
    return params


def measure(path: str):
    """(wall seconds, peak RSS in MB, the counter's JSON answer) of one counting process."""
    code = COUNT.format(program=os.path.join(ROOT, "scoring_program"), kit=os.path.join(ROOT, "kit"))
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", code, path], stdout=subprocess.PIPE)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        raise SystemExit("the counting process failed (status {})".format(status))
    import json
    answer = json.loads(out.decode())
    rss = answer["hwm"] or usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    return wall, rss, answer


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes-mb", default="16,256,2048",
                   help="checkpoint sizes in MB, comma-separated (default 16,256,2048)")
    p.add_argument("--tmp", default=None, help="folder for the checkpoints (default: a "
                                               "temporary folder, removed at the end)")
    p.add_argument("--report", default=None, help="also write the table to this file")
    args = p.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes_mb.split(",")]
    except ValueError:
        p.error("--sizes-mb: comma-separated integers")
    tmp = tempfile.mkdtemp(dir=args.tmp)
    rows, failed = [], False
    try:
        for mb in sizes:
            path = os.path.join(tmp, "ckpt-{}.pth".format(mb))
            t0 = time.monotonic()
            params = build(path, mb)
            built = time.monotonic() - t0
            os.system("cat {} > /dev/null".format(path))      # warm the page cache
            wall, rss, answer = measure(path)
            got = answer["figures"].get("parameters")
            ok = answer["status"] == "counted" and got == params
            failed = failed or not ok
            rows.append("| {:,} | {:,} | {:,} | {:.2f} | {:.0f} | {} | {:.1f} |".format(
                os.path.getsize(path) >> 20, params, got or 0, wall, rss,
                "yes" if ok else "NO: " + answer["reason"], built))
            os.remove(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines = ["# Parameter counter benchmark: PyTorch zip checkpoints, tensor data never read", "",
             "{} UTC; Python {}, {} {}; one fresh process per file, warm page cache.".format(
                 datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"),
                 platform.python_version(), platform.system(), platform.machine()), "",
             "| file (MB) | parameters written | counted | wall (s) | peak RSS (MB) | exact | "
             "build (s) |", "|---|---|---|---|---|---|---|"] + rows
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
