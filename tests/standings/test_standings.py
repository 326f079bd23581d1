"""standings.py on the sample's five teams, worked out by hand (the downloads are made by
competitions/agriculture-vision/make_platform_downloads.py; the verdicts are written here as
verify.py writes them, so that this test reads only what the decision needs):

  leaderboard (results.csv, best first): alpha 0.6133, bravo_x 0.5987, charlie-c 0.5844,
  delta1 0.5752, delta2 0.5678, echo-5 0.5626
  roster: Alpha = alpha@lab.example (participants.json: alpha), Bravo = bravo_x,
  Delta = delta1 + delta2, Echo = echo-5; charlie-c is on no team
  -> teams in order: Alpha 1, Bravo 2, charlie-c 3, Delta 4 (its best row, delta1), Echo 5
  verdicts: Alpha valid, Bravo invalid (leaderboard match), Delta valid, Echo valid
  submissions.json, 2 a day and 20 in total per team: Delta made 48592, 48604 (delta1) and
  48605 (delta2) on 2027-05-10: 3 > 2, 48605 beyond the limit; Alpha's 3 on that day hold a
  Failed one (48591), not counted: 2, within
  -> Place 1 Alpha; Bravo (final package), charlie-c (registration, no package), Delta
  (limits) passed over; Place 2 Echo; Place 3 not awarded.
"""
import json
import os

import pytest

import platform_downloads
from conftest import ORGANIZER, run_main
from organizing.commands.standings import main


@pytest.fixture(scope="module")
def downloads(tmp_path_factory):
    return platform_downloads.made(tmp_path_factory)


def verdict(folder, valid, failed=()):
    os.makedirs(str(folder))
    checks = [{"name": "layout", "status": "pass", "summary": "ok", "evidence": [],
               "figures": {}}] + [{"name": n, "status": "fail", "summary": s, "evidence": [],
                                   "figures": {}} for n, s in failed]
    (folder / "verdict.json").write_text(json.dumps({
        "verdict": "valid" if valid else "invalid", "task": "agriculture-vision",
        "checks": checks}))
    return folder


@pytest.fixture
def verdicts(tmp_path):
    return {"Alpha": verdict(tmp_path / "v" / "Alpha", True),
            "Bravo": verdict(tmp_path / "v" / "Bravo", False, [
                ("leaderboard match", "the rescored miou 0.5368 does not match the claimed "
                 "0.5987045973")]),
            "Delta": verdict(tmp_path / "v" / "Delta", True),
            "Echo": verdict(tmp_path / "v" / "Echo", True)}


def standings(downloads, out, verdicts, *more):
    argv = ["--out", out, "--leaderboard", downloads / "results.csv", "--roster",
            downloads / "roster.csv", "--participants", downloads / "participants.json",
            "--submissions", downloads / "submissions.json", "--per-day", 2, "--total", 20]
    for team, folder in verdicts.items():
        argv += ["--verdict", "{}={}".format(team, folder)]
    return run_main(main, argv + list(more))


def test_the_five_teams_by_hand(downloads, verdicts, tmp_path):
    code, out, err = standings(downloads, tmp_path / "out", verdicts)
    assert code == 0, err
    with open(str(tmp_path / "out" / "standings.json"), encoding="utf-8") as f:
        doc = json.load(f)
    got = [(t["team"], t["leaderboard_rank"], t["eligible"], t["prize_place"],
            [r["check"] for r in t["reasons"]]) for t in doc["teams"]]
    assert got == [("Alpha", 1, True, 1, []),
                   ("Bravo", 2, False, None, ["final package"]),
                   ("charlie-c", 3, False, None, ["registration", "final package"]),
                   ("Delta", 4, False, None, ["submission limits"]),
                   ("Echo", 5, True, 2, [])]
    teams = {t["team"]: t for t in doc["teams"]}
    assert teams["Alpha"]["accounts"] == ["alpha"]          # the email, mapped
    assert teams["Delta"]["accounts"] == ["delta1", "delta2"]
    assert teams["Delta"]["row"]["submission_id"] == 48604   # the team's best row
    assert teams["Delta"]["submissions"]["per_day"] == {"2027-05-10": 3}
    assert "48605" in " ".join(teams["Delta"]["reasons"][0]["evidence"])
    assert teams["Alpha"]["submissions"]["counted"] == 2     # the Failed one not counted
    assert teams["Alpha"]["score"] == pytest.approx(0.6132883751)
    assert doc["accounts_not_on_roster"] == ["charlie-c"]
    assert [i["role"] for i in doc["inputs"]][:4] == ["leaderboard", "roster", "participants",
                                                      "submissions"]
    assert all(len(i["sha256"]) == 64 for i in doc["inputs"])
    lines = out.splitlines()
    assert lines[1].startswith("Place 1: Alpha (leaderboard rank 1")
    assert lines[2].startswith("Place 2: Echo (leaderboard rank 5") and "moved up over" in \
        lines[2]
    assert lines[3] == "Place 3: not awarded (no further eligible team)"
    assert [line.split(" (")[0] for line in lines if line.startswith("Passed over")] == \
        ["Passed over: Bravo", "Passed over: charlie-c", "Passed over: Delta"]
    csv_text = (tmp_path / "out" / "standings.csv").read_text()
    assert csv_text.splitlines()[1].startswith("1,Alpha,alpha,0.6132883751,yes,1,")
    assert "Passed over: Delta" in (tmp_path / "out" / "standings.html").read_text()
    assert doc["not_checked"] == ["separation of the places (no --comparison)"]


def test_with_two_places_bravo_valid_wins_second(downloads, verdicts, tmp_path):
    verdicts["Bravo"] = verdict(tmp_path / "v2", True)
    code, out, err = standings(downloads, tmp_path / "out", verdicts, "--places", "2")
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert [(t["team"], t["prize_place"]) for t in doc["teams"] if t["prize_place"]] == \
        [("Alpha", 1), ("Bravo", 2)]
    assert "Passed over" not in out     # no team above a winner was passed over


def test_the_comparison_says_whether_places_are_separated(downloads, verdicts, tmp_path):
    comparison = tmp_path / "comparison.json"
    comparison.write_text(json.dumps({"task": "agriculture-vision", "models": [
        {"model": "Alpha"}, {"model": "Echo"}], "pairs": [
        {"a": "Alpha", "b": "Echo", "significant": True}]}))
    code, out, err = standings(downloads, tmp_path / "out", verdicts, "--comparison",
                               comparison)
    assert code == 0, err
    assert "separated from Echo by the test set" in out.splitlines()[1]


def test_invalid_inputs_exit_2_or_3_with_one_message(downloads, verdicts, tmp_path):
    code, _, err = standings(downloads, tmp_path / "o", dict(verdicts, Zulu=verdicts["Alpha"]))
    assert code == 2 and "no team Zulu on the leaderboard" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = standings(downloads, tmp_path / "o", dict(verdicts, Echo=empty))
    assert code == 3 and "no verdict.json" in err
    other = tmp_path / "vqa"
    verdict(other, True)
    doc = json.loads((other / "verdict.json").read_text())
    (other / "verdict.json").write_text(json.dumps(dict(doc, task="planetscapes-vqa")))
    code, _, err = standings(downloads, tmp_path / "o", dict(verdicts, Echo=other))
    assert code == 3 and "different challenges" in err
    clash = tmp_path / "roster.csv"
    clash.write_text("team,member\nAlpha,alpha\nALPHA ,someone\n")
    code, _, err = run_main(main, ["--out", tmp_path / "o", "--leaderboard",
                                   downloads / "results.csv", "--roster", clash])
    assert code == 3 and "one name once case and spaces are set aside" in err
    for text in (err,):
        assert "Traceback" not in text and len(text.strip().splitlines()) == 2


def test_the_real_command_runs(downloads, tmp_path):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, os.path.join(ORGANIZER, "standings.py"), "--out",
                           str(tmp_path / "o"), "--leaderboard", str(downloads / "results.csv")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # without a roster every account is its own team, and no package is verified
    assert "Place 1: not awarded" in proc.stdout


def test_near_identical_predictions_are_evidence_never_a_reason(downloads, verdicts, tmp_path):
    rows = [{"model": m, "owner": o, "submission_id": s, "line": k + 2} for k, (m, o, s) in
            enumerate([("Alpha", "alpha", 48601), ("Bravo", "bravo_x", 48602),
                       ("Delta (48604)", "delta1", 48604), ("Delta (48605)", "delta2", 48605),
                       ("Echo", "echo-5", 48606)])]
    agreement = [{"a": "Alpha", "b": "Echo", "identical": 9995, "compared": 10000},
                 {"a": "Delta (48604)", "b": "Delta (48605)", "identical": 10000,
                  "compared": 10000},     # one team's two accounts: not between teams
                 {"a": "Alpha", "b": "Bravo", "identical": 9989, "compared": 10000}]
    comparison = tmp_path / "comparison.json"
    comparison.write_text(json.dumps({"task": "agriculture-vision", "models": [
        {"model": r["model"]} for r in rows], "pairs": [], "agreement": agreement,
        "leaderboard_rows": rows}))
    code, out, err = standings(downloads, tmp_path / "out", verdicts, "--comparison",
                               comparison)
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert [p["teams"] for p in doc["near_identical"]["pairs"]] == [["Alpha", "Echo"]]
    assert [(t["team"], t["prize_place"]) for t in doc["teams"] if t["prize_place"]] == \
        [("Alpha", 1), ("Echo", 2)]          # unchanged: the jury decides
    assert "Alpha and Echo, 99.95% identical" in out


def test_two_tracks_mixed_are_refused(downloads, verdicts, tmp_path):
    # both tracks have one task: the claimed score and the compared submissions tell them apart
    other = tmp_path / "semi"
    verdict(other, True)
    doc = json.loads((other / "verdict.json").read_text())
    doc["score"] = {"claimed": "0.6410", "claimed_from": "semi.csv, team echo-5"}
    (other / "verdict.json").write_text(json.dumps(doc))
    code, _, err = standings(downloads, tmp_path / "o", dict(verdicts, Echo=other))
    assert code == 3 and "another track" in err and "0.5626414469" in err
    doc["score"]["claimed"] = "0.5626414469"        # its row on this leaderboard: accepted
    (other / "verdict.json").write_text(json.dumps(doc))
    code, _, err = standings(downloads, tmp_path / "o", dict(verdicts, Echo=other))
    assert code == 0, err
    comparison = tmp_path / "comparison.json"
    comparison.write_text(json.dumps({"task": "agriculture-vision", "models": [], "pairs": [],
                                      "leaderboard_rows": [{"model": "x", "owner": "zed",
                                                            "submission_id": 1, "line": 2}]}))
    code, _, err = standings(downloads, tmp_path / "o", verdicts, "--comparison", comparison)
    assert code == 3 and "does not show" in err


def test_an_account_on_two_teams_is_a_reason_for_both(downloads, verdicts, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text((downloads / "roster.csv").read_text() + "Echo,bravo_x\n")
    argv = ["--out", tmp_path / "o", "--leaderboard", downloads / "results.csv", "--roster",
            roster, "--participants", downloads / "participants.json"]
    for team, folder in verdicts.items():
        argv += ["--verdict", "{}={}".format(team, folder)]
    code, out, err = run_main(main, argv)
    assert code == 0, err
    doc = json.loads((tmp_path / "o" / "standings.json").read_text())
    reasons = {t["team"]: [r["check"] for r in t["reasons"]] for t in doc["teams"]}
    assert "one team per account" in reasons["Bravo"] and "one team per account" in \
        reasons["Echo"]
    assert [(t["team"], t["prize_place"]) for t in doc["teams"] if t["prize_place"]] == \
        [("Alpha", 1), ("Delta", 2)]     # no --submissions: the limits are not counted
    assert "Not checked: submission limits" in out and "separation" in out
