"""What the organizer chooses for the platforms (issue 25), through `bash bundle.sh`: every
bundle of every competition built with every new option, its yaml compared with the keys the
platforms' code reads, and what participants are told (plan, pages, dry run).

One build per option set, shared by the module (a build without the dry run takes about 2 s).
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import yaml

from conftest import AGRIVISION, ROOT  # noqa: E402
from conftest import as_completed, built_once, bundle_in_process, completed  # noqa: E402

import agrivision_data as rawdata  # noqa: E402
from organizing.bundle import settings as bundle_settings  # noqa: E402
from platforms import codabench_definition  # noqa: E402
import codabench_source  # noqa: E402

BUNDLE_SH = os.path.join(ROOT, "bundle.sh")
DRY_RUN = os.path.join(ROOT, "kit", "dry_run.py")
SAMPLE_SUBMISSION = os.path.join(AGRIVISION, "starting_kit", "sample_submission")
PLANETSCAPES = os.path.join(ROOT, "competitions", "planetscapes")
AV_REF_REL = "competitions/agriculture-vision/reference_data"   # as the docs write it
QUEUE = "0f6e2c9a-7b1d-4c38-9a54-3e2b1d0c4f77"
NOW = "2026-11-30 12:00:00"
OTHER_EDITION = "agrivision2019-supervised-codabench.zip"
DOCS_COMMAND = ["bundle.sh", "--reference", AV_REF_REL, "--start", "2027-03-01", "--end",
                "2027-05-31"]
DOCS_NOW = "2026-11-30 20:18:57"

# The keys Codabench's v2 unpacker reads and the values it accepts, parsed from a verbatim
# extract of codalab/codabench's source at the commit it names (tests/support/
# codabench_source.py; test_the_extract_is_the_platforms_source checks it against a clone).
EXTRACT = codabench_source.committed()
UNPACKER_READS = codabench_source.read_keys(EXTRACT)
CODABENCH_RULES = codabench_source.submission_rules(EXTRACT)
# CodaLab's keys for the rule (codalab/codalab-competitions c7ef5e28): the competition's
# force_submission_to_leaderboard (apps/web/models.py:270, read at apps/web/tasks.py:624) and
# disallow_leaderboard_modifying (models.py:271), the phase's
# force_best_submission_to_leaderboard (models.py:895, read at tasks.py:619-629).


def start(*args, now=NOW, as_user=False):
    """bash bundle.sh ARGS, started (the module's builds run side by side); as_user: without
    the tests' shortened CodaLab v1 page wait (tests/conftest.py), as an organizer runs it."""
    env = dict(os.environ, PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1", BUNDLE_NOW=now)
    if as_user:
        env.pop("SCORING_HTML_SETTLE_SECONDS", None)
    return subprocess.Popen(["bash", BUNDLE_SH] + [str(a) for a in args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(popen):
    out, err = popen.communicate(timeout=300)
    return subprocess.CompletedProcess(popen.args, popen.returncode, out, err)


def run(*args, now=NOW):
    return finish(start(*args, now=now))


def dry_run(*args, now=NOW, tmp=None):
    env = dict(os.environ, BUNDLE_NOW=now)
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    return subprocess.run([sys.executable, DRY_RUN] + [str(a) for a in args], env=env,
                          capture_output=True, text=True, timeout=300)


def v2_and_v15(out):
    """{bundle name: parsed competition.yaml} of every bundle in out."""
    docs = {}
    for name in sorted(n for n in os.listdir(str(out)) if n != OTHER_EDITION):
        with zipfile.ZipFile(str(out / name)) as zf:
            docs[name] = yaml.safe_load(zf.read("competition.yaml"))
    return docs


def page(bundle, path):
    with zipfile.ZipFile(str(bundle)) as zf:
        return zf.read(path).decode("utf-8")


def change_a_label(reference, name):
    """Pixel (0, 0) of image `name` valid and its water label flipped: other labels, same
    image."""
    from PIL import Image
    for layer in ("boundaries", "masks", os.path.join("labels", "water")):
        path = os.path.join(str(reference), layer, name)
        pixels = np.array(Image.open(path))
        pixels[0, 0] = (0 if pixels[0, 0] else 255) if layer.startswith("labels") else 255
        Image.fromarray(pixels).save(path)


def validation_set(folder):
    """Development references that hold no test label (bundle.sh refuses any that does):
    the Agriculture-Vision sample's images with one boundary pixel changed each (the same ids,
    so the sample submission is scored in the Development phase too); Planetscapes semantic
    and VQA samples of another seed, the VQA one with question ids of its own."""
    av = os.path.join(folder, "av-validation")
    shutil.copytree(os.path.join(ROOT, AV_REF_REL), av)
    for name in os.listdir(os.path.join(av, "masks")):
        change_a_label(av, name)
    sem, vqa = os.path.join(folder, "ps-semantic"), os.path.join(folder, "ps-vqa")
    for command in (["make_semantic_sample.py", "--out", sem, "--submission",
                     os.path.join(folder, "ps-semantic-submission"), "--images", "3"],
                    ["make_vqa_sample.py", "--out", vqa, "--questions", "30"]):
        subprocess.run([sys.executable, os.path.join(PLANETSCAPES, command[0])] + command[1:] +
                       ["--seed", "7"], check=True, capture_output=True, timeout=120)
    for name in ("questions.json", "annotations.json"):
        path = os.path.join(vqa, name)
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:   # question ids the test set does not use
            f.write(re.sub(r'("question_id": )(\d+)', lambda m: m.group(1) + "9" + m.group(2),
                           text))
    return av, sem, vqa


def build_all(folder):
    """Every competition's bundles, with the defaults and with every new option."""
    tmp = pathlib.Path(folder)
    # Another edition's bundle already in the output folder: the build names it (issue 26, 19).
    os.makedirs(str(tmp / "options"))
    (tmp / "options" / OTHER_EDITION).write_bytes(b"not ours")
    # The organizer's own reference (3 tiny images): the kits get a placeholder sample.
    rng = np.random.RandomState(5)
    for i in range(3):
        boundary, mask, labels, storm, _ = rawdata.random_image(rng, 48, 40)
        rawdata.write_reference(str(tmp / "own"), "OWN{}_0-0-512-512".format(i), boundary,
                                mask, labels, storm)
    av_dev, sem_dev, vqa_dev = validation_set(str(tmp))
    started = {
        "own": start("--reference", tmp / "own", "--out", tmp / "own-out", "--no-smoke",
                     "--kits", tmp / "own-kits"),
        # The Development phase on validation labels of other images than the test set's
        # (the sample reference; the sample submission its predictions).
        "dev": start("--reference", tmp / "own", "--dev-reference", AV_REF_REL, "--out",
                     tmp / "dev", "--no-smoke", "--kits", tmp / "dev-kits",
                     "--dev-start", "2021-04-01"),
        # docs/bundle.md's example, as it says: the sample as the reference, dry-run (the
        # longest build, started first).
        "docs": start(*DOCS_COMMAND[1:], "--out", tmp / "docs", now=DOCS_NOW, as_user=True),
        # Every new option at once, the Development phase on validation labels of the
        # sample's images.
        "options": start("--out", tmp / "options", "--no-smoke", "--leaderboard", "last",
                       "--registration", "auto", "--contact", "organizers@example.org",
                       "--queue", QUEUE, "--dev-reference", av_dev,
                       "--dev-max-submissions", "7", "--dev-max-per-day", "3"),
        "ps-options": start("--competition", "planetscapes", "--out", tmp / "ps-options",
                          "--no-smoke", "--leaderboard", "chosen", "--contact",
                          "organizers@example.org", "--queue", QUEUE,
                          "--dev-reference", "semantic=" + sem_dev,
                          "--dev-reference", "vqa=" + vqa_dev,
                          # One validation folder for the three pixel tracks.
                          "--dev-reference", "panoptic=" + sem_dev,
                          "--dev-reference", "instance=" + sem_dev),
        "ps-merged": start("--competition", "planetscapes", "--merged", "--out",
                         tmp / "ps-merged", "--no-smoke", "--leaderboard", "last",
                         "--registration", "auto", "--contact", "organizers@example.org"),
    }
    made = {k: finish(p) for k, p in started.items()}
    for key, proc in made.items():
        assert proc.returncode == 0, key + ":\n" + proc.stdout + proc.stderr
    return {k: [completed(p), str(tmp / (k + "-out" if k == "own" else k))]
            for k, p in made.items()}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """build_all, once for the whole run (conftest.built_once: by one xdist worker for all;
    the tests only read what it made)."""
    made = built_once(tmp_path_factory, "codabench-bundles", build_all)
    return {k: (as_completed(p), pathlib.Path(out)) for k, (p, out) in made.items()}


def test_the_extract_is_the_platforms_source():
    """The committed extract is codalab/codabench's code at its commit, byte for byte (where a
    clone is at hand: CODABENCH_GIT_DIR or the session's mirror; CI has none)."""
    git_dir = codabench_source.git_dir()
    if git_dir is None:
        pytest.skip("no clone of codalab/codabench holding {} (set CODABENCH_GIT_DIR)".format(
            codabench_source.COMMIT))
    assert codabench_source.extract(git_dir) == EXTRACT


def test_the_check_knows_what_the_unpacker_reads_and_accepts():
    """The Codabench model's lists (what its definition check and the settings apply) are the
    platform's, as parsed from its code."""
    assert {k: sorted(v) for k, v in codabench_definition.READ.items()} == \
        {k: sorted(v) for k, v in UNPACKER_READS.items()}
    # Every kind read somewhere (a parser that found nothing would make this test vacuous).
    assert all(UNPACKER_READS.values()) and "submission_rule" in UNPACKER_READS["leaderboards"]
    assert list(codabench_definition.SUBMISSION_RULES) == CODABENCH_RULES
    assert list(codabench_definition.AUTO_RULES) == codabench_source.auto_rules(EXTRACT)
    assert sorted(bundle_settings.CODABENCH_RULE.values()) == ["Add", "Force_Best", "Force_Last"]
    keys, types = codabench_source.fact_sheet_rules(EXTRACT)
    assert (set(codabench_definition.FACT_SHEET_KEYS), set(codabench_definition.FACT_SHEET_TYPES)) == \
        (keys, types)
    # Documented (Yaml-Structure.md:93) but read nowhere: our bundles must not rely on it.
    assert "accepts_only_result_submissions" not in UNPACKER_READS["phases"]
    assert "accepts_only_result_submissions" not in EXTRACT


def test_every_key_of_every_v2_bundle_is_one_the_unpacker_reads(builds):
    checked = 0
    for _, out in builds.values():
        for name, doc in v2_and_v15(out).items():
            if not name.endswith("-codabench.zip"):
                continue
            checked += 1
            assert set(doc) <= set(UNPACKER_READS[""]), name
            for kind in ("pages", "tasks", "phases", "leaderboards"):
                for item in doc[kind]:
                    assert set(item) <= set(UNPACKER_READS[kind]), (name, kind, item)
            for board in doc["leaderboards"]:
                assert board["submission_rule"] in CODABENCH_RULES
                for col in board["columns"]:
                    assert set(col) <= set(UNPACKER_READS["columns"]), (name, col)
    assert checked == 2 + 2 + 2 + 2 + 4 + 5   # every Codabench bundle built, the merged one too


def test_the_leaderboard_rule_in_each_platforms_own_keys(builds):
    expect = {"docs": ("Force_Best", "best"), "own": ("Force_Best", "best"),
              "dev": ("Force_Best", "best"),
              "options": ("Force_Last", "last"),
              "ps-options": ("Add", "chosen"), "ps-merged": ("Force_Last", "last")}
    for key, (proc, out) in builds.items():
        rule, ours = expect[key]
        for name, doc in v2_and_v15(out).items():
            if name.endswith("-codabench.zip"):
                # The merged bundle's phases run two tasks: Add, whatever the option.
                merged = len(doc["tasks"]) > 1 and len(doc["phases"][0]["tasks"]) > 1
                assert [b["submission_rule"] for b in doc["leaderboards"]] == [
                    "Add" if merged else rule], name
                continue
            phases = list(doc["phases"].values())
            assert [p.get("force_best_submission_to_leaderboard") for p in phases] == \
                [True if ours == "best" else None] * len(phases), name
            assert doc.get("force_submission_to_leaderboard") is \
                (True if ours == "last" else None), name
            assert doc.get("disallow_leaderboard_modifying") is \
                (True if ours != "chosen" else None), name
        assert "Leaderboard (--leaderboard {}, Codabench {})".format(ours, rule) in proc.stdout
    # The reason for the source's default, beside the choice (the plan).
    best = "best mIoU on the leaderboard"
    assert "mIoU is higher (on an equal mIoU Codabench compares the next columns, then keeps " \
           "the earlier one; CodaLab takes the newer). Default because the rules ask for a " \
           "final package whose predictions match the team's " + best in builds["docs"][0].stdout
    assert "even when it scores lower than the one before. (The source's default is best, " \
           "because the rules ask for a final package whose predictions match the team's " + \
           best + ".)" in builds["options"][0].stdout
    assert "(The source's default is best, because a benchmark's leaderboard shows each " \
           "participant's best result.)" in builds["ps-options"][0].stdout


def test_registration_contact_and_queue(builds):
    for key, (proc, out) in builds.items():
        approval = key in ("docs", "own", "dev", "ps-options")
        for name, doc in v2_and_v15(out).items():
            if name.endswith("-codabench.zip"):
                assert doc["registration_auto_approve"] is (not approval), name
                assert doc.get("contact_email") == (None if key in ("docs", "own", "dev") else
                                                    "organizers@example.org"), name
                assert doc.get("queue") == (QUEUE if key in ("options", "ps-options")
                                            else None), name
            else:
                # CodaLab's Competition has no such fields: written, they would crash it.
                assert doc["has_registration"] is approval, name
                assert not {"contact_email", "queue", "fact_sheet"} & set(doc), name
        assert "Registration (--registration {}): ".format(
            "approval" if approval else "auto") in proc.stdout
    form = "because the rules ask teams to register through the organizers' form first"
    assert "--registration auto lets anyone in. Default " + form + "." in builds["own"][0].stdout
    assert "(Codabench registration_auto_approve: true, CodaLab has_registration: False). " \
           "(The source's default is approval, " + form + ".)" in builds["options"][0].stdout


def _codabench_accepts_fact_sheet(sheet):
    """A naive replay of api/serializers/competitions.py:287-303 (validate_fact_sheet), and the
    string comparisons of api/serializers/submissions.py:148 and api/views/competitions.py:778."""
    for key, value in sheet.items():
        if set(value) != {"key", "type", "title", "selection", "is_required",
                          "is_on_leaderboard"}:
            return False
        if key != value["key"] or value["type"] not in ("checkbox", "text", "select"):
            return False
        if value["is_required"] not in ("true", "false") or \
                value["is_on_leaderboard"] not in ("true", "false"):
            return False
    return True


def test_the_fact_sheet_comes_from_the_source_and_codabench_accepts_it(builds):
    import json
    for key, source in (("own", AGRIVISION), ("ps-options", PLANETSCAPES)):
        with open(os.path.join(ROOT, source, "source.json")) as f:
            sheet = json.load(f)["settings"]["fact_sheet"]
        _, out = builds[key]
        for name, doc in v2_and_v15(out).items():
            if name.endswith("-codabench.zip"):
                assert doc["fact_sheet"] == sheet and _codabench_accepts_fact_sheet(sheet)
    with open(os.path.join(AGRIVISION, "source.json")) as f:
        sheet = json.load(f)["settings"]["fact_sheet"]
    # What the Agriculture-Vision rules ask teams to declare, asked at every submission.
    assert [q["key"] for q in sheet.values()] == ["method", "code_url", "parameters",
                                                  "training_data"]
    assert [q["is_required"] for q in sheet.values()] == ["true", "false", "true", "true"]


def test_the_pages_state_the_rule_the_fact_sheet_and_the_limits(builds):
    _, default = builds["own"]
    _, options = builds["options"]
    for track in ("supervised", "semi-supervised"):
        overview = page(default / "agrivision2021-{}-codabench.zip".format(track),
                        "pages/{}overview.html".format(
                            "" if track == "supervised" else "semi-supervised/"))
        assert "At most <strong>2 submissions a day and 20 in total</strong> in the Test and " \
               "Post-challenge phases (each counts its own)." in overview
        assert "Each participant's best scored submission is on the leaderboard, put there " \
               "automatically: a new one takes its place only when its mIoU is higher" in overview
        assert "<p>With every submission, Codabench asks:</p>\n<ul>\n  <li>Method name " \
               "(required, on the leaderboard)</li>\n  <li>Code link (URL), if public " \
               "(optional, on the leaderboard)</li>" in overview
        terms = page(default / "agrivision2021-{}-codalab.zip".format(track),
                     "pages/{}terms.html".format(
                         "" if track == "supervised" else "semi-supervised/"))
        assert "At most <strong>2 submissions a day and 20 in total</strong>" in terms
        # CodaLab asks no fact sheet: its pages do not say it does (the same page otherwise).
        codalab = page(default / "agrivision2021-{}-codalab.zip".format(track),
                       "pages/{}overview.html".format(
                           "" if track == "supervised" else "semi-supervised/"))
        assert "asks" not in codalab and "Method name" not in codalab
        assert codalab.replace("\n\n", "\n") == re.sub(r"<p>With every submission.*?</ul>", "",
                                                      overview, flags=re.S).replace("\n\n", "\n")
    overview = page(options / "agrivision2021-supervised-codabench.zip",
                    "pages/overview.html")
    assert "At most <strong>3 submissions a day and 7 in total</strong> in the Development " \
           "phase; <strong>2 submissions a day and 20 in total</strong> in the Test and " \
           "Post-challenge phases" in overview
    assert "Each participant's latest scored submission is on the leaderboard" in overview
    assert "the Development phase opens" in overview
    _, ps = builds["ps-options"]
    assert "is not on the leaderboard until its participant puts it there" in page(
        ps / "planetscapes2027-vqa-codabench.zip", "pages/vqa/overview.html")


def test_the_development_phase_on_both_platforms(builds):
    _, out = builds["options"]
    docs = v2_and_v15(out)
    v15 = docs["agrivision2021-supervised-codalab.zip"]
    dev, test, post = [v15["phases"][n] for n in (1, 2, 3)]
    assert (dev["label"], dev["reference_data"], dev["max_submissions"],
            dev["max_submissions_per_day"]) == ("Development", "dev_reference_data.zip", 7, 3)
    assert str(dev["start_date"]) == "2021-03-18"   # 28 days before Test
    assert (test["label"], test["reference_data"], post["label"]) == (
        "Test", "reference_data.zip", "Post-challenge")
    v2 = docs["agrivision2021-supervised-codabench.zip"]
    assert [(p["name"], p["tasks"]) for p in v2["phases"]] == [
        ("Development", [0]), ("Test", [1]), ("Post-challenge", [1])]
    assert v2["phases"][0]["end"] == "2021-04-14 23:59:59"
    # The plan shows each phase's own limits.
    assert "    Development      2021-03-18 00:00:00 to 2021-04-14 23:59:59    closed             " \
           "at most 3 a day, 7 in all\n" in builds["options"][0].stdout
    assert [t["reference_data"] for t in v2["tasks"]] == ["dev_reference_data.zip",
                                                          "reference_data.zip"]
    with zipfile.ZipFile(str(out / "agrivision2021-supervised-codabench.zip")) as zf:
        assert "dev_reference_data.zip" in zf.namelist()


def test_the_development_phase_through_the_kit(builds, tmp_path):
    """Validation predictions, zipped by the kit against its dev_manifest.json (the test
    manifest refuses them: other images), are scored in the Development phase."""
    _, out = builds["dev"]
    kit = out.parent / "dev-kits" / "supervised"
    with open(str(kit / "dev_manifest.json")) as f:
        dev = f.read()
    assert sorted(n[:-4] for n in os.listdir(SAMPLE_SUBMISSION)) == \
        sorted(re.findall(r'^ "([^"]+)":', dev, re.M))
    make = os.path.join(str(kit), "make_submission.py")
    refused = subprocess.run([sys.executable, make, SAMPLE_SUBMISSION, "-o",
                              str(tmp_path / "x.zip")], capture_output=True, text=True,
                             cwd=str(kit), timeout=120)
    assert refused.returncode != 0 and not (tmp_path / "x.zip").exists()
    made = subprocess.run([sys.executable, make, SAMPLE_SUBMISSION, "-o",
                           str(tmp_path / "dev.zip"), "--manifest", "dev_manifest.json"],
                          capture_output=True, text=True, cwd=str(kit), timeout=120)
    assert made.returncode == 0, made.stdout + made.stderr
    # --dev-start: the phase opens then and closes the second before Test opens.
    docs = v2_and_v15(out)
    v15 = docs["agrivision2021-supervised-codalab.zip"]["phases"]
    assert (str(v15[1]["start_date"]), v15[1]["label"], str(v15[2]["start_date"])) == (
        "2021-04-01", "Development", "2021-04-15")
    v2 = docs["agrivision2021-supervised-codabench.zip"]["phases"][0]
    assert (str(v2["start"]), v2["end"], v2["max_submissions"],
            v2["max_submissions_per_day"]) == ("2021-04-01", "2021-04-14 23:59:59", 100, 5)
    for name in ("agrivision2021-supervised-codabench.zip",
                 "agrivision2021-supervised-codalab.zip"):
        proc = dry_run(tmp_path / "dev.zip", "--bundle", out / name, "--quiet",
                       now="2021-04-05")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert ", phase Development)" in proc.stdout
    # Without a Development phase there is no such file.
    assert not (out.parent / "own-kits" / "supervised" / "dev_manifest.json").exists()


def test_the_dry_run_learns_the_phase_and_the_rule(builds):
    _, out = builds["options"]
    proc = dry_run(SAMPLE_SUBMISSION, "--bundle", out / "agrivision2021-supervised-codabench.zip",
                   "--quiet", now="2021-03-20")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ", phase Development)" in proc.stdout
    assert "On the leaderboard (rule: last): this row replaces the participant's earlier one " \
           "on the leaderboard." in proc.stdout
    assert "At the upload, Codabench asks (fact sheet): Method name (required); Code link " \
           "(URL), if public (optional); Number of model parameters" in proc.stdout


def test_the_dry_run_says_a_chosen_row_waits_for_its_participant(builds):
    _, out = builds["ps-options"]
    sample = os.path.join(PLANETSCAPES, "starting_kit", "vqa", "sample_submission")
    for platform in ("codabench", "codalab"):
        proc = dry_run(sample, "--bundle", out / "planetscapes2027-vqa-{}.zip".format(platform),
                       "--quiet")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "On the leaderboard (rule: chosen): this row is not on the leaderboard until " \
               "the participant puts it there." in proc.stdout, platform


def test_bad_options_are_refused_before_anything_is_built(tmp_path):
    cases = [
        (["--contact", "organizers"], "--contact 'organizers' is not an email address"),
        (["--queue", "gpu-queue"], "--queue 'gpu-queue': give the queue's vhost, a UUID"),
        (["--dev-reference", AV_REF_REL, "--dev-start", "2021-05-01"],
         "the Development phase must start before the Test phase"),
        (["--dev-start", "2021-03-01"], "--dev-start: the Development phase comes with"),
        (["--dev-reference", AV_REF_REL, "--dev-max-per-day", "0"], "0 is no limit"),
    ]
    for i, (args, phrase) in enumerate(cases):
        # The first through bash bundle.sh, the others through bundle.py's main in process.
        proc = run("--out", tmp_path / "out", *args) if i == 0 else \
            bundle_in_process(["--out", tmp_path / "out"] + args, now=NOW)
        assert proc.returncode == 2 and phrase in proc.stderr, (args, proc.stderr)
        assert not os.path.exists(str(tmp_path / "out")), args


def test_a_development_reference_holding_test_labels_is_refused(tmp_path):
    """Issue 32: the Development phase scores every participant against its reference, up to
    its limits: the test reference itself, a copy of it, or one sharing units (a VQA set:
    questions) with the same labels would leak the test labels. A usage error that says why,
    before anything is built."""
    partial = tmp_path / "partial"
    shutil.copytree(os.path.join(ROOT, AV_REF_REL), str(partial))
    change_a_label(partial, sorted(os.listdir(str(partial / "masks")))[0])
    semantic = tmp_path / "semantic"   # other labels: another seed's
    subprocess.run([sys.executable, os.path.join(PLANETSCAPES, "make_semantic_sample.py"),
                    "--out", str(semantic), "--submission", str(tmp_path / "sub"), "--images",
                    "2", "--seed", "7"], check=True, capture_output=True, timeout=120)
    vqa = tmp_path / "vqa"
    shutil.copytree(os.path.join(PLANETSCAPES, "reference_data", "vqa"), str(vqa))
    pixel = ["--dev-reference", "panoptic=" + str(semantic),
             "--dev-reference", "instance=" + str(semantic)]
    panoptic_test = os.path.join(PLANETSCAPES, "reference_data", "semantic")
    other_vqa = tmp_path / "other-vqa"   # question ids the test set does not use
    shutil.copytree(str(vqa), str(other_vqa))
    for name in ("questions.json", "annotations.json"):
        text = (other_vqa / name).read_text()
        (other_vqa / name).write_text(re.sub(r'("question_id": )(\d+)',
                                             lambda m: m.group(1) + "9" + m.group(2), text))
    cases = [
        ([], AV_REF_REL, "it is the test reference ({}) itself".format(AV_REF_REL)),
        ([], partial, "39 of its 40 images ("),
        (["--competition", "planetscapes", "--dev-reference", "semantic=" + str(semantic)] +
         pixel, "vqa=" + str(vqa), "all 300 questions (question 10000, question 10001, "
                                   "question 10002, ...) have the same id and the same labels"),
        # The panoptic track's test reference (the pixel tracks' one) as its Development
        # reference.
        (["--competition", "planetscapes", "--dev-reference", "semantic=" + str(semantic),
          "--dev-reference", "vqa=" + str(other_vqa)] + pixel[2:],
         "panoptic=" + panoptic_test, "it is the test reference"),
    ]
    for i, (args, dev, phrase) in enumerate(cases):
        argv = ["--out", tmp_path / "out", "--no-smoke"] + args + ["--dev-reference", dev]
        proc = run(*argv) if i == 0 else bundle_in_process(argv, now=NOW)
        assert proc.returncode == 2, (dev, proc.stdout + proc.stderr)
        assert phrase in proc.stderr and "it holds test labels" in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert not os.path.exists(str(tmp_path / "out")), dev


# --- issue 26: the tools around the scorer, as a new organizer meets them --------------------

def _masked(text):
    """A build's output without what changes with the tree and the machine: the zips' sizes,
    the output folder, the packer's progress lines (printed only when it is slow)."""
    text = re.sub(r"^ *packed \d+ / .*\n", "", text, flags=re.M)  # progress, when slow
    text = re.sub(r"\d+(\.\d+)? (B|KB|MB|GB)\b", "<size>", text)
    return re.sub(r"^Built in .*:$", "Built in dist:", text, flags=re.M)


def test_the_docs_example_output_is_what_its_command_prints(builds):
    proc, _ = builds["docs"]
    with open(os.path.join(ROOT, "docs", "bundle.md"), encoding="utf-8") as f:
        docs = f.read()
    intro = "`{}` on {} UTC".format(" ".join(["bash"] + DOCS_COMMAND), DOCS_NOW)
    assert intro in docs
    block = docs.split(intro, 1)[1].split("```\n", 2)[1]
    assert _masked(block) == _masked(proc.stdout)
    # The sample given as the reference is dry-run with the sample submission (issue 26, 12).
    assert "Dry run: the sample submission scores on all 4 bundles" in proc.stdout


def test_other_bundles_in_the_output_folder_are_named(builds):
    proc, out = builds["options"]
    assert "WARNING: {} also holds bundles this build did not write: {}. Upload only the " \
           "ones listed above".format(out, OTHER_EDITION) in proc.stdout
    assert (out / OTHER_EDITION).read_bytes() == b"not ours"    # warned, never removed
    for key in ("own", "docs"):
        assert "WARNING: " not in builds[key][0].stdout


def test_output_paths_are_checked_before_anything_is_built(tmp_path):
    readme = os.path.join(ROOT, "README.md")
    for args, phrase in ((["--out", readme], "--out {}: is a file, not a folder".format(readme)),
                         (["--out", os.path.join(readme, "dist")], "README.md is a file"),
                         (["--kits", readme, "--out", tmp_path / "new"],
                          "--kits {}: is a file, not a folder".format(readme)),
                         (["--start", "2027-05-31", "--end", "2027-03-01", "--out",
                           tmp_path / "new"], "--end is before --start")):
        # The first through bash bundle.sh, the others through bundle.py's main in process.
        proc = run(*args) if args[1] == readme else bundle_in_process(args, now=NOW)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert phrase in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.strip().splitlines()[-1].startswith("bundle.sh: error: ")
        assert proc.stdout == "" and not os.path.exists(str(tmp_path / "new")), args


def test_a_bundle_argument_that_is_no_bundle_is_one_line_and_exit_2(builds, tmp_path):
    _, out = builds["own"]
    with zipfile.ZipFile(str(out / "agrivision2021-supervised-codabench.zip")) as zf:
        (tmp_path / "scoring_program.zip").write_bytes(zf.read("scoring_program.zip"))
    os.makedirs(str(tmp_path / "tmp"))
    cases = [(tmp_path / "agrivision2026-supervised-codabench.zip", "no such file"),
             (out, "a folder; give the bundle's zip as built"),
             (os.path.join(ROOT, "README.md"), "not a zip file"),
             (tmp_path / "scoring_program.zip", "not a competition bundle (no competition.yaml")]
    for bundle, phrase in cases:
        proc = dry_run(SAMPLE_SUBMISSION, "--bundle", bundle, tmp=tmp_path / "tmp")
        assert proc.returncode == 2, (bundle, proc.stdout + proc.stderr)
        assert proc.stderr == "dry_run.py: error: --bundle {}: {}".format(bundle, phrase) + \
            proc.stderr.split(phrase, 1)[1] and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stdout == "" and os.listdir(str(tmp_path / "tmp")) == [], bundle
    proc = dry_run(SAMPLE_SUBMISSION, "--bundle", out / "agrivision2021-supervised-codalab.zip",
                   "--time-limit", "-5")
    assert proc.returncode == 2 and "-5 is no time limit" in proc.stderr


def test_the_dry_run_says_its_run_folder_goes(builds, tmp_path):
    _, out = builds["own"]
    placeholder = out.parent / "own-kits" / "supervised" / "sample_submission"
    proc = dry_run(placeholder, "--bundle", out / "agrivision2021-supervised-codalab.zip",
                   "--quiet", tmp=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = re.search(r"\(the run folder (\S+), output included, is deleted when the dry run "
                     r"ends: --keep DIR keeps a copy\)", proc.stdout)
    assert said and not os.path.exists(said.group(1))
    assert os.listdir(str(tmp_path)) == []
    # CodaLab's force_best, read back from the v1.5 yaml.
    assert "On the leaderboard (rule: best): this row is on the leaderboard if its mIoU beats " \
           "the participant's earlier submissions" in proc.stdout


def test_each_planetscapes_competition_describes_its_own_task(builds):
    """Issue 26, 16: a per-task bundle's Overview and Evaluation pages describe its task only;
    the merged bundle's describe both and the one zip holding both."""
    _, out = builds["ps-merged"]
    expect = {"semantic": ("Pixel-Level Semantic Labeling", "Results format"),
              "vqa": ("Visual Question Answering", "Prediction format")}
    for task, (title, other) in expect.items():
        for platform in ("codalab", "codabench"):
            bundle = out / "planetscapes2027-{}-{}.zip".format(task, platform)
            overview = page(bundle, "pages/{}/overview.html".format(task))
            evaluation = page(bundle, "pages/{}/evaluation.html".format(task))
            assert title in overview and "one zip holds" not in overview
            assert other not in evaluation and "Where to submit" not in overview
    merged = out / "planetscapes2027-codabench.zip"
    assert "one zip holds the label PNGs" in page(merged, "pages/overview.html")
    evaluation = page(merged, "pages/evaluation.html")
    assert "Results format" in evaluation and "Prediction format" in evaluation


def test_a_kit_built_from_the_organizers_reference_has_a_sample_that_passes_its_check(builds):
    """Issue 26, 5: the kit README's first command on a kit built from a real reference."""
    proc, out = builds["own"]
    assert "sample_submission/ for the kit: a placeholder, 3 images, every pixel label 0" in \
        proc.stdout
    kit = out.parent / "own-kits" / "supervised"
    assert sorted(os.listdir(str(kit / "sample_submission"))) == [
        "OWN{}_0-0-512-512.png".format(i) for i in range(3)]
    check = subprocess.run([sys.executable, "check_submission.py", "sample_submission"],
                           cwd=str(kit), capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    # The kit's dry run knows the leaderboard rule too (phase.json).
    import json
    with open(str(kit / "phase.json")) as f:
        phase = json.load(f)
    assert (phase["leaderboard_rule"], phase["ranking"]) == ("best", "mIoU")


def test_on_its_own_queue_the_dry_run_keeps_the_phases_time_limit(builds, tmp_path):
    """Codabench caps a submission at 600 s on its default queue only (competitions/tasks.py:
    117, 126, 204-206): the dry run of a bundle with a queue keeps a longer limit."""
    _, out = builds["options"]
    with zipfile.ZipFile(str(out / "agrivision2021-supervised-codabench.zip")) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    doc = yaml.safe_load(files["competition.yaml"])
    for phase in doc["phases"]:
        phase["execution_time_limit"] = 900
    files["competition.yaml"] = yaml.safe_dump(doc, sort_keys=False).encode()
    bundle = tmp_path / "long.zip"
    with zipfile.ZipFile(str(bundle), "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    proc = dry_run(SAMPLE_SUBMISSION, "--bundle", bundle, "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(time limit 900 s)" in proc.stdout and "capped" not in proc.stdout


def test_what_no_one_chose_is_the_definitions_own():
    """A source without settings and no option: the definition's own keys stand (its
    has_registration, its CodaLab leaderboard keys), not a default of ours."""
    v15 = {"has_registration": False, "force_submission_to_leaderboard": True,
           "phases": {1: {"phasenumber": 1}}}
    chosen = bundle_settings.with_definition(bundle_settings.from_source({}, "source.json"), v15)
    assert (chosen.leaderboard, chosen.registration) == ("last", "auto")
    v15 = {"has_registration": True, "phases": {1: {"phasenumber": 1,
                                                    "force_best_submission_to_leaderboard": True}}}
    chosen = bundle_settings.with_definition(bundle_settings.Settings(), v15)
    assert (chosen.leaderboard, chosen.registration) == ("best", "approval")
    assert bundle_settings.with_definition(bundle_settings.Settings("chosen", "auto"), v15) == \
        bundle_settings.Settings("chosen", "auto")


def test_a_reason_is_given_only_for_a_default_the_source_sets():
    ok = bundle_settings.from_source({"leaderboard": "last", "why": {"leaderboard": "x"}}, "s")
    assert bundle_settings.why_sentence("leaderboard", "last", ok) == " Default because x."
    assert bundle_settings.why_sentence("registration", "auto", ok) == ""
    for why, phrase in (({"registration": "x"}, "which settings does not set"),
                        ({"leaderboard": ""}, "settings.why gives the reason"),
                        ({"queue": "x"}, "settings.why gives the reason")):
        with pytest.raises(ValueError, match=phrase):
            bundle_settings.from_source({"leaderboard": "last", "why": why}, "s")


def test_the_placeholder_of_every_task_kind(tmp_path):
    """The kit's placeholder sample (bundle/placeholder.py): a constant image of the lowest
    valid id per test image (of its size), or "yes" to every test question; nothing else."""
    import json
    from organizing.bundle import placeholder as bundle_sample
    from PIL import Image
    manifest = {"images": {"a": [4, 3], "b": [2, 5]}, "label_ids": [-1, 7, 3, 200]}
    assert bundle_sample.write_placeholder(manifest, str(tmp_path / "img")) == (
        2, "images, every pixel label 3")
    for name, size in (("a", (4, 3)), ("b", (2, 5))):
        with Image.open(str(tmp_path / "img" / (name + ".png"))) as im:
            assert (im.mode, im.size) == ("L", size)
            assert set(np.asarray(im).ravel().tolist()) == {3}
    assert sorted(os.listdir(str(tmp_path / "img"))) == ["a.png", "b.png"]
    assert bundle_sample.write_placeholder({"question_ids": [5, 2]}, str(tmp_path / "q")) == (
        2, "answers, each 'yes'")
    with open(str(tmp_path / "q" / "results.json")) as f:
        assert json.load(f) == [{"question_id": 5, "answer": "yes"},
                                {"question_id": 2, "answer": "yes"}]
    with pytest.raises(ValueError):
        bundle_sample.write_placeholder({"boxes": []}, str(tmp_path / "x"))


def test_an_organizer_changes_the_fact_sheet_in_the_source(tmp_path):
    """The fact sheet is the source's (source.json settings), not a copy in the tools: another
    one there is the bundle's, its pages' and the plan's."""
    from organizing.bundle import build, plan, schedule
    from organizing.bundle.source import find_sources
    source = find_sources(ROOT)["agriculture-vision"]
    sheet = {"team_size": {"key": "team_size", "type": "select", "title": "Team size",
                           "selection": ["1", "2-5", "more"], "is_required": "true",
                           "is_on_leaderboard": "false"}}
    source = source._replace(settings=dict(source.settings, fact_sheet=sheet))
    lines = []
    result = build.build_bundles(str(tmp_path), source, schedule.Schedule(),
                                 source.data("supervised").sample_reference, "raw",
                                  lines.append)
    plan.plan_settings(result, lines.append)
    v2 = [b for b in result.built if b.platform == "codabench"][0]
    with zipfile.ZipFile(v2.path) as zf:
        assert yaml.safe_load(zf.read("competition.yaml"))["fact_sheet"] == sheet
        assert "<li>Team size (required)</li>" in zf.read("pages/overview.html").decode()
    assert "  Fact sheet (Codabench's upload form asks it at every submission, in this order): "\
           "Team size (required)." in lines
    assert not any("WARNING" in line for line in lines)
    # Keys whose stored order (jsonb: shortest first) is not the source's: the plan warns.
    lines = []
    source = source._replace(settings=dict(source.settings, fact_sheet={
        "team_size": dict(sheet["team_size"]), "role": dict(sheet["team_size"], key="role",
                                                           title="Role")}))
    (tmp_path / "again").mkdir()
    plan.plan_settings(build.build_bundles(str(tmp_path / "again"), source, schedule.Schedule(),
                                           source.data("supervised").sample_reference, "raw",
                                           lines.append), lines.append)
    assert "  Fact sheet (Codabench's upload form asks it at every submission, in this order): "\
           "Role (required); Team size (required)." in lines
    assert "    WARNING: Codabench shows these questions in the order of its database, not yours: "\
           "its PostgreSQL jsonb keeps an object's keys shortest first, then bytewise (role, "\
           "team_size, not team_size, role); give the keys increasing lengths in the order you "\
           "want (e.g. method, code_url, parameters)." in lines


def test_a_phase_without_limits_is_not_said_to_have_none():
    """A phase that gives no limits has each platform's defaults (Codabench 5 a day and 100,
    CodaLab 999 and 100), not none: the page says so rather than 'no limit'."""
    from organizing.bundle import pages as bundle_pages
    lim = bundle_pages.Limits
    ctx = bundle_pages.PageContext([], None, [], [lim("Development", None, None, 300),
                                                  lim("Test", 2, 20, 300)])
    assert bundle_pages.limits(ctx) == (
        "At most <strong>2 submissions a day and 20 in total</strong> in the Test phase. The "
        "Development phase: the platform's default limits. A submission's scoring may take up "
        "to 300 s.")


# PostgreSQL 15.18 (Debian 15.18-0+deb12u1), measured: SELECT '{"method_name": 1, "code_url": 2,
# "parameters": 3, "training_data": 4, "method": 5, "zz": 6, "ab": 7, "é": 8, "z": 9}'::jsonb
# gave back the keys in this order (shortest first in UTF-8 bytes, then bytewise).
JSONB_WRITTEN = ["method_name", "code_url", "parameters", "training_data", "method", "zz", "ab",
                 "\u00e9", "z"]
JSONB_MEASURED = ["z", "ab", "zz", "\u00e9", "method", "code_url", "parameters", "method_name",
                  "training_data"]


def test_the_fact_sheet_in_the_order_codabench_shows_it(builds):
    """Issue 32: Codabench stores the fact sheet as JSON (a PostgreSQL jsonb, which reorders an
    object's keys), and its upload form and leaderboard follow the stored order: the leaderboard
    showed Code link, Number of parameters, Method name. Our keys sort, as jsonb sorts them, in
    the order the source writes them; the plan and the dry run list them in that order."""
    import json
    assert codabench_source.fact_sheet_is_json(EXTRACT)
    assert codabench_definition.jsonb_key_order(JSONB_WRITTEN) == JSONB_MEASURED
    # The order that made the issue: the old keys, as Codabench showed them.
    assert codabench_definition.jsonb_key_order(
        ["method_name", "code_url", "parameters", "training_data"]) == \
        ["code_url", "parameters", "method_name", "training_data"]
    for source in (AGRIVISION, PLANETSCAPES):
        with open(os.path.join(ROOT, source, "source.json")) as f:
            sheet = json.load(f)["settings"]["fact_sheet"]
        assert codabench_definition.jsonb_key_order(list(sheet)) == list(sheet), source
    stdout = builds["own"][0].stdout
    line = [x for x in stdout.splitlines() if x.startswith("  Fact sheet (")][0]
    with open(os.path.join(AGRIVISION, "source.json")) as f:
        titles = [q["title"] for q in json.load(f)["settings"]["fact_sheet"].values()]
    positions = [line.index(t) for t in titles]
    assert positions == sorted(positions), line
    assert "WARNING: Codabench shows these questions in the order of its database" not in stdout
    # Keys Codabench would reorder: the plan says so, with the fix.
    from organizing.bundle import settings as chosen
    note = chosen.fact_sheet_order_note({"method_name": {}, "code_url": {}})
    assert note.startswith("Codabench shows these questions in the order of its database") \
        and "(code_url, method_name, not method_name, code_url)" in note
    assert chosen.fact_sheet_order_note({"method": {}, "code_url": {}}) == ""


def test_what_codabench_does_with_the_last_phase_and_the_answers(builds):
    """Issue 32, from Codabench's own code: the unpacker marks the last phase final, but
    PhaseSerializer's is_final_phase is a read-only method field, so with several phases none
    is stored final; required fact-sheet answers are checked only when answers are sent (the
    upload form sends them; the API need not). The plan says both."""
    assert codabench_source.final_phase_is_read_only(EXTRACT)
    assert codabench_source.answers_checked_only_when_sent(EXTRACT)
    stdout = builds["own"][0].stdout
    assert "  On Codabench no phase is marked final (is_final_phase is read-only in its " \
           "PhaseSerializer): while no phase is open (before Test opens), the competition's " \
           "page shows the last phase, Post-challenge.\n" in stdout
    assert "    Only the upload form requires the required answers: a submission made through " \
           "Codabench's API with no answers is accepted (check them before awarding).\n" in stdout
    assert "final phase" not in stdout.lower().replace("no phase is marked final", "")
