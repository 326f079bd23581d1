"""bundle.sh --competition planetscapes end to end: two tasks (semantic labeling from PNGs, VQA
from one JSON file), a CodaLab v1.5 competition per task, Codabench bundles per task and, with
--merged only, one merged Codabench competition whose phases run both tasks on one zip. Runs the
real shell entry point into temporary folders (never the repo's dist/).
"""
import contextlib
import hashlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest
import yaml

from conftest import ROOT, SEM_KIT, SEM_REF, VQA_KIT, VQA_REF  # noqa: E402
from conftest import built_twice, completed, score_either  # noqa: E402

import codabench_source  # noqa: E402  (tests/support)

import dry_run  # noqa: E402  (the kit's)
from organizing.bundle import build as bundle_build  # noqa: E402
from organizing.bundle import check as bundle_check  # noqa: E402
from organizing.bundle.schedule import Schedule, parse_date  # noqa: E402
from organizing.bundle.source import find_sources  # noqa: E402
from organizing.bundle.to_codabench import merge_v2  # noqa: E402
from organizing.bundle.tracks import load_tracks  # noqa: E402
from scoring.confidence import SUFFIXES  # noqa: E402
from scoring.registry import TASKS  # noqa: E402

BUNDLE_SH = os.path.join(ROOT, "bundle.sh")
DRY_RUN = os.path.join(ROOT, "kit", "dry_run.py")
SCORE = os.path.join(ROOT, "scoring_program", "score.py")
SEM_SUB = os.path.join(SEM_KIT, "sample_submission")
INST_SUB = os.path.join(ROOT, "competitions", "planetscapes", "starting_kit", "instance",
                        "sample_submission")
VQA_SUB = os.path.join(VQA_KIT, "sample_submission")
PAN_SUB = os.path.join(os.path.dirname(VQA_KIT), "panoptic", "sample_submission")
PREFIX = "planetscapes2027"
TRACKS = ("semantic", "instance", "panoptic", "vqa")
# The merged bundle's tracks (source.json merged.tracks), every one: the instance task's .txt
# files and masks in a folder of their own in the merged zip.
MERGED_TRACKS = ("semantic", "instance", "panoptic", "vqa")
PER_TRACK = ["{}-{}-{}.zip".format(PREFIX, track, platform)
             for track in TRACKS for platform in ("codalab", "codabench")]
MERGED = PREFIX + "-codabench.zip"
NAMES = PER_TRACK + [MERGED]


def run(argv, **kw):
    env = dict(os.environ, PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([str(a) for a in argv], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=600, **kw)


def scores_of(ref, res, tmp, task=None):
    """The scorer's own scores.txt for a reference and a submission, as {key: float} (score.py's
    main in this process: the tests that compare with it run the real commands); task: --task
    (the pixel tasks share one reference, whose config.yaml names the semantic task)."""
    out = os.path.join(str(tmp), "out-{}".format(len(os.listdir(str(tmp)))))
    code, _, err = score_either(["--ref", ref, "--res", res, "--out", out, "--quiet"] +
                                (["--task", task] if task else []), False)
    assert code == 0, err
    with open(os.path.join(out, "scores.txt")) as f:
        return {k.strip(): float(v) for k, v in (line.split(":") for line in f if line.strip())}


def dry(argv, real):
    """kit/dry_run.py ARGV: (exit code, stdout, stderr), as the real command (real=True: a
    subprocess) or its main in this process (its scoring program runs as a subprocess either
    way); a test that dry-runs several cases runs one of them for real."""
    if real:
        proc = run([sys.executable, DRY_RUN] + argv)
        return proc.returncode, proc.stdout, proc.stderr
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = dry_run.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def combined(tmp):
    """A submission for a phase running every task: the PNGs, the results file, the
    panoptic JSON beside its folder and the instance .txt files with their masks in a folder of
    their own, together."""
    folder = os.path.join(str(tmp), "both")
    shutil.copytree(SEM_SUB, folder)
    shutil.copytree(INST_SUB, os.path.join(folder, "instance_out"))
    for name in os.listdir(VQA_SUB):
        shutil.copy(os.path.join(VQA_SUB, name), folder)
    shutil.copy(os.path.join(PAN_SUB, "predictions.json"), folder)
    shutil.copytree(os.path.join(PAN_SUB, "predictions"), os.path.join(folder, "predictions"))
    return folder


def columns(zf):
    doc = yaml.safe_load(zf.read("competition.yaml"))
    if doc.get("version") == 2:
        return [c["key"] for c in doc["leaderboards"][0]["columns"]], doc
    return list(doc["leaderboard"]["columns"]), doc


def build_twice(folder):
    """The first build asks for the merged bundle too (--merged), the second does not."""
    tmp = pathlib.Path(folder)
    first = run(["bash", BUNDLE_SH, "--competition", "planetscapes", "--out", tmp / "a",
                 "--merged"])
    second = run(["bash", BUNDLE_SH, "--competition", "planetscapes", "--out", tmp / "b",
                  "--no-smoke"])
    return [completed(first), completed(second), str(tmp / "a"), str(tmp / "b")]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """build_twice, once for the whole run (conftest.built_once: by one xdist worker for all;
    the tests only read what it made)."""
    return built_twice(tmp_path_factory, "planetscapes-bundles", build_twice)


@pytest.fixture(scope="module")
def direct(tmp_path_factory):
    """Each task's scores of its sample, from score.py run directly on the repository."""
    tmp = tmp_path_factory.mktemp("ps-direct")
    return (scores_of(SEM_REF, SEM_SUB, tmp), scores_of(VQA_REF, VQA_SUB, tmp),
            scores_of(SEM_REF, PAN_SUB, tmp, "planetscapes-panoptic"),
            scores_of(SEM_REF, INST_SUB, tmp, "planetscapes-instance"))


def test_builds_nine_bundles_checks_and_dry_runs_them(builds):
    first, second, a, b = builds
    assert first.returncode == 0, first.stderr + first.stdout
    assert second.returncode == 0, second.stderr + second.stdout
    assert sorted(os.listdir(str(a))) == sorted(NAMES)
    for name in NAMES:
        assert name in first.stdout
    assert "Checked: 9 bundles" in first.stdout
    assert "Dry run: the sample submission scores on all 9 bundles" in first.stdout


def test_the_merged_bundle_is_built_only_when_asked_with_its_hazard(builds, tmp_path):
    first, second, a, b = builds
    assert sorted(os.listdir(str(b))) == sorted(PER_TRACK)     # without --merged
    assert "Checked: 8 bundles" in second.stdout
    hazard = "WARNING (merged bundle): the merged Codabench bundle ranks a submission with a " \
             "failed task FIRST."
    assert hazard in first.stdout and hazard not in second.stdout
    assert "a submission with one task failed ranks above every fully scored one, one with " \
           "every task failed ranks first with no scores" in first.stdout
    # Participants read it where they read the rules: the merged overview page and the merged
    # kit's README (issue 32: the page ended "The starting kit says which form you are in").
    with zipfile.ZipFile(str(a / MERGED)) as zf:
        doc = yaml.safe_load(zf.read("competition.yaml"))
        overview = [p["file"] for p in doc["pages"] if p["title"] == "Overview"]
        page = " ".join(zf.read(overview[0]).decode("utf-8").split())
        with zipfile.ZipFile(zf.open("starting_kit.zip")) as kit:
            readme = " ".join(kit.read("README.md").decode("utf-8").split())
    assert "<strong>Such a submission ranks first</strong>: Codabench sorts an empty score " \
           "above every score, so a submission with one task failed is listed above every " \
           "fully scored one" in page
    assert "ranks the submission **first**, above every fully scored one" in readme
    # ... and a competition with no merged form refuses --merged (a usage error).
    proc = run(["bash", BUNDLE_SH, "--merged", "--out", tmp_path / "none", "--no-smoke"])
    assert not (tmp_path / "none").exists()
    assert proc.returncode == 2 and "--merged: agriculture-vision has no merged Codabench " \
                                    "form" in proc.stderr


def test_the_plan_says_which_codabench_zip_serves_which_purpose(builds):
    first, second, a, _ = builds
    purposes = (
        "  Codabench (Benchmarks > Upload), by purpose:\n"
        "    planetscapes2027-semantic-codabench.zip      Semantic labeling alone, ranked by "
        "IoU class: with the other task's zip, a ranking per task, as on CodaLab\n"
        "    planetscapes2027-instance-codabench.zip      Instance labeling alone, ranked by AP: "
        "with the other task's zip, a ranking per task, as on CodaLab\n"
        "    planetscapes2027-panoptic-codabench.zip      Panoptic segmentation alone, ranked by "
        "PQ: with the other task's zip, a ranking per task, as on CodaLab\n"
        "    planetscapes2027-vqa-codabench.zip           VQA alone, ranked by Accuracy: with "
        "the other task's zip, a ranking per task, as on CodaLab\n"
        "    planetscapes2027-codabench.zip               {}: one competition scoring every "
        "task on each upload (a benchmark suite); a submission with a failed task ranks "
        "first; participants add their submissions to its leaderboard (Add, whatever "
        "--leaderboard)\n")
    assert purposes.format("built") in first.stdout
    assert purposes.format("not built (--merged)") in second.stdout
    # Codabench's forced rules would put one task's part of a submission alone on the merged
    # leaderboard: the merged bundle adds by hand, and says so where another rule was chosen.
    assert "WARNING (merged bundle): its leaderboard rule is chosen (Add), not best: " \
           "Codabench applies a forced rule to each task's part" in first.stdout
    with zipfile.ZipFile(os.path.join(str(a), "planetscapes2027-codabench.zip")) as zf:
        doc = yaml.safe_load(zf.read("competition.yaml"))
        overview = zf.read("pages/overview.html").decode("utf-8")
        kit = zipfile.ZipFile(io.BytesIO(zf.read("starting_kit.zip")))
    assert [b["submission_rule"] for b in doc["leaderboards"]] == ["Add"]
    assert "is not on the leaderboard until its participant puts it there" in overview
    for track in MERGED_TRACKS:
        assert json.loads(kit.read(track + "/phase.json"))["leaderboard_rule"] == "chosen"
    for proc in (first, second):
        plan = proc.stdout.split("\nPlan (times UTC; now ", 1)[1]
        assert "    planetscapes2027-semantic-codalab.zip        semantic track\n" in plan
        assert "    planetscapes2027-instance-codalab.zip        instance track\n" in plan
        assert "    planetscapes2027-panoptic-codalab.zip        panoptic track\n" in plan
        assert "    planetscapes2027-vqa-codalab.zip             vqa track\n" in plan
        assert "    Test             2026-11-16 00:00:00 to 2027-05-31 23:59:59    " in plan
        assert "    Post-challenge   2027-06-01 00:00:00 (no end)                  " in plan
        assert "(Test would end 2027-05-31 00:00:00 instead of 2027-05-31 23:59:59 UTC)" in plan


def test_two_builds_are_byte_identical(builds):
    _, _, a, b = builds
    for name in PER_TRACK:
        with open(str(a / name), "rb") as fa, open(str(b / name), "rb") as fb:
            assert fa.read() == fb.read(), name


def test_every_bundle_passes_the_check_and_is_open_today(builds):
    _, _, a, _ = builds
    proc = run([sys.executable, os.path.join(ROOT, "organizer", "bundle_check.py")] +
               [a / n for n in NAMES])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in NAMES:
        report = bundle_check.check_bundle(str(a / name))
        assert not report.errors and not report.warnings, report.lines()
        assert report.open_phases, name  # Test before the deadline, Post-challenge after
        assert "{}: OK (0 warnings); open for submissions: ".format(name) in proc.stdout


def test_every_leaderboard_key_is_a_key_the_bundled_scorer_writes(builds, tmp_path):
    """Unpack each bundle's program and reference, score the track's sample with them, and
    compare the keys of scores.txt with the leaderboard's columns (merged: both tasks')."""
    _, _, a, _ = builds
    samples = {"semantic": SEM_SUB, "vqa": VQA_SUB, "panoptic": PAN_SUB, "instance": INST_SUB}
    # The keys each (program, reference, sample) wrote, by the zips' bytes: the bundles share
    # their programs and each track's reference, and the same bytes scoring the same sample
    # write the same scores.txt, so each distinct pair is scored once (for real).
    scored = {}
    for name in NAMES:
        with zipfile.ZipFile(str(a / name)) as zf:
            keys, doc = columns(zf)
            if doc.get("version") == 2:
                runs = [(t["scoring_program"], t["reference_data"]) for t in doc["tasks"]]
            else:
                runs = [("scoring_program.zip", "reference_data.zip")]
            written = []
            for i, (program, reference) in enumerate(runs):
                which = name if len(runs) == 1 else reference
                track = next((t for t in ("vqa", "panoptic", "instance") if t in which),
                             "semantic")
                same = (hashlib.sha256(zf.read(program)).hexdigest(),
                        hashlib.sha256(zf.read(reference)).hexdigest(), track)
                if same in scored:
                    written += scored[same]
                    continue
                where = tmp_path / "{}-{}".format(name, i)
                for member, folder in ((program, "program"), (reference, "ref")):
                    zf.extract(member, str(where))
                    with zipfile.ZipFile(str(where / member)) as inner:
                        inner.extractall(str(where / folder))
                out = where / "out"
                proc = run([sys.executable, where / "program" / "score.py", "--ref",
                            where / "ref", "--res", samples[track], "--out", out, "--quiet"])
                assert proc.returncode == 0, proc.stderr
                with open(str(out / "scores.txt")) as f:
                    scored[same] = [line.split(":")[0] for line in f if line.strip()]
                written += scored[same]
        # The confidence-interval keys have columns only with bundle.sh --confidence-columns.
        written = [k for k in written if not k.endswith(SUFFIXES)]
        assert sorted(written) == sorted(keys), name
        assert keys[0] == written[0]  # ranked by the (first) task's ranking key


def test_semantic_columns_are_the_label_tables_keys(builds):
    """Per-class and per-category columns come from the bundled reference's label table."""
    _, _, a, _ = builds
    task = TASKS["planetscapes-semantic"]
    with open(os.path.join(SEM_REF, "config.yaml")) as f:
        expected = task.keys(task.configure({}, yaml.safe_load(f)))
    for name in ("semantic-codalab", "semantic-codabench"):
        with zipfile.ZipFile(str(a / "{}-{}.zip".format(PREFIX, name))) as zf:
            assert columns(zf)[0] == expected
    assert "iou_class_boulder" in expected and "iiou_category_object" in expected
    with zipfile.ZipFile(str(a / MERGED)) as zf:
        pan, inst = TASKS["planetscapes-panoptic"], TASKS["planetscapes-instance"]
        with open(os.path.join(SEM_REF, "config.yaml")) as f:   # the one label table
            pan_keys = pan.keys(pan.configure({}, yaml.safe_load(f)))
        with open(os.path.join(SEM_REF, "config.yaml")) as f:
            inst_keys = inst.keys(inst.configure({}, yaml.safe_load(f)))
        assert columns(zf)[0] == expected + inst_keys + pan_keys + \
            TASKS["planetscapes-vqa"].score_keys


def test_the_merged_leaderboard_names_each_tasks_columns(builds):
    """Codabench shows a phase one leaderboard, the first (a second would be shown by no phase),
    with every column under each task's name: so each column's title starts with its task's
    name, as the task's own bundle titles it after that, and the leaderboard's title names the
    tasks."""
    text = codabench_source.committed()
    assert codabench_source.phases_use_the_first_leaderboard(text)
    assert codabench_source.every_column_under_each_task(text)
    _, _, a, _ = builds
    with zipfile.ZipFile(str(a / MERGED)) as zf:
        (board,) = yaml.safe_load(zf.read("competition.yaml"))["leaderboards"]
    assert board["title"] == "Semantic, Instance, Panoptic, VQA"
    titles = {c["key"]: c["title"] for c in board["columns"]}
    for track, ref, prefix in (("semantic", SEM_REF, "Semantic"), ("instance", SEM_REF,
                                                                   "Instance"),
                               ("panoptic", SEM_REF, "Panoptic"), ("vqa", VQA_REF, "VQA")):
        with zipfile.ZipFile(str(a / "{}-{}-codabench.zip".format(PREFIX, track))) as zf:
            own = {c["key"]: c["title"] for c in
                   yaml.safe_load(zf.read("competition.yaml"))["leaderboards"][0]["columns"]}
        with open(os.path.join(ref, "config.yaml")) as f:
            config = yaml.safe_load(f)
        task = TASKS["planetscapes-vqa" if track == "vqa" else "planetscapes-" + track]
        keys = task.keys(task.configure({}, config))  # the keys its scorer writes
        assert keys and set(keys) <= set(own), track
        for key in keys:
            assert titles[key] == "{}: {}".format(prefix, own[key]), key
            assert len(titles[key]) <= 36, key


def test_columns_follow_the_organizers_table(tmp_path):
    """Another label table, another leaderboard: a class renamed in the one config.yaml of the
    pixel tracks is a column renamed in every bundle of the three, without touching
    competition.yaml."""
    ref = tmp_path / "ref"
    shutil.copytree(SEM_REF, str(ref))
    config = (ref / "config.yaml").read_text().replace("name: boulder,", "name: big boulder,")
    (ref / "config.yaml").write_text(config)
    source = find_sources(ROOT)["planetscapes"]
    build = tmp_path / "build"
    build.mkdir()
    built = bundle_build.build_bundles(str(build), source, Schedule(),
                                       {"semantic": str(ref), "vqa": VQA_REF,
                                        "panoptic": str(ref), "instance": str(ref)}, "raw",
                                       lambda line: None, sample=False).built
    for b in built:
        report = bundle_check.check_bundle(b.path)
        assert not report.errors, report.lines()
        with zipfile.ZipFile(b.path) as zf:
            keys = columns(zf)[0]
        if "vqa" in b.name:
            assert keys == TASKS["planetscapes-vqa"].score_keys
        elif "panoptic" in b.name:
            assert keys[0] == "pq" and "pq_big_boulder" in keys and "pq_boulder" not in keys
        elif "instance" in b.name:
            assert keys[:2] == ["ap", "ap50"] and "ap_big_boulder" in keys \
                and "ap_boulder" not in keys
        else:
            assert "iou_class_big_boulder" in keys and "iou_class_boulder" not in keys


def test_dry_run_scores_each_task_on_both_platforms(builds, direct, tmp_path):
    """Each task's sample through its own bundles on CodaLab's and Codabench's worker, and the
    scores equal the scorer's run on the repository."""
    _, _, a, _ = builds
    sem, vqa, pan, _ = direct
    for track, sub, expected in (("semantic", SEM_SUB, sem), ("vqa", VQA_SUB, vqa),
                                 ("panoptic", PAN_SUB, pan)):
        for platform in ("codalab", "codabench"):
            bundle_zip = a / "{}-{}-{}.zip".format(PREFIX, track, platform)
            # The real command for the first bundle; the others through its main, in process.
            code, out, err = dry([sub, "--bundle", bundle_zip, "--platform", "both", "--quiet"],
                                 real=(track, platform) == ("semantic", "codalab"))
            assert code == 0, out + err
            assert "RESULT: the submission would be scored on CodaLab" in out
            first = next(iter(expected))
            assert "{:.4f}".format(expected[first]) in out if track != "vqa" \
                else "{:.2f}".format(expected[first]) in out


def test_merged_bundle_runs_both_tasks_on_one_zip(builds, direct, tmp_path):
    """Codabench, a phase listing tasks [0, 1, 2, 3]: one child run per task on the same zip;
    the row holds every task's scores, equal to each scorer's own."""
    _, _, a, _ = builds
    sem, vqa, pan, inst = direct
    with zipfile.ZipFile(str(a / MERGED)) as zf:
        doc = yaml.safe_load(zf.read("competition.yaml"))
    assert [p["tasks"] for p in doc["phases"]] == [[0, 1, 2, 3], [0, 1, 2, 3]]
    assert [t["name"] for t in doc["tasks"]] == ["Semantic labeling", "Instance labeling",
                                                 "Panoptic segmentation", "VQA"]
    board = doc["leaderboards"][0]
    assert board["columns"][board["primary_index"]]["key"] == "iou_class"
    outcomes = []
    code = dry_run.main([combined(tmp_path), "--bundle", str(a / MERGED), "--quiet"], outcomes)
    assert code == dry_run.EXIT_OK
    (outcome,) = outcomes
    assert outcome.platform == "codabench" and outcome.complete
    assert set(outcome.scores) == set(sem) | set(vqa) | set(pan) | set(inst)
    for key, value in [kv for task in (sem, vqa, pan, inst) for kv in task.items()]:
        assert outcome.scores[key] == pytest.approx(value, abs=1e-9), key


def test_merged_bundle_with_one_tasks_files_predicts_what_the_site_shows(builds, tmp_path):
    """A zip with only the PNGs: the VQA child fails; Codabench marks the submission Finished,
    and on the leaderboard its empty VQA score sorts first: the dry run says that (exit 3),
    with the scorer's message, not a plain failure."""
    _, _, a, _ = builds
    proc = run([sys.executable, DRY_RUN, SEM_SUB, "--bundle", a / MERGED, "--quiet"])
    assert proc.returncode == 3, proc.stdout
    assert "No .json results file" in proc.stdout
    assert "Task(s) Instance labeling, Panoptic segmentation, VQA failed. Status on Codabench: " \
        "Finished" in proc.stdout
    assert "ranked FIRST, above every fully scored submission, with the columns of Instance "\
           "labeling, Panoptic segmentation, VQA empty" \
        in proc.stdout
    row = proc.stdout.split("(an empty score sorts first):\n", 1)[1]
    # each column under its task's name (the merged leaderboard's titles), the failed ones n/a
    assert "VQA: Accuracy  VQA: Yes/No" in row and "VQA: Number  VQA: Other" in row
    assert "Semantic: IoU class" in row and "Panoptic: PQ" in row and "Instance: AP" in row
    lines = row.splitlines()
    vqa = next(i for i, line in enumerate(lines) if "VQA: Number  VQA: Other" in line)
    assert lines[vqa + 1].split() == ["n/a", "n/a"]
    assert "RESULT: Codabench would mark it Finished with task(s) Instance labeling, Panoptic "\
           "segmentation, VQA failed, and on the " \
           "leaderboard rank it FIRST, above every fully scored submission, with their columns " \
           "empty (n/a)." in proc.stdout
    # Nothing either task can score: Finished too, first, with no scores.
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README.txt").write_text("no predictions\n")
    # (the real command above; this one through its main, in process)
    code, out, _ = dry([tmp_path / "empty", "--bundle", a / MERGED, "--quiet"], real=False)
    assert code == 3, out
    assert "Task(s) Semantic labeling, Instance labeling, Panoptic segmentation, VQA failed. " \
           "Status on " \
           "Codabench: Finished" in out
    assert "rank it FIRST, above every fully scored submission, with no scores." in out


@pytest.mark.parametrize("layout", ["flat", "png folder", "json folder"])
def test_each_tasks_discovery_ignores_the_other_tasks_files(tmp_path, direct, layout):
    """The combined zip, through each task's real command: same scores as its own sample,
    exit 0, the other task's files only warned about."""
    sem, vqa, pan, inst = direct
    res = tmp_path / "res"
    if layout == "flat":
        shutil.copytree(combined(tmp_path), str(res))
    else:
        shutil.copytree(SEM_SUB, str(res / "predictions") if layout == "png folder"
                        else str(res))
        target = res / "answers" if layout == "json folder" else res
        target.mkdir(exist_ok=True)
        shutil.copy(os.path.join(VQA_SUB, "results.json"), str(target))
    # Codabench adds its own metadata file beside the participant's files.
    (res / "metadata").write_text("elapsedTime: null\n")
    runs = [(SEM_REF, [], sem, "results.json"), (VQA_REF, [], vqa, ".png")]
    if layout == "flat":  # the panoptic JSON beside its folder, the instance folder too
        runs += [(SEM_REF, ["--task", "planetscapes-panoptic"], pan, "results.json"),
                 (SEM_REF, ["--task", "planetscapes-instance"], inst, "results.json")]
    for ref, task, expected, other in runs:
        out = tmp_path / "out-{}{}".format(os.path.basename(ref), "".join(task[1:]))
        # The semantic task through the real score.py, the others through its main in process.
        code, stdout, stderr = score_either(["--ref", ref, "--res", res, "--out", out] + task,
                                            real=ref == SEM_REF and not task)
        assert code == 0, stderr + stdout
        with open(str(out / "scores.txt")) as f:
            got = {k.strip(): float(v) for k, v in (line.split(":") for line in f)}
        assert got == expected
        assert other in stdout + stderr  # listed as ignored, not scored


def test_instance_masks_named_like_test_images_are_never_label_pngs(tmp_path, direct):
    """The instance folder's masks may be named like test images (masks/<id>.png): the
    semantic scorer still takes the label PNGs at the root (not an ambiguous pair of folders),
    and the instance scorer scores its folder as alone, listing the label PNGs as not its."""
    sem = direct[0]
    alone = tmp_path / "instance_out"
    shutil.copytree(INST_SUB, str(alone))
    for txt in sorted(alone.glob("*.txt")):
        lines = txt.read_text().splitlines()
        if lines:  # its first mask renamed after the image
            first = lines[0].split()
            new = "masks/{}.png".format(txt.stem)
            (alone / first[0]).rename(alone / new)
            txt.write_text("\n".join([" ".join([new] + first[1:])] + lines[1:]) + "\n")
    inst = scores_of(SEM_REF, str(alone), tmp_path, "planetscapes-instance")
    res = tmp_path / "res"
    shutil.copytree(SEM_SUB, str(res))
    shutil.copytree(str(alone), str(res / "instance_out"))
    for task, expected, other in (([], sem, "instance_out/ (the instance task's"),
                                  (["--task", "planetscapes-instance"], inst,
                                   "site00_sol0100_000.png")):
        out = tmp_path / "out-{}".format(len(task))
        code, stdout, stderr = score_either(["--ref", SEM_REF, "--res", res, "--out", out] +
                                            task, real=False)
        assert code == 0, stderr + stdout
        with open(str(out / "scores.txt")) as f:
            assert {k.strip(): float(v) for k, v in (line.split(":") for line in f)} == expected
        assert other in stdout + stderr  # listed as ignored, not scored


def _starting_kit(bundle_zip, tmp_path):
    """The starting kit of a built bundle, unpacked into tmp_path/kit."""
    with zipfile.ZipFile(str(bundle_zip)) as zf:
        zf.extract("starting_kit.zip", str(tmp_path))
    kit = tmp_path / "kit"
    with zipfile.ZipFile(str(tmp_path / "starting_kit.zip")) as zf:
        zf.extractall(str(kit))
    return kit


def test_semantic_kit_checks_the_sample_with_the_label_tables_ids(builds, tmp_path):
    kit = _starting_kit(builds[2] / (PREFIX + "-semantic-codalab.zip"), tmp_path)
    manifest = json.loads((kit / "manifest.json").read_text())
    assert manifest["task"] == "planetscapes-semantic" and len(manifest["images"]) == 12
    proc = run([sys.executable, kit / "check_submission.py", kit / "sample_submission"])
    assert proc.returncode == 0, proc.stderr
    assert "passes every check" in proc.stdout and "label table (0-12" in proc.stdout
    assert (kit / "README.md").read_text().startswith("# Planetscapes")
    proc = run([sys.executable, kit / "make_submission.py", kit / "sample_submission", "-o",
                tmp_path / "sub.zip"])
    assert proc.returncode == 0, proc.stderr
    proc = run([sys.executable, kit / "dry_run.py", tmp_path / "sub.zip", SEM_REF, "--quiet"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_vqa_kit_holds_the_references_questions_and_checks_the_sample(builds, tmp_path):
    kit = _starting_kit(builds[2] / (PREFIX + "-vqa-codalab.zip"), tmp_path)
    with open(os.path.join(VQA_REF, "questions.json"), "rb") as f:
        assert (kit / "questions.json").read_bytes() == f.read()
    proc = run([sys.executable, kit / "check_results.py", kit / "sample_submission"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run([sys.executable, kit / "dry_run.py", kit / "sample_submission", VQA_REF,
                "--quiet"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_merged_kit_holds_both_kits_and_the_combined_sample(builds, tmp_path):
    _, _, a, _ = builds
    with zipfile.ZipFile(str(a / MERGED)) as zf:
        with zipfile.ZipFile(zf.open("starting_kit.zip")) as kit:
            names = set(kit.namelist())
    assert {"README.md", "semantic/check_submission.py", "semantic/manifest.json",
            "vqa/check_results.py", "vqa/questions.json", "sample_submission/results.json",
            "semantic/scoring_program/score.py", "vqa/scoring_program/score.py",
            "panoptic/check_submission.py", "panoptic/manifest.json",
            "sample_submission/predictions.json", "instance/check_submission.py",
            "instance/manifest.json", "sample_submission/instance/site00_sol0100_000.txt",
            "sample_submission/instance/masks/site00_sol0100_000_0.png"} <= names
    # the instance sample in its folder of the merged zip (source.json merged.folders)
    assert not any(n.startswith("sample_submission/") and n.endswith(".txt") and
                   n.count("/") == 1 for n in names)
    # the semantic PNGs at the root, the panoptic ones in the folder named after its JSON
    assert sum(n.startswith("sample_submission/") and n.endswith(".png") and n.count("/") == 1
               for n in names) == 12
    assert sum(n.startswith("sample_submission/predictions/") for n in names) == 12


def test_merging_tracks_with_different_phases_or_shared_keys_is_refused():
    source = find_sources(ROOT)["planetscapes"]
    tracks = load_tracks(source)
    files = [{}, {}]
    moved = load_tracks(source, Schedule(
        start=parse_date("2026-12-01")))
    with pytest.raises(ValueError, match="differ from the semantic track"):
        merge_v2([tracks[0], moved[1]], ["", ""], files, "t")
    with pytest.raises(ValueError, match="share the keys iiou_category, iiou_class"):
        merge_v2([tracks[0], tracks[0]], ["", ""], files, "t")


def test_a_reference_per_track_is_required_when_tracks_score_different_tasks(tmp_path):
    """A bare DIR is the reference of the three pixel tracks (their sample reference is the
    base track's): only the VQA track's is missing."""
    proc = run(["bash", BUNDLE_SH, "--competition", "planetscapes", "--out", tmp_path,
                "--reference", SEM_REF])
    assert proc.returncode == 2
    assert "--reference TRACK=DIR for vqa\n" in proc.stderr
    assert os.listdir(str(tmp_path)) == []


def test_the_pixel_folder_given_once_is_the_three_tracks_reference(tmp_path):
    """bundle.sh --reference DIR --reference vqa=DIR2: the same tracks and references as
    every track named; the instance track given another folder (TRACK=DIR wins over the bare
    DIR, in either order) gets that one."""
    from organizing.bundle import command
    parser = command.build_parser()
    other = str(tmp_path)
    for argv in (["--reference", SEM_REF, "--reference", "vqa=" + VQA_REF],
                 ["--reference", "vqa=" + VQA_REF, "--reference", SEM_REF,
                  "--reference", "instance=" + other],
                 ["--reference", "instance=" + other, "--reference", "vqa=" + VQA_REF,
                  "--reference", SEM_REF]):
        args = parser.parse_args(["--competition", "planetscapes"] + argv)
        request = command.read_request(args, parser)
        assert request.references == {
            "semantic": SEM_REF, "panoptic": SEM_REF, "vqa": VQA_REF,
            "instance": other if "instance=" + other in argv else SEM_REF}


def _with_yaml(src, dst, edit):
    """A copy of a bundle whose competition.yaml went through edit(doc)."""
    with zipfile.ZipFile(str(src)) as zin, zipfile.ZipFile(str(dst), "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "competition.yaml":
                doc = yaml.safe_load(data)
                edit(doc)
                data = yaml.safe_dump(doc, sort_keys=False).encode("utf-8")
            zout.writestr(info, data)


def test_the_check_asks_every_task_of_the_merged_bundle_for_its_keys(builds, tmp_path):
    """The check compares the merged leaderboard with both programs' keys: a VQA column
    dropped, or both tasks scoring the semantic reference, is refused."""
    _, _, a, _ = builds

    def drop_vqa_column(doc):
        doc["leaderboards"][0]["columns"] = [c for c in doc["leaderboards"][0]["columns"]
                                             if c["key"] != "accuracy_other"]

    def same_task_twice(doc):
        doc["tasks"][1]["reference_data"] = doc["tasks"][0]["reference_data"]

    _with_yaml(a / MERGED, tmp_path / "one.zip", drop_vqa_column)
    lines = bundle_check.check_bundle(str(tmp_path / "one.zip")).lines()
    assert any("no column for the score keys accuracy_other" in line for line in lines), lines
    _with_yaml(a / MERGED, tmp_path / "two.zip", same_task_twice)
    lines = bundle_check.check_bundle(str(tmp_path / "two.zip")).lines()
    assert any("two tasks of one phase write the keys iou_class" in line for line in lines), lines


def test_the_merged_bundle_is_dry_run_as_codabench_only(builds, tmp_path):
    """CodaLab has no phase of several tasks: asked for it, the dry run says which bundles to
    use; with --platform both it runs Codabench's children only."""
    _, _, a, _ = builds
    both = combined(tmp_path)
    # The refusal through dry_run's main in process; the run itself, the real command.
    code, _, err = dry([both, "--bundle", a / MERGED, "--platform", "codalab"], real=False)
    assert code == 2 and "only Codabench does" in err
    code, out, err = dry([both, "--bundle", a / MERGED, "--platform", "both", "--quiet"],
                         real=True)
    assert code == 0, out + err
    assert "RESULT: the submission would be scored on Codabench." in out
    assert out.count("--- child submission") == 4


# --- one reference for the three pixel tasks (issue 34, section 1) ------------------------------

def _member(zip_path, *names):
    """The bytes of a member of a zip inside a zip (names: the path of zips)."""
    data = pathlib.Path(str(zip_path)).read_bytes()
    for name in names:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            data = zf.read(name)
    return data


def test_one_pixel_reference_serves_the_semantic_instance_and_panoptic_tracks(tmp_path):
    """One organizer folder (task: planetscapes-semantic) for the three pixel tracks: each
    track's bundled reference and kit say its own task (source.json), every other setting is
    the organizer's, and the worker's score.py on the instance bundle's reference scores as
    score.py --task planetscapes-instance on the folder."""
    source = find_sources(ROOT)["planetscapes"]
    build = tmp_path / "build"
    build.mkdir()
    refs = {"semantic": SEM_REF, "instance": SEM_REF, "panoptic": SEM_REF, "vqa": VQA_REF}
    built = bundle_build.build_bundles(str(build), source, Schedule(), refs, "raw",
                                       lambda line: None, sample=False).built
    with open(os.path.join(SEM_REF, "config.yaml")) as f:
        organizers = yaml.safe_load(f)
    assert organizers["task"] == "planetscapes-semantic"
    for track, task in (("semantic", "planetscapes-semantic"),
                        ("instance", "planetscapes-instance"),
                        ("panoptic", "planetscapes-panoptic")):
        bundle = next(b.path for b in built if b.tracks == (track,) and
                      b.platform == "codabench")
        for config in (_member(bundle, "reference_data.zip", "config.yaml"),
                       _member(bundle, "starting_kit.zip", "reference_config.yaml")):
            assert yaml.safe_load(config) == dict(organizers, task=task), track
        report = bundle_check.check_bundle(bundle)
        assert not report.errors, report.lines()
    instance = next(b.path for b in built if b.tracks == ("instance",))
    ref = tmp_path / "worker-ref"
    with zipfile.ZipFile(io.BytesIO(_member(instance, "reference_data.zip"))) as zf:
        zf.extractall(str(ref))
    worker = scores_of(str(ref), INST_SUB, tmp_path)
    out = tmp_path / "with-task"
    code, _, err = score_either(["--ref", SEM_REF, "--res", INST_SUB, "--out", str(out),
                                 "--quiet", "--task", "planetscapes-instance"], False)
    assert code == 0, err
    assert "ap" in worker and worker == {
        k.strip(): float(v) for k, v in (line.split(":") for line in
                                         (out / "scores.txt").read_text().splitlines() if line)}


def test_a_reference_the_tracks_task_cannot_read_is_refused(tmp_path):
    """A VQA reference given to the instance track (or a pixel one to the VQA track): one
    message naming the track, the folder and the two tasks; nothing written."""
    out = tmp_path / "out"
    proc = run(["bash", BUNDLE_SH, "--competition", "planetscapes", "--out", out, "--no-smoke",
                "--reference", "semantic=" + SEM_REF, "--reference", "instance=" + VQA_REF,
                "--reference", "panoptic=" + SEM_REF, "--reference", "vqa=" + VQA_REF])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the instance track's reference" in proc.stderr
    assert "task: planetscapes-vqa" in proc.stderr
    assert "planetscapes-instance cannot read" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not [n for n in os.listdir(str(out)) if not n.startswith(".")]
    source = find_sources(ROOT)["planetscapes"]
    build = tmp_path / "build"
    build.mkdir()
    with pytest.raises(bundle_build.Refused, match="the vqa track's reference .*task: "
                       "planetscapes-semantic.*planetscapes-vqa cannot read"):
        bundle_build.build_bundles(str(build), source, Schedule(), {
            "semantic": SEM_REF, "instance": SEM_REF, "panoptic": SEM_REF, "vqa": SEM_REF},
            "raw", lambda line: None, sample=False)
    # The base track's task is pinned too (source.json "task"), not read from the folder given.
    with pytest.raises(bundle_build.Refused, match="the semantic track's reference .*task: "
                       "planetscapes-vqa.*planetscapes-semantic cannot read"):
        bundle_build.build_bundles(str(build), source, Schedule(), {
            "semantic": VQA_REF, "instance": SEM_REF, "panoptic": SEM_REF, "vqa": VQA_REF},
            "raw", lambda line: None, sample=False)


@pytest.mark.parametrize("config, why", [
    # no `task:` line: the scorer's default task, another kind of reference
    ("labels: cityscapes\n", "task: agriculture-vision"),
    # `task:` not on a line of its own: not rewritten behind the organizer's back
    ("{task: planetscapes-semantic, labels: cityscapes}\n", "a line of its own"),
])
def test_a_config_yaml_the_track_cannot_retask_is_refused(tmp_path, config, why):
    ref = tmp_path / "ref"
    shutil.copytree(SEM_REF, str(ref))
    (ref / "config.yaml").write_text(config)
    source = find_sources(ROOT)["planetscapes"]
    build = tmp_path / "build"
    build.mkdir()
    with pytest.raises(bundle_build.Refused, match=why):
        bundle_build.build_bundles(str(build), source, Schedule(), {
            "semantic": SEM_REF, "instance": str(ref), "panoptic": SEM_REF, "vqa": VQA_REF},
            "raw", lambda line: None, sample=False)
