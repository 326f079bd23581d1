"""bundle.sh end to end: four bundles, reproducible to the byte, complete, and a starting kit that
works on its own. Runs the real shell entry point into temporary folders (never the repo's dist/).
"""
import copy
import datetime
import io
import json
import os
import pathlib
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import yaml

from conftest import AGRIVISION, ROOT  # noqa: E402
from conftest import as_completed, built_once, built_twice, bundle_in_process, completed  # noqa: E402
from conftest import score_either  # noqa: E402

import dry_run  # noqa: E402  (the kit's)
from organizing.bundle import build as bundle_build  # noqa: E402
from organizing.bundle import check as bundle_check  # noqa: E402
from organizing.bundle import reference as bundle_reference  # noqa: E402
from organizing.bundle import smoke as bundle_smoke  # noqa: E402
from organizing.bundle.parts import Built  # noqa: E402
from organizing.bundle.refusal import Refused  # noqa: E402
from platforms.codabench import CODABENCH  # noqa: E402
from platforms.codalab import CODALAB  # noqa: E402
import agrivision_data as rawdata  # noqa: E402
from scoring.registry import DEFAULT, TASKS  # noqa: E402

BUNDLE_SH = os.path.join(ROOT, "bundle.sh")
SAMPLE = os.path.join(AGRIVISION, "reference_data", "boundaries")
NAMES = ["agrivision2021-{}-{}.zip".format(track, platform)
         for track in ("supervised", "semi-supervised") for platform in ("codalab", "codabench")]


def run_bundle(*args, now=None, real=True):
    """bash bundle.sh ARGS; now: the date the tools take for now (BUNDLE_NOW), else today.
    real=False: organizer/bundle.py's main in this process instead (what bundle.sh execs; a test
    that builds several times builds one of them for real)."""
    if not real:
        return bundle_in_process(args, now)
    env = dict(os.environ, PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1")
    env.pop("BUNDLE_NOW", None)
    if now:
        env["BUNDLE_NOW"] = now
    return subprocess.run(["bash", BUNDLE_SH] + [str(a) for a in args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def tiny_reference(root, n=3, size=(64, 64), seed=0):
    """A small raw-layout reference and matching predictions; returns (ids, predictions dir)."""
    rng = np.random.RandomState(seed)
    ids = ["FIELD{:04d}_0-{}-512-{}".format(seed, i * 512, i * 512 + 512) for i in range(n)]
    preds = os.path.join(str(root), "predictions")
    for image_id in ids:
        boundary, mask, labels, storm, pred = rawdata.random_image(rng, *size)
        rawdata.write_reference(os.path.join(str(root), "reference"), image_id, boundary, mask,
                                labels, storm)
        rawdata.save(os.path.join(preds, image_id + ".png"), pred)
    return ids, preds


def build_twice(folder):
    """Two builds from the same tree: the committed sample if present, else a tiny reference."""
    tmp = pathlib.Path(folder)
    extra = []
    if not os.path.isdir(SAMPLE):  # before the sample is generated: still test the tool
        _, preds = tiny_reference(tmp)
        extra = ["--reference", tmp / "reference", "--smoke", preds]
    first = run_bundle("--out", tmp / "a", *extra)
    # The second build skips the dry run: it must not change a byte anyway.
    second = run_bundle("--out", tmp / "b", "--no-smoke", *extra)
    return [completed(first), completed(second), str(tmp / "a"), str(tmp / "b")]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """build_twice, once for the whole run (conftest.built_once: by one xdist worker for all;
    the tests only read what it made)."""
    return built_twice(tmp_path_factory, "agrivision-bundles", build_twice)


def test_builds_all_four_bundles_and_says_so(builds):
    first, second, a, _ = builds
    assert first.returncode == 0, first.stderr + first.stdout
    assert second.returncode == 0, second.stderr + second.stdout
    assert sorted(os.listdir(str(a))) == sorted(NAMES)  # no leftover build folder
    for name in NAMES:
        assert name in first.stdout
    assert "Dry run:" in first.stdout and "scores on all 4 bundles" in first.stdout
    assert "KB" in first.stdout or "MB" in first.stdout


def test_two_builds_are_byte_identical(builds):
    _, _, a, b = builds
    for name in NAMES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_zips_are_reproducible_in_form(builds):
    _, _, a, _ = builds
    with zipfile.ZipFile(str(a / NAMES[0])) as zf:
        infos = zf.infolist()
        assert [i.filename for i in infos] == sorted(i.filename for i in infos)
        assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
        assert {i.external_attr >> 16 for i in infos} == {0o100644}
        inner = zipfile.ZipFile(io.BytesIO(zf.read("starting_kit.zip")))
        assert {i.date_time for i in inner.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_every_bundle_passes_the_check(builds):
    _, _, a, _ = builds
    for name in NAMES:
        report = bundle_check.check_bundle(str(a / name))
        assert not report.errors, report.lines()


def _inner(bundle, member):
    with zipfile.ZipFile(str(bundle)) as zf:
        return zipfile.ZipFile(io.BytesIO(zf.read(member)))


def test_the_workers_zip_is_exactly_the_workers_folder(builds):
    """What the worker receives is the scoring_program folder as git tracks it, at the zip's
    root: no file left out by a list, none added, no cache or hidden file."""
    _, _, a, _ = builds
    names = _inner(a / NAMES[0], "scoring_program.zip").namelist()
    tracked = subprocess.run(["git", "ls-files", "scoring_program"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    assert sorted(names) == sorted(os.path.relpath(p, "scoring_program").replace(os.sep, "/")
                                   for p in tracked)
    assert "metadata" in names and "score.py" in names


def test_starting_kit_is_complete_and_standalone(builds, tmp_path):
    _, _, a, _ = builds
    kit = _inner(a / NAMES[1], "starting_kit.zip")
    names = kit.namelist()
    for needed in ("README.md", "check_submission.py", "make_submission.py", "dry_run.py",
                   "find_scoring.py", "manifest.json", "phase.json", "scoring_program/metadata",
                   "scoring_program/score.py", "scoring_program/scoring/validate.py",
                   "scoring_program/scoring/manifests.py"):
        assert needed in names, needed
    # No labels: of the reference, only its config.yaml (the dry run's settings), if it has one.
    config = os.path.join(os.path.dirname(SAMPLE), "config.yaml")
    assert [n for n in names if n.startswith(("reference", "labels/", "boundaries/"))] == \
        (["reference_config.yaml"] if os.path.isfile(config) else [])
    if os.path.isfile(config):
        with open(config, "rb") as f:
            assert kit.read("reference_config.yaml") == f.read()
    phase = json.loads(kit.read("phase.json").decode())
    assert [c["key"] for c in phase["columns"]] == TASKS[DEFAULT].score_keys
    with open(os.path.join(AGRIVISION, "competition.yaml")) as f:
        phase15 = yaml.safe_load(f)["phases"][1]
    assert phase["execution_time_limit"] == phase15["execution_time_limit"]
    # Extracted alone (no ../scoring_program around it), its checker runs on its own copy.
    kit.extractall(str(tmp_path / "kit"))
    sample = [n for n in names if n.startswith("sample_submission/")]
    if sample:
        proc = subprocess.run([sys.executable, "check_submission.py", "sample_submission"],
                              cwd=str(tmp_path / "kit"), capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "passes every check" in proc.stdout


def test_v2_yaml_is_derived_from_the_v15_yaml(builds):
    _, _, a, _ = builds
    for track in ("supervised", "semi-supervised"):
        with zipfile.ZipFile(str(a / "agrivision2021-{}-codalab.zip".format(track))) as zf:
            v15 = yaml.safe_load(zf.read("competition.yaml"))
        with zipfile.ZipFile(str(a / "agrivision2021-{}-codabench.zip".format(track))) as zf:
            text = zf.read("competition.yaml").decode()
        v2 = yaml.safe_load(text)
        assert v2["version"] == 2 and text.startswith("# GENERATED")
        assert v2["title"] == v15["title"]
        assert [c["key"] for c in v2["leaderboards"][0]["columns"]] == list(v15["leaderboard"]["columns"])
        assert v2["docker_image"] == v15["competition_docker_image"]
        phase, post = v2["phases"]
        assert (phase["max_submissions"], phase["max_submissions_per_day"]) == (20, 2)
        assert phase["end"] == "2021-06-05 23:59:59" and str(phase["start"]) == "2021-04-15"
        # The post-challenge phase: from the second after the deadline, no end; same task.
        assert post["name"] == "Post-challenge" and "end" not in post
        assert str(post["start"]) == "2021-06-06" and post["tasks"] == phase["tasks"] == [0]
        assert len(v2["tasks"]) == 1
    with zipfile.ZipFile(str(a / NAMES[0])) as zf:
        text = zf.read("competition.yaml").decode()
    with open(os.path.join(AGRIVISION, "competition.yaml")) as f:
        # The source's texts with their tokens as the default build fills them: the 2021
        # deadline's year, the sample's 40 images.
        source = yaml.safe_load(f.read().replace("{{year}}", "2021").replace(
            "{{test_set}}", "{} images".format(len(os.listdir(SAMPLE)))))
    shipped = yaml.safe_load(text)
    assert text.startswith("# GENERATED by organizer/bundle.py from competition.yaml")
    # The challenge phase is the source's, dates included (the 2021 history), with the
    # source's default leaderboard rule (best: CodaLab's force_best per phase) ...
    assert shipped["phases"][1] == dict(source["phases"][1],
                                        force_best_submission_to_leaderboard=True)
    assert {k: v for k, v in shipped.items() if k not in ("phases", "end_date")} == \
        dict({k: v for k, v in source.items() if k not in ("phases", "end_date")},
             disallow_leaderboard_modifying=True)
    # ... followed by an open-ended phase from the deadline on, and no competition end.
    post = shipped["phases"][2]
    assert (post["phasenumber"], post["label"], post["start_date"]) == (
        2, "Post-challenge", datetime.date(2021, 6, 6))
    assert "end_date" not in shipped and "phase_never_ends" not in post
    for key in ("scoring_program", "reference_data", "starting_kit", "execution_time_limit",
                "max_submissions_per_day"):
        assert post[key] == source["phases"][1][key], key


def test_tracks_differ_only_in_their_rules_text(builds):
    _, _, a, _ = builds
    docs = {}
    for track in ("supervised", "semi-supervised"):
        with zipfile.ZipFile(str(a / "agrivision2021-{}-codalab.zip".format(track))) as zf:
            docs[track] = yaml.safe_load(zf.read("competition.yaml"))
    sup, semi = docs["supervised"], docs["semi-supervised"]
    assert "Semi-Supervised" in semi["title"] and "Supervised" in sup["title"]
    assert semi["html"]["overview"] != sup["html"]["overview"]
    for key in ("phases", "leaderboard", "competition_docker_image"):
        assert semi[key] == sup[key], key
    assert "end_date" not in semi and "end_date" not in sup


def test_real_reference_is_packed_by_default_and_scores_like_raw(tmp_path):
    ids, preds = tiny_reference(tmp_path)
    scores = {}
    for layout in ("packed", "raw"):
        args = ["--reference", tmp_path / "reference", "--out", tmp_path / layout, "--no-smoke"]
        if layout == "raw":
            args += ["--layout", "raw"]
        # The default (packed) build and its scoring are the real commands; raw in process.
        proc = run_bundle(*args, real=layout == "packed")
        assert proc.returncode == 0, proc.stderr
        assert "bundled in the {} layout".format(layout) in proc.stdout
        bundle = tmp_path / layout / "agrivision2021-supervised-codalab.zip"
        ref_zip = tmp_path / (layout + "-reference.zip")
        with zipfile.ZipFile(str(bundle)) as zf:
            ref_zip.write_bytes(zf.read("reference_data.zip"))
        with zipfile.ZipFile(str(ref_zip)) as zf:
            names = zf.namelist()
        if layout == "packed":
            assert "packed.json" in names and "packed/{}.png".format(ids[0]) in names
            assert not [n for n in names if n.startswith("boundaries/")]
        else:
            assert "boundaries/{}.png".format(ids[0]) in names
        out = tmp_path / (layout + "-out")
        code, _, err = score_either(["--ref", str(ref_zip), "--res", preds, "--out", str(out)],
                                    real=layout == "packed")
        assert code == 0, err
        scores[layout] = (out / "scores.txt").read_text()
    assert scores["packed"] == scores["raw"] and "miou" in scores["raw"]


def test_a_broken_reference_is_refused_with_the_scorers_message(tmp_path):
    ids, _ = tiny_reference(tmp_path)
    os.remove(str(tmp_path / "reference" / "masks" / (ids[1] + ".png")))
    proc = run_bundle("--reference", tmp_path / "reference", "--out", tmp_path / "out")
    assert proc.returncode == 1
    assert "REFUSED, nothing written" in proc.stderr
    assert "masks/{}.png".format(ids[1]) in proc.stderr
    assert os.listdir(str(tmp_path / "out")) == []


# --- dates: open on the day it is built, the organizer's dates, a refusal when nothing is open --

def test_a_default_build_accepts_submissions_today_on_both_platforms(builds):
    _, _, a, _ = builds
    for name in NAMES:
        report = bundle_check.check_bundle(str(a / name))  # now, UTC
        assert report.open_phases == ["Post-challenge"], (name, report.open_phases)
        # ... and the challenge phase is still there, closed, as history
        report = bundle_check.check_bundle(str(a / name), now=datetime.datetime(2021, 5, 1))
        assert report.open_phases == ["Test"], (name, report.open_phases)
    first, _, _, _ = builds
    plan = first.stdout.split("Plan (times UTC; now ", 1)[1]
    assert "    Test             2021-04-15 00:00:00 to 2021-06-05 23:59:59    closed             " \
        "at most 2 a day, 20 in all\n" in plan
    assert "    Post-challenge   2021-06-06 00:00:00 (no end)                  open now           " \
           "at most 2 a day, 20 in all\n" in plan


def _yaml_of(bundle):
    with zipfile.ZipFile(str(bundle)) as zf:
        return yaml.safe_load(zf.read("competition.yaml"))


def test_the_organizers_dates_on_both_platforms(tmp_path):
    """--start moves the challenge, --end sets the deadline (with a time of day, quoted so that
    every importer keeps it); --open-on with the first phase's start date itself passes: both
    platforms open a phase at its start second."""
    _, _ = tiny_reference(tmp_path)
    proc = run_bundle("--reference", tmp_path / "reference", "--no-smoke", "--start",
                      "2030-01-10", "--end", "2030-03-31 18:00:00", "--out", tmp_path / "out",
                      "--open-on", "2030-01-10", now="2029-06-01")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Open on 2030-01-10 00:00:00 UTC (--open-on): Test." in proc.stdout
    names = [n.replace("2021", "2030") for n in NAMES]
    assert sorted(os.listdir(str(tmp_path / "out"))) == sorted(names)
    v15 = _yaml_of(tmp_path / "out" / "agrivision2030-supervised-codalab.zip")
    assert v15["phases"][1]["start_date"] == datetime.date(2030, 1, 10)
    assert v15["phases"][2]["start_date"] == "2030-03-31 18:00:01"   # quoted: kept as a string
    v2 = _yaml_of(tmp_path / "out" / "agrivision2030-supervised-codabench.zip")
    assert [(str(p["start"]), p.get("end")) for p in v2["phases"]] == [
        ("2030-01-10", "2030-03-31 18:00:00"), ("2030-03-31 18:00:01", None)]
    for name in names:
        bundle = str(tmp_path / "out" / name)
        for when, expected in ((datetime.datetime(2030, 1, 9, 23, 59, 59), []),
                               (datetime.datetime(2030, 1, 10), ["Test"]),
                               (datetime.datetime(2030, 3, 31, 18), ["Test"]),
                               (datetime.datetime(2030, 4, 1), ["Post-challenge"])):
            report = bundle_check.check_bundle(bundle, now=when, allow_closed=True)
            assert report.open_phases == expected, (name, when, report.open_phases)
    # (--open-on a moment before the start is refused: test_bundle_check.py,
    # test_a_bundle_that_opens_later_is_accepted_and_says_when.)


# --- a bundle built before its challenge starts: the usual case --------------------------------

FUTURE_NOW = "2026-11-30 12:00:00"
FUTURE = ["agrivision2027-{}-{}.zip".format(track, platform)
          for track in ("supervised", "semi-supervised") for platform in ("codalab", "codabench")]


def build_future(folder):
    """The README's example, --start 2027-03-01 --end 2027-05-31, built on 2026-11-30 with a
    tiny reference of 3 images, dry-run through every bundle."""
    tmp = pathlib.Path(folder)
    _, preds = tiny_reference(tmp)
    # The reference states the final submission's rules: the terms must say its limit.
    (tmp / "reference" / "config.yaml").write_text("final_submission:\n  max_params: "
                                                   "100000000\n")
    proc = run_bundle("--reference", tmp / "reference", "--smoke", preds, "--start",
                      "2027-03-01", "--end", "2027-05-31", "--out", tmp / "out", now=FUTURE_NOW)
    return [completed(proc), str(tmp / "out")]


@pytest.fixture(scope="module")
def future(tmp_path_factory):
    """build_future, once for the whole run (conftest.built_once; read only)."""
    proc, out = built_once(tmp_path_factory, "agrivision-future", build_future)
    return as_completed(proc), pathlib.Path(out)


def test_a_bundle_that_opens_later_builds_checks_and_dry_runs(future):
    proc, out = future
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert sorted(os.listdir(str(out))) == sorted(FUTURE)
    assert "Checked: 4 bundles" in proc.stdout
    assert "predictions scores on all 4 bundles, every leaderboard column filled" in proc.stdout
    # The check alone, through its command: every bundle passes on that day and says when it
    # opens; the CodaLab bundles note what Codabench's v1.5 importer would do to them.
    check = subprocess.run([sys.executable, os.path.join(ROOT, "organizer", "bundle_check.py")] +
                           [str(out / n) for n in FUTURE], capture_output=True, text=True,
                           env=dict(os.environ, BUNDLE_NOW=FUTURE_NOW), timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    for name in FUTURE:
        assert "{}: OK (0 warnings); no phase open yet: Test opens on 2027-03-01 00:00:00 " \
               "UTC".format(name) in check.stdout
    for name in FUTURE[::2]:
        assert "{}: NOTE phases: imported into Codabench, this CodaLab v1.5 bundle ends each " \
               "phase one day early".format(name) in check.stdout
    assert check.stdout.count("NOTE") == 2
    # The dry run through a bundle that opens later: scored in the phase that opens next.
    dry = subprocess.run([sys.executable, os.path.join(ROOT, "kit", "dry_run.py"),
                          str(out.parent / "predictions"), "--bundle", str(out / FUTURE[1]),
                          "--quiet"], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, BUNDLE_NOW=FUTURE_NOW))
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert ", phase Test)" in dry.stdout


def test_the_plan_says_what_to_upload_where_and_when_each_phase_opens(future):
    proc, _ = future
    plan = proc.stdout.split("Plan (times UTC; now 2026-11-30 12:00:00):\n", 1)[1]
    # Codabench first (CodaLab Competitions takes no new challenges), then what participants
    # meet: the source's defaults.
    assert plan == (
        "  Codabench (Benchmarks > Upload), one competition per track:\n"
        "    agrivision2027-supervised-codabench.zip      supervised track\n"
        "    agrivision2027-semi-supervised-codabench.zip semi-supervised track\n"
        "  CodaLab v1.5, for a self-hosted CodaLab server only (Create competition), one "
        "competition per track:\n"
        "    agrivision2027-supervised-codalab.zip        supervised track\n"
        "    agrivision2027-semi-supervised-codalab.zip   semi-supervised track\n"
        "  Leaderboard (--leaderboard best, Codabench Force_Best): each participant's best "
        "scored submission is on the leaderboard, put there automatically: a new one takes its "
        "place only when its mIoU is higher (on an equal mIoU Codabench compares the next "
        "columns, then keeps the earlier one; CodaLab takes the newer). Default because the "
        "rules ask for a final package whose predictions match the team's best mIoU on the "
        "leaderboard.\n"
        "  Registration (--registration approval): every participant waits for your approval "
        "(Codabench registration_auto_approve: false, CodaLab has_registration: True); "
        "--registration auto lets anyone in. Default because the rules ask teams to register "
        "through the organizers' form first.\n"
        "  Fact sheet (Codabench's upload form asks it at every submission, in this order): "
        "Method name (required, on the leaderboard); Code link (URL), if public (optional, on "
        "the leaderboard); Number of model parameters (e.g. 45M) (required, on the "
        "leaderboard); Public datasets used for training or pre-training besides "
        "Agriculture-Vision (none: write none) (required).\n"
        "    Only the upload form requires the required answers: a submission made through "
        "Codabench's API with no answers is accepted (check them before awarding).\n"
        "  Contact (--contact, Codabench): none.\n"
        "  Queue (--queue, Codabench): the default queue, at most 600 s a submission.\n"
        "  Phases (every bundle):\n"
        "    Test             2027-03-01 00:00:00 to 2027-05-31 23:59:59    opens in 90 days   "
        "at most 2 a day, 20 in all\n"
        "    Post-challenge   2027-06-01 00:00:00 (no end)                  opens in 182 days  "
        "at most 2 a day, 20 in all\n"
        "  On Codabench no phase is marked final (is_final_phase is read-only in its "
        "PhaseSerializer): while no phase is open (before Test opens), the competition's page "
        "shows the last phase, Post-challenge.\n"
        "  Do not upload a -codalab.zip to Codabench: its importer of v1.5 bundles ends each "
        "phase one day early (Test would end 2027-05-31 00:00:00 instead of 2027-05-31 "
        "23:59:59 UTC).\n")


def _page(bundle, path):
    with zipfile.ZipFile(str(bundle)) as zf:
        return zf.read(path).decode("utf-8")


def test_pages_and_titles_tell_the_bundles_own_dates_and_test_set(future):
    """Nothing of the 2021 edition is left: the timeline, the terms' dates, the title, the
    names and the test set's size come from the phases and the bundled reference (3 images)."""
    _, out = future
    for name in FUTURE:
        bundle = out / name
        semi = "semi" in name
        overview = _page(bundle, "pages/{}overview.html".format(
            "semi-supervised/" if semi else ""))
        assert "<h3>Timeline (UTC)</h3>\n<ul>\n" \
               "  <li>2027-03-01 00:00 UTC: the Test phase opens.</li>\n" \
               "  <li>2027-05-31 23:59:59 UTC: final submission deadline; the Test phase closes " \
               "and its ranking is final.</li>\n" \
               "  <li>2027-06-01 00:00 UTC: the Post-challenge phase opens, with no end.</li>\n" \
               "</ul>" in overview
        assert "The test set has 3 images." in overview
        assert "Agriculture-Vision Prize Challenge 2027 &mdash;" in overview
        terms = _page(bundle, "pages/{}terms.html".format("semi-supervised/" if semi else ""))
        assert "runs from 2027-03-01 00:00 UTC to the deadline, 2027-05-31 23:59:59 UTC." in terms
        # How winners are verified, with the limit of the reference's final_submission: block
        assert "How winners are verified" in terms and "must be below 100M)" in terms
        assert "the test set (3 images)" in _page(bundle, "pages/data.html")
        with zipfile.ZipFile(str(bundle)) as zf:
            pages = [n for n in zf.namelist() if n.endswith(".html")]
            texts = " ".join(zf.read(n).decode() for n in pages + ["competition.yaml"])
        assert "2021-" not in texts and "19,708" not in texts and "{{" not in texts
        doc = _yaml_of(bundle)
        assert doc["title"].startswith("Agriculture-Vision Prize Challenge 2027: ")
        assert "Prize Challenge 2027 (CVPR 2027)" in doc["description"]
        phases = doc["phases"] if "version" in doc else None
        description = (phases[0] if phases else doc["phases"][1])["description"]
        assert description == "Predictions for the test set (3 images), scored against the " \
                              "hidden labels."


def test_without_the_post_challenge_phase_a_past_challenge_is_refused_unless_intended(tmp_path):
    _, _ = tiny_reference(tmp_path)
    args = ["--reference", tmp_path / "reference", "--no-smoke", "--no-post-challenge"]
    # The refusal through bundle.py's main in process; the build, the real command.
    proc = run_bundle("--out", tmp_path / "a", *args, real=False)
    assert proc.returncode == 1
    assert proc.stderr.count("no phase accepts submissions on") == 4, proc.stderr
    assert "CodaLab finds no active phase" in proc.stderr
    assert "Codabench marks no phase Current" in proc.stderr
    proc = run_bundle("--out", tmp_path / "b", "--allow-closed", *args)
    assert proc.returncode == 0, proc.stderr
    assert "no phase accepts submissions on" not in proc.stdout
    assert "    Test             2021-04-15 00:00:00 to 2021-06-05 23:59:59    closed             " \
        "at most 2 a day, 20 in all\n" in \
        proc.stdout
    # One phase: nothing for Codabench's v1.5 importer to end early.
    assert "Do not upload a -codalab.zip" not in proc.stdout
    v15 = _yaml_of(tmp_path / "b" / "agrivision2021-supervised-codalab.zip")
    assert list(v15["phases"]) == [1] and v15["end_date"] == "2021-06-05 23:59:59"
    v2 = _yaml_of(tmp_path / "b" / "agrivision2021-supervised-codabench.zip")
    assert [p["end"] for p in v2["phases"]] == ["2021-06-05 23:59:59"]


def test_bad_dates_are_a_usage_error(tmp_path):
    proc = run_bundle("--out", tmp_path, "--end", "31/05/2030")
    assert proc.returncode == 2 and "is not a date" in proc.stderr
    proc = run_bundle("--out", tmp_path, "--competition", "nope", real=False)  # (in process)
    assert proc.returncode == 2 and "no competition 'nope' (known: agriculture-vision, " in proc.stderr


# --- the schedule, unit by unit --------------------------------------------------------------

from organizing.bundle import schedule as bundle_schedule  # noqa: E402
from organizing.bundle.source import find_sources  # noqa: E402
from organizing.bundle.to_codabench import to_v2  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _definition():
    """competition.yaml, parsed (once: the property tests ask for it at every example), a
    copy of its own for each caller."""
    if not _DEFINITION:
        with open(os.path.join(AGRIVISION, "competition.yaml")) as f:
            _DEFINITION.append(yaml.safe_load(f))
    return copy.deepcopy(_DEFINITION[0])


_DEFINITION = []


def test_start_moves_every_phase_by_the_same_amount():
    doc = _definition()
    doc["phases"][2] = dict(doc["phases"][1], phasenumber=2, label="Final",
                            start_date=datetime.date(2021, 5, 20))
    out = bundle_schedule.apply_schedule(doc, bundle_schedule.Schedule(
        start=datetime.datetime(2030, 1, 1, 12), end=datetime.datetime(2030, 3, 1)))
    assert [p["start_date"] for p in (out["phases"][1], out["phases"][2], out["phases"][3])] == [
        "2030-01-01 12:00:00", "2030-02-05 12:00:00", "2030-03-01 00:00:01"]
    assert out["phases"][3]["label"] == "Post-challenge" and "end_date" not in out
    assert doc["phases"][1]["start_date"] == datetime.date(2021, 4, 15)   # the input is untouched


def test_a_post_challenge_phase_needs_a_deadline_before_which_the_challenge_starts():
    doc = _definition()
    del doc["end_date"]
    with pytest.raises(ValueError, match="there is none"):
        bundle_schedule.apply_schedule(doc, bundle_schedule.Schedule())
    out = bundle_schedule.apply_schedule(doc, bundle_schedule.Schedule(post_challenge=False))
    assert list(out["phases"]) == [1]
    with pytest.raises(ValueError, match="not before the deadline"):
        bundle_schedule.apply_schedule(_definition(), bundle_schedule.Schedule(
            end=datetime.datetime(2021, 4, 1)))


def test_the_post_challenge_template_comes_from_the_source():
    source = find_sources(ROOT)["agriculture-vision"]
    out = bundle_schedule.apply_schedule(_definition(), bundle_schedule.Schedule(),
                                     dict(source.post_challenge, max_submissions_per_day=5))
    post = out["phases"][2]
    assert post["color"] == "purple" and post["max_submissions_per_day"] == 5
    assert post["label"] == source.post_challenge["label"]


@settings(max_examples=100, deadline=None)
@given(start=st.datetimes(min_value=datetime.datetime(2020, 1, 1),
                          max_value=datetime.datetime(2035, 1, 1)).map(
           lambda d: d.replace(microsecond=0)),
       days=st.integers(1, 400), seconds=st.integers(0, 86399),
       offset=st.integers(-10 ** 8, 10 ** 8), post=st.booleans())
def test_codalab_and_codabench_open_the_same_phase_at_any_time(start, days, seconds, offset,
                                                               post):
    """The v2 yaml is derived from the v1.5 one: at any moment both platforms take
    submissions for the same phase, but at the edges: CodaLab opens a phase at its start
    second, Codabench after it; a v1.5 phase ends when the next starts, a v2 phase at its end,
    one second earlier (Codabench refuses an end equal to the next start)."""
    end = start + datetime.timedelta(days=days, seconds=seconds)
    v15 = bundle_schedule.apply_schedule(_definition(), bundle_schedule.Schedule(
        start=start, end=end, post_challenge=post))
    v2 = yaml.safe_load(yaml.safe_dump(to_v2(v15)))
    v15 = yaml.safe_load(yaml.safe_dump(v15))   # as the platforms read the written files
    now = end + datetime.timedelta(seconds=offset)
    edges = [start, end, end + datetime.timedelta(seconds=1)]
    if any(abs((now - s).total_seconds()) < 1 for s in edges):
        return
    assert [CODALAB.phase_label(p) for p in CODALAB.open_phases(v15, now)] == \
        [CODABENCH.phase_label(p) for p in CODABENCH.open_phases(v2, now)]


def test_a_second_competition_is_a_source_folder(tmp_path):
    """Another competition: a folder with source.json, its competition.yaml and pages; the
    same code builds it (here with Agriculture-Vision's scoring program and sample)."""
    folder = tmp_path / "competitions" / "other"
    (folder / "pages").mkdir(parents=True)
    for page in ("overview", "evaluation", "data", "terms"):
        (folder / "pages" / (page + ".html")).write_text("<p>{}</p>".format(page))
    (folder / "logo.png").write_bytes(open(os.path.join(AGRIVISION, "logo.png"),
                                           "rb").read())
    doc = _definition()
    doc["title"] = "Another challenge"
    doc["image"] = "logo.png"
    doc["html"] = {p: "pages/{}.html".format(p) for p in ("overview", "evaluation", "data",
                                                          "terms")}
    (folder / "competition.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    (folder / "source.json").write_text(json.dumps({
        "name": "other", "prefix": "other2030", "root": ".", "base_track": "main",
        "scoring_program": os.path.relpath(os.path.join(ROOT, "scoring_program"), str(folder)),
        "sample_reference": os.path.relpath(os.path.join(AGRIVISION, "reference_data"), str(folder)),
        "sample_submission": ""}))
    sources = find_sources(str(tmp_path))
    assert list(sources) == ["other"]
    source = sources["other"]
    os.mkdir(str(tmp_path / "build"))
    built = bundle_build.build_bundles(str(tmp_path / "build"), source,
                                       bundle_schedule.Schedule(), source.sample_reference,
                                       "raw", lambda line: None).built
    assert [b.name for b in built] == ["other2030-main-codalab.zip", "other2030-main-codabench.zip"]
    for b in built:
        report = bundle_check.check_bundle(b.path)
        assert not report.errors, report.lines()
        assert report.open_phases == ["Post-challenge"]
        with zipfile.ZipFile(b.path) as zf:
            assert "pages/terms.html" in zf.namelist() and "logo.png" in zf.namelist()
            assert yaml.safe_load(zf.read("competition.yaml"))["title"] == "Another challenge"


def test_a_bare_deadline_date_means_the_end_of_that_day():
    assert bundle_schedule.parse_date("2030-03-31", end_of_day=True) == \
        datetime.datetime(2030, 3, 31, 23, 59, 59)
    assert bundle_schedule.parse_date("2030-03-31 18:00", end_of_day=True) == \
        datetime.datetime(2030, 3, 31, 18, 0)
    assert bundle_schedule.parse_date("2030-03-31") == datetime.datetime(2030, 3, 31)
    with pytest.raises(ValueError, match="is not a date"):
        bundle_schedule.parse_date("31/03/2030")


def test_the_smoke_run_passes_on_a_detailed_page_at_risk(monkeypatch):
    """The v1 watcher timing is the scoring program's business: said, not a refusal."""
    def fake_main(argv, outcomes=None):
        print("Detailed results on CodaLab v1: AT RISK: late")
        return 0
    monkeypatch.setattr(dry_run, "main", fake_main)
    said = []
    built = [Built("x-{}.zip".format(i), "/nowhere", "", "codalab") for i in range(2)]
    bundle_smoke.smoke(built, "sub", said.append)
    assert said[1:] == ["WARNING (scoring program): Detailed results on CodaLab v1: AT RISK: late"]


def test_a_source_without_a_name_is_refused_with_its_path(tmp_path):
    (tmp_path / "competitions" / "x").mkdir(parents=True)
    (tmp_path / "competitions" / "x" / "source.json").write_text('{"prefix": "x"}')
    with pytest.raises(ValueError, match="source.json: a source needs"):
        find_sources(str(tmp_path))


def test_start_alone_moves_the_deadline_too():
    """The challenge keeps its length: 2021-04-15 .. 2021-06-05 23:59:59 is 51 days 23:59:59."""
    out = bundle_schedule.apply_schedule(_definition(), bundle_schedule.Schedule(
        start=datetime.datetime(2027, 3, 1)))
    assert out["phases"][1]["start_date"] == datetime.date(2027, 3, 1)
    assert out["phases"][2]["start_date"] == datetime.date(2027, 4, 22)   # deadline + 1 s
    assert bundle_schedule.schedule_deadline(_definition(), bundle_schedule.Schedule(
        start=datetime.datetime(2027, 3, 1))) == datetime.datetime(2027, 4, 21, 23, 59, 59)


from organizing.bundle import pages as bundle_pages  # noqa: E402
from platforms.dates import Span  # noqa: E402


def _span(label, start, last):
    return Span(label, start, last)


def test_the_page_template_fills_every_token_from_the_phases_and_the_test_sets():
    at = datetime.datetime
    phases = [_span("Dev", at(2026, 11, 16), at(2027, 1, 31, 23, 59, 59)),
              _span("Test", at(2027, 2, 1), at(2027, 5, 31, 23, 59, 59)),
              _span("Post-challenge", at(2027, 6, 1), None)]
    ctx = bundle_pages.context(phases, at(2027, 5, 31, 23, 59, 59),
                               [(12, "images", "Semantic labeling"),
                                (1234, "questions", "VQA")])
    text = ("{{year}}|{{ test_set }}|{{challenge_period}}|{{deadline}}\n{{timeline}}")
    assert bundle_pages.render(text, ctx, "page") == (
        "2027|12 images (Semantic labeling) and 1,234 questions (VQA)|"
        "from 2026-11-16 00:00 UTC to the deadline, 2027-05-31 23:59:59 UTC|"
        "2027-05-31 23:59:59 UTC\n"
        "<ul>\n"
        "  <li>2026-11-16 00:00 UTC: the Dev phase opens.</li>\n"
        "  <li>2027-02-01 00:00 UTC: the Test phase opens (the Dev phase closes).</li>\n"
        "  <li>2027-05-31 23:59:59 UTC: final submission deadline; the Test phase closes and "
        "its ranking is final.</li>\n"
        "  <li>2027-06-01 00:00 UTC: the Post-challenge phase opens, with no end.</li>\n"
        "</ul>")
    # The year is the deadline's (Planetscapes 2027 starts in November 2026), else the start's.
    assert bundle_pages.year_of(phases, None) == 2026
    # Every date the template writes is a phase's start or end: the check accepts the page.
    assert bundle_check.stray_dates(bundle_pages.render(text, ctx, "page"), phases) == []
    # The final submission's limit: 150M by default, as the challenge writes it
    assert bundle_pages.render("{{max_params}}", ctx, "page") == "150M"
    assert [bundle_pages.millions(n) for n in (100000000, 1500000000, 123456789)] == \
        ["100M", "1,500M", "123,456,789"]
    with pytest.raises(ValueError, match=r"page: unknown template token \{\{timline\}\}"):
        bundle_pages.render("{{timline}}", ctx, "page")


def test_the_check_finds_page_dates_that_are_no_phases():
    at = datetime.datetime
    phases = [_span("Test", at(2027, 3, 1), at(2027, 5, 31, 23, 59, 59)),
              _span("Post-challenge", at(2027, 6, 1), None)]
    page = ("2027-03-01: opens; 2027-05-31 23:59:59 deadline; 2027-05-31 23:59 too; 2027-06-01 "
            "00:00 post; 2021-04-15: old; 2027-05-31 18:00 wrong time; 2027-06-01 12:00:00; "
            "id 12345-2027-03-01-1 is not a date")
    assert bundle_check.stray_dates(page, phases) == [
        "2021-04-15", "2027-05-31 18:00", "2027-06-01 12:00:00"]


@settings(max_examples=50, deadline=None)
@given(start=st.datetimes(min_value=datetime.datetime(2020, 1, 1),
                          max_value=datetime.datetime(2035, 1, 1)).map(
           lambda d: d.replace(microsecond=0)),
       days=st.integers(1, 400), seconds=st.integers(0, 86399), post=st.booleans())
def test_the_template_and_the_check_agree_on_any_schedule(start, days, seconds, post):
    """Whatever the dates, the pages the template writes pass the check's date rule on both
    forms of the yaml, and name the deadline's year."""
    end = start + datetime.timedelta(days=days, seconds=seconds)
    schedule = bundle_schedule.Schedule(start=start, end=end, post_challenge=post)
    v15 = yaml.safe_load(yaml.safe_dump(bundle_schedule.apply_schedule(_definition(), schedule)))
    v2 = yaml.safe_load(yaml.safe_dump(to_v2(v15)))
    ctx = bundle_pages.context(CODALAB.spans(v15), end, [(5, "images", "t")])
    page = bundle_pages.render("{{year}} {{timeline}} {{challenge_period}} {{deadline}}", ctx, "p")
    assert page.startswith(str(end.year) + " <ul>")
    assert bundle_check.stray_dates(page, CODALAB.spans(v15)) == []
    assert bundle_check.stray_dates(page, CODABENCH.spans(v2)) == []


@pytest.mark.parametrize("task", ["[a, b]", "{x: 1}", "7", "nope"])
def test_a_reference_whose_task_is_not_a_task_name_is_refused(tmp_path, task):
    """task: [a, b] was a TypeError in bundle.py (the registry's `in` on an unhashable key)."""
    ref = tmp_path / "ref"
    rawdata.write_small_reference(str(ref))
    (ref / "config.yaml").write_text("task: {}\n".format(task))
    with pytest.raises(Refused, match="unknown task"):
        bundle_reference.open_reference(str(ref))


def test_the_terms_say_how_winners_are_verified_with_the_default_limit(builds):
    _, _, a, _ = builds
    for name in NAMES:
        terms = _page(a / name, "pages/{}terms.html".format(
            "semi-supervised/" if "semi" in name else ""))
        assert "How winners are verified" in terms and "must be below 150M)" in terms
        assert "check_final.py" in terms


def test_a_broken_final_submission_block_is_refused_when_bundling(tmp_path):
    tiny_reference(tmp_path)
    ref = tmp_path / "reference"
    assert bundle_reference.final_rules(
        bundle_reference.open_reference(str(ref))[0].ref_config).max_params == 150000000
    (ref / "config.yaml").write_text("final_submission:\n  max_params: lots\n")
    with pytest.raises(Refused, match="max_params must be a positive integer"):
        bundle_reference.final_rules(bundle_reference.open_reference(str(ref))[0].ref_config)
