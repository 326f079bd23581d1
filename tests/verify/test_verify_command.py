"""verify.py on a small reference: every check's pass and fail, the exit statuses,
byte-identical outputs, hostile packages. The real command (a subprocess) where the process
matters (exit statuses, outputs, hostile files, the command line), its main in this process
elsewhere (the same code, faster). The score's oracle is score.py itself on the same
predictions (the platform's engine)."""
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import zipfile
from typing import NamedTuple

import numpy as np
import pytest
from PIL import Image

import torch_files
from agrivision_data import SMALL_IDS, SMALL_SIZE, write_small_reference
from final_packages import FIXTURES, package, predictions
from conftest import ORGANIZER, run_main
from zip_headers import patch_zip
from organizing.commands import compare as compare_cli
from scoring.commands import score as score_cli
from organizing.commands import verify as cli

VERIFY = os.path.join(ORGANIZER, "verify.py")
# A valid package of each task end to end, and the zips and pickles of a hostile one, are marked
# compat: CI runs them on the oldest versions too (Python 3.7+, numpy 1.16, Pillow 6.1); the
# rules' logic and the messages depend on no version.
COUNTS = json.load(open(os.path.join(FIXTURES, "counts.json")))


class Ran(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def run(*args, real=False):
    if real:
        return subprocess.run([sys.executable, VERIFY] + [str(a) for a in args],
                              capture_output=True, text=True, timeout=120)
    return Ran(*run_main(cli.main, list(args) + ["--workers", "1"]
                         if "--workers" not in args else list(args)))


@pytest.fixture
def ref(tmp_path_factory):
    return write_small_reference(str(tmp_path_factory.mktemp("ref")))


def verdict(out):
    with open(os.path.join(str(out), "verdict.json")) as f:
        return json.load(f)


def check(doc, name):
    return [c for c in doc["checks"] if c["name"] == name][0]


def rescored(ref, res, tmp_path):
    code, _, err = run_main(score_cli.main, ["--ref", ref, "--res", res, "--out",
                                             tmp_path / "scored", "-q", "--workers", "1"])
    assert code == 0, err
    return json.load(open(str(tmp_path / "scored" / "scores.json")))["miou"]


@pytest.mark.compat
def test_a_valid_package_passes_with_the_platforms_score_and_identical_outputs(tmp_path, ref):
    pkg = package(tmp_path)
    miou = rescored(ref, tmp_path / "final" / "submission" / "results", tmp_path)
    claimed = "{:.4f}".format(miou)
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--claimed", claimed,
               "--reproduced", tmp_path / "final" / "submission" / "results",
               "--leaderboard-submission", tmp_path / "final" / "submission" / "results",
               real=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = verdict(tmp_path / "out")
    assert doc["verdict"] == "valid"
    assert doc["score"]["results"] == miou and doc["score"]["match"] is True
    assert doc["parameters"]["counted"] == COUNTS["training_checkpoint.ckpt"]["parameters"]
    assert doc["parameters"]["optimizer_state"] == \
        COUNTS["training_checkpoint.ckpt"]["optimizer_state"]
    assert doc["parameters"]["complete"] is True
    assert [c["status"] for c in doc["checks"]] == ["pass"] * 7 + ["not-checked"] * 2
    assert doc["reproduction"]["reproduced"] is True
    assert doc["reproduction"]["difference_ci"] == [0.0, 0.0]
    assert check(doc, "report")["figures"]["pages"] == 4
    assert "VALID: no rule is broken" in proc.stdout and "Counting rule:" in proc.stdout
    page = (tmp_path / "out" / "verdict.html").read_text()
    assert page.index("VALID") < page.index("Check: layout")
    # The rules the jury applies are named, on the page too, as not checked by the program.
    for name in ("datasets declared", "training reproducible"):
        c = check(doc, name)
        assert (c["status"], c["evidence"]) == ("not-checked", ["not checked by the program"])
    assert page.count("not checked by the program") == 2
    assert "must be named in challenge_report.pdf: the jury&#x27;s to read" in page
    # identical inputs, another worker count (and in this process): byte-identical outputs,
    # no temporary path
    again = run(pkg, "--ref", ref, "--out", tmp_path / "out2", "--claimed", claimed,
                "--reproduced", tmp_path / "final" / "submission" / "results",
                "--leaderboard-submission", tmp_path / "final" / "submission" / "results",
                "--workers", "2")
    assert again.returncode == 0
    for name in ("verdict.json", "verdict.html"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes()
    assert str(tmp_path) not in (tmp_path / "out" / "verdict.json").read_text()
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["verdict.html", "verdict.json"]


def test_the_claimed_value_is_compared_at_its_own_precision(tmp_path, ref):
    pkg = package(tmp_path)
    miou = rescored(ref, tmp_path / "final" / "submission" / "results", tmp_path)
    near = "{:.2f}".format(miou)
    assert run(pkg, "--ref", ref, "--out", tmp_path / "a", "--claimed", near).returncode == 0
    off = "{:.4f}".format(float("{:.4f}".format(miou)) + 0.0001)
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "b", "--claimed", off)
    assert proc.returncode == 1
    c = check(verdict(tmp_path / "b"), "leaderboard match")
    assert c["status"] == "fail" and c["figures"]["match"] is False
    assert "rounded to the claimed value's 4 decimals is {:.4f}".format(miou) in \
        " ".join(c["evidence"])
    assert "does not match the claimed " + off in proc.stdout


def _codalab(path, rows):
    lines = ["submission_pk,User,b'mIoU',b'Background',"]
    lines += ["{},{},{} ({}),0.9 (1),".format(10 + i, user, value, i + 1)
              for i, (user, value) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _codabench(path, rows):
    lines = ["Username,fact_sheet_answers,Agri(3)-mIoU"]
    lines += ["{}-{},,{}".format(user, 100 + i, value) for i, (user, value) in enumerate(rows)]
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return path


def _plain(path, rows):
    lines = ["Rank,Team,mIoU"] + ["{},{},{}".format(i + 1, user, value)
                                  for i, (user, value) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("export", [_codalab, _codabench, _plain])
def test_the_teams_leaderboard_row_is_read_from_the_platforms_exports(tmp_path, ref, export):
    pkg = package(tmp_path)
    miou = rescored(ref, tmp_path / "final" / "submission" / "results", tmp_path)
    board = export(tmp_path / "board.csv", [("alice", "{:.4f}".format(miou - 0.2)),
                                            ("bob", "0.1000"),
                                            ("alice", "{:.4f}".format(miou))])
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--leaderboard", board, "--team",
               "alice")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verdict(tmp_path / "out")["score"]["claimed"] == "{:.4f}".format(miou)  # best row
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out3", "--leaderboard", board, "--team",
               "carol", real=export is _codalab)
    assert proc.returncode == 3
    assert "team 'carol' is not on the leaderboard" in proc.stderr and "alice" in proc.stderr
    assert not (tmp_path / "out3" / "verdict.json").exists()


def test_a_plain_csv_without_a_team_column_is_the_organizers(tmp_path, ref):
    board = tmp_path / "board.csv"
    board.write_text("who,mIoU\nalice,0.5\nbob,0.4\n")
    proc = run(package(tmp_path), "--ref", ref, "--out", tmp_path / "out", "--leaderboard",
               board, "--team", "alice")
    assert proc.returncode == 3
    assert "is a plain CSV whose header names no team column (one of team, team name, user, " \
        "username, participant, model, name): 'who,mIoU'" in proc.stderr


def test_each_missing_part_is_named(tmp_path, ref):
    pkg = package(tmp_path, models=False, report=None, code=False)
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out")
    assert proc.returncode == 1
    c = check(verdict(tmp_path / "out"), "layout")
    assert c["status"] == "fail"
    for part in ("submission/code/", "submission/models/", "submission/challenge_report.pdf"):
        assert part in c["summary"], c["summary"]
    assert check(verdict(tmp_path / "out"), "parameters")["status"] == "fail"


@pytest.mark.compat
def test_a_hostile_package_is_refused_by_name_and_nothing_lands_outside_out(tmp_path, ref):
    pkg = tmp_path / "evil.zip"
    with zipfile.ZipFile(str(pkg), "w") as zf:
        zf.writestr("submission/results/x.png", b"x")
        zf.writestr("../../escaped.txt", b"gotcha")
    before = sorted(os.listdir(str(tmp_path)))
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", real=True)
    assert proc.returncode == 1
    c = check(verdict(tmp_path / "out"), "package")
    assert c["status"] == "fail" and "../../escaped.txt" in c["summary"]
    assert sorted(os.listdir(str(tmp_path))) == sorted(before + ["out"])
    assert not (tmp_path.parent / "escaped.txt").exists()
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["verdict.html", "verdict.json"]


def _encrypted(tmp_path):
    path = package(tmp_path)
    patch_zip(path, 6, struct.pack("<H", 1))            # general purpose flag: encrypted
    return path, "is encrypted (password-protected)"


def _bomb(tmp_path):
    path = tmp_path / "final.zip"
    with zipfile.ZipFile(str(path), "w", zipfile.ZIP_STORED) as zf:
        for k in range(5):
            zf.writestr("submission/results/z{}.png".format(k), bytes(10))
    patch_zip(path, 22, struct.pack("<I", 0xFFFFFFF0))  # each declares 4 GiB: 20 GiB in all
    return path, "it unpacks to more than 17,179,869,184 bytes (16 GiB), the limit"


def _absolute(tmp_path):
    path = package(tmp_path)
    with zipfile.ZipFile(str(path), "a") as zf:   # ZipInfo keeps the leading / as given
        zf.writestr(zipfile.ZipInfo(str(tmp_path / "escaped_abs.txt")), b"gotcha")
    return path, "'{}' points outside the archive".format(tmp_path / "escaped_abs.txt")


@pytest.mark.compat
@pytest.mark.parametrize("build", [_encrypted, _bomb, _absolute])
def test_every_hostile_zip_is_refused_by_name_before_anything_is_written(tmp_path, ref, build):
    pkg, words = build(tmp_path)
    before = sorted(os.listdir(str(tmp_path)))
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    c = check(verdict(tmp_path / "out"), "package")
    assert c["status"] == "fail" and words in c["summary"], c["summary"]
    assert "final.zip cannot be unpacked safely" in c["summary"]
    assert sorted(os.listdir(str(tmp_path))) == sorted(before + ["out"])
    assert sorted(os.listdir(str(tmp_path / "out"))) == ["verdict.html", "verdict.json"]


def test_links_and_special_files_are_never_followed_or_opened(tmp_path, ref):
    """A folder package: a link to a real checkpoint and a FIFO in models/ are named, not
    counted (a FIFO opened for reading would block the command forever). A zip's link entry
    is unpacked as the plain file zipfile makes of it, holding the target's name (text): never
    a link."""
    pkg = package(tmp_path, as_zip=False)
    models = pkg / "submission" / "models"
    os.symlink(os.path.join(FIXTURES, "state_dict.pth"), str(models / "linked.pth"))
    os.mkfifo(str(models / "pipe.pt"))
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", real=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = verdict(tmp_path / "out")
    files = {f["path"]: f for f in doc["parameters"]["files"]}
    assert files["models/linked.pth"]["reason"] == \
        "a symbolic link, not a regular file: never followed or read"
    assert files["models/pipe.pt"]["reason"] == \
        "a FIFO (named pipe), not a regular file: never followed or read"
    assert doc["parameters"]["counted"] == COUNTS["training_checkpoint.ckpt"]["parameters"]
    assert doc["parameters"]["complete"] is False and doc["warnings"] == ["parameters"]
    zipped = package(tmp_path, name="z")
    with zipfile.ZipFile(str(zipped), "a") as zf:
        info = zipfile.ZipInfo("submission/models/link.pth")
        info.create_system = 3                               # unix: the mode below is read
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, os.path.join(FIXTURES, "state_dict.pth"))
    proc = run(zipped, "--ref", ref, "--out", tmp_path / "out2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = verdict(tmp_path / "out2")
    files = {f["path"]: f for f in doc["parameters"]["files"]}
    # read by its content, the target's name: text, whatever the entry is called
    assert (files["models/link.pth"]["status"], files["models/link.pth"]["reason"]) == \
        ("ignored", "not a model file: text")
    assert doc["parameters"]["counted"] == COUNTS["training_checkpoint.ckpt"]["parameters"]


@pytest.mark.compat
def test_a_model_whose_pickle_would_run_code_fails_and_nothing_runs(tmp_path, ref):
    marker = tmp_path / "pwned"
    pkg = package(tmp_path, model_file=None, as_zip=False)
    w = torch_files.T("0", (2, 2))
    torch_files.write(str(pkg / "submission" / "models" / "final.pth"), torch_files.state_dict(
        [("w", w.pickle()), ("x", torch_files.calls("os", "system", "touch " + str(marker)))]),
        torch_files.records_for([w]))
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", real=True)
    assert proc.returncode == 1
    c = check(verdict(tmp_path / "out"), "parameters")
    assert c["status"] == "fail" and "os.system" in c["summary"]
    files = verdict(tmp_path / "out")["parameters"]["files"]
    assert files[0]["status"] == "refused" and files[0]["path"] == "models/final.pth"
    assert not marker.exists()


def test_the_limit_and_an_incomplete_count(tmp_path, ref):
    pkg = package(tmp_path)
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--max-params", "319")
    assert proc.returncode == 1
    c = check(verdict(tmp_path / "out"), "parameters")
    assert c["status"] == "fail" and "320 parameters counted, above the limit of 319" in \
        c["summary"]
    pkg2 = package(tmp_path, name="f2", model_file="scripted.pt")
    shutil.copy(os.path.join(FIXTURES, "state_dict.pth"), str(tmp_path / "f2" / "submission" /
                                                             "models"))
    pkg2 = package(tmp_path, name="f3", model_file="scripted.pt", as_zip=False)
    shutil.copy(os.path.join(FIXTURES, "state_dict.pth"), str(pkg2 / "submission" / "models"))
    proc = run(pkg2, "--ref", ref, "--out", tmp_path / "out2")
    assert proc.returncode == 0, proc.stdout
    doc = verdict(tmp_path / "out2")
    assert doc["parameters"]["complete"] is False and doc["warnings"] == ["parameters"]
    assert "INCOMPLETE" in proc.stdout and "TorchScript" in json.dumps(doc)
    assert "VALID: no rule is broken (the parameter count is incomplete: 1 file not counted; " \
        "warnings: parameters" in proc.stdout
    assert "the parameter count is incomplete: 1 file not counted" in \
        (tmp_path / "out2" / "verdict.html").read_text()


def _change(folder, image, pixels):
    path = os.path.join(str(folder), image + ".png")
    a = np.array(Image.open(path))
    flat = a.reshape(-1)
    flat[:pixels] = (flat[:pixels] + 1) % 9
    Image.fromarray(a).save(path)


def test_results_that_differ_from_the_scored_submission_are_listed(tmp_path, ref):
    pkg = package(tmp_path)
    scored = predictions(tmp_path / "scored_zip")
    _change(scored, SMALL_IDS[1], 7)
    zipped = tmp_path / "scored.zip"
    with zipfile.ZipFile(str(zipped), "w") as zf:
        for n in sorted(os.listdir(str(scored))):
            zf.write(os.path.join(str(scored), n), n)
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--leaderboard-submission", zipped)
    assert proc.returncode == 1
    c = check(verdict(tmp_path / "out"), "leaderboard submission")
    assert c["status"] == "fail"
    assert c["figures"]["differing_images"] == [{"image": SMALL_IDS[1], "pixels": 7,
                                                 "of": 320, "note": ""}]
    assert "{}: 7 of 320 pixels differ".format(SMALL_IDS[1]) in c["evidence"]


def test_a_reproduction_beyond_the_tolerance_fails_with_its_interval(tmp_path, ref):
    pkg = package(tmp_path)
    rep = predictions(tmp_path / "rep", seed=2)
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--reproduced", rep)
    assert proc.returncode == 1
    doc = verdict(tmp_path / "out")
    r = doc["reproduction"]
    results_miou = rescored(ref, tmp_path / "final" / "submission" / "results", tmp_path)
    rep_miou = rescored(ref, rep, tmp_path / "x")
    assert r["results_score"] == results_miou and r["score"] == rep_miou
    assert abs(r["difference"] - (rep_miou - results_miou)) < 2e-10
    assert r["reproduced"] is False
    low, high = r["difference_ci"]
    assert low <= high and r["resamples"] == 1000
    # The interval is compare.py's for the same pair (the same paired bootstrap, the same
    # images drawn for both): the oracle is that command on the two folders.
    code, _, err = run_main(compare_cli.main, ["--ref", ref, "--out", tmp_path / "cmp", "-q",
                                               "--workers", "1",
                                               tmp_path / "final" / "submission" / "results",
                                               rep])
    assert code == 0, err
    pair = [p for p in json.load(open(str(tmp_path / "cmp" / "comparison.json")))["pairs"]
            if p["a"] == "rep"][0]
    assert r["difference_ci"] == [round(v, 10) for v in pair["diff_ci"]]
    assert r["difference"] == round(pair["diff"], 10)
    assert check(doc, "reproduction")["status"] == "fail"
    # a tolerance that covers the difference: reproduced
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out2", "--reproduced", rep,
               "--tolerance", str(abs(r["difference"]) + 1e-9))
    assert proc.returncode == 0 and verdict(tmp_path / "out2")["reproduction"]["reproduced"]


def test_broken_results_and_a_report_that_is_no_pdf(tmp_path, ref):
    pkg = package(tmp_path, report=b"just text", as_zip=False)
    bad = pkg / "submission" / "results" / (SMALL_IDS[0] + ".png")
    Image.fromarray(np.full(SMALL_SIZE, 9, np.uint8)).save(str(bad))
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--claimed", "0.5")
    assert proc.returncode == 1
    doc = verdict(tmp_path / "out")
    c = check(doc, "results")
    assert c["status"] == "fail" and "outside the class ids" in c["summary"]
    assert any(SMALL_IDS[0] in e for e in c["evidence"])
    assert check(doc, "leaderboard match")["status"] == "not-checked"
    assert check(doc, "report")["status"] == "fail"


@pytest.mark.parametrize("args,words", [
    (["--leaderboard", "x.csv"], "--leaderboard and --team go together"),
    (["--claimed", "sixty"], "--claimed 'sixty'"),
    (["--claimed", "0.6", "--leaderboard", "x.csv", "--team", "a"], "not both"),
    (["--max-params", "0"], "--max-params must be a positive integer"),
    (["--tolerance", "-0.01"], "--tolerance must be a non-negative number"),
    (["--tolerance", "nan"], "--tolerance must be a non-negative number"),
    (["--table", "2"], "--table N (a positive integer) picks one table of a CodaLab export"),
])
def test_a_bad_command_line_is_exit_2_in_one_line(tmp_path, ref, args, words):
    proc = run(tmp_path, "--ref", ref, "--out", tmp_path / "out", *args,
               real=args[0] == "--leaderboard")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr


def test_a_broken_reference_is_exit_3(tmp_path):
    ref = tmp_path / "ref"
    (ref / "boundaries").mkdir(parents=True)
    (ref / "config.yaml").write_text("final_submission:\n  max_params: lots\n")
    proc = run(package(tmp_path), "--ref", ref, "--out", tmp_path / "out", real=True)
    assert proc.returncode == 3
    assert "REFERENCE" in proc.stderr and "max_params must be a positive integer" in proc.stderr


def test_the_rules_come_from_the_reference_config(tmp_path, ref):
    with open(os.path.join(ref, "config.yaml"), "w") as f:
        f.write("final_submission:\n  max_params: 100\n  report: method.pdf\n")
    pkg = package(tmp_path)
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out")
    assert proc.returncode == 1
    doc = verdict(tmp_path / "out")
    assert doc["rules"]["max_params"] == 100 and doc["parameters"]["limit"] == 100
    assert "method.pdf (the method's report) is missing" in check(doc, "layout")["summary"]


def test_a_codalab_export_with_several_tables_needs_table(tmp_path, ref):
    pkg = package(tmp_path)
    miou = rescored(ref, tmp_path / "final" / "submission" / "results", tmp_path)
    one = _codalab(tmp_path / "a.csv", [("alice", "0.1111"), ("bob", "0.2000")]).read_text()
    two = _codalab(tmp_path / "b.csv", [("alice", "{:.4f}".format(miou)),
                                        ("bob", "0.2000")]).read_text()
    board = tmp_path / "two.csv"
    board.write_text(one + two)
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--leaderboard", board, "--team",
               "alice")
    assert proc.returncode == 3 and "choose one with --table N" in proc.stderr
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--leaderboard", board, "--team",
               "alice", "--table", "2")
    assert proc.returncode == 0, proc.stderr
    assert verdict(tmp_path / "out")["score"]["claimed"] == "{:.4f}".format(miou)


def test_parts_at_the_top_and_a_zip_of_a_folder(tmp_path, ref):
    pkg = package(tmp_path, as_zip=False)
    flat = tmp_path / "flat"
    shutil.copytree(str(pkg / "submission"), str(flat))
    proc = run(flat, "--ref", ref, "--out", tmp_path / "out")
    assert proc.returncode == 0
    c = check(verdict(tmp_path / "out"), "layout")
    assert c["status"] == "warn" and "no submission/ folder" in c["summary"]
    wrapped = tmp_path / "wrapped.zip"
    with zipfile.ZipFile(str(wrapped), "w") as zf:
        for folder, _, files in os.walk(str(pkg)):
            for f in files:
                full = os.path.join(folder, f)
                zf.write(full, "team_final/" + os.path.relpath(full, str(pkg)))
    proc = run(wrapped, "--ref", ref, "--out", tmp_path / "out2")
    assert proc.returncode == 0, proc.stdout
    assert check(verdict(tmp_path / "out2"), "layout")["summary"].startswith(
        "team_final/submission/ holds")


@pytest.mark.parametrize("block,words", [
    ("  colour: blue\n", "unknown key 'colour'"),
    ("  tolerance: -1\n", "tolerance must be a non-negative number"),
    ("  models: ../up\n", "models must be a plain name"),
])
def test_bad_rules_in_the_reference_are_the_organizers(tmp_path, ref, block, words):
    with open(os.path.join(ref, "config.yaml"), "w") as f:
        f.write("final_submission:\n" + block)
    proc = run(package(tmp_path), "--ref", ref, "--out", tmp_path / "out")
    assert proc.returncode == 3 and words in proc.stderr, proc.stderr


def test_a_task_without_images_is_refused(tmp_path):
    from conftest import VQA_REF
    proc = run(package(tmp_path), "--ref", VQA_REF, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert "verify.py verifies final submissions of image tasks" in proc.stderr


def test_an_empty_models_folder_is_named(tmp_path, ref):
    pkg = package(tmp_path, model_file=None, as_zip=False)   # a zip holds no empty folder
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out")
    assert proc.returncode == 1
    doc = verdict(tmp_path / "out")
    assert "submission/models/ (the pretrained and final models) is empty" in \
        check(doc, "layout")["summary"]
    assert check(doc, "parameters")["summary"] == \
        "no model file found: models/ must hold the final model"


def test_a_reproduction_the_scorer_would_refuse_fails_naming_the_problem(tmp_path, ref):
    pkg = package(tmp_path)
    rep = predictions(tmp_path / "rep")
    os.remove(str(rep / (SMALL_IDS[2] + ".png")))
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--reproduced", rep)
    assert proc.returncode == 1
    c = check(verdict(tmp_path / "out"), "reproduction")
    assert c["status"] == "fail" and "would be refused by the scoring program" in c["summary"]
    assert any(SMALL_IDS[2] in e for e in c["evidence"])
    assert "  FAIL  reproduction" in proc.stdout and SMALL_IDS[2] in proc.stdout


def test_every_path_is_checked_before_any_work(tmp_path, ref):
    proc = run(package(tmp_path), "--ref", ref, "--out", tmp_path / "out", "--reproduced",
               tmp_path / "nowhere")
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("rescored,claimed,match,shown", [
    (0.61328837, "0.6133", True, "0.6133"),     # the example
    (0.61328837, "0.6134", False, "0.6133"),
    (0.61324, "0.6133", False, "0.6132"),
    (0.61328837, "0.613", True, "0.613"),
    (0.61328837, "0.61328837", True, "0.61328837"),
    (0.61328837, "0.6132883700", True, "0.6132883700"),
    (0.61328837, "1", True, "1"),               # a leaderboard showing no decimals
    (0.61328837, "61.33", False, "0.61"),
])
def test_the_rounding_rule(rescored, claimed, match, shown):
    from organizing.verify import leaderboard
    m = leaderboard.compare(rescored, leaderboard.claimed_value(claimed))
    assert (m.match, m.rescored_shown) == (match, shown)
    assert m.rule.startswith("the rescored value {!r} rounded to the claimed value's".format(
        round(rescored, 10)))
    assert m.rule.endswith("(a percentage? the leaderboard shows fractions)") == \
        (claimed == "61.33")


def test_the_leaderboard_submission_is_compared_by_content_image_by_image(tmp_path, ref):
    """A re-encoded PNG is the same prediction; an image missing from the platform's zip and
    one of another size are named, each with its note."""
    pkg = package(tmp_path, as_zip=False)
    results = pkg / "submission" / "results"
    scored = tmp_path / "scored"
    shutil.copytree(str(results), str(scored))
    same = str(scored / (SMALL_IDS[0] + ".png"))
    before = open(same, "rb").read()
    Image.open(same).save(same, compress_level=0)           # other bytes, same labels
    assert open(same, "rb").read() != before
    os.remove(str(scored / (SMALL_IDS[1] + ".png")))
    h, w = SMALL_SIZE
    Image.fromarray(np.zeros((h, w + 1), np.uint8)).save(str(scored / (SMALL_IDS[2] + ".png")))
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out", "--leaderboard-submission", scored)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    c = check(verdict(tmp_path / "out"), "leaderboard submission")
    assert c["status"] == "fail"
    assert c["summary"] == "2 of {} images differ from the submission the platform " \
        "scored".format(len(SMALL_IDS))
    assert c["figures"]["differing_images"] == [
        {"image": SMALL_IDS[1], "pixels": 0, "of": 0,
         "note": "missing in the leaderboard submission"},
        {"image": SMALL_IDS[2], "pixels": h * w, "of": h * w,
         "note": "sizes differ ({}x{} and {}x{})".format(w, h, w + 1, h)}]
    assert c["figures"]["compared"] == len(SMALL_IDS) - 1
    assert c["figures"]["identical"] == len(SMALL_IDS) - 2
    assert "{}: missing in the leaderboard submission".format(SMALL_IDS[1]) in c["evidence"]


@pytest.mark.compat
def test_a_planetscapes_semantic_package_is_verified_by_its_own_task(tmp_path):
    """Any image task the reference names: Planetscapes semantic labeling's results/ scored by
    its own engine (the oracle: score.py on the same predictions), its ranking score compared
    and reproduced."""
    from conftest import SEM_KIT, SEM_REF
    pkg = package(tmp_path, results=False, as_zip=False)
    shutil.copytree(os.path.join(SEM_KIT, "sample_submission"),
                    str(pkg / "submission" / "results"))
    code, _, err = run_main(score_cli.main, ["--ref", SEM_REF, "--res",
                                             pkg / "submission" / "results", "--out",
                                             tmp_path / "scored", "-q", "--workers", "1"])
    assert code == 0, err
    iou = json.load(open(str(tmp_path / "scored" / "scores.json")))["iou_class"]
    proc = run(pkg, "--ref", SEM_REF, "--out", tmp_path / "out", "--claimed",
               "{:.4f}".format(iou), "--reproduced", pkg / "submission" / "results", real=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = verdict(tmp_path / "out")
    assert doc["task"] == "planetscapes-semantic" and doc["key"] == "iou_class"
    assert doc["score"]["results"] == iou and doc["score"]["match"] is True
    assert doc["reproduction"]["reproduced"] is True and doc["reproduction"]["resamples"] == 1000
    assert "Planetscapes pixel-level semantic labeling" in proc.stdout


def test_a_duplicate_ema_only_file_is_counted_once_and_the_page_says_both(tmp_path, ref):
    pkg = package(tmp_path, model_file=None, as_zip=False)
    models = pkg / "submission" / "models"
    w = torch_files.T("0", (3, 2))
    torch_files.write(str(models / "a.pth"), torch_files.state_dict(
        [("state_dict_ema", torch_files.dict_of([(torch_files.text("conv.weight"),
                                                  w.pickle())]))]),
        torch_files.records_for([w]))
    shutil.copy(str(models / "a.pth"), str(models / "copy.pth"))
    proc = run(pkg, "--ref", ref, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = verdict(tmp_path / "out")
    assert doc["parameters"]["counted"] == 6
    files = {f["path"]: f for f in doc["parameters"]["files"]}
    assert files["models/copy.pth"]["duplicate_of"] == "models/a.pth"
    assert "; the same file as models/a.pth, counted once; it holds an EMA copy" in \
        " ".join(check(doc, "parameters")["evidence"])
    page = (tmp_path / "out" / "verdict.html").read_text()
    assert "the EMA copy is the model, counted; same file as models/a.pth" in page


def test_a_package_zip_declaring_too_many_entries_is_refused_before_they_are_read(tmp_path, ref,
                                                                                 monkeypatch):
    from final_package.params import bounds
    monkeypatch.setattr(bounds, "MAX_ZIP_ENTRIES", 2)
    proc = run(package(tmp_path), "--ref", ref, "--out", tmp_path / "out")
    assert proc.returncode == 1
    c = check(verdict(tmp_path / "out"), "package")
    assert c["summary"].startswith("the final package final.zip cannot be unpacked safely: it "
                                   "declares ") and "at most 2 are accepted" in c["summary"]
