"""The panoptic task in the other tools: the kit's check and zip (what make_submission.py zips,
the scorer scores: the JSON at the root, the PNGs in the folder named after it), compare.py's
ranking equal to score.py's, verify.py telling an identical leaderboard submission from another
one."""
import csv
import json
import os
import shutil
import sys
import zipfile

import pytest

from conftest import KIT, ORGANIZER, PLANETSCAPES, run_main, run_score
from scoring.registry import TASKS

for path in (KIT,):
    if path not in sys.path:
        sys.path.insert(0, path)
import check_submission  # noqa: E402
import make_submission  # noqa: E402

pytestmark = pytest.mark.compat

# The pixel tasks' one reference (its config.yaml: task: planetscapes-semantic): every command
# scores it with the panoptic task by --task.
REF = os.path.join(PLANETSCAPES, "reference_data", "semantic")
TASK = ("--task", "planetscapes-panoptic")
RES = os.path.join(PLANETSCAPES, "starting_kit", "panoptic", "sample_submission")
FINAL = os.path.join(os.path.dirname(PLANETSCAPES), "..", "samples", "final_submission")


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    task = TASKS["planetscapes-panoptic"]
    from scoring import reference_setup
    settings = reference_setup.configure(REF, task.name).settings
    path = tmp_path_factory.mktemp("pan") / "manifest.json"
    path.write_text(json.dumps(task.manifest.make(task.open_reference(REF, settings))))
    return str(path)


def test_make_submission_zips_the_json_and_its_folder(manifest, tmp_path):
    preds = tmp_path / "out"
    shutil.copytree(RES, str(preds / "inner"))
    (preds / "inner" / "notes.txt").write_text("my run")
    output = tmp_path / "submission.zip"
    code, out, err = run_main(make_submission.main, [str(preds), "-o", str(output),
                                                     "--manifest", manifest])
    assert code == 0, err
    ids = sorted(n[:-4] for n in os.listdir(os.path.join(REF, "instances")))
    with zipfile.ZipFile(str(output)) as zf:
        assert sorted(zf.namelist()) == ["predictions.json"] + [
            "predictions/" + i + ".png" for i in ids]
    assert "in the folder named after the .json file" in out
    assert run_main(check_submission.main, [str(output), "--manifest", manifest])[0] == 0
    scored = run_score("--ref", REF, "--res", output, "--out", tmp_path / "zip", *TASK)
    direct = run_score("--ref", REF, "--res", RES, "--out", tmp_path / "dir", *TASK)
    assert scored.returncode == 0 and direct.returncode == 0, scored.stderr
    assert (tmp_path / "zip" / "scores.txt").read_text() == \
        (tmp_path / "dir" / "scores.txt").read_text()


def test_the_kit_check_names_a_colour_missing_from_segments_info(manifest, tmp_path):
    res = tmp_path / "res"
    shutil.copytree(RES, str(res))
    doc = json.loads((res / "predictions.json").read_text())
    dropped = doc["annotations"][0]["segments_info"].pop()
    (res / "predictions.json").write_text(json.dumps(doc))
    code, _, err = run_main(check_submission.main, [str(res), "--manifest", manifest])
    assert code == 1
    assert "predictions/{}.png".format(doc["annotations"][0]["image_id"]) in err
    assert str(dropped["id"]) in err and "segments_info" in err


def _second(tmp_path):
    """Another valid submission for the sample: the generator's prediction with another seed."""
    import subprocess
    sub = str(tmp_path / "other")
    subprocess.run([sys.executable, os.path.join(PLANETSCAPES, "make_panoptic_sample.py"),
                    "--seed", "7", "--submission", sub],
                   check=True, capture_output=True)
    return sub


def test_compare_ranks_as_score_does(tmp_path):
    import subprocess
    other = _second(tmp_path)
    proc = subprocess.run([sys.executable, os.path.join(ORGANIZER, "compare.py"), "--ref", REF,
                           "--out", str(tmp_path / "cmp"), RES, other, "--workers", "1", *TASK],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(str(tmp_path / "cmp" / "leaderboard.csv")) as f:
        rows = {r["model"]: r for r in csv.DictReader(f)}
    for name, res in (("sample_submission", RES), ("other", other)):
        out = tmp_path / name
        assert run_score("--ref", REF, "--res", res, "--out", out, *TASK).returncode == 0
        mine = json.loads((out / "scores.json").read_text())
        assert float(rows[name]["pq"]) == pytest.approx(mine["pq"], abs=1e-10)


def test_verify_tells_the_same_predictions_from_others(tmp_path):
    import subprocess
    pkg = tmp_path / "pkg"
    shutil.copytree(FINAL, str(pkg))
    shutil.copytree(RES, str(pkg / "submission" / "results"))
    other = _second(tmp_path)
    verdicts = {}
    for name, scored in (("same", RES), ("other", other)):
        proc = subprocess.run([sys.executable, os.path.join(ORGANIZER, "verify.py"), "--ref", REF,
                               "--out", str(tmp_path / name), "--claimed", "0.6584917589",
                               "--leaderboard-submission", scored, "--workers", "1", str(pkg),
                               *TASK],
                              capture_output=True, text=True, timeout=300)
        verdict = json.loads((tmp_path / name / "verdict.json").read_text())
        verdicts[name] = {c["name"]: c["status"] for c in verdict["checks"]}
        assert "Traceback" not in proc.stderr
    assert verdicts["same"]["leaderboard submission"] == "pass"
    assert verdicts["other"]["leaderboard submission"] == "fail"
    assert verdicts["same"]["results"] == "pass"
