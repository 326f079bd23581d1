"""The panoptic task through the real command: the oracle's scores and the interval of pq
(against a naive bootstrap of the oracle's per-image counts), the page, the reference's
problems (exit 3)."""
import json
import os
import shutil

import numpy as np
import pytest
import yaml

import bootstrap_oracle
import panoptic_oracle as oracle
import panoptic_util as pu
from conftest import PLANETSCAPES, run_score, score_either
from html_checks import assert_balanced, assert_self_contained

pytestmark = pytest.mark.compat

# The pixel tasks' one reference (its config.yaml: task: planetscapes-semantic): every command
# scores it with the panoptic task by --task.
REF = os.path.join(PLANETSCAPES, "reference_data", "semantic")
TASK = ("--task", "planetscapes-panoptic")
RES = os.path.join(PLANETSCAPES, "starting_kit", "panoptic", "sample_submission")


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    base = tmp_path_factory.mktemp("pan")
    rng = np.random.RandomState(5)
    ids = ["site%d_img%02d" % (k % 2, k) for k in range(7)]
    scenes = [pu.scene(rng, pu.ROWS, 12, 16) for _ in ids]
    ref, res = str(base / "ref"), str(base / "res")
    pu.write_reference(ref, pu.ROWS, [(i, s[0]) for i, s in zip(ids, scenes)])
    pu.write_submission(res, [(i, s[1], s[2]) for i, s in zip(ids, scenes)])
    return ref, res, ids, scenes


def pq_interval(ids, scenes):
    """The studentized interval of pq from the oracle's per-image counts, resampled naively."""
    counts = {i: oracle.image_counts(pu.ROWS, s) for i, s in zip(ids, scenes)}

    def terms(one):  # per class (IoU sum, TP + FP/2 + FN/2)
        return [(float(v[3]), v[0] + (v[1] + v[2]) / 2.0) for _, v in sorted(one.items())]
    values, spreads = [], []
    for sample in bootstrap_oracle.resamples([(i, counts[i]) for i in ids], id):
        values.append(oracle.scores(pu.ROWS, sample)["pq"])
        spreads.append(bootstrap_oracle.ratio_spread(sample, terms))
    point = oracle.scores(pu.ROWS, list(counts.values()))["pq"]
    return bootstrap_oracle.studentized_interval(
        values, spreads, point, bootstrap_oracle.ratio_spread(list(counts.values()), terms))


def test_scores_and_interval_equal_the_oracle_through_the_command(case, tmp_path):
    ref, res, ids, scenes = case
    out = tmp_path / "out"
    proc = run_score("--ref", ref, "--res", res, "--out", out, "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    got = json.loads((out / "scores.json").read_text())
    want = oracle.oracle(pu.ROWS, scenes)
    for k, v in want.items():
        assert got[k] == pytest.approx(v, abs=1e-10), k  # scores.json: 10 decimals
    low, high = pq_interval(ids, scenes)
    assert low < got["pq"] < high
    assert got["pq_ci_low"] == pytest.approx(low, abs=1e-7)
    assert got["pq_ci_high"] == pytest.approx(high, abs=1e-7)
    assert set(got) == set(want) | {"pq_ci_low", "pq_ci_high"}


def test_a_class_the_test_set_does_not_show_is_set_free_in_the_interval(case, tmp_path):
    """A label table's evaluated class that no image holds (in the reference or predicted) is
    out of pq's mean whatever the method; the population may have it at any PQ, so the interval
    takes it anywhere in [0, 1] (docs/confidence.md): the studentized interval opened for it."""
    ref, res, ids, scenes = case
    rows = pu.ROWS + [{"name": "crater", "id": 40, "category": "flat", "has_instances": False,
                       "ignore_in_eval": False}]
    ref2 = str(tmp_path / "ref")
    pu.write_reference(ref2, rows, [(i, s[0]) for i, s in zip(ids, scenes)])
    out = tmp_path / "out"
    proc = run_score("--ref", ref2, "--res", res, "--out", out, "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    got = json.loads((out / "scores.json").read_text())
    assert got["pq"] == pytest.approx(oracle.oracle(pu.ROWS, scenes)["pq"], abs=1e-10)
    assert "pq_crater" not in got
    totals = {}
    for s in scenes:
        for c, v in oracle.image_counts(pu.ROWS, s).items():
            totals[c] = [a + b for a, b in zip(totals.get(c, [0, 0, 0]), v[:3])]
    counts = [totals.get(r["id"], [0, 0, 0]) for r in rows
              if r["id"] >= 0 and not r["ignore_in_eval"]]
    low, high = bootstrap_oracle.opened(pq_interval(ids, scenes), [tp + fn for tp, _, fn in counts],
                                        [tp + fp + fn for tp, fp, fn in counts])
    closed = pq_interval(ids, scenes)
    assert low <= closed[0] and high > closed[1]
    assert got["pq_ci_low"] == pytest.approx(low, abs=1e-7)
    assert got["pq_ci_high"] == pytest.approx(high, abs=1e-7)


def test_the_sample_page_splits_pq_into_sq_and_rq(tmp_path):
    out = tmp_path / "out"
    proc = run_score("--ref", REF, "--res", RES, "--out", out, *TASK)
    assert proc.returncode == 0, proc.stderr
    page = (out / "detailed_results.html").read_text()
    assert_balanced(page)
    assert_self_contained(page)
    scores = json.loads((out / "scores.json").read_text())
    assert "Per class: PQ = SQ x RQ" in page
    for key in ("pq_rock", "sq_rock", "rq_rock"):
        assert "{:.4f}".format(scores[key]) in page
    assert "SQ per class" in page and "RQ per class" in page
    for name in os.listdir(os.path.join(REF, "instances")):
        assert name[:-4] not in page  # nothing per image


def _ref_with(tmp_path, change):
    ref = str(tmp_path / "ref")
    shutil.copytree(REF, ref)
    path = os.path.join(ref, "config.yaml")
    with open(path) as f:
        config = yaml.safe_load(f)
    change(ref, config)
    with open(path, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    return ref


def _evaluate_zero(ref, config):
    config["labels"][0]["ignore_in_eval"] = False


def _thing_named_stuff(ref, config):
    config["labels"][3]["name"] = "Stuff"


def _packed(ref, config):
    with open(os.path.join(ref, "packed.json"), "w") as f:
        f.write("{}")


def _all_void(ref, config):
    from PIL import Image
    from planetscapes_util import save_16bit
    for name in os.listdir(os.path.join(ref, "instances")):
        path = os.path.join(ref, "instances", name)
        size = Image.open(path).size
        save_16bit(np.zeros((size[1], size[0]), dtype=np.uint16), path)


@pytest.mark.parametrize("change,code", [(_evaluate_zero, "pan_ref_evaluated_zero"),
                                         (_thing_named_stuff, "ps_ref_config"),
                                         (_packed, "pan_ref_packed"),
                                         (_all_void, "pan_ref_empty")])
def test_reference_problems_are_the_organizers(tmp_path, change, code):
    ref = _ref_with(tmp_path, change)
    code_, out, err = score_either(["--ref", ref, "--res", RES, "--workers", "1", *TASK],
                                   real=change is _evaluate_zero)
    assert code_ == 3, err
    assert "Traceback" not in out + err
    assert "reference" in err.lower()
    from scoring.problems import kind_by_code
    import scoring.tasks.planetscapes_panoptic.problems  # noqa: F401  (registers its kinds)
    assert kind_by_code(code).headline[:30].lower() in err.lower()
