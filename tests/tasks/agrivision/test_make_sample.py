"""Tests of competitions/agriculture-vision/make_sample.py (synthetic Agriculture-Vision
reference + submission)."""

import hashlib
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT  # noqa: E402
COMPETITION = os.path.join(ROOT, "competitions", "agriculture-vision")
SCRIPT = os.path.join(COMPETITION, "make_sample.py")
sys.path.insert(0, COMPETITION)

import make_sample  # noqa: E402

LABELS = ("double_plant", "drydown", "endrow", "nutrient_deficiency", "planter_skip", "water",
          "waterway", "weed_cluster", "storm_damage")
SCORED = LABELS[:8]
LAYERS = ("boundary", "mask") + LABELS
ID_RE = re.compile(r"^([A-Z0-9]{9})_(\d+)-(\d+)-(\d+)-(\d+)$")

N_SAMPLE = 25
SIZE = 64
SEED = 2021


def read(path):
    with Image.open(path) as im:
        assert im.mode == "L", path
        return np.array(im)


def layer_path(root, layer, iid):
    if layer == "boundary":
        return os.path.join(root, "boundaries", iid + ".png")
    if layer == "mask":
        return os.path.join(root, "masks", iid + ".png")
    return os.path.join(root, "labels", layer, iid + ".png")


def run_cli(*args):
    return subprocess.run([sys.executable, SCRIPT] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """A small run: 25 images of 64 x 64, read back from the written PNGs."""
    base = tmp_path_factory.mktemp("sample")
    ref, sub = str(base / "ref"), str(base / "sub")
    ids = make_sample.write_sample(ref, N_SAMPLE, seed=SEED, size=SIZE, submission_dir=sub)
    layers = [dict((k, read(layer_path(ref, k, iid))) for k in LAYERS) for iid in ids]
    preds = [read(os.path.join(sub, iid + ".png")) for iid in ids]
    return ref, sub, ids, layers, preds


# ----------------------------------------------------------------- determinism

def test_generate_image_deterministic_and_typed():
    a = make_sample.generate_image(7, 3, size=48)
    b = make_sample.generate_image(7, 3, size=48)
    assert a[0] == b[0]
    assert set(a[1]) == set(LAYERS)
    for k in LAYERS:
        assert a[1][k].dtype == np.uint8 and a[1][k].shape == (48, 48)
        assert np.array_equal(a[1][k], b[1][k]), k
    assert a[2].dtype == np.uint8 and a[2].shape == (48, 48)
    assert np.array_equal(a[2], b[2])
    # another seed gives another image
    c = make_sample.generate_image(8, 3, size=48)
    assert c[0] != a[0]


def test_same_seed_same_arrays_and_image_k_independent_of_n(tmp_path, sample):
    _, _, ids, layers, preds = sample
    ref, sub = str(tmp_path / "ref"), str(tmp_path / "sub")
    n = 6  # fewer images, and two worker processes
    ids2 = make_sample.write_sample(ref, n, seed=SEED, size=SIZE, submission_dir=sub, workers=2)
    assert ids2 == ids[:n]
    for i, iid in enumerate(ids2):
        for k in LAYERS:
            assert np.array_equal(read(layer_path(ref, k, iid)), layers[i][k]), (iid, k)
        assert np.array_equal(read(os.path.join(sub, iid + ".png")), preds[i])
        _, gen_layers, gen_pred = make_sample.generate_image(SEED, i, SIZE)
        assert np.array_equal(gen_pred, preds[i])
        assert all(np.array_equal(gen_layers[k], layers[i][k]) for k in LAYERS)


# sha256 of the arrays of images 0..7 (seed 2021, 40 x 40)
GOLDEN_DIGEST = "e42ba6226c2d30006bc2eec5a644e7dde5405ef61d6cdc47863fec9de3649dcc"


def test_same_arrays_on_every_numpy_version():
    """Only exactly rounded arithmetic touches pixels, so numpy 1.16 and 2.x agree.
    If the generator is changed on purpose, update the digest (and regenerate the sample)."""
    h = hashlib.sha256()
    for i in range(8):
        iid, layers, pred = make_sample.generate_image(SEED, i, 40)
        h.update(iid.encode())
        for k in LAYERS:
            h.update(layers[k].tobytes())
        h.update(pred.tobytes())
    assert h.hexdigest() == GOLDEN_DIGEST



# ---------------------------------------------------------------------- layout

def test_layout_complete(sample):
    ref, sub, ids, _, _ = sample
    assert len(ids) == N_SAMPLE and len(set(ids)) == N_SAMPLE
    for iid in ids:
        m = ID_RE.match(iid)
        assert m, iid
        x1, y1, x2, y2 = (int(g) for g in m.groups()[1:])
        assert x2 == x1 + 512 and y2 == y1 + 512
    assert sorted(os.listdir(ref)) == ["boundaries", "config.yaml", "labels", "masks"]
    assert sorted(os.listdir(os.path.join(ref, "labels"))) == sorted(LABELS)
    want = sorted(iid + ".png" for iid in ids)
    folders = [os.path.join(ref, "boundaries"), os.path.join(ref, "masks"), sub]
    folders += [os.path.join(ref, "labels", c) for c in LABELS]
    for folder in folders:
        assert sorted(os.listdir(folder)) == want, folder
    with open(os.path.join(ref, "config.yaml")) as f:
        lines = f.read().splitlines()
    assert lines[-1] == "storm_damage: background"
    assert len(lines) == 2 and lines[0].startswith("#") and "ignore" in lines[0]


def test_values_and_sizes(sample):
    _, _, _, layers, preds = sample
    for lay, pred in zip(layers, preds):
        for k in LAYERS:
            assert lay[k].shape == (SIZE, SIZE)
            assert set(np.unique(lay[k])) <= {0, 255}, k
        assert pred.shape == (SIZE, SIZE)
        assert pred.max() <= 8
    all_pred = np.concatenate([p.ravel() for p in preds])
    assert len(np.unique(all_pred)) >= 6  # many classes predicted somewhere


# --------------------------------------------------------------------- realism

def valid_of(lay):
    return (lay["boundary"] > 0) & (lay["mask"] > 0)


def test_every_20_consecutive_images_have_one_without_valid_pixel():
    for seed in (0, SEED):
        empty = []
        for i in range(45):
            _, lay, _ = make_sample.generate_image(seed, i, 24)
            empty.append(not valid_of(lay).any())
        for start in range(45 - 20 + 1):
            assert any(empty[start:start + 20]), (seed, start)


def test_boundaries_masks_and_classes_vary(sample):
    _, _, _, layers, _ = sample
    full = sum(bool((lay["boundary"] > 0).all()) for lay in layers)
    partial = sum(bool(0 < (lay["boundary"] > 0).mean() < 1) for lay in layers)
    assert full >= N_SAMPLE // 3 and partial >= 3
    invalid_patches = sum(bool(0 < (lay["mask"] == 0).mean() < 1) for lay in layers)
    assert invalid_patches >= 1
    for c in SCORED:
        present = sum(bool(lay[c].any()) for lay in layers)
        assert present < N_SAMPLE, c  # absent from some images
    assert sum(sum(bool(lay[c].any()) for lay in layers) for c in SCORED) >= N_SAMPLE
    # patterns may reach outside the valid area
    assert any((lay[c] > 0)[~valid_of(lay)].any() for lay in layers for c in SCORED)


def test_multi_label_valid_pixels_exist(sample):
    _, _, _, layers, _ = sample
    multi = sum(int((valid_of(lay) & (sum((lay[c] > 0).astype(int) for c in SCORED) >= 2)).sum())
                for lay in layers)
    assert multi >= 20


def test_storm_damage_alone_and_overlapping(sample):
    _, _, _, layers, _ = sample
    alone = overlap = 0
    for lay in layers:
        storm = (lay["storm_damage"] > 0) & valid_of(lay)
        scored = sum((lay[c] > 0).astype(int) for c in SCORED)
        alone += int((storm & (scored == 0)).sum())
        overlap += int((storm & (scored > 0)).sum())
    assert alone > 0 and overlap > 0


def miou(layers, preds):
    """The spec's overlapping-label confusion matrix (background policy), small and slow."""
    M = np.zeros((9, 9), np.int64)
    for lay, pred in zip(layers, preds):
        v = valid_of(lay)
        sets = [(lay[c] > 0)[v] for c in SCORED]
        bg = ~np.any(sets, axis=0)
        ref = [bg] + sets
        p = pred[v]
        hit = np.zeros(p.shape, bool)
        for y in range(9):
            hit |= ref[y] & (p == y)
        for y in range(9):
            M[y, y] += int((ref[y] & hit).sum())
            for x in range(9):
                if x != y:
                    M[x, y] += int((ref[y] & ~hit & (p == x)).sum())
    iou = [M[c, c] / float(M[c, :].sum() + M[:, c].sum() - M[c, c])
           for c in range(9) if M[c, :].sum() + M[:, c].sum() > 0]
    return float(np.mean(iou))


def test_prediction_is_an_imperfect_model(sample):
    _, _, _, layers, preds = sample
    score = miou(layers, preds)
    assert 0.3 < score < 0.85, score
    # something is predicted on invalid pixels too
    assert any((pred[~valid_of(lay)] > 0).any() for lay, pred in zip(layers, preds))


# ------------------------------------------------------------------------- CLI

def test_cli_refuses_non_empty_out(tmp_path):
    out = tmp_path / "ref"
    out.mkdir()
    (out / "README.txt").write_text("mine")
    r = run_cli("--out", out, "--images", 2, "--size", 16)
    assert r.returncode == 2
    assert "not empty" in r.stderr and "--force" in r.stderr
    assert sorted(os.listdir(str(out))) == ["README.txt"]
    # a submission folder that already holds PNGs is refused as well
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "old.png").write_bytes(b"x")
    r = run_cli("--out", tmp_path / "fresh", "--submission", sub, "--images", 2, "--size", 16)
    assert r.returncode == 2 and "--force" in r.stderr
    assert not (tmp_path / "fresh" / "boundaries").exists()


def test_cli_force_replaces_only_what_it_writes(tmp_path):
    out, sub = tmp_path / "ref", tmp_path / "sub"
    r = run_cli("--out", out, "--submission", sub, "--images", 5, "--size", 16, "--seed", 3,
                "--workers", 1)
    assert r.returncode == 0, r.stderr
    assert "5 images" in r.stdout and len(r.stdout.strip().splitlines()) == 1
    (out / "README.txt").write_text("mine")
    (out / "images").mkdir()
    (out / "boundaries" / "stale.png").write_bytes(b"x")
    (out / "labels" / "water" / "stale.png").write_bytes(b"x")
    (sub / "stale.png").write_bytes(b"x")
    (sub / "notes.txt").write_text("mine")
    r = run_cli("--out", out, "--submission", sub, "--images", 3, "--size", 16, "--seed", 3)
    assert r.returncode == 2  # not empty, no --force
    r = run_cli("--out", out, "--submission", sub, "--images", 3, "--size", 16, "--seed", 3,
                "--force")
    assert r.returncode == 0, r.stderr
    assert "3 images" in r.stdout
    assert sorted(os.listdir(str(out))) == ["README.txt", "boundaries", "config.yaml", "images",
                                            "labels", "masks"]
    ids = [make_sample.image_id(3, i) for i in range(3)]
    want = sorted(i + ".png" for i in ids)
    assert sorted(os.listdir(str(out / "boundaries"))) == want
    assert sorted(os.listdir(str(out / "labels" / "water"))) == want
    assert sorted(os.listdir(str(sub))) == sorted(want + ["notes.txt"])
    _, lay, pred = make_sample.generate_image(3, 2, 16)
    assert np.array_equal(read(str(out / "masks" / (ids[2] + ".png"))), lay["mask"])
    assert np.array_equal(read(str(sub / (ids[2] + ".png"))), pred)


def test_polygon_fill_matches_brute_force_even_odd():
    """The scanline filler against a direct point-in-polygon count at pixel centres,
    on random, self-intersecting and degenerate (integer, repeated) polygons."""
    rs = np.random.RandomState(1)
    for _ in range(300):
        S, n = rs.randint(4, 30), rs.randint(3, 10)
        if rs.rand() < 0.3:
            vx = rs.randint(-4, S + 4, n) + 0.5 * rs.randint(2)
            vy = rs.randint(-4, S + 4, n) + 0.5 * rs.randint(2)
        else:
            vx, vy = rs.uniform(-0.5 * S, 1.5 * S, (2, n))
        vx, vy = np.asarray(vx, float), np.asarray(vy, float)
        xb, yb = np.roll(vx, -1), np.roll(vy, -1)
        py = (np.arange(S) + 0.5)[:, None, None]
        px = (np.arange(S) + 0.5)[None, :, None]
        crosses = (py >= np.minimum(vy, yb)) & (py < np.maximum(vy, yb))
        with np.errstate(divide="ignore", invalid="ignore"):
            xi = vx + (py - vy) * ((xb - vx) / (yb - vy))
            want = ((crosses & (px > xi)).sum(-1) & 1).astype(bool)
        got = np.zeros((S, S), bool)
        item = make_sample._fill_polygon(S, vx, vy)
        if item is not None:
            make_sample._paste(got, item, True)
        assert np.array_equal(got, want), (S, vx.tolist(), vy.tolist())
