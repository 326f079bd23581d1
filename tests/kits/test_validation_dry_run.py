"""Each kit's dry run on the participant's own validation labels in the dataset's layout (no
config.yaml: Planetscapes labels/ and instances/, VQA questions.json and annotations.json,
Agriculture-Vision's val/ folder as the 2021 challenge distributed it): scored with the kit's
copy of the test reference's config.yaml (task, label table, options), exactly as the same
folder with the organizers' config.yaml, on both platforms, through the real command."""
import contextlib
import importlib.util
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import AGRIVISION, SEM_REF, VQA_REF, built_once, run_score, score_either
from kits_util import session_kits

# Each kit's validation set as a zip or a folder in a folder (unzipping, the wrapper folder, the
# kit's config) is marked compat: CI runs it on the oldest versions too.

AV_REF = os.path.join(AGRIVISION, "reference_data")
# kit -> the organizers' sample reference (with its config.yaml)
KITS = {"supervised": AV_REF, "semantic": SEM_REF, "vqa": VQA_REF}


@pytest.fixture
def kits(tmp_path_factory):
    """The starting kits as built by bundle.sh --kits (once per session)."""
    return session_kits(tmp_path_factory)


@pytest.fixture
def with_config(kits, tmp_path_factory):
    """track -> (the kit's dry run's and score.py's scores of its sample against the
    organizers' reference itself, with its config.yaml): the commands' mains in process (the
    oracle's side), once for the whole run (conftest.built_once)."""
    def build(folder):
        found = {}
        for track in sorted(KITS):
            kit = os.path.join(kits, track)
            submission = os.path.join(kit, "sample_submission")
            where = pathlib.Path(folder) / track
            found[track] = [dry_run(kit, submission, KITS[track], where / "keep-ref",
                                    real=False)[1],
                            direct_scores(KITS[track], submission, where, real=False)]
        return found
    return built_once(tmp_path_factory, "validation-with-config", build)


def dataset_layout(ref, dest):
    """ref's labels as the dataset distributes them: no config.yaml; Agriculture-Vision's val/
    also holds the input images (images/rgb, images/nir), which the scorer never reads."""
    shutil.copytree(ref, str(dest), ignore=shutil.ignore_patterns("config.yaml"))
    if ref == AV_REF:
        for band in ("rgb", "nir"):
            os.makedirs(os.path.join(str(dest), "images", band))
            for name in sorted(os.listdir(os.path.join(ref, "boundaries")))[:3]:
                with open(os.path.join(str(dest), "images", band, name[:-4] + ".jpg"), "wb") as f:
                    f.write(b"\xff\xd8\xff\xe0 not read")
    assert not os.path.exists(os.path.join(str(dest), "config.yaml"))
    return str(dest)


def zip_folder(folder, path, prefix=""):
    with zipfile.ZipFile(str(path), "w") as zf:
        for dirpath, _, files in os.walk(folder):
            for name in files:
                full = os.path.join(dirpath, name)
                zf.write(full, prefix + os.path.relpath(full, folder))
    return str(path)


def dry_run(kit, submission, reference, keep, *extra, real=True):
    """The kit's dry_run.py as participants run it (in the kit's folder); the scores each
    platform read, from the kept run folders. real=False: the kit's dry_run.py imported from
    its file and its main run in this process (the platforms' scoring program still runs as a
    subprocess); a test that dry-runs several cases runs one of them for real."""
    argv = [str(submission), str(reference), "--quiet", "--keep", str(keep)] + list(extra)
    if real:
        proc = subprocess.run([sys.executable, "dry_run.py"] + argv, cwd=kit,
                              capture_output=True, text=True, timeout=300)
    else:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = kit_dry_run(kit).main(argv)
        proc = subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())
    scores = {}
    for platform, name in (("codalab", "scores.txt"), ("codabench", "scores.json")):
        path = os.path.join(str(keep), platform, "run", "output", name)
        if os.path.isfile(path):
            with open(path) as f:
                scores[platform] = json.load(f) if name.endswith(".json") else \
                    {k.strip(): float(v) for k, v in (line.split(":") for line in f)}
    return proc, scores


def kit_dry_run(kit):
    """The kit's own dry_run.py as a module (it finds the kit's program and config beside it)."""
    path = os.path.join(kit, "dry_run.py")
    if path not in _KIT_MODULES:
        spec = importlib.util.spec_from_file_location(
            "kit_dry_run_{}".format(len(_KIT_MODULES)), path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _KIT_MODULES[path] = module
    return _KIT_MODULES[path]


_KIT_MODULES = {}


def direct_scores(ref, submission, tmp_path, real=True):
    out = tmp_path / "direct"
    code, _, err = score_either(["--ref", ref, "--res", submission, "--out", out, "--quiet"],
                                real)
    assert code == 0, err
    return json.loads((out / "scores.json").read_text())


# Each kit's folder through the real command, and each other form with one kit (every kit's
# dry_run.py is the same tool: a form is unpacked the same way whatever the track).
FORMS = [("supervised", "folder"), ("semantic", "folder"), ("vqa", "folder"),
         pytest.param("supervised", "zip of a folder", marks=pytest.mark.compat),
         pytest.param("semantic", "folder in a folder", marks=pytest.mark.compat),
         pytest.param("vqa", "zip", marks=pytest.mark.compat)]


@pytest.mark.parametrize("track,form", FORMS)
def test_validation_labels_without_config_score_as_with_the_organizers_config(
        kits, with_config, tmp_path, track, form):
    kit = os.path.join(kits, track)
    ref = KITS[track]
    submission = os.path.join(kit, "sample_submission")
    if form == "folder in a folder":
        val = dataset_layout(ref, tmp_path / "download" / "val")
        val = os.path.dirname(val)
    else:
        val = dataset_layout(ref, tmp_path / "val")
    if form.startswith("zip"):
        val = zip_folder(val, tmp_path / "val.zip", "val/" if form == "zip of a folder" else "")
    # The plain folder through the real command; the other forms through its main, in process.
    proc, got = dry_run(kit, submission, val, tmp_path / "keep", real=form == "folder")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "RESULT: the submission would be scored on CodaLab (v1 worker) and Codabench." in out
    assert out.count("Leaderboard row:") == 2
    assert out.count("has no config.yaml; the kit's reference_config.yaml") == 2, out
    assert "REFERENCE data" not in out and "FAIL" not in out and "Traceback" not in out
    # The same labels with the organizers' own config.yaml: the very same scores.
    expected, direct = with_config[track]
    assert got == expected and set(got) == {"codalab", "codabench"}
    assert got["codabench"] == direct
    assert got["codalab"] == pytest.approx(direct, abs=1e-9)   # scores.txt: printed decimals


def test_the_kits_copy_of_the_config_is_the_one_used(kits, tmp_path):
    """Organizers whose test labels say `storm_damage: ignore`: a validation folder without
    config.yaml is scored with that policy (not the default), as the test set is."""
    kit = str(tmp_path / "kit")
    shutil.copytree(os.path.join(kits, "supervised"), kit)
    with open(os.path.join(kit, "reference_config.yaml"), "w") as f:
        f.write("storm_damage: ignore\n")
    val = dataset_layout(AV_REF, tmp_path / "val")
    submission = os.path.join(kit, "sample_submission")
    proc, got = dry_run(kit, submission, val, tmp_path / "keep", "--platform", "codabench")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "ignore"
    assert run_score("--ref", AV_REF, "--res", submission, "--out", out, "--quiet",
                     "--storm-damage", "ignore").returncode == 0
    ignore = json.loads((out / "scores.json").read_text())
    assert got["codabench"] == ignore
    assert ignore != direct_scores(AV_REF, submission, tmp_path)   # the sample's: background


@pytest.mark.parametrize("track", ["semantic", "vqa"])
def test_without_the_kits_config_the_validation_labels_are_not_planetscapes(kits, tmp_path,
                                                                          track):
    """What participants met before: the scorer's default task reads the folder as
    Agriculture-Vision's and finds it broken. The dry run says so about the folder given, and
    never that the organizers' data is broken or that the submission would fail (exit 2)."""
    kit = str(tmp_path / "kit")
    shutil.copytree(os.path.join(kits, track), kit)
    os.remove(os.path.join(kit, "reference_config.yaml"))
    val = dataset_layout(KITS[track], tmp_path / "val")
    # Semantic through the real command, VQA through its main in process.
    proc, got = dry_run(kit, os.path.join(kit, "sample_submission"), val, tmp_path / "keep",
                        real=track == "semantic")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert not got
    assert out.count("Status: not scored: the scoring program found the reference data you "
                     "gave broken (exit status 3). Here the reference is yours, {}".format(val)) \
        == 2, out
    assert "ERROR: the reference data {} is broken.".format(val) in out
    assert "RESULT: the reference data you gave, {}, cannot be scored against".format(val) in out
    assert "organizers' ground truth" not in out and "would FAIL" not in out
    assert "Traceback" not in out


def test_a_broken_validation_folder_is_named_with_the_missing_file(kits, tmp_path):
    kit = os.path.join(kits, "semantic")
    val = dataset_layout(SEM_REF, tmp_path / "val")
    first = sorted(os.listdir(os.path.join(val, "instances")))[0]
    os.remove(os.path.join(val, "instances", first))
    proc, _ = dry_run(kit, os.path.join(kit, "sample_submission"), val, tmp_path / "keep",
                      "--platform", "codalab")
    assert proc.returncode == 2, proc.stdout
    assert "instances/" + first in proc.stdout
    assert "RESULT: the reference data you gave" in proc.stdout


def test_a_validation_folder_with_its_own_config_is_scored_with_it(kits, tmp_path):
    """A config.yaml in the folder (here: the organizers' sample table with a class renamed)
    wins, as the worker reads the reference's own."""
    kit = os.path.join(kits, "semantic")
    val = str(tmp_path / "val")
    shutil.copytree(SEM_REF, val)
    config = os.path.join(val, "config.yaml")
    with open(config) as f:
        text = f.read()
    with open(config, "w") as f:
        f.write(text.replace("name: boulder,", "name: big boulder,"))
    proc, got = dry_run(kit, os.path.join(kit, "sample_submission"), val, tmp_path / "keep",
                        "--platform", "codabench")
    assert "has a config.yaml of its own, used as it is" in proc.stdout
    assert "iou_class_big_boulder" in got["codabench"]
    assert proc.returncode == 3   # the leaderboard has no such column: said, not hidden
    assert "Scores dropped (no such leaderboard column): iiou_class_big_boulder, " \
           "iou_class_big_boulder" in proc.stdout


@pytest.mark.parametrize("track", sorted(KITS))
def test_each_kit_ships_the_test_references_config(kits, track):
    with open(os.path.join(KITS[track], "config.yaml"), "rb") as a, \
            open(os.path.join(kits, track, "reference_config.yaml"), "rb") as b:
        assert a.read() == b.read()


@pytest.mark.parametrize("track,task", [("instance", "planetscapes-instance"),
                                        ("panoptic", "planetscapes-panoptic")])
def test_the_pixel_tasks_one_folder_is_scored_with_the_kits_task(kits, tmp_path, track, task):
    """The instance and panoptic kits on the pixel tasks' one reference (labels/, instances/,
    the label table): in the dataset's layout the kit's reference_config.yaml names the
    track's task; the organizers' folder itself (its config.yaml: the semantic task) with
    --task. Both score as score.py --task on the folder, and the folder is left unchanged."""
    kit = os.path.join(kits, track)
    submission = os.path.join(kit, "sample_submission")
    organizers = str(tmp_path / "organizers")   # a copy: the check below may not touch the repo
    shutil.copytree(SEM_REF, organizers)
    out = tmp_path / "direct"
    code, _, err = score_either(["--ref", organizers, "--res", submission, "--out", out,
                                 "--quiet", "--task", task], False)
    assert code == 0, err
    direct = json.loads((out / "scores.json").read_text())
    config = pathlib.Path(organizers, "config.yaml").read_bytes()
    assert b"\ntask: planetscapes-semantic\n" in config
    val = dataset_layout(SEM_REF, tmp_path / "val")
    for reference, extra, keep in ((val, [], "keep-val"),
                                   (organizers, ["--task", task], "keep")):
        proc, got = dry_run(kit, submission, reference, tmp_path / keep, *extra,
                            real=bool(extra) and track == "instance")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert got["codabench"] == direct, extra
        assert got["codalab"] == pytest.approx(direct, abs=1e-9)
    assert "scored by task {} (--task)".format(task) in proc.stdout
    assert pathlib.Path(organizers, "config.yaml").read_bytes() == config
