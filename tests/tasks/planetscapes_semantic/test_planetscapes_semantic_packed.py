"""The packed Planetscapes reference scores exactly as the raw one, and is checked."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from hypothesis import given, settings, strategies as st
from PIL import Image, PngImagePlugin

from conftest import ORGANIZER, run_score
from planetscapes_util import ROWS, random_images, table, write_case
from scoring.tasks.planetscapes_semantic import metric, packed, reference

# Reading the packed reference is marked compat: CI runs it on the oldest versions too; pack.py,
# the organizer's, is left to the current ones.

PACK = os.path.join(ORGANIZER, "pack.py")


def _states(images, tab):
    spec, checks = metric.MetricSpec(tab), reference.CheckSpec(tab)
    raw, pk = metric.SemanticState(spec), metric.SemanticState(spec)
    for k, (lab, inst, pred) in enumerate(images):
        truth = reference.check_truth(np.asarray(lab, np.uint8), np.asarray(inst, np.uint16),
                                      checks, "l", "i")
        data = packed.encode(truth)
        again = packed.decode(data, "p", checks)
        assert packed.read_fast(data) is not None  # the fast path reads what encode writes
        pred = np.asarray(pred, np.uint8)
        raw.update(str(k), pred, truth)
        pk.update(str(k), pred, again)
    return raw, pk


def _same(raw, pk, tab):
    assert (raw.matrix == pk.matrix).all()
    assert raw.instances == pk.instances
    assert metric.score_list(metric.summarize(raw, tab), tab) == \
        metric.score_list(metric.summarize(pk, tab), tab)


@pytest.mark.compat
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), h=st.integers(1, 9), w=st.integers(1, 9))
def test_packed_state_equals_raw_state(seed, h, w):
    rng = np.random.RandomState(seed)
    tab = table()
    _same(*_states(random_images(rng, ROWS, 3, h, w), tab), tab)


@pytest.mark.compat
def test_many_instances_use_16_bits():
    tab = table()
    h, w = 30, 40
    lab = np.full((h, w), 4, dtype=np.uint8)  # rock everywhere
    inst = (4000 + np.arange(h * w) // 3).reshape(h, w).astype(np.uint16)  # 400 instances
    pred = np.where(np.arange(h * w).reshape(h, w) % 2, 4, 2).astype(np.uint8)
    truth = reference.check_truth(lab, inst, reference.CheckSpec(tab), "l", "i")
    data = packed.encode(truth)
    assert Image.open(io.BytesIO(data)).mode in ("I", "I;16")
    _same(*_states([(lab, inst, pred)], tab), tab)


@pytest.mark.compat
def test_pillow_reencoded_packed_image_reads_the_same():
    tab = table()
    images = random_images(np.random.RandomState(4), ROWS, 1, 12, 16)
    lab, inst, _ = images[0]
    checks = reference.CheckSpec(tab)
    data = packed.encode(reference.check_truth(lab, inst, checks, "l", "i"))
    with Image.open(io.BytesIO(data)) as img:
        info = PngImagePlugin.PngInfo()
        info.add_text(packed.TABLE_KEY, img.info[packed.TABLE_KEY])
        buf = io.BytesIO()
        img.save(buf, "PNG", pnginfo=info, optimize=True)  # Pillow filters the rows
    a, b = packed.decode(data, "p", checks), packed.decode(buf.getvalue(), "p", checks)
    assert (a.index == b.index).all() and (a.labels == b.labels).all()


@pytest.fixture(scope="module")
def raw_and_packed(tmp_path_factory):
    base = tmp_path_factory.mktemp("pk")
    ids = ["img%02d" % k for k in range(6)]
    images = random_images(np.random.RandomState(8), ROWS, len(ids), 20, 24)
    raw, res = write_case(base, ROWS, ids, images)
    proc = subprocess.run([sys.executable, PACK, raw, str(base / "packed"), "--workers", "2"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return raw, str(base / "packed"), res, ids


@pytest.mark.compat
def test_command_scores_both_layouts_identically(raw_and_packed, tmp_path):
    raw, pk, res, _ = raw_and_packed
    outs = []
    for ref in (raw, pk):
        out = tmp_path / os.path.basename(ref)
        proc = run_score("--ref", ref, "--res", res, "--out", out)
        assert proc.returncode == 0, proc.stderr
        outs.append((out / "scores.txt").read_text())
    assert outs[0] == outs[1]


def test_pack_refuses_a_broken_raw_reference(raw_and_packed, tmp_path):
    import shutil
    raw = shutil.copytree(raw_and_packed[0], str(tmp_path / "raw"))
    path = os.path.join(raw, "instances", "img03.png")
    arr = np.asarray(Image.open(path)).copy()
    arr[0, 0] = 8001 if arr[0, 0] // 1000 != 8 else 2001
    from planetscapes_util import save_16bit
    save_16bit(arr, path)
    proc = subprocess.run([sys.executable, PACK, raw, str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    assert "instances/img03.png" in proc.stderr and "Traceback" not in proc.stderr
    assert not os.path.exists(str(tmp_path / "out" / "packed.json"))


@pytest.mark.compat
def test_broken_packed_reference_is_exit_3(raw_and_packed, tmp_path):
    import shutil
    _, pk, res, ids = raw_and_packed
    broken = shutil.copytree(pk, str(tmp_path / "pk"))
    with open(os.path.join(broken, "packed", ids[2] + ".png"), "r+b") as f:
        f.truncate(40)
    proc = run_score("--ref", broken, "--res", res)
    assert proc.returncode == 3 and "packed/{}.png".format(ids[2]) in proc.stderr, proc.stderr
    # a label table edited after packing no longer has an id the packed images hold
    broken = shutil.copytree(pk, str(tmp_path / "pk2"))
    config = yaml.safe_load(open(os.path.join(broken, "config.yaml")))
    config["labels"] = [r for r in config["labels"] if r["name"] != "sky"]
    yaml.safe_dump(config, open(os.path.join(broken, "config.yaml"), "w"))
    proc = run_score("--ref", broken, "--res", res, "--workers", "1")
    assert proc.returncode == 3 and "ids 8" in proc.stderr, proc.stderr  # before any prediction
    assert "Traceback" not in proc.stderr
