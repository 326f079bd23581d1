"""The dry run end to end, unpacking as each platform does: a good submission, a zip wrapped in a
folder, a macOS zip, a broken submission; and the worker behaviours it must reproduce (time limit,
score parsing, program layout)."""
import datetime
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from conftest import KIT, ROOT, TESTS as HERE  # noqa: E402
for path in (HERE, KIT):
    if path not in sys.path:
        sys.path.insert(0, path)

import dry_run  # noqa: E402
import agrivision_data as rawdata  # noqa: E402
from platforms import yaml_text  # noqa: E402
from platforms.registry import MODELS  # noqa: E402
from scoring import zips  # noqa: E402

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A 64 x 64 reference of 3 images and a good folder of predictions for it."""
    tmp = tmp_path_factory.mktemp("dryrun")
    rng = np.random.RandomState(5)
    ids = ["DRY{}_0-0-512-512".format(i) for i in range(3)]
    for image_id in ids:
        boundary, mask, labels, storm, pred = rawdata.random_image(rng, 64, 64)
        rawdata.write_reference(str(tmp / "ref"), image_id, boundary, mask, labels, storm)
        rawdata.save(str(tmp / "preds" / (image_id + ".png")), pred)
    return tmp, ids


def make_zip(path, files):
    """files: {name in zip: bytes}"""
    with zipfile.ZipFile(str(path), "w") as zf:
        for name, blob in files.items():
            zf.writestr(name, blob)
    return str(path)


def pngs(folder):
    return {n: open(os.path.join(str(folder), n), "rb").read() for n in sorted(os.listdir(str(folder)))}


def dry(capsys, *args):
    code = dry_run.main([str(a) for a in args] + ["--quiet"])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_good_zip_scores_on_both_platforms(data, tmp_path, capsys):
    tmp, _ = data
    sub = make_zip(tmp_path / "sub.zip", pngs(tmp / "preds"))
    code, out = dry(capsys, sub, tmp / "ref")
    assert code == 0, out
    assert out.count("Status: Finished") == 2
    assert "scores read from scores.txt" in out          # CodaLab reads scores.txt
    assert "scores read from scores.json" in out         # Codabench prefers scores.json
    assert out.count("Leaderboard row:") == 2 and "mIoU" in out and "Weed cluster" in out
    assert "RESULT: the submission would be scored on CodaLab (v1 worker) and Codabench." in out


def test_the_row_shows_the_scorers_values(data, tmp_path, capsys):
    tmp, _ = data
    outcome = dry_run.run_platform(MODELS["codalab"], str(tmp / "preds"), str(tmp / "ref"),
                                   dry_run.find_program(), dry_run.find_phase_info()[0], 60.0,
                                   None, False, lambda line: None)
    assert outcome.finished and outcome.complete
    assert 0.0 <= outcome.scores["miou"] <= 1.0
    # Every column filled; beside them only the confidence interval (no column by default).
    columns = {c["key"] for c in dry_run.find_phase_info()[0]["columns"]}
    assert set(outcome.scores) == columns | {"miou_ci_low", "miou_ci_high"}


def test_zip_wrapped_in_a_folder_is_kept_as_a_folder_and_scored(data, tmp_path, capsys):
    tmp, _ = data
    sub = make_zip(tmp_path / "sub.zip", {"predictions/" + n: b for n, b in pngs(tmp / "preds").items()})
    code, out = dry(capsys, sub, tmp / "ref")
    assert code == 0, out
    assert out.count("0 files and 1 folder at the top: predictions/") == 1   # CodaLab keeps it
    # Codabench adds its metadata file: counted apart from the participant's files (issue 32).
    assert "0 files and 1 folder at the top (+ Codabench's own metadata file): predictions/\n" \
        in out
    assert "moved the folder" not in out


def test_macos_zip_scores(data, tmp_path, capsys):
    tmp, _ = data
    files = {"preds/" + n: b for n, b in pngs(tmp / "preds").items()}
    files.update({"__MACOSX/preds/._" + n: b"\x00\x05\x16\x07" for n in pngs(tmp / "preds")})
    files["preds/.DS_Store"] = b"\x00\x00\x00\x01Bud1"
    sub = make_zip(tmp_path / "mac.zip", files)
    code, out = dry(capsys, sub, tmp / "ref")
    assert code == 0, out
    assert out.count("Status: Finished") == 2


def test_a_folder_submission_scores(data, capsys):
    tmp, _ = data
    code, out = dry(capsys, tmp / "preds", tmp / "ref", "--platform", "codabench")
    assert code == 0, out
    assert "=== Codabench ===" in out and "=== CodaLab" not in out


def test_broken_submission_shows_the_scorers_message_and_fails(data, tmp_path, capsys):
    tmp, ids = data
    files = pngs(tmp / "preds")
    bad = tmp_path / "bad.png"
    rawdata.save(str(bad), np.full((64, 64), 9))
    files[ids[1] + ".png"] = bad.read_bytes()
    sub = make_zip(tmp_path / "broken.zip", files)
    code, out = dry(capsys, sub, tmp / "ref")
    assert code == dry_run.EXIT_FAILED, out
    assert out.count("Status: Failed") == 2
    assert out.count("The error text the participant sees") == 2
    assert out.count(ids[1] + ".png: 4096 pixels hold values 9") == 2
    assert "exit status 1 after" in out
    assert "RESULT: the submission would FAIL on CodaLab (v1 worker), Codabench." in out


def _program(folder, script, command="python3 $program/run.py $input $output"):
    os.makedirs(str(folder))
    (folder / "metadata").write_text("command: {}\ndescription: test\n".format(command))
    (folder / "run.py").write_text(script)
    return str(folder)


def test_the_time_limit_kills_the_program_with_the_platforms_message(data, tmp_path, capsys):
    tmp, _ = data
    program = _program(tmp_path / "slow", "import time\ntime.sleep(30)\n")
    code, out = dry(capsys, tmp / "preds", tmp / "ref", "--program", program, "--time-limit", 1)
    assert code == dry_run.EXIT_FAILED
    assert "Execution time limit exceeded!" in out                       # CodaLab's words
    assert "Execution Time Limit exceeded. Limit was 1 seconds" in out   # Codabench's
    assert out.count("exit status - (killed)") == 2


SCORES_TXT_ONLY = """import os, sys
with open(os.path.join(sys.argv[2], "scores.txt"), "w") as f:
    f.write({text!r})
"""


def test_scores_are_read_as_each_platform_reads_them(data, tmp_path, capsys):
    """`1e-3` is a float to CodaLab's float() but a string to Codabench's YAML parser; an
    unknown key is dropped and its column stays empty."""
    tmp, _ = data
    program = _program(tmp_path / "p", SCORES_TXT_ONLY.format(text="miou: 1e-3\nother: 0.5\n"))
    code, out = dry(capsys, tmp / "preds", tmp / "ref", "--program", program)
    assert code == dry_run.EXIT_FAILED
    assert "the value of miou is '1e-3', not a finite number" in out          # Codabench
    assert "Columns left empty (no such key in the scores): iou_background" in out  # CodaLab
    assert "Scores dropped (no such leaderboard column): other" in out


def test_a_scores_line_with_two_colons_fails_on_codalab(data, tmp_path, capsys):
    tmp, _ = data
    program = _program(tmp_path / "p", SCORES_TXT_ONLY.format(text="miou: 0.5 (time: 3s)\n"))
    code, out = dry(capsys, tmp / "preds", tmp / "ref", "--program", program,
                    "--platform", "codalab")
    assert code == dry_run.EXIT_FAILED
    assert "exactly one colon" in out


def test_writing_output_metadata_fails_on_codabench(data, tmp_path, capsys):
    tmp, _ = data
    script = ("import os, sys\nopen(os.path.join(sys.argv[2], 'metadata'), 'w').write('x')\n"
              "open(os.path.join(sys.argv[2], 'scores.json'), 'w').write('{\"miou\": 0.5}')\n")
    program = _program(tmp_path / "p", script)
    code, out = dry(capsys, tmp / "preds", tmp / "ref", "--program", program,
                    "--platform", "codabench")
    assert code == dry_run.EXIT_FAILED
    assert "already contains a metadata file" in out


def test_a_program_zipped_as_a_folder_runs_on_codalab_only(data, tmp_path, capsys):
    """CodaLab v1 moves a folder holding `metadata` up; Codabench does not."""
    tmp, _ = data
    program_dir = os.path.join(ROOT, "scoring_program")
    archive = tmp_path / "program.zip"
    with zipfile.ZipFile(str(archive), "w") as zf:
        for dirpath, dirnames, filenames in os.walk(program_dir):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in filenames:
                full = os.path.join(dirpath, name)
                zf.write(full, "scoring_program/" + os.path.relpath(full, program_dir))
    code, out = dry(capsys, tmp / "preds", tmp / "ref", "--program", archive)
    assert code == dry_run.EXIT_FAILED
    assert "CodaLab moved the folder scoring_program/ of the scoring program up" in out
    assert "the scoring program has no metadata file at its root" in out
    assert out.count("Status: Finished") == 1


def test_usage_errors_exit_2(data, capsys):
    tmp, _ = data
    code, out = dry(capsys, tmp / "nothing-here.zip", tmp / "ref")
    assert code == dry_run.EXIT_USAGE and "no such file or folder" in out
    code, out = dry(capsys, tmp / "preds")
    assert code == dry_run.EXIT_USAGE and "give the reference labels" in out


def test_simple_yaml_fallback_reads_numbers_as_pyyaml_does():
    parsed = yaml_text.simple_yaml("a: 0.5\nb: 1e-3\nc: 3\nd: .nan\ne: nan\n")
    assert parsed["a"] == 0.5 and parsed["b"] == "1e-3" and parsed["c"] == 3
    assert parsed["d"] != parsed["d"] and parsed["e"] == "nan"


@pytest.mark.skipif(shutil.which("vermin") is None and not os.path.exists(
    os.path.join(os.path.dirname(sys.executable), "vermin")), reason="vermin not installed")
def test_dry_run_runs_on_python_37():
    vermin = shutil.which("vermin") or os.path.join(os.path.dirname(sys.executable), "vermin")
    proc = subprocess.run([vermin, "-q", "--no-tips", "--violations", "-t=3.7-",
                           os.path.join(KIT, "dry_run.py"), os.path.join(KIT, "platforms")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout


def test_a_file_named_metadata_in_the_submission_fails_on_codabench(data, tmp_path, capsys):
    tmp, _ = data
    files = pngs(tmp / "preds")
    files["metadata"] = b"my notes\n"
    sub = make_zip(tmp_path / "sub.zip", files)
    code, out = dry(capsys, sub, tmp / "ref")
    assert code == dry_run.EXIT_FAILED
    assert "the submission has a file `metadata` at its root: Codabench takes it for a code " \
        "submission" in out
    assert out.count("Status: Finished") == 1   # CodaLab scores it (the file is ignored)


def test_works_without_pyyaml(data, monkeypatch, capsys):
    """The starting kit promises numpy and Pillow only: no PyYAML, still a full dry run."""
    tmp, _ = data
    monkeypatch.setattr(yaml_text, "yaml", None)
    code, out = dry(capsys, tmp / "preds", tmp / "ref")
    assert code == 0, out
    assert out.count("Status: Finished") == 2 and "miou: " in out


# --- zips that cannot be unpacked: a submission problem (exit 1, a message), never a traceback --

def _patch_headers(path, offset_local, offset_central, value, size=2):
    """Set a field of every local header (PK\\3\\4) and central header (PK\\1\\2) of a zip, to
    make what Python's zipfile cannot write: an encrypted flag, another compression method."""
    data = bytearray(open(str(path), "rb").read())
    for signature, offset in ((b"PK\x03\x04", offset_local), (b"PK\x01\x02", offset_central)):
        at = data.find(signature)
        while at >= 0:
            data[at + offset:at + offset + size] = value.to_bytes(size, "little")
            at = data.find(signature, at + 4)
    open(str(path), "wb").write(bytes(data))
    return str(path)


def _good_zip(data, tmp_path, name="sub.zip", compression=zipfile.ZIP_DEFLATED):
    tmp, _ = data
    path = tmp_path / name
    with zipfile.ZipFile(str(path), "w", compression) as zf:
        for n, blob in pngs(tmp / "preds").items():
            zf.writestr(n, blob)
    return path


def _fails_to_unpack(capsys, data, sub, phrase):
    tmp, _ = data
    code, out = dry(capsys, sub, tmp / "ref")
    assert code == dry_run.EXIT_FAILED, out
    assert out.count("the submission cannot be unpacked:") == 2, out
    assert out.count(phrase) == 2, out
    assert "Traceback" not in out and "running:" not in out
    return out


def test_an_encrypted_member_is_a_submission_problem(data, tmp_path, capsys):
    sub = _patch_headers(_good_zip(data, tmp_path), 6, 8, 0x1)
    _fails_to_unpack(capsys, data, sub, "is encrypted (password-protected)")


def test_deflate64_is_a_submission_problem(data, tmp_path, capsys):
    sub = _patch_headers(_good_zip(data, tmp_path), 8, 10, 9)
    _fails_to_unpack(capsys, data, sub, "is compressed with Deflate64")


def test_a_bad_crc_is_a_submission_problem(data, tmp_path, capsys):
    path = _good_zip(data, tmp_path, compression=zipfile.ZIP_STORED)
    blob = bytearray(path.read_bytes())
    at = blob.find(b"IDAT")        # inside the first stored PNG: the CRC no longer matches
    blob[at + 8] ^= 0xFF
    path.write_bytes(bytes(blob))
    _fails_to_unpack(capsys, data, str(path), "is corrupt (bad CRC-32")


def test_a_name_too_long_for_the_file_system_is_a_submission_problem(data, tmp_path, capsys):
    files = pngs(data[0] / "preds")
    files["x" * 300 + ".png"] = b"not a png"
    sub = make_zip(tmp_path / "sub.zip", files)
    _fails_to_unpack(capsys, data, sub, "cannot be written (File name too long)")


def test_a_zip_above_the_size_cap_is_refused_before_anything_is_written(data, tmp_path, capsys,
                                                                        monkeypatch):
    """The scorer's own cap (scoring/zips.py), which the dry run applies: moved, it moves."""
    assert zips.MAX_UNPACKED_BYTES == 16 * 1024 ** 3
    sub = _good_zip(data, tmp_path)
    total = sum(i.file_size for i in zipfile.ZipFile(str(sub)).infolist())
    monkeypatch.setattr(zips, "MAX_UNPACKED_BYTES", total - 1)
    _fails_to_unpack(capsys, data, str(sub), "more than")
    monkeypatch.setattr(zips, "MAX_UNPACKED_BYTES", total)
    code, out = dry(capsys, sub, data[0] / "ref")
    assert code == 0, out


def test_a_file_that_is_not_a_zip_is_a_submission_problem(data, tmp_path, capsys):
    sub = tmp_path / "sub.zip"
    sub.write_bytes(b"Rar!\x1a\x07\x00 not a zip")
    _fails_to_unpack(capsys, data, str(sub), "is neither a folder nor a zip file")


def test_a_path_outside_the_archive_is_a_submission_problem(data, tmp_path, capsys):
    files = pngs(data[0] / "preds")
    files["../evil.png"] = b"x"
    sub = make_zip(tmp_path / "sub.zip", files)
    _fails_to_unpack(capsys, data, sub, "points outside the archive")
    assert not (tmp_path / "evil.png").exists()


def test_symlink_entries_never_become_symlinks(data, tmp_path, capsys):
    import stat
    sub = tmp_path / "sub.zip"
    with zipfile.ZipFile(str(sub), "w") as zf:
        for n, blob in pngs(data[0] / "preds").items():
            zf.writestr(n, blob)
        link = zipfile.ZipInfo("notes.txt")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    code, out = dry(capsys, sub, data[0] / "ref", "--keep", tmp_path / "keep")
    assert code == 0, out
    assert out.count("1 symbolic link(s) in the submission unpacked as plain files") == 2
    for platform in ("codalab", "codabench"):
        unpacked = tmp_path / "keep" / platform / "run" / "input" / "res" / "notes.txt"
        assert unpacked.is_file() and not os.path.islink(str(unpacked))
        assert unpacked.read_text() == "/etc/passwd"


# --- what each worker does differently ----------------------------------------------------------

def test_a_zip_inside_the_submission_scores_on_codalab_and_fails_on_codabench(data, tmp_path,
                                                                              capsys):
    inner = _good_zip(data, tmp_path, name="predictions.zip")
    sub = make_zip(tmp_path / "outer.zip", {"predictions.zip": inner.read_bytes()})
    code, out = dry(capsys, sub, data[0] / "ref")
    assert code == dry_run.EXIT_FAILED, out
    assert "CodaLab unpacked predictions.zip inside the submission into the folder predictions/" \
        in out
    assert "Codabench leaves predictions.zip inside the submission packed" in out
    codalab, codabench = out.split("=== Codabench ===")
    assert "Status: Finished" in codalab and "Status: Failed" in codabench
    assert "RESULT: the submission would FAIL on Codabench." in out


@pytest.mark.parametrize("name", ["metadata.yaml", "metadata"])
def test_a_metadata_file_makes_codabench_take_it_for_code(data, tmp_path, capsys, name):
    for text, phrase in (("description: my model\n", "finds no command in it"),
                         ("command: python run.py\n", "with a command ('python run.py')")):
        files = pngs(data[0] / "preds")
        files[name] = text.encode()
        code, out = dry(capsys, make_zip(tmp_path / "sub.zip", files), data[0] / "ref")
        assert code == dry_run.EXIT_FAILED, out
        codalab, codabench = out.split("=== Codabench ===")
        assert "Status: Finished" in codalab, codalab          # CodaLab scores it
        assert "Status: Failed" in codabench and phrase in codabench
        assert "the submission has a file `{}` at its root".format(name) in codabench


def test_a_notes_file_named_metadata_is_scored_on_codalab(data, tmp_path):
    """CodaLab v1's worker (worker.py, get_bundle) takes each other key's ASCII string value
    for a bundle to fetch: the download fails, it swallows that, leaves an empty
    <key>/metadata and an empty temp file in res, and scores. Through the real command, with
    the run folder kept to see what the scorer was given."""
    tmp, _ = data
    files = pngs(tmp / "preds")
    files["metadata"] = "team: ACME\nmodel: unet v2\nyear: 2021\ncaf\u00e9: na\u00efve\n" \
        .encode("utf-8")
    sub = make_zip(tmp_path / "sub.zip", files)
    proc = subprocess.run([sys.executable, os.path.join(KIT, "dry_run.py"), sub,
                           str(tmp / "ref"), "--platform", "codalab", "--quiet", "--keep",
                           str(tmp_path / "keep")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "RESULT: the submission would be scored on CodaLab (v1 worker)." in proc.stdout
    assert "CodaLab: the submission's `metadata` has `team: ACME`; its worker took `team` for " \
           "a further bundle to fetch, the download failed (the worker swallows that), and it " \
           "left an empty team/metadata and an empty tmp" in proc.stdout
    res = tmp_path / "keep" / "codalab" / "run" / "input" / "res"
    top = sorted(os.listdir(str(res)))
    # Not fetched: a number (year), a non-ASCII value (Python 2's PyYAML gives `unicode`).
    assert [n for n in top if not n.endswith(".png")][:3] == ["metadata", "model", "team"]
    temps = [n for n in top if n.startswith("tmp")]
    assert len(temps) == 2 and all(os.path.getsize(str(res / n)) == 0 for n in temps)
    assert os.listdir(str(res / "team")) == ["metadata"]
    assert os.path.getsize(str(res / "team" / "metadata")) == 0
    assert len(top) == 3 + 3 + 2


@pytest.mark.parametrize("notes,phrase", [
    (b"team: ACME: again\n", "that is not valid YAML (mapping values are not allowed here)"),
    (b"weights: model.zip\n", "it unzips the empty file and the run fails"),
    (b"DRY0_0-0-512-512.png: x\n", "which it cannot make (File exists)"),
    (b"paper: https://arxiv.org/abs/2101.00001\n", "fetches that URL or path"),
    (b"2021: ACME\n", "which is not text"),
    (b"team: \xff\n", "that is not UTF-8 text"),
], ids=["not yaml", "a zip", "a name taken", "a url", "a number key", "not utf-8"])
def test_a_metadata_file_fails_on_codalab_where_the_worker_does(data, tmp_path, capsys, notes,
                                                                phrase):
    tmp, _ = data
    files = pngs(tmp / "preds")
    files["metadata"] = notes
    code, out = dry(capsys, make_zip(tmp_path / "sub.zip", files), tmp / "ref",
                    "--platform", "codalab")
    assert code == dry_run.EXIT_FAILED, out
    assert "Status: Failed" in out and phrase in out, out
    assert "Remove metadata from the zip" in out


CWD_SCORES = """import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
where = {"program": 1.0, "run": 0.5}.get(
    "program" if os.getcwd() == here else "run" if os.path.isdir("input") else "", 0.0)
json.dump({"miou": where}, open(os.path.join(sys.argv[2], "scores.json"), "w"))
open(os.path.join(sys.argv[2], "scores.txt"), "w").write("miou: %s\\n" % where)
"""


def test_each_worker_runs_the_command_in_its_own_working_directory(data, tmp_path):
    tmp, _ = data
    program = _program(tmp_path / "p", CWD_SCORES)
    found = {}
    for platform in ("codalab", "codabench"):
        outcome = dry_run.run_platform(MODELS[platform], str(tmp / "preds"), str(tmp / "ref"),
                                       program,
                                       None, 60.0, None, False, lambda line: None)
        found[platform] = outcome.scores["miou"]
    assert found == {"codalab": 0.5, "codabench": 1.0}   # the run folder vs the program folder


def test_codabench_caps_the_time_limit_at_600_s(data, monkeypatch, capsys):
    tmp, _ = data
    phase = dict(dry_run.find_phase_info()[0], execution_time_limit=1200)
    monkeypatch.setattr(dry_run, "find_phase_info", lambda: (phase, "test"))
    code, out = dry(capsys, tmp / "preds", tmp / "ref")
    assert code == 0, out
    codalab, codabench = out.split("=== Codabench ===")
    assert "(time limit 1200 s)" in codalab
    assert "time limit 1200 s capped at 600 s" in codabench and "(time limit 600 s)" in codabench


PAGE_THEN = """import json, os, sys, time
out = sys.argv[2]
json.dump({{"miou": 0.5}}, open(os.path.join(out, "scores.json"), "w"))
open(os.path.join(out, "scores.txt"), "w").write("miou: 0.5\\n")
open(os.path.join(out, "detailed_results.html"), "w").write("<p>final</p>")
time.sleep({wait})
"""


@pytest.mark.parametrize("wait,fate", [(0, "AT RISK"), (3.2, "shown (the page was complete")])
def test_the_v1_watcher_timing_of_the_detailed_page(data, tmp_path, capsys, wait, fate):
    """CodaLab v1 uploads the page only while its watcher runs, which ends about 1 s after the
    program exits: a page written in the last instant may never reach the site."""
    tmp, _ = data
    program = _program(tmp_path / "p", PAGE_THEN.format(wait=wait))
    code, out = dry(capsys, tmp / "preds", tmp / "ref", "--program", program,
                    "--platform", "codalab")
    assert "Detailed results on CodaLab v1: " + fate in out, out


def test_the_submission_goes_to_the_phase_open_now():
    """The phase open now by the platform's rule, else the next to open, else the last."""
    at = datetime.datetime
    codalab, codabench = MODELS["codalab"], MODELS["codabench"]
    v15 = {"phases": {1: {"phasenumber": 1, "label": "A", "start_date": datetime.date(2021, 4, 15)},
                      2: {"phasenumber": 2, "label": "B", "start_date": datetime.date(2021, 6, 6)}}}
    assert codalab.submission_phase(v15, at(2021, 5, 1))["label"] == "A"
    assert codalab.submission_phase(v15, at(2030, 1, 1))["label"] == "B"
    one = {"phases": {1: v15["phases"][1]}, "end_date": "2021-06-05 23:59:59"}
    assert codalab.submission_phase(one, at(2021, 6, 5, 23, 59))["label"] == "A"
    v2 = {"phases": [{"index": 0, "name": "A", "start": "2021-04-15", "end": "2021-06-05 23:59:59"},
                     {"index": 1, "name": "B", "start": "2021-06-06 00:00:00"}]}
    assert codabench.submission_phase(v2, at(2021, 5, 1))["name"] == "A"
    assert codabench.submission_phase(v2, at(2021, 6, 5, 23, 59, 59))["name"] == "A"
    assert codabench.submission_phase(v2, at(2026, 1, 1))["name"] == "B"
    first = {"phases": v2["phases"][:1]}
    assert codabench.submission_phase(first, at(2026, 1, 1))["name"] == "A"  # the last
    # Before the challenge: the phase that opens next (a bundle uploaded ahead of its start).
    assert codabench.submission_phase(v2, at(2021, 1, 1))["name"] == "A"
    assert codalab.submission_phase(v15, at(2021, 1, 1))["label"] == "A"
    later = {"phases": [dict(v2["phases"][0], end="2021-05-01"), v2["phases"][1]]}
    assert codabench.submission_phase(later, at(2021, 5, 15))["name"] == "B"


def test_a_dry_run_taken_out_of_its_kit_says_what_it_needs(tmp_path):
    """dry_run.py stands on the scoring program and the platforms' models beside it (the kit
    ships both): copied alone, one line saying so and exit 2, never a traceback."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(os.path.join(KIT, "dry_run.py"), str(alone))

    def run():
        return subprocess.run([sys.executable, str(alone / "dry_run.py"), "sub.zip", "ref"],
                              capture_output=True, text=True, cwd=str(tmp_path), timeout=120)
    for missing in ("platforms", "scoring"):
        proc = run()
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert "dry_run.py needs the scoring program beside it (scoring_program/" in proc.stderr
        assert "No module named '{}'".format(missing) in proc.stderr, proc.stderr
        if missing == "platforms":
            shutil.copytree(os.path.join(KIT, "platforms"), str(alone / "platforms"),
                            ignore=shutil.ignore_patterns("__pycache__"))
