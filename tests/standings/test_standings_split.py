"""standings.py --split split.json --part private|public|all (issue 35, part 3): the prize places
ranked on a part of a split test set, from the comparison compare.py made with the same split
and part (the standings score nothing); each team's submission is the one its leaderboard row
shows, never its best private one; public and private ranks side by side. And ties at a prize
boundary (issue 33): flagged on the console, the page and standings.json, never silently settled
by the leaderboard file's order.

The sample (tests/test_standings.py's five teams): Alpha, Bravo, charlie-c, Delta (delta1's row
48604, and 48605), Echo; eligible with these verdicts: Alpha, Echo (Bravo has no package,
charlie-c is not registered, Delta broke the daily limit)."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

import platform_downloads
from conftest import AV_REF, ORGANIZER, run_main
from organizing.commands.standings import main
from organizing.split import choose, document, grouping
from scoring import reference_setup


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The downloads, the sample's split (0.5, seed 0) and compare.py --leaderboard --split
    run for real on the private and the public part."""
    downloads = platform_downloads.made(tmp_path_factory)
    root = tmp_path_factory.mktemp("standings-split")
    setup = reference_setup.configure(AV_REF)
    split = choose.choose(grouping.grouping_of(setup, setup.open()), 0.5, 0)
    (root / "split.json").write_text(document.to_json(split, "agriculture-vision"))
    for part in ("private", "public"):
        proc = subprocess.run(
            [sys.executable, os.path.join(ORGANIZER, "compare.py"), "--ref", AV_REF,
             "--leaderboard", str(downloads / "results.csv"), "--roster",
             str(downloads / "roster.csv"), "--participants", str(downloads / "participants.json"),
             "--split", str(root / "split.json"), "--part", part, "--out", str(root / part),
             "-q", str(downloads / "bulk_submissions.zip")],
            capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    for team in ("Alpha", "Delta", "Echo"):
        os.makedirs(str(root / "v" / team))
        (root / "v" / team / "verdict.json").write_text(json.dumps(
            {"verdict": "valid", "task": "agriculture-vision", "checks": []}))
    return downloads, root


def standings(downloads, root, out, *more, leaderboard=None):
    argv = ["--out", out, "--leaderboard", leaderboard or downloads / "results.csv",
            "--roster", downloads / "roster.csv", "--participants",
            downloads / "participants.json", "--submissions", downloads / "submissions.json",
            "--per-day", 2, "--total", 20]
    for team in ("Alpha", "Delta", "Echo"):
        argv += ["--verdict", "{}={}".format(team, root / "v" / team)]
    return run_main(main, argv + list(more))


def comparison(path):
    with open(str(path), encoding="utf-8") as f:
        return json.load(f)


def rescored(root, tmp_path, scores):
    """The private comparison with other scores (model -> score): a private ranking that
    differs from the leaderboard's."""
    doc = comparison(root / "private" / "comparison.json")
    for m in doc["models"]:
        m["score"] = scores[m["model"]]
    (tmp_path / "cmp").mkdir()
    (tmp_path / "cmp" / "comparison.json").write_text(json.dumps(doc))
    return tmp_path / "cmp"


def test_the_places_follow_the_private_part_as_compare_scored_it(sample, tmp_path):
    downloads, root = sample
    code, out, err = standings(downloads, root, tmp_path / "out", "--comparison",
                               root / "private", "--split", root / "split.json")
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    scores = {m["model"]: m["score"] for m in comparison(root / "private" /
                                                         "comparison.json")["models"]}
    got = {t["team"]: t["part_score"] for t in doc["teams"]}
    # each team's leaderboard submission: Delta's is its best leaderboard row, 48604
    assert got == {"Alpha": scores["Alpha"], "Bravo": scores["Bravo"],
                   "charlie-c": scores["charlie-c (not on the roster)"],
                   "Delta": scores["Delta (48604)"], "Echo": scores["Echo"]}
    assert doc["split"]["part"] == "private" and doc["split"]["units"] == 20
    assert doc["ranked_by"] == "part_rank"
    assert [(t["team"], t["prize_place"]) for t in doc["teams"] if t["prize_place"]] == \
        [("Alpha", 1), ("Echo", 2)]
    assert "Ranked on the private part of the test set (20 images" in out
    assert "Place 1: Alpha (leaderboard rank 1, mIoU 0.6132883751; private rank 1, mIoU " \
        "{:.4f})".format(scores["Alpha"]) in out
    rows = list(csv.reader(io.StringIO((tmp_path / "out" / "standings.csv").read_text())))
    assert rows[0][-2:] == ["private_rank", "private_score"]
    page = (tmp_path / "out" / "standings.html").read_text()
    assert "Private rank" in page and "Teams in private part order" in page


def test_a_private_order_unlike_the_leaderboard_moves_the_places(sample, tmp_path):
    downloads, root = sample
    # Echo best on the private part; Delta's other submission (48605) would be its best
    # private one, but the leaderboard shows 48604: that one is Delta's
    cmp = rescored(root, tmp_path, {"Alpha": 0.50, "Bravo": 0.51, "charlie-c (not on the "
                                    "roster)": 0.52, "Delta (48604)": 0.40,
                                    "Delta (48605)": 0.90, "Echo": 0.60})
    code, out, err = standings(downloads, root, tmp_path / "out", "--comparison", cmp,
                               "--split", root / "split.json", "--part", "private",
                               "--places", "2")
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert [(t["team"], t["leaderboard_rank"], t["part_rank"]) for t in doc["teams"]] == [
        ("Echo", 5, 1), ("charlie-c", 3, 2), ("Bravo", 2, 3), ("Alpha", 1, 4), ("Delta", 4, 5)]
    assert [(t["team"], t["prize_place"]) for t in doc["teams"] if t["prize_place"]] == \
        [("Echo", 1), ("Alpha", 2)]
    assert next(t for t in doc["teams"] if t["team"] == "Delta")["part_score"] == 0.40
    assert "Place 1: Echo (leaderboard rank 5, mIoU 0.5626414469; private rank 1, mIoU " \
        "0.6000)" in out


def test_a_comparison_of_another_part_or_none_is_refused(sample, tmp_path):
    downloads, root = sample
    split = root / "split.json"
    for more, words in (
            (["--comparison", root / "private", "--split", split, "--part", "public"],
             "ranks the private part"),
            (["--comparison", root / "public", "--split", split], "ranks the public part"),
            (["--split", split], "give --comparison"),
            (["--comparison", root / "private", "--part", "private"], "--split")):
        code, _, err = standings(downloads, root, tmp_path / "o", *more)
        assert code == 2 and words in err, (more, err)
    other = tmp_path / "other.json"
    doc = json.loads(split.read_text())
    doc["seed"] = 5
    other.write_text(json.dumps(doc))
    code, _, err = standings(downloads, root, tmp_path / "o", "--comparison", root / "private",
                             "--split", other)
    assert code == 3 and "another split" in err
    assert not (tmp_path / "o").exists()


def test_the_public_part_ranks_as_the_leaderboard(sample, tmp_path):
    downloads, root = sample
    code, out, err = standings(downloads, root, tmp_path / "out", "--comparison",
                               root / "public", "--split", root / "split.json", "--part",
                               "public")
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert [t["part_rank"] for t in doc["teams"]] == [t["leaderboard_rank"]
                                                      for t in doc["teams"]]


def tied_leaderboard(downloads, tmp_path, team_line, score):
    """results.csv with one row's score replaced."""
    with open(str(downloads / "results.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    rows[team_line][-1] = score
    path = tmp_path / "results.csv"
    with open(str(path), "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return path


def test_a_tie_at_a_prize_boundary_is_flagged(sample, tmp_path):
    downloads, root = sample
    # Echo (line 7) given Alpha's score: the two eligible teams share rank 1, and which one
    # is first is the file's order only
    board = tied_leaderboard(downloads, tmp_path, 6, "0.6132883751")
    code, out, err = standings(downloads, root, tmp_path / "out", leaderboard=board)
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert doc["ties"] == [{"rank": 1, "ranked_by": "leaderboard_rank",
                            "teams": ["Alpha", "Echo"], "places": [1, 2],
                            "score": "0.6132883751"}]
    assert {t["team"]: t.get("tied_with") for t in doc["teams"]}["Echo"] == ["Alpha"]
    line = ("Tie at a prize boundary: Alpha and Echo share leaderboard rank 1 (mIoU "
            "0.6132883751); only the leaderboard file's order gives Alpha place 1, Echo place 2: "
            "the jury decides")
    assert line in out.splitlines()
    assert "Tie at a prize boundary: Alpha and Echo" in \
        (tmp_path / "out" / "standings.html").read_text()
    # one place: Echo tied with the winner, left without a place
    code, out, _ = standings(downloads, root, tmp_path / "one", "--places", "1",
                             leaderboard=board)
    one = json.loads((tmp_path / "one" / "standings.json").read_text())
    assert one["ties"][0]["places"] == [1, None] and "Alpha place 1, Echo no place" in out
    # a tie between ineligible teams, or away from the places, is not flagged
    (tmp_path / "p").mkdir()
    plain = tied_leaderboard(downloads, tmp_path / "p", 3, "0.5987045973")   # Bravo, charlie-c
    code, out, _ = standings(downloads, root, tmp_path / "plain", leaderboard=plain)
    assert code == 0 and json.loads((tmp_path / "plain" / "standings.json").read_text())[
        "ties"] == [] and "Tie" not in out


def test_a_private_tie_is_flagged_on_the_private_rank(sample, tmp_path):
    downloads, root = sample
    cmp = rescored(root, tmp_path, {"Alpha": 0.55, "Bravo": 0.51, "charlie-c (not on the "
                                    "roster)": 0.52, "Delta (48604)": 0.40,
                                    "Delta (48605)": 0.90, "Echo": 0.55})
    code, out, err = standings(downloads, root, tmp_path / "out", "--comparison", cmp,
                               "--split", root / "split.json")
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert doc["ties"] == [{"rank": 1, "ranked_by": "part_rank", "teams": ["Alpha", "Echo"],
                            "places": [1, 2], "score": "0.5500"}]
    assert "Alpha and Echo share private rank 1 (mIoU 0.5500)" in out


def test_the_block_runs_as_written(sample, tmp_path):
    """The real command end to end on the sample: compare.py's output feeds standings.py."""
    downloads, root = sample
    shutil.copytree(str(root / "private"), str(tmp_path / "comparison"))
    proc = subprocess.run(
        [sys.executable, os.path.join(ORGANIZER, "standings.py"), "--out", str(tmp_path / "s"),
         "--leaderboard", str(downloads / "results.csv"), "--roster",
         str(downloads / "roster.csv"), "--participants", str(downloads / "participants.json"),
         "--comparison", str(tmp_path / "comparison"), "--split", str(root / "split.json"),
         "--part", "private", "--verdict", "Alpha={}".format(root / "v" / "Alpha")],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "private rank 1" in proc.stdout
