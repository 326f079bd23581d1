"""bundle.sh --confidence-columns: leaderboard columns for the ranking score's confidence
interval (off by default), checked by bundle_check and filled by the dry run; refused when the
reference turns the intervals off."""
import os
import shutil
import subprocess
import sys
import zipfile

import yaml

from conftest import AGRIVISION, ROOT  # noqa: E402

import dry_run  # noqa: E402  (the kit's)
from organizing.bundle import check as bundle_check  # noqa: E402
from kits_util import built_bundle, session_kits  # noqa: E402

BUNDLE_SH = os.path.join(ROOT, "bundle.sh")
CI = ["miou_ci_low", "miou_ci_high"]


def run_bundle(*args):
    env = dict(os.environ, PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1")
    env.pop("BUNDLE_NOW", None)
    return subprocess.run(["bash", BUNDLE_SH] + [str(a) for a in args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def columns(path):
    with zipfile.ZipFile(str(path)) as zf:
        doc = yaml.safe_load(zf.read("competition.yaml"))
    if doc.get("version") == 2:
        return [c["key"] for board in doc["leaderboards"] for c in board["columns"]]
    return list(doc["leaderboard"]["columns"])


def labels(path):
    """The columns' titles as the leaderboard shows them."""
    with zipfile.ZipFile(str(path)) as zf:
        doc = yaml.safe_load(zf.read("competition.yaml"))
    if doc.get("version") == 2:
        return [c["title"] for board in doc["leaderboards"] for c in board["columns"]]
    return [c["label"] for c in doc["leaderboard"]["columns"].values()]


def test_confidence_columns_are_added_checked_and_filled(tmp_path):
    proc = run_bundle("--out", tmp_path / "out", "--confidence-columns", "--no-smoke")
    assert proc.returncode == 0, proc.stderr
    built = sorted(p for p in os.listdir(str(tmp_path / "out")) if p.endswith(".zip"))
    assert built
    for name in built:
        path = tmp_path / "out" / name
        keys = columns(path)
        assert keys[-2:] == CI and keys[0] == "miou", (name, keys)
        assert labels(path)[-2:] == ["mIoU 95% CI low", "mIoU 95% CI high"], name
        report = bundle_check.check_bundle(str(path))
        assert not report.errors, report.lines()
    codabench = [n for n in built if n.endswith("-codabench.zip")][0]
    outcomes = []
    sub = os.path.join(AGRIVISION, "starting_kit", "sample_submission")
    assert dry_run.main([sub, "--bundle", str(tmp_path / "out" / codabench), "--quiet"],
                        outcomes) == dry_run.EXIT_OK
    assert set(CI) <= set(outcomes[-1].scores)


def test_no_confidence_columns_by_default_and_a_check_that_refuses_a_stray_one(
        tmp_path, tmp_path_factory):
    # A default build: the one the session's kits come from (bash bundle.sh --no-smoke, with
    # --kits; kits_util asserts that it succeeds), shared, only read here.
    out = os.path.dirname(built_bundle(session_kits(tmp_path_factory), "agriculture-vision",
                                       "x"))
    codalab = [p for p in os.listdir(out) if p.endswith("-codalab.zip")][0]
    path = os.path.join(out, codalab)
    assert not [k for k in columns(path) if "_ci_" in k]
    # a column for an interval of a key the scorer does not write is still an error
    with zipfile.ZipFile(str(path)) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    doc = yaml.safe_load(files["competition.yaml"])
    last = dict(list(doc["leaderboard"]["columns"].values())[-1], label="x", rank=99)
    doc["leaderboard"]["columns"]["accuracy_ci_low"] = last
    files["competition.yaml"] = yaml.safe_dump(doc).encode()
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(str(bad), "w") as zf:
        for n, data in files.items():
            zf.writestr(n, data)
    report = bundle_check.check_bundle(str(bad))
    assert any("accuracy_ci_low" in line for line in report.lines())


def test_refused_when_the_reference_turns_intervals_off(tmp_path):
    ref = tmp_path / "ref"
    shutil.copytree(os.path.join(AGRIVISION, "reference_data"), str(ref))
    with open(str(ref / "config.yaml"), "a") as f:
        f.write("\nconfidence: false\n")
    proc = run_bundle("--reference", ref, "--out", tmp_path / "out", "--confidence-columns",
                      "--no-smoke")
    assert proc.returncode == 1
    assert "confidence: false" in proc.stderr and "--confidence-columns" in proc.stderr
