"""The organizers' and participants' tools on files that are not files: bundle.sh on a reference
holding a FIFO or a link to /dev/zero (it reads the image sizes for the kit's manifest before
the packing checks every file), and the dry run on a folder submission holding them (it copies
the folder as the worker would receive it). Each is the real command in a subprocess with a
timeout: a hang, or a copy of /dev/zero filling the disk, fails instead of blocking."""
import os
import subprocess
import sys

import numpy as np
import pytest

import agrivision_data
from conftest import ROOT


DRY_RUN = os.path.join(ROOT, "kit", "dry_run.py")


def tiny_reference(root, n=3, size=(64, 64)):
    """A raw-layout reference of n images and predictions for it: (ids, predictions folder)."""
    rng = np.random.RandomState(0)
    ids = ["FIELD0000_0-{}-512-{}".format(i * 512, i * 512 + 512) for i in range(n)]
    preds = os.path.join(str(root), "predictions")
    for image_id in ids:
        boundary, mask, labels, storm, pred = agrivision_data.random_image(rng, *size)
        agrivision_data.write_reference(os.path.join(str(root), "reference"), image_id,
                                        boundary, mask, labels, storm)
        agrivision_data.save(os.path.join(preds, image_id + ".png"), pred)
    return ids, preds


def run_bundle(*args):
    env = dict(os.environ, PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1")
    env.pop("BUNDLE_NOW", None)
    return subprocess.run(["bash", os.path.join(ROOT, "bundle.sh")] + [str(a) for a in args],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)


def _fifo(path):
    os.mkfifo(path)


def _zero_link(path):
    os.symlink("/dev/zero", path)


@pytest.mark.parametrize("make,phrase", [(_fifo, "it is a FIFO (named pipe)"),
                                         (_zero_link, "it is a device file")])
def test_bundle_refuses_a_special_file_in_the_reference_by_name(tmp_path, make, phrase):
    ids, _ = tiny_reference(tmp_path)
    name = "boundaries/{}.png".format(ids[0])
    os.remove(str(tmp_path / "reference" / name))
    make(str(tmp_path / "reference" / name))
    proc = run_bundle("--reference", tmp_path / "reference", "--out", tmp_path / "out",
                      "--no-smoke")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "REFUSED, nothing written" in proc.stderr
    assert name in proc.stderr and phrase in proc.stderr and "reference" in proc.stderr
    assert os.listdir(str(tmp_path / "out")) == []


def _dry_run(*args):
    # ulimit -f: a copy of /dev/zero stops at 100 MB rather than at a full disk.
    command = "ulimit -f 200000; exec \"$@\""
    return subprocess.run(["bash", "-c", command, "dry_run", sys.executable, DRY_RUN] +
                          [str(a) for a in args] + ["--quiet"],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("make,phrase", [
    (_fifo, "is not a regular file (a FIFO), which no zip can hold"),
    (_zero_link, "it is a symbolic link")])
def test_the_dry_run_of_a_folder_refuses_a_special_file_by_name(tmp_path, make, phrase):
    ids, preds = tiny_reference(tmp_path)
    os.remove(os.path.join(preds, ids[0] + ".png"))
    make(os.path.join(preds, ids[0] + ".png"))
    proc = _dry_run(preds, tmp_path / "reference")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Traceback" not in out and "INTERNAL ERROR" not in out, out
    assert ids[0] + ".png" in out and phrase in out, out
    assert "would FAIL on CodaLab (v1 worker), Codabench" in out, out
