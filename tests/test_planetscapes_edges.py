"""Planetscapes semantic labeling at the edges of what is valid (issue 14 items 1-3): every label
id 0-255 in a table, instance images that cannot hold instance ids, average instance sizes of
any value. Each through the scorer's own functions and through the real commands (score.py,
pack.py, the starting kit's check_submission.py), raw and packed, with 1 to 3 workers."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from PIL import Image

import planetscapes_oracle as oracle
from conftest import PROGRAM, ROOT, run_score
from planetscapes_util import save_16bit, write_predictions, write_reference
from scoring.registry import TASKS
from scoring.task_api import PredictionProblem
from scoring.tasks.planetscapes_semantic import labels as ps_labels
from scoring.tasks.planetscapes_semantic import metric, packed, reference

TASK = TASKS["planetscapes-semantic"]
PACK = os.path.join(PROGRAM, "pack.py")
CHECK_SUBMISSION = os.path.join(ROOT, "starting_kit", "check_submission.py")


def _row(name, i, category, instances=False, ignored=False):
    return {"name": name, "id": i, "category": category, "has_instances": instances,
            "ignore_in_eval": ignored}


def _pack(raw, out, workers=2):
    return subprocess.run([sys.executable, PACK, raw, out, "--workers", str(workers)],
                          capture_output=True, text=True)


def _scores(out_dir):
    return json.loads((out_dir / "scores.json").read_text())


def _assert_equal_to_oracle(got, want):
    assert sorted(got) == sorted(want)
    for k, v in want.items():
        assert math.isfinite(got[k]) and got[k] == pytest.approx(float(v), abs=1e-10), k


def _score_in_process(rows, images, tmp_path):
    """(raw scores, packed scores) of [(labels, instances, prediction)] through check_truth, the
    submission format's read of a written PNG, update, and the packed encode/decode."""
    tab = ps_labels.load({"labels": rows})
    config = {"table": tab}
    fmt = TASK.submission_format(config)
    checks = reference.CheckSpec(tab)
    raw, pk = TASK.new_state(config), TASK.new_state(config)
    for n, (lab, inst, pred) in enumerate(images):
        path = str(tmp_path / "p{}.png".format(n))
        Image.fromarray(np.asarray(pred, dtype=np.uint8)).save(path)
        prediction = fmt.read(path, np.asarray(lab).shape)
        truth = reference.check_truth(np.asarray(lab, np.uint8), np.asarray(inst, np.uint16),
                                      checks, "l", "i")
        raw.update(prediction, truth)
        pk.update(prediction, packed.decode(packed.encode(truth), "p", checks))
    out = []
    for state in (raw, pk):
        result = metric.summarize(state, tab)
        out.append({k: v for k, v in metric.score_list(result, tab) if v is not None})
    return out


# --- item 1: any id 0-255 in the label table ------------------------------------------------

@pytest.mark.parametrize("v", range(256))
def test_every_id_in_a_table_with_gaps(tmp_path, v):
    """A table of two ids 128 apart (never contiguous: the allowed-values check runs) with id v
    evaluated, and v predicted; an id outside the table is refused, naming it."""
    a = (v + 128) % 256
    rows = [_row("a", a, "x"), _row("v", v, "y")]
    lab = np.array([[a, a, v, v], [v, a, v, a]], dtype=np.uint8)
    pred = np.array([[a, v, v, v], [v, a, a, a]], dtype=np.uint8)
    want = oracle.scores(rows, [(lab, lab, pred)])
    for got in _score_in_process(rows, [(lab, lab, pred)], tmp_path):
        _assert_equal_to_oracle(got, want)
    unknown = (v + 1) % 256 if (v + 1) % 256 != a else (v + 2) % 256
    bad = pred.copy()
    bad[0, 0] = unknown
    Image.fromarray(bad).save(str(tmp_path / "bad.png"))
    fmt = TASK.submission_format({"table": ps_labels.load({"labels": rows})})
    with pytest.raises(PredictionProblem) as err:
        fmt.read(str(tmp_path / "bad.png"), bad.shape)
    assert err.value.detail == "1 pixels hold values {}".format(unknown)


def test_a_table_of_all_256_ids(tmp_path):
    """Ids 0-255 (the confusion key's largest value, 255 * 256 + 255, is the top of 16 bits),
    with instances on ids up to 65."""
    rows = [_row("c%d" % i, i, "k%d" % (i % 5), instances=1 <= i <= 65 and i % 3 == 0,
                 ignored=i % 7 == 0) for i in range(256)]
    rng = np.random.RandomState(5)
    images = []
    for _ in range(3):
        lab = rng.randint(0, 256, size=(9, 13)).astype(np.uint8)
        lab[0, :4] = [255, 254, 0, 60]
        inst = lab.astype(np.uint16)
        things = (lab >= 1) & (lab <= 65) & (lab % 3 == 0)
        inst[things] = lab[things].astype(np.uint16) * 1000 + rng.randint(1, 3, things.sum())
        pred = np.where(rng.rand(9, 13) < 0.5, lab, rng.randint(0, 256, (9, 13))).astype(np.uint8)
        pred[1, :2] = 255
        images.append((lab, inst, pred))
    want = oracle.scores(rows, images)
    assert "iou_class_c255" in want and "iiou_class_c60" in want
    for got in _score_in_process(rows, images, tmp_path):
        _assert_equal_to_oracle(got, want)


ROWS_255 = [_row("ground", 2, "flat"), _row("rock", 5, "object", instances=True),
            _row("void", 255, "void", ignored=True)]


@pytest.fixture(scope="module")
def reference_255(tmp_path_factory):
    """A reference whose table uses id 255 (a void class, ignored), raw and packed, and the
    oracle's scores of a valid submission."""
    base = tmp_path_factory.mktemp("id255")
    lab = np.array([[2, 2, 5, 5, 255], [255, 2, 5, 5, 2]], dtype=np.uint8)
    inst = np.array([[2, 2, 5001, 5002, 255], [255, 2, 5001, 5002, 2]], dtype=np.uint16)
    preds = {"a": np.array([[2, 255, 5, 2, 255], [255, 2, 5, 5, 5]], dtype=np.uint8),
             "b": np.array([[2, 2, 5, 5, 2], [2, 2, 255, 5, 2]], dtype=np.uint8)}
    raw = str(base / "raw")
    write_reference(raw, ROWS_255, [("a", lab, inst), ("b", lab, inst)])
    write_predictions(str(base / "res"), sorted(preds.items()))
    proc = _pack(raw, str(base / "packed"))
    assert proc.returncode == 0, proc.stderr
    want = oracle.scores(ROWS_255, [(lab, inst, preds["a"]), (lab, inst, preds["b"])])
    return raw, str(base / "packed"), str(base / "res"), lab, want


@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_id_255_through_the_command(reference_255, tmp_path, layout):
    raw, pk, res, _, want = reference_255
    ref = raw if layout == "raw" else pk
    texts = set()
    for workers in (1, 2, 3):
        out = tmp_path / "out{}".format(workers)
        proc = run_score("--ref", ref, "--res", res, "--out", out, "--workers", workers)
        assert proc.returncode == 0, proc.stderr
        _assert_equal_to_oracle(_scores(out), want)
        texts.add((out / "scores.txt").read_text())
    assert len(texts) == 1


@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_id_255_table_refuses_an_unknown_id_with_exit_1(reference_255, tmp_path, layout):
    raw, pk, _, lab, _ = reference_255
    bad = lab.copy()
    bad[0, 0] = 254
    write_predictions(str(tmp_path / "res"), [("a", lab), ("b", bad)])
    proc = run_score("--ref", raw if layout == "raw" else pk, "--res", tmp_path / "res")
    assert proc.returncode == 1, proc.stderr
    assert "b.png" in proc.stderr and "values 254" in proc.stderr
    assert "2, 5, 255" in proc.stderr and "Traceback" not in proc.stderr


def test_id_255_table_in_the_starting_kit_check(reference_255, tmp_path):
    """check_submission.py checks a submission against a manifest of this reference."""
    raw, _, res, lab, _ = reference_255
    config = TASK.configure(None, yaml.safe_load(open(os.path.join(raw, "config.yaml"))))
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(TASK.make_manifest(TASK.open_reference(raw, config))))
    proc = subprocess.run([sys.executable, CHECK_SUBMISSION, res, "--manifest", str(manifest)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = lab.copy()
    bad[1, 1] = 7
    write_predictions(str(tmp_path / "bad"), [("a", lab), ("b", bad)])
    proc = subprocess.run([sys.executable, CHECK_SUBMISSION, str(tmp_path / "bad"), "--manifest",
                           str(manifest)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "values 7" in proc.stderr and "Traceback" not in proc.stderr + proc.stdout


# --- item 3: average_instance_size of any value -----------------------------------------------

@pytest.fixture(scope="module")
def sized(tmp_path_factory):
    """A reference with instances (planetscapes_util.ROWS), raw and packed, a submission."""
    from planetscapes_util import ROWS, random_images
    base = tmp_path_factory.mktemp("sizes")
    ids = ["s%d" % k for k in range(4)]
    images = random_images(np.random.RandomState(21), ROWS, len(ids), 12, 15)
    raw = str(base / "raw")
    write_reference(raw, ROWS, [(i, lab, inst) for i, (lab, inst, _) in zip(ids, images)])
    write_predictions(str(base / "res"), [(i, p) for i, (_, _, p) in zip(ids, images)])
    proc = _pack(raw, str(base / "packed"))
    assert proc.returncode == 0, proc.stderr
    return raw, str(base / "packed"), str(base / "res"), images


def _with_sizes(src, dst, text):
    """A copy of reference src whose config.yaml ends with `average_instance_size:` text."""
    import shutil
    shutil.copytree(src, str(dst))
    with open(os.path.join(str(dst), "config.yaml"), "a") as f:
        f.write("average_instance_size:\n" + text)
    return str(dst)


REFUSED_SIZES = {
    "1e308": "  rock: 1.0e+308\n",
    "inf": "  rock: .inf\n",
    "nan": "  rock: .nan\n",
    "300 digits": "  rock: {}\n".format("7" * 300),
    "zero": "  rock: 0\n",
    "negative": "  rock: -850\n",
    "below one pixel": "  rock: 0.5\n",
    "text": "  rock: many\n",
    "empty": "  rock:\n",
    "a list": "  rock: [850]\n",
    "true": "  rock: true\n",
    "above the largest image": "  rock: {}\n".format((2 ** 31 - 1) ** 2 + 1),
}


@pytest.mark.parametrize("name", sorted(REFUSED_SIZES))
def test_unusable_average_size_is_exit_3_naming_the_class(sized, tmp_path, name):
    raw, pk, res, _ = sized
    for layout, src in (("raw", raw), ("packed", pk)):
        ref = _with_sizes(src, tmp_path / layout, REFUSED_SIZES[name])
        proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / ("out-" + layout))
        assert proc.returncode == 3, (layout, proc.stderr)
        assert "average_instance_size: 'rock' must be a positive number of pixels" in \
            proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr + proc.stdout and len(proc.stderr) < 2000
        assert not (tmp_path / ("out-" + layout) / "scores.txt").exists()
    proc = _pack(_with_sizes(raw, tmp_path / "topack", REFUSED_SIZES[name]),
                 str(tmp_path / "packed-out"))
    assert proc.returncode == 3 and "'rock'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_integer_too_long_for_text_is_exit_3(sized, tmp_path):
    """5,000 digits: Python 3.11+ cannot even read it as an int (YAML refuses it: exit 3 naming
    config.yaml); older Pythons read it and the table check names the class."""
    raw, _, res, _ = sized
    ref = _with_sizes(raw, tmp_path / "raw", "  rock: {}\n".format("9" * 5000))
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 3, proc.stderr
    assert "config.yaml" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr) < 2000


@pytest.mark.parametrize("size", [1, 850, 3.25, (2 ** 31 - 1) ** 2])
def test_extreme_valid_average_sizes_score_every_key(sized, tmp_path, size):
    """From one pixel to the largest PNG image: every iIoU key present, finite, equal to the
    oracle's, for both layouts and 1 to 3 workers."""
    from planetscapes_util import ROWS
    raw, pk, res, images = sized
    want = oracle.scores(ROWS, images, {"rock": size, "probe": size})
    assert {"iiou_class_rock", "iiou_class_probe", "iiou_category_vehicle"} <= set(want)
    texts = set()
    for layout, src in (("raw", raw), ("packed", pk)):
        ref = _with_sizes(src, tmp_path / layout, "  rock: {}\n  probe: {}\n".format(size, size))
        for workers in (1, 2, 3):
            out = tmp_path / "{}-{}".format(layout, workers)
            proc = run_score("--ref", ref, "--res", res, "--out", out, "--workers", workers)
            assert proc.returncode == 0, proc.stderr
            got = _scores(out)
            _assert_equal_to_oracle(got, want)
            texts.add((out / "scores.txt").read_text())
    assert len(texts) == 1
