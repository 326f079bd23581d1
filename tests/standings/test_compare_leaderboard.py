"""compare.py --leaderboard: exactly the submissions the leaderboard shows, one per row, from
the bulk download named as Codabench names it, each named after its owner or its team; a row
without its download, and a download no row names, listed with the reason."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

import codabench_source
import platform_downloads
from conftest import AV_REF, ORGANIZER, run_main
from organizing.commands.compare import main

EXTRACT = codabench_source.committed()


@pytest.fixture(scope="module")
def downloads(tmp_path_factory):
    return platform_downloads.made(tmp_path_factory)


def compare(*args):
    return run_main(main, ["--ref", AV_REF, "-q"] + [str(a) for a in args])


def models(out):
    with open(os.path.join(str(out), "comparison.json"), encoding="utf-8") as f:
        doc = json.load(f)
    return [m["model"] for m in doc["models"]], {x["model"]: x["error"] for x in doc["invalid"]}


def test_one_submission_per_row_named_after_owner_then_team(downloads, tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(ORGANIZER, "compare.py"), "--ref",
                           AV_REF, "--out", str(tmp_path / "owners"), "--leaderboard",
                           str(downloads / "results.csv"), str(downloads /
                                                               "bulk_submissions.zip")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    names, left_out = models(tmp_path / "owners")
    assert names == ["alpha", "bravo_x", "charlie-c", "delta1", "delta2", "echo-5"]
    assert left_out == {}
    code, _, err = compare("--out", tmp_path / "teams", "--leaderboard",
                           downloads / "results.csv", "--roster", downloads / "roster.csv",
                           "--participants", downloads / "participants.json",
                           downloads / "bulk_submissions.zip")
    assert code == 0, err
    names, _ = models(tmp_path / "teams")
    # Alpha registered by email (participants.json maps it), Delta's two accounts two rows
    assert names == ["Alpha", "Bravo", "charlie-c (not on the roster)", "Delta (48604)",
                     "Delta (48605)", "Echo"]


def test_missing_and_extra_submissions_are_listed_with_reasons(downloads, tmp_path):
    folder = tmp_path / "bulk"
    with zipfile.ZipFile(str(downloads / "bulk_submissions.zip")) as z:
        z.extractall(str(folder))
    gone = [n for n in os.listdir(str(folder)) if n.startswith("48602_")][0]
    os.remove(str(folder / gone))
    extra = [n for n in os.listdir(str(folder)) if n.startswith("48601_")][0]
    shutil.copy(str(folder / extra), str(folder / extra.replace("48601", "48000")))
    (folder / "failed.txt").write_text("The following submissions failed to download:\n")
    code, _, err = compare("--out", tmp_path / "out", "--leaderboard",
                           downloads / "results.csv", folder)
    assert code == 0, err
    names, left_out = models(tmp_path / "out")
    assert "bravo_x" not in names and "not in the download" in left_out["bravo_x"]
    assert "no row of the leaderboard export names it (submission 48000 by alpha)" in \
        left_out[extra.replace("48601", "48000")]
    assert "failed.txt" in left_out


def test_not_a_bulk_download_or_a_bad_export_is_one_message(downloads, tmp_path):
    code, _, err = compare("--out", tmp_path / "x", "--leaderboard",
                           downloads / "results.csv", downloads / "packages")
    assert code == 2 and "bulk download" in err and "Traceback" not in err
    bad = tmp_path / "bad.csv"
    bad.write_text("who,what\n1,2\n")
    code, _, err = compare("--out", tmp_path / "x", "--leaderboard", bad,
                           downloads / "bulk_submissions.zip")
    assert code == 3 and "not a leaderboard export" in err
    with pytest.raises(SystemExit) as info:      # argparse's usage error
        compare("--out", tmp_path / "x", "--roster", downloads / "roster.csv",
                downloads / "bulk_submissions.zip")
    assert info.value.code == 2


def test_the_samples_names_are_the_platforms(downloads):
    """The generator names each file as the platform's own lines name it."""
    import datetime
    import types
    with open(str(downloads / "submissions.json"), encoding="utf-8") as f:
        listed = {s["id"]: s for s in json.load(f)}
    with zipfile.ZipFile(str(downloads / "bulk_submissions.zip")) as z:
        for name in z.namelist():
            s = listed[int(name.split("_")[0])]
            when = datetime.datetime.strptime(s["created_when"], "%Y-%m-%dT%H:%M:%SZ")
            sub = types.SimpleNamespace(
                id=s["id"], owner=s["owner"], phase=types.SimpleNamespace(id=s["phase"]),
                data=types.SimpleNamespace(created_when=when, data_file=types.SimpleNamespace(
                    name="dataset/x/submission.zip")))
            assert name == codabench_source.bulk_name(EXTRACT, sub)


def test_a_codalab_download_with_its_csv(downloads, tmp_path):
    """CodaLab (download_leaderboard_results): `<username> - <number> submission.zip`, or
    `Team <name>  - <number> submission.zip` when the account set a team name, beside
    output.zip, profile.txt, method.txt; its CSV names usernames (get_results_csv)."""
    folder = tmp_path / "codalab"
    folder.mkdir()
    with zipfile.ZipFile(str(downloads / "bulk_submissions.zip")) as z:
        names = sorted(z.namelist())
        (folder / "alpha - 3 submission.zip").write_bytes(z.read(names[0]))
        (folder / "Team Echo  - 1 submission.zip").write_bytes(z.read(names[-1]))
    (folder / "alpha - 3 output.zip").write_bytes(b"")
    (folder / "team_names_and_members.txt").write_text("Team: Echo; members: e\n")
    export = tmp_path / "codalab.csv"
    export.write_text("submission_pk,User,b'mIoU',\r\n11,alpha,0.6133 (1),\r\n"
                      "12,echo-5,0.5626 (2),\r\n")
    code, _, err = compare("--out", tmp_path / "out", "--leaderboard", export, "--roster",
                           downloads / "roster.csv", "--participants",
                           downloads / "participants.json", folder)
    assert code == 0, err
    names, left_out = models(tmp_path / "out")
    assert names == ["Alpha", "Echo"]
    assert set(left_out) == {"alpha - 3 output.zip", "team_names_and_members.txt"}
