"""compare.py through the real command: zips, folders, a folder of submissions, an invalid
submission listed and left out, a single submission; the per-submission intervals equal
score.py's, the paired bootstrap equals a naive oracle with the same seed, identical submissions
are never better than each other, a submission right on every image is better with p = 1, and
the files are the same for 1, 2 or 3 workers and any order of the arguments."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from PIL import Image

from organizing.compare import pair_tests, submissions
import agrivision_oracle as oracle
import bootstrap_oracle
import randomization_oracle
from agrivision_data import random_image, write_reference
from conftest import ORGANIZER, run_score

# The intervals against score.py's and the paired oracle (numpy's arithmetic) are marked compat:
# CI runs them on the oldest versions too; the command's handling of its arguments and folders
# depends on no version.

COMPARE = os.path.join(ORGANIZER, "compare.py")
SIZE = (10, 12)
IMAGES = 9


def run_compare(*args):
    return subprocess.run([sys.executable, COMPARE] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=300)


def _lists(a):
    return None if a is None else np.asarray(a).tolist()


@pytest.fixture(scope="module")
def challenge(tmp_path_factory):
    """A reference of 9 images and submissions: perfect (right on every valid pixel), noisy_a,
    noisy_b (random), twin (noisy_a again, as a zip), broken (one image missing).
    Returns (root, ref, {model: {image id: prediction}}, {image id: layers})."""
    root = tmp_path_factory.mktemp("challenge")
    ref = str(root / "ref")
    rng = np.random.RandomState(21)
    layers, preds = {}, {"perfect": {}, "noisy_a": {}, "noisy_b": {}}
    for k in range(IMAGES):
        image_id = "FLD{:03d}_0-0-{}-{}".format(k, SIZE[1], SIZE[0])
        b, m, labels, storm, pred = random_image(rng, *SIZE, density=0.5)
        write_reference(ref, image_id, b, m, labels, storm)
        layers[image_id] = (b, m, labels, storm)
        first = np.zeros(SIZE, np.uint8)
        for cid, c in reversed(list(enumerate(oracle.CLASSES))):
            if c in labels:
                first[labels[c] > 0] = cid
        preds["perfect"][image_id] = first
        preds["noisy_a"][image_id] = pred
        preds["noisy_b"][image_id] = rng.randint(0, 9, size=SIZE).astype(np.uint8)
    subs = root / "subs"
    for model, images in preds.items():
        folder = subs / model
        folder.mkdir(parents=True)
        for image_id, arr in images.items():
            Image.fromarray(arr).save(str(folder / (image_id + ".png")))
    with zipfile.ZipFile(str(subs / "twin.zip"), "w") as zf:
        for image_id in preds["noisy_a"]:
            zf.write(str(subs / "noisy_a" / (image_id + ".png")), image_id + ".png")
    shutil.copytree(str(subs / "noisy_b"), str(subs / "broken"))
    os.remove(str(subs / "broken" / (sorted(layers)[0] + ".png")))
    preds["twin"] = preds["noisy_a"]
    return root, ref, preds, layers


def outputs(out):
    with open(str(out / "leaderboard.csv"), encoding="utf-8", newline="") as f:
        board = list(csv.reader(f))
    with open(str(out / "comparison.json"), encoding="utf-8") as f:
        doc = json.load(f)
    return board, doc


def matrices(preds, layers):
    """{image id: the oracle's 9 x 9 matrix} of one model's predictions."""
    out = {}
    for image_id, (b, m, labels, storm) in layers.items():
        out[image_id] = oracle.confusion_one(_lists(b), _lists(m),
                                             {c: _lists(v) for c, v in labels.items()},
                                             _lists(storm), _lists(preds[image_id]))
    return out


def row_of(m):
    return tuple([m[c][c] for c in range(9)] +
                 [sum(m[c]) + sum(m[x][c] for x in range(9)) - m[c][c] for c in range(9)])


def miou(sample):
    total = [[0] * 9 for _ in range(9)]
    for mat in sample:
        for x in range(9):
            for y in range(9):
                total[x][y] += mat[x][y]
    return float(oracle.scores(total)[1])


def oracle_comparison(models, preds, layers):
    """The paired bootstrap, naively: per resample the same images for every model."""
    per_model = [matrices(preds[m], layers) for m in models]
    units = [(i, [pm[i] for pm in per_model]) for i in sorted(layers)]
    values = [[] for _ in models]
    for sample in bootstrap_oracle.resamples(units, lambda mats: sum(map(row_of, mats), ())):
        for k in range(len(models)):
            values[k].append(miou([mats[k] for mats in sample]))
    ranks = [[1 + sum(1 for w in col if w > v) for v in col] for col in zip(*values)]
    rank_ci = {m: list(bootstrap_oracle.interval([r[k] for r in ranks]))
               for k, m in enumerate(models)}
    pairs = {}
    for a, ma in enumerate(models):
        for b, mb in enumerate(models):
            if a != b:
                diffs = [x - y for x, y in zip(values[a], values[b])]
                wins = 0
                for x, y in zip(values[a], values[b]):
                    if x > y:
                        wins += 1
                pairs[(ma, mb)] = (list(bootstrap_oracle.interval(diffs)), wins / len(diffs))
    return rank_ci, pairs


def test_compare_zips_folders_and_a_folder_of_submissions(challenge, tmp_path):
    root, ref, preds, layers = challenge
    out = tmp_path / "out"
    proc = run_compare("--ref", ref, "--out", out, root / "subs")
    assert proc.returncode == 0, proc.stderr
    board, doc = outputs(out)
    header, rows = board[0], board[1:]
    assert header[:3] == ["model", "rank", "miou"]
    assert header[-2:] == ["miou_ci_low", "miou_ci_high"]
    assert [r[:2] for r in rows] == [["perfect", "1"], ["noisy_a", "2"], ["twin", "2"],
                                     ["noisy_b", "4"]] or \
        [r[:2] for r in rows] == [["perfect", "1"], ["noisy_b", "2"], ["noisy_a", "3"],
                                  ["twin", "3"]]
    assert doc["invalid"] == [{"model": "broken", "error": doc["invalid"][0]["error"]}]
    assert "without a prediction" in doc["invalid"][0]["error"]
    assert "broken" in proc.stdout and "without a prediction" in proc.stdout
    assert sorted(os.listdir(str(out))) == ["comparison.html", "comparison.json",
                                            "leaderboard.csv"]
    # the structure the issue gives
    assert set(doc["models"][0]) == {"model", "score", "rank", "rank_ci", "rank_shares",
                                     "test_then_rank"}
    assert set(doc["pairs"][0]) == {"a", "b", "diff", "diff_ci", "p_a_better", "p_value",
                                    "p_holm", "significant"}
    assert len(doc["pairs"]) == 4 * 3
    page = (out / "comparison.html").read_text()
    assert "<svg" in page and "<script" not in page
    # Nothing per unit anywhere, except the name of the file the broken submission lacks.
    missing = sorted(layers)[0]
    for image_id in layers:
        for text in (page, proc.stdout, (out / "leaderboard.csv").read_text(),
                     (out / "comparison.json").read_text()):
            assert image_id not in text.replace(missing + ".png", "")


@pytest.mark.compat
def test_intervals_equal_score_py_and_the_paired_oracle(challenge, tmp_path):
    root, ref, preds, layers = challenge
    out = tmp_path / "out"
    subs = root / "subs"
    proc = run_compare("--ref", ref, "--out", out, subs / "noisy_b", subs / "twin.zip",
                       subs / "perfect", subs / "noisy_a")
    assert proc.returncode == 0, proc.stderr
    board, doc = outputs(out)
    header = board[0]
    # each submission's own interval is the one score.py writes for it
    for row in board[1:]:
        model = row[0]
        path = subs / (model + ".zip") if model == "twin" else subs / model
        alone = run_score("--ref", ref, "--res", path, "--out", tmp_path / model)
        assert alone.returncode == 0, alone.stderr
        with open(str(tmp_path / model / "scores.json")) as f:
            scores = json.load(f)
        assert {k: float(v) for k, v in zip(header[2:], row[2:])} == scores
    models = [m["model"] for m in doc["models"]]
    rank_ci, pairs = oracle_comparison(models, preds, layers)
    for m in doc["models"]:
        assert m["rank_ci"] == rank_ci[m["model"]]
    for p in doc["pairs"]:
        diff_ci, share = pairs[(p["a"], p["b"])]
        assert p["p_a_better"] == share
        assert p["diff_ci"] == pytest.approx(diff_ci, abs=1e-12)


def test_identical_never_better_and_right_everywhere_better_with_p_1(challenge, tmp_path):
    root, ref, _, _ = challenge
    out = tmp_path / "out"
    proc = run_compare("--ref", ref, "--out", out, root / "subs")
    assert proc.returncode == 0
    _, doc = outputs(out)
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    for a, b in (("noisy_a", "twin"), ("twin", "noisy_a")):
        assert pairs[(a, b)]["p_a_better"] == 0.0
        assert pairs[(a, b)]["diff"] == 0.0 and pairs[(a, b)]["diff_ci"] == [0.0, 0.0]
        assert pairs[(a, b)]["p_value"] == 1.0 and not pairs[(a, b)]["significant"]
    # Approximate randomization over the 9 fields: perfect against another submission differs
    # as much as observed only when no field or every field is swapped.
    masks = randomization_oracle.masks(9, pair_tests.shuffles_for(6))
    extreme = sum(1 for m in masks if sum(m) in (0, 9))
    for other in ("noisy_a", "noisy_b", "twin"):
        assert pairs[("perfect", other)]["p_a_better"] == 1.0
        assert pairs[(other, "perfect")]["p_a_better"] == 0.0
        assert pairs[("perfect", other)]["p_value"] == (1 + extreme) / (len(masks) + 1)
        assert pairs[("perfect", other)]["p_holm"] <= 6 * pairs[("perfect", other)]["p_value"]
        assert pairs[("perfect", other)]["significant"]
        assert not pairs[(other, "perfect")]["significant"]
    marked = sum(p["significant"] for p in doc["pairs"])
    assert "{} of 12 ordered pairs differ significantly (approximate randomization over 9 "\
           "fields, Holm-adjusted p <= 0.05)".format(marked) in proc.stdout
    page = (out / "comparison.html").read_text()
    assert page.count("%.2f*" % 1.0) >= 3 and "Holm-adjusted p &lt;= 0.05" in page
    assert "probability of superiority" in page
    ranks = {m["model"]: m for m in doc["models"]}
    assert ranks["perfect"]["rank_ci"] == [1, 1]
    assert ranks["noisy_a"]["rank"] == ranks["twin"]["rank"]  # 1-2-2-4


def test_same_files_for_any_worker_count_and_argument_order(challenge, tmp_path):
    root, ref, _, _ = challenge
    subs = root / "subs"
    args = [subs / "noisy_a", subs / "perfect", subs / "twin.zip", subs / "noisy_b"]
    texts = set()
    for workers, order in ((1, args), (2, args[::-1]), (3, args[1:] + args[:1])):
        out = tmp_path / "w{}".format(workers)
        proc = run_compare("--ref", ref, "--out", out, "--workers", workers, *order)
        assert proc.returncode == 0, proc.stderr
        texts.add((out / "leaderboard.csv").read_text() + (out / "comparison.json").read_text())
    assert len(texts) == 1


def test_fewer_than_two_submissions_is_a_usage_error(challenge, tmp_path):
    """Issue 32: one submission was "compared" (exit 0, "1 submissions"); a comparison needs
    two. A stray file beside it is named, never counted."""
    root, ref, _, _ = challenge
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(str(root / "subs" / "twin.zip"), str(alone / "team_a.zip"))
    (alone / "notes.txt").write_text("team_a: the last one")
    for args, named in (([root / "subs" / "twin.zip"], "twin.zip"),
                        ([alone], "team_a.zip; not submissions: ")):
        out = tmp_path / "out"
        proc = run_compare("--ref", ref, "--out", out, *args)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "compare.py compares two submissions or more; the arguments hold one: " in \
            proc.stderr and named in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and not out.exists()
    assert "notes.txt (not a zip or a folder" in proc.stderr


def test_nothing_valid_is_exit_1_and_writes_nothing(challenge, tmp_path):
    root, ref, _, _ = challenge
    out = tmp_path / "out"
    shutil.copytree(str(root / "subs" / "broken"), str(tmp_path / "broken_too"))
    proc = run_compare("--ref", ref, "--out", out, root / "subs" / "broken",
                       tmp_path / "broken_too")
    assert proc.returncode == 1
    assert "no submission could be scored" in proc.stderr and "broken" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists() or not os.listdir(str(out))


def test_model_names_cannot_inject_formulas(challenge, tmp_path):
    root, ref, _, _ = challenge
    evil = tmp_path / "=HYPERLINK(x).zip"
    shutil.copy(str(root / "subs" / "twin.zip"), str(evil))
    out = tmp_path / "out"
    assert run_compare("--ref", ref, "--out", out, evil, root / "subs" / "broken").returncode \
        == 0
    text = (out / "leaderboard.csv").read_text(encoding="utf-8")
    assert "\n'=HYPERLINK(x),1," in text
    assert list(csv.reader(io.StringIO(text)))[1][0] == "'=HYPERLINK(x)"


def test_bad_command_line(tmp_path):
    proc = run_compare("--ref", tmp_path, "--out", tmp_path / "o", tmp_path / "nothing")
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr


def test_a_downloads_folder_as_it_comes(challenge, tmp_path):
    """A zip and its unzipped folder are one submission (the zip is compared, the folder listed
    as its copy); a .tar.gz, a bare results file and a link are listed with their reason."""
    root, ref, _, _ = challenge
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    shutil.copy(str(root / "subs" / "twin.zip"), str(downloads / "team_a.zip"))
    shutil.copytree(str(root / "subs" / "noisy_a"), str(downloads / "team_a"))
    shutil.copytree(str(root / "subs" / "perfect"), str(downloads / "team_b"))
    (downloads / "team_c.tar.gz").write_bytes(b"\x1f\x8b\x08\x00")
    (downloads / "results.json").write_text("[]")
    os.symlink(str(downloads / "team_b"), str(downloads / "team_d"))
    (downloads / ".DS_Store").write_bytes(b"")
    out = tmp_path / "out"
    proc = run_compare("--ref", ref, "--out", out, downloads)
    assert proc.returncode == 0, proc.stderr
    board, doc = outputs(out)
    assert sorted(r[0] for r in board[1:]) == ["team_a", "team_b"]
    reasons = {x["model"]: x["error"] for x in doc["invalid"]}
    assert sorted(reasons) == ["results.json", "team_a", "team_c.tar.gz", "team_d"]
    assert "same name as team_a.zip, which is compared" in reasons["team_a"]
    for name in ("results.json", "team_c.tar.gz"):
        assert reasons[name].startswith("not a zip or a folder") and name in proc.stdout
    assert reasons["team_d"] == "a link: links are not followed"
    page = (out / "comparison.html").read_text()
    assert "team_c.tar.gz" in page and ".DS_Store" not in page + proc.stdout


def test_a_downloads_folder_with_a_stray_file(challenge, tmp_path):
    """Issue 32: unzipped submissions plus a notes.txt were taken for one submission (the whole
    folder), and zips plus a CSV counted the CSV as a submission. Every folder (every zip) is
    compared, the stray file listed apart; and with seven submissions over nine fields, the
    console says where it counts the marked pairs that no pair could be marked."""
    root, ref, _, _ = challenge
    unzipped, zipped = tmp_path / "unzipped", tmp_path / "zipped"
    unzipped.mkdir()
    zipped.mkdir()
    for k in range(7):
        source = root / "subs" / ("noisy_a", "noisy_b", "perfect")[k % 3]
        shutil.copytree(str(source), str(unzipped / "team_{}".format(k)))
        if k < 2:
            shutil.copy(str(root / "subs" / "twin.zip"), str(zipped / "team_{}.zip".format(k)))
    (unzipped / "notes.txt").write_text("who is who")
    (zipped / "leaderboard.csv").write_text("model,miou\n")
    for folder, models, stray in ((unzipped, 7, "notes.txt"), (zipped, 2, "leaderboard.csv")):
        out = tmp_path / ("out-" + folder.name)
        proc = run_compare("--ref", ref, "--out", out, folder)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        board, doc = outputs(out)
        assert sorted(r[0] for r in board[1:]) == ["team_{}".format(k) for k in range(models)]
        assert ", {} submissions (0 left out before scoring)".format(models) in proc.stdout
        assert "Not submissions (1):\n  - {}: not a zip or a folder".format(stray) in \
            proc.stdout and "Left out" not in proc.stdout
        assert doc["invalid"] == [{"model": stray, "error": submissions.NOT_A_SUBMISSION,
                                   "not_a_submission": True}]
        page = (out / "comparison.html").read_text()
        facts = re.findall(r"<td>(Left out|Not submissions \(listed\))</td><td[^>]*>(\d+)<",
                           page)
        assert facts == [("Left out", "0"), ("Not submissions (listed)", "1")], facts
    # 7 submissions, 9 fields: 2 / 2^9 = 0.0039 > 0.05 / 21 = 0.0024 (the last run: 2, none).
    proc = run_compare("--ref", ref, "--out", tmp_path / "again", unzipped)
    line = [x for x in proc.stdout.splitlines() if "ordered pairs differ" in x][0]
    assert line.startswith("0 of 42 ordered pairs differ significantly (approximate "
                           "randomization over 9 fields, Holm-adjusted p <= 0.05). With 9 "
                           "resampled fields no pair can reach a p-value below 0.0039"), line
    assert "With 9 resampled fields no pair can reach a p-value below 0.0039" in \
        (tmp_path / "again" / "comparison.html").read_text()
    assert "no pair can reach" not in run_compare(
        "--ref", ref, "--out", tmp_path / "two", root / "subs" / "perfect",
        root / "subs" / "noisy_a").stdout


def test_a_name_given_twice_is_refused(challenge, tmp_path):
    root, ref, _, _ = challenge
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(str(root / "subs" / "twin.zip"), str(other / "noisy_a.zip"))
    proc = run_compare("--ref", ref, "--out", tmp_path / "out", root / "subs" / "noisy_a",
                       other / "noisy_a.zip")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "two submissions named noisy_a" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_confidence_in_config_means_what_it_means_in_score_py(challenge, tmp_path):
    root, ref, _, _ = challenge
    ref2 = tmp_path / "ref"
    shutil.copytree(ref, str(ref2))
    config = ref2 / "config.yaml"
    base = config.read_text() if config.exists() else ""
    config.write_text(base + "confidence: maybe\n")
    proc = run_compare("--ref", ref2, "--out", tmp_path / "o1", root / "subs" / "noisy_a",
                       root / "subs" / "perfect")
    assert proc.returncode == 3 and "confidence must be true or false" in proc.stderr
    config.write_text(base + "confidence: false\n")
    out = tmp_path / "o2"
    proc = run_compare("--ref", ref2, "--out", out, root / "subs" / "noisy_a",
                       root / "subs" / "perfect")
    assert proc.returncode == 0, proc.stderr
    board, doc = outputs(out)
    assert not any("_ci_" in h for h in board[0])
    assert doc["resamples"] == 0 and doc["confidence"] is False
    assert all(p["p_value"] is None and not p["significant"] for p in doc["pairs"])
    assert "confidence: false" in (out / "comparison.html").read_text()


def _unit_rows(preds, layers):
    """Per image (sorted by id: each is its own field here) the model's row: TP then union
    per class, from the oracle's matrices."""
    mats = matrices(preds, layers)
    return [row_of(mats[i]) for i in sorted(layers)]


def _miou_of_row(sums):
    ious = [t / u for t, u in zip(sums[:9], sums[9:]) if u]
    return sum(ious) / len(ious) if ious else None


def test_the_neighbours_family(challenge, tmp_path):
    """--pairs neighbours: each submission against the one above it and against the leader
    (2 M - 3 pairs), listed both ways; their p-values are the randomization test of those pairs
    with the shuffles their number asks for (the naive oracle), Holm-adjusted over them alone;
    the page shows them as a table, and no test-then-rank (it needs every pair)."""
    root, ref, preds, layers = challenge
    out = tmp_path / "out"
    proc = run_compare("--ref", ref, "--out", out, "--pairs", "neighbours", root / "subs")
    assert proc.returncode == 0, proc.stderr
    _, doc = outputs(out)
    names = [m["model"] for m in doc["models"]]
    assert doc["family"]["pairs"] == "neighbours" and doc["family"]["tested"] == 5
    assert "each submission against the next one in the ranking and against the leader" in \
        doc["family"]["description"]
    tested = [(0, 1), (1, 2), (0, 2), (2, 3), (0, 3)]
    assert [(p["a"], p["b"]) for p in doc["pairs"]] == \
        [x for a, b in tested for x in ((names[a], names[b]), (names[b], names[a]))]
    rows = {m: _unit_rows(preds[m], layers) for m in names}
    raw = [randomization_oracle.randomization(rows[names[a]], rows[names[b]], _miou_of_row,
                                              pair_tests.shuffles_for(5))[0]
           for a, b in tested]
    holm = pair_tests.holm(raw)
    by_pair = {(p["a"], p["b"]): p for p in doc["pairs"]}
    for (a, b), p, q in zip(tested, raw, holm):
        for x, y in ((a, b), (b, a)):
            assert by_pair[(names[x], names[y])]["p_value"] == p
            assert by_pair[(names[x], names[y])]["p_holm"] == q
    assert all("test_then_rank" not in m for m in doc["models"])
    page = (out / "comparison.html").read_text()
    assert "Is each submission separated from the next one, and from the leader?" in page
    assert "Is the row better than the column?" not in page and "Test-then-rank" not in page
    assert "over the 5 pairs tested: each submission against the next one in the ranking and " \
           "against the leader, at 5%" in page
    marked = sum(p["significant"] for p in doc["pairs"])
    assert "{} of the 5 pairs tested (each submission against the next one and the leader) "\
           "differ significantly".format(marked) in proc.stdout
    # The resampled scores do not depend on the family: the same intervals, ranks and
    # probabilities of superiority as the full map's.
    full = tmp_path / "full"
    assert run_compare("--ref", ref, "--out", full, "--pairs", "all",
                       root / "subs").returncode == 0
    _, every = outputs(full)
    assert every["family"]["pairs"] == "all" and every["family"]["tested"] == 6
    assert [{k: v for k, v in m.items() if k != "test_then_rank"} for m in every["models"]] == \
        doc["models"]
    every_pair = {(p["a"], p["b"]): p for p in every["pairs"]}
    for key, p in by_pair.items():
        assert (p["diff"], p["diff_ci"], p["p_a_better"]) == \
            tuple(every_pair[key][k] for k in ("diff", "diff_ci", "p_a_better"))


def test_auto_tests_every_pair_up_to_20_submissions_then_the_neighbours(challenge, tmp_path):
    root, ref, _, _ = challenge
    subs = tmp_path / "subs"
    subs.mkdir()
    for k in range(21):
        shutil.copytree(str(root / "subs" / "noisy_a"), str(subs / "m{:02d}".format(k)))
    proc = run_compare("--ref", ref, "--out", tmp_path / "o21", subs)
    assert proc.returncode == 0, proc.stderr
    _, doc = outputs(tmp_path / "o21")
    assert doc["family"]["pairs"] == "neighbours" and doc["family"]["tested"] == 39
    assert len(doc["pairs"]) == 78 and not any(p["significant"] for p in doc["pairs"])
    shutil.rmtree(str(subs / "m20"))
    assert run_compare("--ref", ref, "--out", tmp_path / "o20", subs).returncode == 0
    _, doc = outputs(tmp_path / "o20")
    assert doc["family"]["pairs"] == "all" and doc["family"]["tested"] == 190
    assert len(doc["pairs"]) == 380
