"""Planetscapes semantic labeling at the edges of what is valid: every label
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
from conftest import ROOT, ORGANIZER, pack_either, run_main, run_score, score_either
from planetscapes_util import save_16bit, write_case, write_predictions, write_reference
from scoring.registry import TASKS
from scoring.task_api import PredictionProblem
from scoring.tasks.planetscapes_semantic import labels as ps_labels
from scoring.tasks.planetscapes_semantic import metric, packed, reference

# The edges of the arithmetic and of decoding (every id, 8- and 16-bit images, extreme sizes) are
# marked compat: CI runs them on the oldest versions too; the messages of refused tables and
# sizes depend on no version.

TASK = TASKS["planetscapes-semantic"]
PACK = os.path.join(ORGANIZER, "pack.py")
KIT = os.path.join(ROOT, "kit")
CHECK_SUBMISSION = os.path.join(KIT, "check_submission.py")
if KIT not in sys.path:
    sys.path.insert(0, KIT)
import check_submission  # noqa: E402


def _row(name, i, category, instances=False, ignored=False):
    return {"name": name, "id": i, "category": category, "has_instances": instances,
            "ignore_in_eval": ignored}


def _pack(raw, out, workers=2, real=False):
    """pack.py RAW OUT --workers N: (exit status, stdout, stderr); the real command (a
    subprocess) if real, else its main in this process."""
    return pack_either([raw, out, "--workers", workers], real)


def _scores(out_dir):
    """The point scores (the oracle's keys); the confidence intervals' ends are checked to be
    finite and ordered, their values by tests/*/test_*_confidence.py."""
    scores = json.loads((out_dir / "scores.json").read_text())
    ends = {k: v for k, v in scores.items() if "_ci_" in k}
    for k, v in ends.items():
        assert math.isfinite(v), k
        if k.endswith("_ci_low"):
            assert v <= ends[k[:-len("low")] + "high"], k
    return {k: v for k, v in scores.items() if k not in ends}


def _assert_equal_to_oracle(got, want):
    assert sorted(got) == sorted(want)
    for k, v in want.items():
        assert math.isfinite(got[k]) and got[k] == pytest.approx(float(v), abs=1e-10), k


def _score_in_process(rows, images, tmp_path):
    """(raw scores, packed scores) of [(labels, instances, prediction)] through check_truth, the
    submission format's read of a written PNG, update, and the packed encode/decode."""
    tab = ps_labels.load({"labels": rows})
    config = TASK.configure({}, {"labels": rows})
    fmt = TASK.submission_format(config)
    checks = reference.CheckSpec(tab)
    raw, pk = TASK.new_state(config), TASK.new_state(config)
    for n, (lab, inst, pred) in enumerate(images):
        path = str(tmp_path / "p{}.png".format(n))
        Image.fromarray(np.asarray(pred, dtype=np.uint8)).save(path)
        prediction = fmt.read(path, np.asarray(lab).shape)
        truth = reference.check_truth(np.asarray(lab, np.uint8), np.asarray(inst, np.uint16),
                                      checks, "l", "i")
        raw.update(str(n), prediction, truth)
        pk.update(str(n), prediction, packed.decode(packed.encode(truth), "p", checks))
    out = []
    for state in (raw, pk):
        result = metric.summarize(state, tab)
        out.append({k: v for k, v in metric.score_list(result, tab) if v is not None})
    return out


# --- any id 0-255 in the label table ------------------------------------------------------

@pytest.mark.compat
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
    fmt = TASK.submission_format(TASK.configure({}, {"labels": rows}))
    with pytest.raises(PredictionProblem) as err:
        fmt.read(str(tmp_path / "bad.png"), bad.shape)
    assert err.value.detail == "1 pixels hold values {}".format(unknown)


@pytest.mark.compat
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
    code, _, err = _pack(raw, str(base / "packed"))
    assert code == 0, err
    want = oracle.scores(ROWS_255, [(lab, inst, preds["a"]), (lab, inst, preds["b"])])
    return raw, str(base / "packed"), str(base / "res"), lab, want


@pytest.mark.compat
@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_id_255_through_the_command(reference_255, tmp_path, layout):
    raw, pk, res, _, want = reference_255
    ref = raw if layout == "raw" else pk
    texts = set()
    for workers in (1, 2, 3):
        out = tmp_path / "out{}".format(workers)
        # The real command with a pool; the other counts in this process (the same main).
        code, _, err = score_either(["--ref", ref, "--res", res, "--out", out, "--workers",
                                     workers], real=workers == 2)
        assert code == 0, err
        _assert_equal_to_oracle(_scores(out), want)
        texts.add((out / "scores.txt").read_text())
    assert len(texts) == 1


@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_id_255_table_refuses_an_unknown_id_with_exit_1(reference_255, tmp_path, layout):
    raw, pk, _, lab, _ = reference_255
    bad = lab.copy()
    bad[0, 0] = 254
    write_predictions(str(tmp_path / "res"), [("a", lab), ("b", bad)])
    # The real command on the packed layout, the raw one through the same main in this process.
    code, _, err = score_either(["--ref", raw if layout == "raw" else pk, "--res",
                                 tmp_path / "res"], real=layout == "packed")
    assert code == 1, err
    assert "b.png" in err and "values 254" in err
    assert "2, 5, 255" in err and "Traceback" not in err


def test_id_255_table_in_the_starting_kit_check(reference_255, tmp_path):
    """check_submission.py checks a submission against a manifest of this reference."""
    raw, _, res, lab, _ = reference_255
    config = TASK.configure({}, yaml.safe_load(open(os.path.join(raw, "config.yaml"))))
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(TASK.manifest.make(TASK.open_reference(raw, config))))
    proc = subprocess.run([sys.executable, CHECK_SUBMISSION, res, "--manifest", str(manifest)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = lab.copy()
    bad[1, 1] = 7
    write_predictions(str(tmp_path / "bad"), [("a", lab), ("b", bad)])
    # The refusal through the kit's main in this process (the real script ran above).
    code, out, err = run_main(check_submission.main, [tmp_path / "bad", "--manifest", manifest])
    assert code == 1, out + err
    assert "values 7" in err and "Traceback" not in err + out


# --- average_instance_size of any value -----------------------------------------------------

@pytest.fixture(scope="module")
def sized(tmp_path_factory):
    """A reference with instances (planetscapes_util.ROWS), raw and packed, a submission."""
    from planetscapes_util import ROWS, random_images
    base = tmp_path_factory.mktemp("sizes")
    ids = ["s%d" % k for k in range(4)]
    images = random_images(np.random.RandomState(21), ROWS, len(ids), 12, 15)
    raw, res = write_case(base, ROWS, ids, images)
    code, _, err = _pack(raw, str(base / "packed"))
    assert code == 0, err
    return raw, str(base / "packed"), res, images


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
    "400 digits": "  rock: {}\n".format("7" * 400),
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
    # The real commands (score.py on both layouts, pack.py) for infinity; the other values
    # through the same mains in this process.
    real = name == "inf"
    for layout, src in (("raw", raw), ("packed", pk)):
        ref = _with_sizes(src, tmp_path / layout, REFUSED_SIZES[name])
        code, out, err = score_either(["--ref", ref, "--res", res, "--out",
                                       tmp_path / ("out-" + layout)], real)
        assert code == 3, (layout, err)
        assert "average_instance_size: 'rock' must be a positive number of pixels" in \
            err, err
        assert "Traceback" not in err + out and len(err) < 2000
        assert not (tmp_path / ("out-" + layout) / "scores.txt").exists()
    code, _, err = _pack(_with_sizes(raw, tmp_path / "topack", REFUSED_SIZES[name]),
                         str(tmp_path / "packed-out"), real=real)
    assert code == 3 and "'rock'" in err, err
    assert "Traceback" not in err


@pytest.mark.compat
def test_integer_too_long_for_text_is_exit_3(sized, tmp_path):
    """5,000 digits: Python 3.11+ cannot even read it as an int (YAML refuses it: exit 3 naming
    config.yaml); older Pythons read it and the table check names the class."""
    raw, _, res, _ = sized
    ref = _with_sizes(raw, tmp_path / "raw", "  rock: {}\n".format("9" * 5000))
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 3, proc.stderr
    assert "config.yaml" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr) < 2000


@pytest.mark.compat
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
            # The real command with a pool for 850 pixels (both layouts); the other counts and
            # sizes in this process (the same main, without an interpreter's start and imports
            # each time).
            code, _, err = score_either(["--ref", ref, "--res", res, "--out", out, "--workers",
                                         workers], real=workers == 2 and size == 850)
            assert code == 0, err
            got = _scores(out)
            _assert_equal_to_oracle(got, want)
            texts.add((out / "scores.txt").read_text())
    assert len(texts) == 1


# --- instance images that cannot hold instance ids --------------------------------------------

INSTANCE_ROWS = [
    _row("void", 0, "void", ignored=True),
    _row("ground", 1, "flat"),                       # id 1, no instances: 1000 is still allowed
    _row("sand", 2, "flat"),
    _row("rock", 4, "object", instances=True),
    _row("rover", 5, "vehicle", instances=True),
    _row("lander", 6, "vehicle", instances=True, ignored=True),
]
INSTANCE_IDS = ["i%d" % k for k in range(4)]


def _instance_images(seed=11):
    """Label, instance and prediction images: rocks and rovers as instances (ids > 1000),
    crowd regions (their label id), landers (ignored, with instances), ground and sand."""
    rng = np.random.RandomState(seed)
    out = []
    for _ in INSTANCE_IDS:
        lab = rng.choice([0, 1, 2, 4, 5, 6], size=(14, 16)).astype(np.uint8)
        inst = lab.astype(np.uint16)
        for c in (4, 5, 6):
            where = lab == c
            k = rng.randint(0, 4, size=int(where.sum()))
            inst[where] = np.where(k == 3, c, c * 1000 + 1 + k)  # k == 3: crowd
        pred = np.where(rng.rand(14, 16) < 0.7, lab, rng.choice([0, 1, 2, 4, 5, 6], (14, 16)))
        out.append((lab, inst, pred.astype(np.uint8)))
    return out


@pytest.fixture(scope="module")
def instance_case(tmp_path_factory):
    base = tmp_path_factory.mktemp("inst")
    images = _instance_images()
    raw, res = write_case(base, INSTANCE_ROWS, INSTANCE_IDS, images)
    return raw, res, images


def _edited(src, dst, image, instances, bits=16):
    """A copy of reference src whose instances/<image>.png is `instances`, saved with `bits`
    bits ('P' for a palette image)."""
    import shutil
    shutil.copytree(src, str(dst))
    path = os.path.join(str(dst), "instances", image + ".png")
    if bits == 16:
        save_16bit(np.asarray(instances), path)
    else:
        img = Image.fromarray(np.asarray(instances).astype(np.uint8))
        (img.convert("P") if bits == "P" else img).save(path)
    return str(dst)


def _refused_on_both_paths(ref, res, tmp_path, *phrases, real=True):
    """exit 3 naming the phrases from score.py on the raw reference and from pack.py: the real
    commands (subprocesses) if real, else their mains in this process."""
    for command, run in (("score.py", score_either), ("pack.py", pack_either)):
        argv = ["--ref", ref, "--res", res, "--workers", "2"] if command == "score.py" else \
            [ref, tmp_path / "packed", "--workers", "2"]
        code, out, err = run(argv, real)
        assert code == 3, (command, err)
        assert err.startswith("ERROR: the REFERENCE data"), err
        for phrase in phrases:
            assert phrase in err, (phrase, err)
        assert "Traceback" not in err + out
    assert not os.path.exists(str(tmp_path / "packed" / "packed.json"))


BROKEN_INSTANCES = {
    # name: (instances from the valid ones, bits, phrase)
    "8-bit, ids modulo 256": (lambda a: a % 256, 8, "it is an 8-bit image"),
    "8-bit, ids clipped to 255": (lambda a: np.minimum(a, 255), 8, "it is an 8-bit image"),
    "8-bit palette": (lambda a: a % 256, "P", "it is an 8-bit image"),
    "16-bit, ids modulo 256": (lambda a: a % 256, 16, "hold neither an instance id"),
    "16-bit, ids clipped to 255": (lambda a: np.minimum(a, 255), 16,
                                   "hold neither an instance id"),
    "16-bit, ids scaled to 8 bits": (lambda a: a // 257, 16, "hold neither an instance id"),
    "16-bit, crowd written as 0": (lambda a: np.where(a < 1000, np.where(
        (a == 4) | (a == 5), 0, a), a), 16, "hold neither an instance id"),
}


@pytest.mark.compat
@pytest.mark.parametrize("name", sorted(BROKEN_INSTANCES))
def test_instance_image_that_cannot_hold_instances_is_exit_3(instance_case, tmp_path, name):
    raw, res, images = instance_case
    change, bits, phrase = BROKEN_INSTANCES[name]
    ref = _edited(raw, tmp_path / "ref", INSTANCE_IDS[2], change(images[2][1]), bits)
    # The real commands for the palette image; the other images through their mains in process.
    _refused_on_both_paths(ref, res, tmp_path, "instances/{}.png".format(INSTANCE_IDS[2]),
                           phrase, real=name == "8-bit palette")


def _accepted_everywhere(ref, res, tmp_path, images, real_pack=False):
    """exit 0 on the raw reference and its pack, 1 to 3 workers, scores equal to the oracle.
    The real score.py on the raw reference with 2 workers (and the real pack.py if real_pack);
    the rest through the same mains in this process."""
    want = oracle.scores(INSTANCE_ROWS, images)
    code, _, err = _pack(ref, str(tmp_path / "packed"), real=real_pack)
    assert code == 0, err
    texts = set()
    for layout in (ref, str(tmp_path / "packed")):
        for workers in (1, 2, 3):
            out = tmp_path / "out-{}-{}".format(len(texts), workers)
            code, _, err = score_either(["--ref", layout, "--res", res, "--out", out,
                                         "--workers", workers],
                                        real=workers == 2 and layout == ref)
            assert code == 0, err
            _assert_equal_to_oracle(_scores(out), want)
            texts.add((out / "scores.txt").read_text())
    assert len(texts) == 1


@pytest.mark.compat
def test_valid_instances_are_accepted(instance_case, tmp_path):
    raw, res, images = instance_case
    _accepted_everywhere(raw, res, tmp_path, images, real_pack=True)


@pytest.mark.compat
def test_crowd_only_image_in_16_bits_is_accepted(instance_case, tmp_path):
    """Cityscapes: an image whose cars are all a car group holds no value >= 1000."""
    raw, res, images = instance_case
    lab, inst, pred = images[1]
    crowd = np.where(inst >= 1000, inst // 1000, inst)
    assert (crowd == lab).all() and (lab == 4).any()
    ref = _edited(raw, tmp_path / "ref", INSTANCE_IDS[1], crowd)
    _accepted_everywhere(ref, res, tmp_path, [images[0], (lab, crowd, pred)] + images[2:])


@pytest.mark.compat
def test_8_bit_instance_image_without_scored_instance_classes_is_accepted(tmp_path):
    """Nothing to hold: only stuff and the ignored lander (its instances are skipped)."""
    images = _instance_images(seed=12)
    lab, inst, pred = images[0]
    lab = np.where((lab == 4) | (lab == 5), 2, lab).astype(np.uint8)
    inst8 = np.where(lab == 6, 6, lab).astype(np.uint8)
    images[0] = (lab, inst8, pred)
    ref, res = write_case(tmp_path, INSTANCE_ROWS, INSTANCE_IDS, images)
    Image.fromarray(inst8).save(os.path.join(ref, "instances", INSTANCE_IDS[0] + ".png"))
    assert Image.open(os.path.join(ref, "instances", INSTANCE_IDS[0] + ".png")).mode == "L"
    _accepted_everywhere(ref, res, tmp_path, images)


@pytest.mark.compat
def test_other_values_where_they_cannot_matter_are_accepted(instance_case, tmp_path):
    """Stuff and ignored classes may hold any value below 1000 in the instance image (another
    tool's 0 for 'no instance'); value 1000 over id 1, which has no instances, is allowed (it
    is never an instance)."""
    raw, res, images = instance_case
    lab, inst, pred = images[3]
    other = inst.copy()
    other[(lab == 0) | (lab == 2) | ((lab == 6) & (inst < 1000))] = 0
    other[lab == 1] = 1000
    ref = _edited(raw, tmp_path / "ref", INSTANCE_IDS[3], other)
    _accepted_everywhere(ref, res, tmp_path, images[:3] + [(lab, other, pred)])


def test_instances_of_a_class_without_instances_are_still_refused(instance_case, tmp_path):
    raw, res, images = instance_case
    lab, inst, _ = images[0]
    bad = inst.copy()
    bad[lab == 1] = 1001
    assert (lab == 1).any()
    ref = _edited(raw, tmp_path / "ref", INSTANCE_IDS[0], bad)
    _refused_on_both_paths(ref, res, tmp_path, "instances/{}.png".format(INSTANCE_IDS[0]),
                           "of class ids 1 whose has_instances is false")
