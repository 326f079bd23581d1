"""Planetscapes semantic labeling through the real command: the sample, the label table's
participant problems (exit 1) and every reference problem (exit 3), never a traceback. A test
that loops over cases runs one of them as the real command, the others through the same main in
this process."""
import json
import os
import re
import shutil

import numpy as np
import pytest
import yaml
from PIL import Image

import planetscapes_oracle as oracle
from conftest import ROOT, SEM_KIT, SEM_REF, run_score, score_either
from html_checks import (assert_balanced, assert_chart_text_at_least,
                         assert_every_table_and_chart_scrolls, assert_self_contained)
from planetscapes_util import ROWS, random_images, save_16bit, write_predictions, write_reference

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

IDS = ["site%d_img%02d" % (k % 2, k) for k in range(5)]
SIZE = (20, 30)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """A reference, a valid submission and the oracle's scores of it."""
    base = tmp_path_factory.mktemp("ps")
    rng = np.random.RandomState(3)
    images = random_images(rng, ROWS, len(IDS), *SIZE)
    ref, res = str(base / "ref"), str(base / "res")
    write_reference(ref, ROWS, [(i, lab, inst) for i, (lab, inst, _) in zip(IDS, images)])
    write_predictions(res, [(i, pred) for i, (_, _, pred) in zip(IDS, images)])
    return ref, res, oracle.scores(ROWS, images)


def copy(src, dst):
    shutil.copytree(src, str(dst))
    return str(dst)


def test_scores_equal_the_oracle_through_the_command(case, tmp_path):
    ref, res, want = case
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", res, "--out", out, "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    got = json.loads((out / "scores.json").read_text())
    # the point scores, and the intervals of the two class means (test_..._confidence.py)
    intervals = {k + s for k in ("iou_class", "iiou_class") for s in ("_ci_low", "_ci_high")}
    assert sorted(got) == sorted(list(want) + list(intervals))
    for k, v in want.items():
        assert got[k] == pytest.approx(float(v), abs=1e-10), k
    assert list(got)[0] == "iou_class"
    page = (out / "detailed_results.html").read_text()
    for part in ("Per class", "Per category", "Confusion matrix", "Average instance sizes",
                 "rows: reference class"):
        assert part in page
    for i in IDS:
        assert i not in page and i not in (out / "scores.txt").read_text()


def test_sample_in_the_repository(tmp_path):
    out = tmp_path / "out"
    proc = run_score("--ref", SEM_REF, "--res", os.path.join(SEM_KIT, "sample_submission"),
                     "--out", out)
    assert proc.returncode == 0, proc.stderr
    scores = yaml.safe_load((out / "scores.txt").read_text())
    assert {"iou_class", "iiou_class", "iou_category", "iiou_category"} <= set(scores)
    assert "average instance size" in (out / "detailed_results.html").read_text().lower()


def test_sample_generator_is_deterministic(tmp_path):
    import subprocess
    import sys
    gen = os.path.join(ROOT, "competitions", "planetscapes", "make_semantic_sample.py")
    ref, sub = tmp_path / "r", tmp_path / "s"
    subprocess.run([sys.executable, gen, "--out", str(ref), "--submission", str(sub)], check=True,
                   capture_output=True)
    for folder, mine in ((ref, SEM_REF), (sub, os.path.join(SEM_KIT, "sample_submission"))):
        for dirpath, _, files in os.walk(str(folder)):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), str(folder))
                with open(os.path.join(dirpath, f), "rb") as a, \
                        open(os.path.join(ROOT, mine, rel), "rb") as b:
                    assert a.read() == b.read(), rel
    config = (ref / "config.yaml").read_text()
    assert "EXAMPLE" in config and "organizers'" in config


# --- participant problems specific to a label table --------------------------------------------

def _gap_reference(tmp_path):
    """A table with a gap: ids 0, 2, 5 (1, 3, 4 are not labels)."""
    rows = [
        {"name": "void", "id": 0, "category": "void", "has_instances": False,
         "ignore_in_eval": True},
        {"name": "ground", "id": 2, "category": "flat", "has_instances": False,
         "ignore_in_eval": False},
        {"name": "rock", "id": 5, "category": "object", "has_instances": True,
         "ignore_in_eval": False},
    ]
    lab = np.array([[2, 2, 5, 5], [0, 2, 5, 5]], dtype=np.uint8)
    inst = np.array([[2, 2, 5001, 5001], [0, 2, 5001, 5001]], dtype=np.uint16)
    ref = str(tmp_path / "ref")
    write_reference(ref, rows, [("a", lab, inst), ("b", lab, inst)])
    return ref, lab


@pytest.mark.parametrize("value", [1, 3, 200])
def test_prediction_value_not_in_the_table_is_exit_1(tmp_path, value):
    ref, lab = _gap_reference(tmp_path)
    bad = lab.copy()
    bad[0, 0] = value
    write_predictions(str(tmp_path / "res"), [("a", lab), ("b", bad)])
    code, _, err = score_either(["--ref", ref, "--res", tmp_path / "res"], real=value == 3)
    assert code == 1, err
    assert "b.png" in err and "values {}".format(value) in err
    assert "0, 2, 5" in err  # the fix names the label ids
    assert "Traceback" not in err


def test_16bit_prediction_above_255_is_exit_1(tmp_path):
    ref, lab = _gap_reference(tmp_path)
    write_predictions(str(tmp_path / "res"), [("a", lab)])
    save_16bit(np.full(lab.shape, 1026, dtype=np.uint16), str(tmp_path / "res" / "b.png"))
    proc = run_score("--ref", ref, "--res", tmp_path / "res")
    assert proc.returncode == 1 and "values 1026" in proc.stderr, proc.stderr


def test_ignored_id_prediction_is_scored(tmp_path):
    ref, lab = _gap_reference(tmp_path)
    pred = lab.copy()
    pred[0, :2] = 0  # ground predicted as the ignored void: false negatives, no error
    write_predictions(str(tmp_path / "res"), [("a", pred), ("b", pred)])
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", tmp_path / "res", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "scores.json").read_text())["iou_class_ground"] == pytest.approx(1 / 3)


# --- reference problems: exit 3, the file named -------------------------------------------------

def _config(ref, change):
    path = os.path.join(ref, "config.yaml")
    with open(path) as f:
        config = yaml.safe_load(f)
    change(config)
    with open(path, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)


def _row(i, **fields):
    def change(config):
        config["labels"][i].update(fields)
        for k, v in list(fields.items()):
            if v is None:
                del config["labels"][i][k]
    return change


def _image(folder, arr_fn, sixteen=False):
    def change(ref):
        path = os.path.join(ref, folder, IDS[1] + ".png")
        arr = np.asarray(Image.open(path))
        new = arr_fn(arr.copy())
        if sixteen:
            save_16bit(new, path)
        else:
            Image.fromarray(new).save(path)
    return change


def _set_pixel(arr, value):
    arr[0, 0] = value
    return arr


CONFIG_CASES = {
    "duplicate_id": (_row(3, id=2), "duplicate id 2"),
    "duplicate_name": (_row(3, name="ground"), "duplicate name"),
    "missing_field": (_row(4, has_instances=None), "labels row 5 ('rock'): missing field `has_instances`"),
    "wrong_type_id": (_row(4, id="4"), "`id` must be an integer"),
    "wrong_type_bool": (_row(4, ignore_in_eval="no"), "`ignore_in_eval` must be true/false"),
    "unknown_field": (_row(4, ignoreInEval=True), "unknown field `ignoreInEval`"),
    "id_out_of_range": (_row(4, id=300), "id 300 is outside"),
    "same_key": (_row(3, name="GROUND"), "score key `ground`"),
    "no_labels": (lambda c: c.pop("labels"), "no `labels:` table"),
    "unknown_named_table": (lambda c: c.update(labels="mars"), "only named table"),
    "labels_not_a_list": (lambda c: c.update(labels={"a": 1}), "must be a non-empty list"),
    "all_ignored": (lambda c: [r.update(ignore_in_eval=True) for r in c["labels"]],
                    "no label is evaluated"),
    "size_unknown_class": (lambda c: c.update(average_instance_size={"ufo": 3}),
                           "'ufo' is not a label name"),
    "size_negative": (lambda c: c.update(average_instance_size={"rock": -3}),
                      "positive number"),
    "size_for_stuff": (lambda c: c.update(average_instance_size={"ground": 30}),
                       "has_instances: false"),
}

IMAGE_CASES = {
    "label_instance_size_differ": (
        _image("instances", lambda a: a[:, :-1], sixteen=True),
        "instances/{}.png".format(IDS[1]), "29 x 20"),
    "instance_class_disagrees": (
        _image("instances", lambda a: _set_pixel(a, 8001 if a[0, 0] != 8 else 2001),
               sixteen=True),
        "instances/{}.png".format(IDS[1]), "disagree"),
    "label_id_not_in_table": (
        _image("labels", lambda a: _set_pixel(a, 40)), "labels/{}.png".format(IDS[1]), "ids 40"),
    "instances_of_a_class_without_instances": (
        lambda ref: (_image("labels", lambda a: _set_pixel(a, 2))(ref),
                     _image("instances", lambda a: _set_pixel(a, 2001), sixteen=True)(ref)),
        "instances/{}.png".format(IDS[1]), "has_instances is false"),
    "value_1000_over_another_class": (
        lambda ref: (_image("labels", lambda a: _set_pixel(a, 2))(ref),
                     _image("instances", lambda a: _set_pixel(a, 1000), sixteen=True)(ref)),
        "instances/{}.png".format(IDS[1]), "value 1000"),
    "label_image_rgb": (
        lambda ref: Image.new("RGB", (SIZE[1], SIZE[0])).save(
            os.path.join(ref, "labels", IDS[1] + ".png")),
        "labels/{}.png".format(IDS[1]), "mode RGB"),
    "instance_file_missing": (
        lambda ref: os.remove(os.path.join(ref, "instances", IDS[2] + ".png")),
        "instances/{}.png".format(IDS[2]), "missing"),
    "label_file_missing": (
        lambda ref: os.remove(os.path.join(ref, "labels", IDS[2] + ".png")),
        "labels/{}.png".format(IDS[2]), "has no label image"),
    "no_instances_folder": (
        lambda ref: shutil.rmtree(os.path.join(ref, "instances")), "instances/", "no such folder"),
    "only_ignored_pixels": (
        lambda ref: [(Image.fromarray(np.zeros(SIZE, dtype=np.uint8)).save(
            os.path.join(ref, sub, i + ".png"))) for i in IDS for sub in ("labels", "instances")],
        "ref", "without a single evaluated pixel"),
}


def _assert_reference_error(run, *phrases):
    code, out, err = run
    assert code == 3, (code, err)
    assert err.startswith("ERROR: the REFERENCE data"), err
    for phrase in phrases:
        assert phrase in err, (phrase, err)
    assert "Traceback" not in err + out


@pytest.mark.parametrize("name", sorted(CONFIG_CASES))
def test_label_table_problems_are_exit_3(case, tmp_path, name):
    ref = copy(case[0], tmp_path / "ref")
    change, phrase = CONFIG_CASES[name]
    _config(ref, change)
    run = score_either(["--ref", ref, "--res", case[1], "--task", "planetscapes-semantic"],
                       real=name == "missing_field")
    _assert_reference_error(run, "config.yaml", phrase)


@pytest.mark.parametrize("name", sorted(IMAGE_CASES))
def test_reference_image_problems_are_exit_3(case, tmp_path, name):
    ref = copy(case[0], tmp_path / "ref")
    change, named, phrase = IMAGE_CASES[name]
    change(ref)
    run = score_either(["--ref", ref, "--res", case[1], "--workers", "1"],
                       real=name == "instance_class_disagrees")
    _assert_reference_error(run, named, phrase)


def test_cityscapes_table_by_name(tmp_path):
    lab = np.array([[7, 7, 26, 26], [24, 24, 26, 0]], dtype=np.uint8)
    inst = np.array([[7, 7, 26000, 26000], [24001, 24001, 26000, 0]], dtype=np.uint16)
    ref = str(tmp_path / "ref")
    write_reference(ref, "cityscapes", [("x", lab, inst)])
    pred = lab.copy()
    pred[0, 2] = 29  # caravan on car
    write_predictions(str(tmp_path / "res"), [("x", pred)])
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", tmp_path / "res", "--out", out)
    assert proc.returncode == 0, proc.stderr
    got = json.loads((out / "scores.json").read_text())
    assert got["iou_class_car"] == pytest.approx(2 / 3)
    assert got["iiou_category_vehicle"] == 1
    assert got["iou_category_vehicle"] == pytest.approx(2 / 3)
    assert "iou_class_caravan" not in got and "iou_class_license_plate" not in got
    assert "Cityscapes table" in (out / "detailed_results.html").read_text()


def test_manifest_checks_a_submission_without_the_labels(tmp_path):
    """The label-free check (validate.py) from the task's manifest: sizes and label ids only."""
    from scoring import validate
    from scoring.registry import TASKS
    ref, lab = _gap_reference(tmp_path)
    task = TASKS["planetscapes-semantic"]
    config = task.configure({}, yaml.safe_load(open(os.path.join(ref, "config.yaml"))))
    manifest = json.loads(json.dumps(task.manifest.make(task.open_reference(ref, config))))
    assert manifest["task"] == "planetscapes-semantic"
    assert manifest["label_ids"] == [0, 2, 5] and "rock" not in json.dumps(manifest["images"])
    good = str(tmp_path / "good")
    write_predictions(good, [("a", lab), ("b", lab)])
    log, checked = validate.validate_submission(good, manifest, workers=1)
    assert checked == 2 and not log.fatal
    bad = str(tmp_path / "bad")
    write_predictions(bad, [("a", lab), ("b", np.full(lab.shape, 3, dtype=np.uint8))])
    log, _ = validate.validate_submission(bad, manifest, workers=1)
    assert log.fatal and "b.png" in "\n".join(log.describe(log.kinds(fatal=True)))


def test_page_heat_map_rows_are_the_reference(tmp_path):
    ref, lab = _gap_reference(tmp_path)
    pred = np.full(lab.shape, 5, dtype=np.uint8)  # everything predicted rock
    write_predictions(str(tmp_path / "res"), [("a", pred), ("b", pred)])
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", tmp_path / "res", "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = (out / "detailed_results.html").read_text()
    # 3 ground pixels per image, all predicted rock: row ground, column rock
    assert "Reference class: ground / Predicted class: rock\n6 pixels = 100.0% of the 6 " \
        "pixels whose reference is ground" in page
    assert "Reference class: rock / Predicted class: ground\n0 pixels" in page
    assert "IoU per class" in page and "Average instance sizes used" in page
    # The same component and words as the Agriculture-Vision page; the outlined cell of each
    # row is its own class's column (found by id: the ignored column comes first).
    assert "Rows are the <strong>reference</strong> class" in page
    outlined = re.findall(r"<g><title>Reference class: (\w+) / Predicted class: ([\w ()]+)\n"
                          r"[^<]*</title><rect [^>]*stroke=\"#24292f\"", page)
    assert outlined == [("ground", "ground"), ("rock", "rock")]


def test_sample_page_is_readable_on_a_narrow_screen(tmp_path):
    """Self-contained, every chart text at least 11 px, every table and chart in a scroll box
    with its hint, each IoU shown once (the table; the bars carry no numbers)."""
    out = tmp_path / "out"
    proc = run_score("--ref", SEM_REF, "--res", os.path.join(SEM_KIT, "sample_submission"),
                     "--out", out)
    assert proc.returncode == 0, proc.stderr
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    assert_balanced(page)
    assert_self_contained(page)
    assert_chart_text_at_least(page)
    assert_every_table_and_chart_scrolls(page)
    scores = json.loads((out / "scores.json").read_text())
    shown = {k: ">{:.4f}<".format(v) for k, v in scores.items()}
    for key, text in shown.items():
        # per-class IoUs (not a confidence interval's ends, if the scores have them)
        if key.startswith("iou_class_") and not key.endswith(("_ci_low", "_ci_high")):
            # once, or once more per category with the same IoU (sky is a class and a category)
            same = sum(1 for k, t in shown.items() if k.startswith("iou_category_") and t == text)
            assert page.count(text) == 1 + same, key
