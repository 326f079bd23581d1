"""compare.py --split split.json --part private|public|all (issue 35): with the full reference,
each submission scored on one part equals compare.py on a reference of that part's units alone;
the page and comparison.json show both rankings side by side, the private interval and Kendall's
tau between them; a split of another reference, or --part without --split, is a usage error."""
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from conftest import AV_KIT, AV_REF, ORGANIZER, VQA_KIT, VQA_REF  # noqa: E402

from organizing.split import choose, document, grouping  # noqa: E402
from reference_part import units_alone  # noqa: E402
from scoring import reference_setup  # noqa: E402

COMPARE = os.path.join(ORGANIZER, "compare.py")


def run_compare(*args):
    return subprocess.run([sys.executable, COMPARE] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    """The 40-image sample split at 0.5 (seed 1), four submissions that differ part by part,
    and the two parts' references alone (raw copies without the other part's files)."""
    root = tmp_path_factory.mktemp("split-compare")
    setup = reference_setup.configure(AV_REF)
    split = choose.choose(grouping.grouping_of(setup, setup.open()), 0.5, 1)
    (root / "split.json").write_text(document.to_json(split, "agriculture-vision"))
    sample = os.path.join(AV_KIT, "sample_submission")
    rng = np.random.RandomState(5)
    subs = root / "subs"
    # good_public is better on the public part, good_private on the private part
    spoil = {"sample": [], "good_public": split.private[:12], "good_private": split.public[:12],
             "noisy": split.public[::3] + split.private[::3]}
    for model, units in spoil.items():
        folder = subs / model
        shutil.copytree(sample, str(folder))
        for unit in units:
            Image.fromarray(rng.randint(0, 9, size=(512, 512)).astype(np.uint8)).save(
                str(folder / (unit + ".png")))
    incomplete = subs / "incomplete"
    shutil.copytree(sample, str(incomplete))
    os.remove(str(incomplete / (split.public[0] + ".png")))
    alone = {}
    for part, units in (("public", set(split.public)), ("private", set(split.private))):
        alone[part] = units_alone(AV_REF, units, root / ("ref-" + part))
    return root, split, subs, alone


def outputs(out):
    with open(str(out / "leaderboard.csv"), encoding="utf-8", newline="") as f:
        board = list(csv.reader(f))
    with open(str(out / "comparison.json"), encoding="utf-8") as f:
        doc = json.load(f)
    return board, doc


def naive_tau(x, y):
    """Kendall's tau-b written out: (C - D) / sqrt((P - Tx)(P - Ty))."""
    c = d = tx = ty = p = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            p += 1
            a, b = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            tx += a == 0
            ty += b == 0
            c += a * b > 0
            d += a * b < 0
    return (c - d) / ((p - tx) * (p - ty)) ** 0.5


MODELS = ("sample", "good_public", "good_private", "noisy")


@pytest.fixture(scope="module")
def alone_runs(setting, tmp_path_factory):
    """compare.py on each part's reference alone: (leaderboard.csv, comparison.json)."""
    root, split, subs, alone = setting
    out = tmp_path_factory.mktemp("alone")
    runs = {}
    for part in ("public", "private"):
        proc = run_compare("--ref", alone[part], "--out", out / part, *[subs / m for m in MODELS])
        assert proc.returncode == 0, proc.stderr
        runs[part] = outputs(out / part)
    return runs


def miou_of(board):
    column = board[0].index("miou")
    return {r[board[0].index("model")]: float(r[column]) for r in board[1:]}


@pytest.mark.parametrize("part", ["private", "public"])
def test_a_part_scored_on_the_full_reference_equals_that_part_alone(setting, alone_runs, part,
                                                                    tmp_path):
    root, split, subs, alone = setting
    got = run_compare("--ref", AV_REF, "--split", root / "split.json", "--part", part,
                      "--out", tmp_path / "split", *[subs / m for m in MODELS])
    assert got.returncode == 0, got.stderr
    board, doc = outputs(tmp_path / "split")
    board_alone, doc_alone = alone_runs[part]
    assert board == board_alone
    for key in ("models", "pairs", "units", "noun"):
        assert doc[key] == doc_alone[key], key
    other = "public" if part == "private" else "private"
    score, other_score = miou_of(board), miou_of(alone_runs[other][0])
    public, private = (other_score, score) if part == "private" else (score, other_score)
    rows = {r["model"]: r for r in doc["split"]["rows"]}
    for model in rows:
        assert rows[model]["public_score"] == pytest.approx(public[model], abs=1e-9)
        assert rows[model]["private_score"] == pytest.approx(private[model], abs=1e-9)
    names = sorted(rows)
    assert doc["split"]["kendall_tau"] == pytest.approx(
        naive_tau([public[m] for m in names], [private[m] for m in names]))
    assert doc["split"]["part"] == part
    assert rows["good_public"]["public_rank"] < rows["good_private"]["public_rank"]
    assert rows["good_private"]["private_rank"] < rows["good_public"]["private_rank"]
    assert all(r["private_ci"] and r["private_ci"][0] <= r["private_score"] <= r["private_ci"][1]
               for r in rows.values())
    page = (tmp_path / "split" / "comparison.html").read_text()
    assert "Public and private parts" in page and "Kendall" in page
    assert "Private rank" in page and "95% CI (private)" in page
    assert "Kendall's tau between the public and private rankings" in got.stdout


def test_all_is_the_whole_test_set_and_incomplete_submissions_stay_out(setting, tmp_path):
    root, split, subs, _ = setting
    models = [subs / "sample", subs / "noisy", subs / "incomplete"]
    got = run_compare("--ref", AV_REF, "--split", root / "split.json", "--part", "all",
                      "--out", tmp_path / "all", *models)
    assert got.returncode == 0, got.stderr
    plain = run_compare("--ref", AV_REF, "--out", tmp_path / "plain", *models)
    assert outputs(tmp_path / "all")[0] == outputs(tmp_path / "plain")[0]
    _, doc = outputs(tmp_path / "all")
    assert [x["model"] for x in doc["invalid"]] == ["incomplete"]
    # missing a public unit is missing on the private part's run too: the platform refused it
    priv = run_compare("--ref", AV_REF, "--split", root / "split.json", "--out",
                       tmp_path / "priv", *models)
    assert priv.returncode == 0, priv.stderr
    assert [x["model"] for x in outputs(tmp_path / "priv")[1]["invalid"]] == ["incomplete"]
    assert plain.returncode == 0


def test_a_split_of_another_reference_or_a_part_alone_is_a_usage_error(setting, tmp_path):
    root, split, subs, alone = setting
    wrong = run_compare("--ref", alone["public"], "--split", root / "split.json",
                        "--out", tmp_path / "x", subs / "sample", subs / "noisy")
    assert wrong.returncode == 2 and "not of this reference" in wrong.stderr, wrong.stderr
    lone = run_compare("--ref", AV_REF, "--part", "private", "--out", tmp_path / "y",
                       subs / "sample", subs / "noisy")
    assert lone.returncode == 2 and "--split" in lone.stderr
    (tmp_path / "bad.json").write_text("[1, 2]")
    bad = run_compare("--ref", AV_REF, "--split", tmp_path / "bad.json", "--out",
                      tmp_path / "z", subs / "sample", subs / "noisy")
    assert bad.returncode == 2 and "bad.json" in bad.stderr
    assert not (tmp_path / "x").exists() and not (tmp_path / "z").exists()


def test_vqa_split_by_image_a_part_on_the_full_reference_equals_its_questions_alone(tmp_path):
    """VQA is scored from one results file: the split's units are its questions (grouped by
    image); the private part scored with the full reference equals a reference of the private
    questions alone, each results file cut to them; a file lacking a public answer stays out."""
    setup = reference_setup.configure(VQA_REF)
    split = choose.choose(grouping.grouping_of(setup, setup.open()), 0.5, 3)
    assert split.grouping.rule == "image" and split.private and split.public
    (tmp_path / "split.json").write_text(document.to_json(split, "planetscapes-vqa"))
    with open(os.path.join(VQA_KIT, "sample_submission", "results.json")) as f:
        sample = json.load(f)
    spoil = {"sample": set(), "bad_public": set(split.public[::2]),
             "bad_private": set(split.private[::2]), "lacking": set()}
    full, alone = tmp_path / "full", tmp_path / "alone"
    private = set(split.private)
    for model, spoilt in spoil.items():
        results = [dict(r, answer="zzz" if r["question_id"] in spoilt else r["answer"])
                   for r in sample if not (model == "lacking" and r["question_id"] ==
                                           split.public[0])]
        for folder, rows in ((full, results),
                             (alone, [r for r in results if r["question_id"] in private])):
            (folder / model).mkdir(parents=True)
            (folder / model / "results.json").write_text(json.dumps(rows))
    ref = tmp_path / "ref-private"
    ref.mkdir()
    shutil.copyfile(os.path.join(VQA_REF, "config.yaml"), str(ref / "config.yaml"))
    for name, key in (("questions.json", "questions"), ("annotations.json", "annotations")):
        with open(os.path.join(VQA_REF, name)) as f:
            doc = json.load(f)
        doc[key] = [e for e in doc[key] if e["question_id"] in private]
        (ref / name).write_text(json.dumps(doc))
    models = ("sample", "bad_public", "bad_private")
    got = run_compare("--ref", VQA_REF, "--split", tmp_path / "split.json", "--part", "private",
                      "--out", tmp_path / "split", *[full / m for m in models + ("lacking",)])
    assert got.returncode == 0, got.stderr
    want = run_compare("--ref", ref, "--out", tmp_path / "want", *[alone / m for m in models])
    assert want.returncode == 0, want.stderr
    board, doc = outputs(tmp_path / "split")
    board_alone, doc_alone = outputs(tmp_path / "want")
    assert board == board_alone
    for key in ("models", "pairs", "noun"):
        assert doc[key] == doc_alone[key], key
    assert [x["model"] for x in doc["invalid"]] == ["lacking"]
    rows = {r["model"]: r for r in doc["split"]["rows"]}
    assert rows["bad_public"]["private_rank"] < rows["bad_private"]["private_rank"]
    assert rows["bad_private"]["public_rank"] < rows["bad_public"]["public_rank"]
