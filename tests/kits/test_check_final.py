"""The starting kit's check_final.py through the real command: a final package that passes, and
one that breaks every rule it can check without the test labels (each named), a hostile zip, a
model whose pickle would run code (nothing runs), the command line; and the tool in the kit
bundle.sh builds."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

import torch_files
from conftest import AGRIVISION, ROOT
from kits_util import session_kits

pytestmark = pytest.mark.compat

TOOL = os.path.join(ROOT, "kit", "check_final.py")
SAMPLE = os.path.join(AGRIVISION, "starting_kit", "sample_submission")
FIXTURES = os.path.join(ROOT, "tests", "verify", "fixtures")
COUNTS = json.load(open(os.path.join(FIXTURES, "counts.json")))
PDF = b"%PDF-1.7\n1 0 obj << /Type /Pages /Count 2 >> endobj\n%%EOF\n"


def run(*args, tool=TOOL):
    # The repository's kit tools have no manifest beside them (a built kit has): the flagship's.
    extra = ["--manifest", os.path.join(AGRIVISION, "starting_kit", "manifest.json")] \
        if tool == TOOL else []
    return subprocess.run([sys.executable, tool] + [str(a) for a in args] + extra,
                          capture_output=True, text=True, timeout=300)


def final_package(tmp_path, model="state_dict.pth", report=PDF, drop=None):
    top = tmp_path / "pkg" / "submission"
    shutil.copytree(SAMPLE, str(top / "results"))
    if drop:
        os.remove(str(top / "results" / drop))
    (top / "code").mkdir()
    (top / "code" / "train.py").write_text("pass\n")
    (top / "models").mkdir()
    if model:
        shutil.copy(os.path.join(FIXTURES, model), str(top / "models"))
    (top / "challenge_report.pdf").write_bytes(report)
    path = tmp_path / "final_submission.zip"
    with zipfile.ZipFile(str(path), "w", zipfile.ZIP_DEFLATED) as zf:
        for folder, _, files in os.walk(str(tmp_path / "pkg")):
            for f in sorted(files):
                full = os.path.join(folder, f)
                zf.write(full, os.path.relpath(full, str(tmp_path / "pkg")))
    return path


def test_a_good_final_package_is_ready(tmp_path):
    proc = run(final_package(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "READY: " in out and "FAIL" not in out
    assert "{:,} parameters counted, within the limit of 150,000,000".format(
        COUNTS["state_dict.pth"]["parameters"]) in out
    assert "Counting rule:" in out and "2 pages" in out


def test_every_broken_rule_is_named(tmp_path):
    first = sorted(os.listdir(SAMPLE))[0]
    pkg = final_package(tmp_path, model=None, report=b"not a pdf", drop=first)
    w = torch_files.T("0", (2,))
    marker = tmp_path / "ran"
    with zipfile.ZipFile(str(pkg), "a") as zf:
        model = tmp_path / "m.pth"
        torch_files.write(str(model), torch_files.state_dict(
            [("w", w.pickle()), ("p", torch_files.calls("os", "system",
                                                        "touch " + str(marker)))]),
            torch_files.records_for([w]))
        zf.write(str(model), "submission/models/final.pth")
    proc = run(pkg)
    assert proc.returncode == 1
    out = proc.stdout
    assert "NOT READY: 3 checks failed (results, parameters, report)" in out
    assert first[:-4] in out                      # the image without a prediction
    assert "os.system" in out and "nothing was run" in out
    assert "is not a PDF" in out
    assert not marker.exists()


def test_the_limit_and_a_hostile_zip(tmp_path):
    proc = run(final_package(tmp_path), "--max-params", "10")
    assert proc.returncode == 1 and "above the limit of 10" in proc.stdout
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(str(evil), "w") as zf:
        zf.writestr("../outside.txt", b"x")
    proc = run(evil)
    assert proc.returncode == 1
    assert "cannot be unpacked safely" in proc.stdout and "../outside.txt" in proc.stdout
    assert not (tmp_path.parent / "outside.txt").exists()


def test_a_bad_command_line_is_exit_2(tmp_path):
    proc = run(tmp_path, "--max-params", "0")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    proc = run(tmp_path / "nothing.zip")
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr


def test_the_built_kit_carries_it(tmp_path_factory, tmp_path):
    kits = session_kits(tmp_path_factory)
    for track in ("supervised", "semi-supervised"):
        tool = os.path.join(kits, track, "check_final.py")
        assert os.path.isfile(tool), track
    proc = run(final_package(tmp_path), tool=os.path.join(kits, "supervised", "check_final.py"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _lay_out_kit(kit):
    """A kit as the bundle lays it out: the tools, final_package/, the program, the manifest."""
    for name in ("check_final.py", "find_scoring.py"):
        shutil.copy(os.path.join(ROOT, "kit", name), str(kit))
    shutil.copy(os.path.join(AGRIVISION, "starting_kit", "manifest.json"), str(kit))
    os.symlink(os.path.join(ROOT, "kit", "final_package"), str(kit / "final_package"))
    os.symlink(os.path.join(ROOT, "scoring_program"), str(kit / "scoring_program"))


def test_the_rules_of_the_kits_reference_config(tmp_path):
    kit = tmp_path / "kit"
    kit.mkdir()
    _lay_out_kit(kit)
    (kit / "reference_config.yaml").write_text("storm_damage: background\nfinal_submission:\n"
                                               "  max_params: 300\n")
    proc = run(final_package(tmp_path), tool=str(kit / "check_final.py"))
    assert proc.returncode == 1 and "above the limit of 300" in proc.stdout
    (kit / "reference_config.yaml").write_text("final_submission:\n  max_params: many\n")
    proc = run(final_package(tmp_path / "b"), tool=str(kit / "check_final.py"))
    assert proc.returncode == 3 and "max_params must be a positive integer" in proc.stderr


def test_without_pyyaml_the_defaults_apply_and_it_says_so(tmp_path):
    """The kit's checkers need only numpy and Pillow: without PyYAML, reference_config.yaml's
    rules cannot be read, and the challenge's defaults apply, said in one note."""
    kit = tmp_path / "kit"
    kit.mkdir()
    _lay_out_kit(kit)
    (kit / "reference_config.yaml").write_text("final_submission:\n  max_params: 300\n")
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "yaml.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'yaml'\", name='yaml')\n")
    proc = subprocess.run([sys.executable, str(kit / "check_final.py"),
                           str(final_package(tmp_path))], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(blocker)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("note: PyYAML is not installed, so the rules of "
                                  "reference_config.yaml were not read; the challenge's "
                                  "defaults apply\n")
    assert "within the limit of 150,000,000" in proc.stdout


def test_every_name_is_shown_escaped(tmp_path):
    """A file name with an escape sequence or a newline reaches the terminal escaped: it can
    neither clear the screen nor forge a line (issue 32)."""
    pkg = final_package(tmp_path)
    with zipfile.ZipFile(str(pkg), "a") as zf:
        zf.writestr("submission/models/\x1b[2J.pt", b"cos\nsystem\n(S'id'\ntR.")
        zf.writestr("submission/models/x\nFORGED-LINE READY.pt", b"cos\nsystem\n(S'id'\ntR.")
    proc = run(pkg)
    assert proc.returncode == 1
    assert "\x1b" not in proc.stdout
    assert not any(line.startswith("FORGED-LINE") for line in proc.stdout.splitlines())
    assert "models/\\x1b[2J.pt: refused - unsafe: the pickle imports os.system" in proc.stdout
    assert "models/x\\nFORGED-LINE READY.pt: refused" in proc.stdout
