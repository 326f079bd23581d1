"""bundle.sh --private-share (issue 35): the private part's labels are in no zip the build
writes, in any form; the worker's scorer scores exactly the public part yet wants every test id;
split.json is reproducible; the pages, columns and plan say what is public; the dry run predicts
the platform with a split bundle."""
import hashlib
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import yaml
from PIL import Image

from conftest import (AGRIVISION, AV_REF, ROOT, SEM_REF, VQA_KIT, VQA_REF, bundle_in_process,  # noqa: E402
                      run_score)

import dry_run  # noqa: E402  (the kit's)
from reference_part import units_alone  # noqa: E402
from scoring.tasks.agrivision import packed as av_packed  # noqa: E402
from scoring.tasks.agrivision.reference import open_raw  # noqa: E402

BUNDLE_SH = os.path.join(ROOT, "bundle.sh")
SAMPLE_SUB = os.path.join(AGRIVISION, "starting_kit", "sample_submission")
NOW = "2026-11-30 20:18:57"
ARGS = ["--private-share", "0.5", "--start", "2027-03-01", "--end", "2027-05-31"]


def run_bundle(*args):
    env = dict(os.environ, PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1", BUNDLE_NOW=NOW)
    return subprocess.run(["bash", BUNDLE_SH] + [str(a) for a in args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """The sample split at 0.5: the raw layout (bash bundle.sh, with its dry run) and the
    packed one (in process, no dry run)."""
    base = tmp_path_factory.mktemp("private")
    raw = run_bundle("--out", base / "raw", *ARGS)
    assert raw.returncode == 0, raw.stderr
    packed = bundle_in_process(["--out", base / "packed", "--layout", "packed", "--no-smoke"]
                               + ARGS, NOW)
    assert packed.returncode == 0, packed.stderr
    return {"raw": (base / "raw", raw.stdout), "packed": (base / "packed", packed.stdout)}


def split_of(out):
    with open(str(out / "split.json")) as f:
        return json.load(f)


def members(data, name=""):
    """Every file of a zip, recursively into the zips it holds: (path, bytes)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            body = zf.read(info)
            path = name + "/" + info.filename
            yield path, body
            if info.filename.lower().endswith(".zip"):
                yield from members(body, path)


def array_hash(array):
    a = np.ascontiguousarray(array)
    return hashlib.sha256(str((a.dtype.str, a.shape)).encode() + a.tobytes()).hexdigest()


def assert_no_private_unit(out, private, blobs, arrays):
    """Every file of every zip the build wrote in out, nested zips opened: no bundled reference
    file is named after a private unit, no file holds one of its label files' bytes (blobs),
    and no PNG decodes to one of its label arrays (array_hash)."""
    looked = 0
    for name in sorted(p for p in os.listdir(str(out)) if p.endswith(".zip")):
        with open(str(out / name), "rb") as f:
            for path, body in members(f.read(), name):
                looked += 1
                if "/reference_data.zip/" in path:
                    assert os.path.splitext(os.path.basename(path))[0] not in private, path
                assert not [b for b in blobs if b in body], path
                if path.lower().endswith(".png"):
                    try:
                        pixels = np.asarray(Image.open(io.BytesIO(body)))
                    except OSError:
                        continue
                    assert array_hash(pixels) not in arrays, path
    assert looked > 100


def label_signatures(ids):
    """Every form a unit's labels take: each raw layer file's bytes, each layer's pixels, the
    packed PNG's bytes and its pixels (what the packer writes)."""
    raw = open_raw(AV_REF)
    blobs, arrays = set(), set()
    for unit in ids:
        for rel in raw._layers(unit):
            with open(os.path.join(AV_REF, rel), "rb") as f:
                body = f.read()
            blobs.add(body)
            arrays.add(array_hash(np.asarray(Image.open(io.BytesIO(body)))))
        coded = raw.read(unit)
        packed = av_packed.encode_truth(coded)
        blobs.add(packed)
        arrays.add(array_hash(np.asarray(Image.open(io.BytesIO(packed)))))
        arrays.add(array_hash(coded.table[coded.labels]))
    return blobs, arrays


@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_no_private_label_is_in_any_zip_the_build_writes(builds, layout):
    out, _ = builds[layout]
    split = split_of(out)
    # What a private unit's labels share with a public unit's (an all-empty layer) tells
    # nothing about the private part: only the forms no public unit has are looked for.
    pub_blobs, pub_arrays = label_signatures(split["public"])
    priv_blobs, priv_arrays = label_signatures(split["private"])
    blobs, arrays = priv_blobs - pub_blobs, priv_arrays - pub_arrays
    assert len(blobs) > 3 * len(split["private"]) and arrays
    assert len([p for p in os.listdir(str(out)) if p.endswith(".zip")]) == 4
    assert_no_private_unit(out, set(split["private"]), blobs, arrays)


def test_the_bundled_reference_holds_the_public_part_and_the_whole_manifest(builds):
    out, _ = builds["packed"]
    split = split_of(out)
    with zipfile.ZipFile(str(out / "agrivision2027-supervised-codabench.zip")) as zf:
        ref = zipfile.ZipFile(io.BytesIO(zf.read("reference_data.zip")))
    names = ref.namelist()
    assert "test_manifest.json" in names and "packed.json" in names
    assert json.loads(ref.read("packed.json"))["ids"] == split["public"]
    manifest = json.loads(ref.read("test_manifest.json"))
    assert sorted(manifest["images"]) == sorted(split["public"] + split["private"])
    config = yaml.safe_load(ref.read("config.yaml"))
    assert config["public_part"] == {"manifest": "test_manifest.json", "units": 20, "of": 40,
                                     "groups": 5, "group_total": 10, "group_noun": "fields"}
    assert config["storm_damage"] == "background"    # the organizer's own config kept


def test_split_json_is_reproducible_and_splits_by_field(builds, tmp_path):
    raw = (builds["raw"][0] / "split.json").read_bytes()
    assert raw == (builds["packed"][0] / "split.json").read_bytes()   # same reference, seed
    split = json.loads(raw)
    assert split["seed"] == 0 and split["share"] == 0.5 and split["grouped_by"] == "field"
    assert split["counts"] == {"public": {"units": 20, "groups": 5},
                               "private": {"units": 20, "groups": 5},
                               "all": {"units": 40, "groups": 10}}
    field = lambda unit: unit.rsplit("_", 1)[0]  # noqa: E731
    assert sorted(set(map(field, split["public"]))) == split["public_groups"]
    assert sorted(set(map(field, split["private"]))) == split["private_groups"]
    assert not set(split["public_groups"]) & set(split["private_groups"])
    other = bundle_in_process(["--out", tmp_path, "--no-smoke", "--split-seed", "7"] + ARGS,
                              NOW)
    assert other.returncode == 0, other.stderr
    assert json.loads((tmp_path / "split.json").read_text())["private"] != split["private"]


def test_plan_pages_and_columns_say_what_is_public(builds):
    out, stdout = builds["raw"]
    said = "public part: 20 of 40 images (fields 5 of 10)"
    assert "Private part (--private-share 0.5, --split-seed 0): " + said + "; the final ranking " \
        "uses the private part, scored by the organizers after the deadline" in stdout
    assert "split.json" in stdout
    with zipfile.ZipFile(str(out / "agrivision2027-supervised-codabench.zip")) as zf:
        doc = yaml.safe_load(zf.read("competition.yaml"))
        pages = b"".join(zf.read(n) for n in zf.namelist() if n.endswith(".html")).decode()
    titles = [c["title"] for board in doc["leaderboards"] for c in board["columns"]]
    assert titles[0] == "mIoU (public part)"
    assert all(len(t) <= 36 and "public" in t for t in titles)
    assert said + "; the final ranking uses the private part, scored by the organizers after " \
        "the deadline" in pages
    assert "scored on the public part of the test set (20 of 40 images (fields 5 of 10))" in pages
    assert "the Test phase closes. Its leaderboard ranks the public part" in pages
    assert "whole test set" not in pages and "ranking is final" not in pages
    assert "computed over all images of the test set's public part at once" in pages
    assert "all test images" not in pages


def _worker_run(bundle, submission, folder):
    """The bundle's program and reference run as the Codabench worker runs them."""
    with zipfile.ZipFile(str(bundle)) as zf:
        program = zipfile.ZipFile(io.BytesIO(zf.read("scoring_program.zip")))
        ref = zipfile.ZipFile(io.BytesIO(zf.read("reference_data.zip")))
        program.extractall(str(folder / "program"))
        ref.extractall(str(folder / "input" / "ref"))
    shutil.copytree(str(submission), str(folder / "input" / "res"))
    return subprocess.run([sys.executable, str(folder / "program" / "score.py"),
                           str(folder / "input"), str(folder / "output")],
                          capture_output=True, text=True, timeout=120)


def _public_only_reference(split, folder):
    """The oracle's reference: the raw sample with the public units' files only, no split."""
    return units_alone(AV_REF, split["public"], folder)


@pytest.mark.compat   # the worker's program on the oldest versions too
@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_the_worker_scores_the_public_part_alone(builds, layout, tmp_path):
    out, _ = builds[layout]
    split = split_of(out)
    run = _worker_run(out / "agrivision2027-supervised-codabench.zip", SAMPLE_SUB, tmp_path)
    assert run.returncode == 0, run.stderr
    got = json.loads((tmp_path / "output" / "scores.json").read_text())
    ref = _public_only_reference(split, tmp_path / "public")
    sub = tmp_path / "public-sub"
    sub.mkdir()
    for unit in split["public"]:
        shutil.copyfile(os.path.join(SAMPLE_SUB, unit + ".png"), str(sub / (unit + ".png")))
    alone = run_score("--ref", ref, "--res", sub, "--out", tmp_path / "alone")
    assert alone.returncode == 0, alone.stderr
    assert got == json.loads((tmp_path / "alone" / "scores.json").read_text())
    # nothing written names a private unit or field: only the counts
    page = (tmp_path / "output" / "detailed_results.html").read_text()
    assert "public part: 20 of 40 images (fields 5 of 10)" in page.lower()
    # the notes on how the scores are computed say the part, not the whole test set
    assert "all valid pixels of the 20 images of the test set's public part (of its 40; the " \
        "private part is scored by the organizers after the deadline) at once" in \
        html.unescape(page)
    assert "all test images" not in page
    written = page + run.stdout + run.stderr + json.dumps(got)
    for name in split["private"] + split["private_groups"]:
        assert name not in written


@pytest.mark.compat
def test_a_submission_without_a_private_id_is_the_usual_named_mistake(builds, tmp_path):
    out, _ = builds["raw"]
    split = split_of(out)
    bundle = out / "agrivision2027-supervised-codabench.zip"
    for side in ("private", "public"):
        sub = tmp_path / side / "sub"
        shutil.copytree(SAMPLE_SUB, str(sub))
        (sub / (split[side][0] + ".png")).unlink()
        run = _worker_run(bundle, sub, tmp_path / side)
        assert run.returncode == 1, run.stderr
        assert "Traceback" not in run.stderr
        assert split[side][0] + ".png" in run.stderr
        if side == "private":
            message = run.stderr.replace(split[side][0], "ID")
        else:
            assert run.stderr.replace(split[side][0], "ID") == message
        assert not (tmp_path / side / "output" / "scores.json").exists()


def test_a_broken_private_prediction_is_refused_too(builds, tmp_path):
    out, _ = builds["raw"]
    split = split_of(out)
    sub = tmp_path / "sub"
    shutil.copytree(SAMPLE_SUB, str(sub))
    path = sub / (split["private"][0] + ".png")
    Image.new("L", (8, 8)).save(str(path))      # the wrong size: the manifest says 512 x 512
    run = _worker_run(out / "agrivision2027-supervised-codabench.zip", sub, tmp_path)
    assert run.returncode == 1 and split["private"][0] + ".png" in run.stderr


def test_the_dry_run_predicts_the_platform_with_a_split_bundle(builds, tmp_path):
    out, _ = builds["raw"]
    split = split_of(out)
    bundle = str(out / "agrivision2027-supervised-codabench.zip")
    outcomes = []
    assert dry_run.main([SAMPLE_SUB, "--bundle", bundle, "--quiet"], outcomes) == dry_run.EXIT_OK
    run = _worker_run(bundle, SAMPLE_SUB, tmp_path / "w")
    expected = json.loads((tmp_path / "w" / "output" / "scores.json").read_text())
    assert outcomes[-1].scores["miou"] == pytest.approx(expected["miou"], abs=1e-9)
    sub = tmp_path / "sub"
    shutil.copytree(SAMPLE_SUB, str(sub))
    (sub / (split["private"][0] + ".png")).unlink()
    assert dry_run.main([str(sub), "--bundle", bundle, "--quiet"]) == dry_run.EXIT_FAILED
    assert run.returncode == 0


def test_a_reference_that_misstates_its_part_is_the_organizers_error(builds, tmp_path):
    out, _ = builds["raw"]
    with zipfile.ZipFile(str(out / "agrivision2027-supervised-codabench.zip")) as zf:
        zipfile.ZipFile(io.BytesIO(zf.read("reference_data.zip"))).extractall(str(tmp_path / "r"))
    config = tmp_path / "r" / "config.yaml"
    text = config.read_text()
    config.write_text(text.replace("units: 20", "units: 21"))          # counts disagree
    run = run_score("--ref", tmp_path / "r", "--res", SAMPLE_SUB)
    assert run.returncode == 3 and "public_part" in run.stderr, run.stderr
    shutil.copytree(SAMPLE_SUB, str(tmp_path / "again"))   # compare.py compares two or more
    compare = subprocess.run([sys.executable, os.path.join(ROOT, "organizer", "compare.py"),
                              "--ref", str(tmp_path / "r"), "--out", str(tmp_path / "c"),
                              SAMPLE_SUB, str(tmp_path / "again")], capture_output=True,
                             text=True, timeout=120)
    assert compare.returncode == 3 and "public_part" in compare.stderr   # every command alike
    config.write_text(text.split("\n# bundle.sh --private-share")[0] + "\n")   # no block
    run = run_score("--ref", tmp_path / "r", "--res", SAMPLE_SUB)
    assert run.returncode == 3 and "test_manifest.json" in run.stderr, run.stderr
    config.write_text(text)
    assert run_score("--ref", tmp_path / "r", "--res", SAMPLE_SUB).returncode == 0


def test_bad_shares_and_tasks_are_refused(tmp_path):
    for share in ("0", "1", "1.5", "half"):
        got = bundle_in_process(["--out", tmp_path, "--private-share", share], NOW)
        assert got.returncode == 2 and "--private-share" in got.stderr
    packed = tmp_path / "packed-vqa"
    from organizing.commands import pack
    assert pack.main([VQA_REF, str(packed)], stdout=io.StringIO(),
                     stderr=io.StringIO()) == 0
    vqa = bundle_in_process(["--out", tmp_path / "out", "--competition", "planetscapes",
                             "--reference", "vqa={}".format(packed),
                             "--reference", SEM_REF,
                             "--private-share", "0.5", "--no-smoke"], NOW)
    assert vqa.returncode == 1 and "raw layout" in vqa.stderr, vqa.stderr
    assert not os.path.exists(str(tmp_path / "out")) or not [
        p for p in os.listdir(str(tmp_path / "out")) if p.endswith((".zip", ".json"))]


def test_why_the_private_labels_never_go_to_the_platform():
    """The platform code docs/bundle.md cites (codabench at the extract's commit): the
    submissions API needs no permission, gives anyone without a login every finished
    leaderboard submission with its scores, and a score carries no visibility of its own
    (a column's `hidden` is the leaderboard view's): a private score computed there is public."""
    import codabench_source
    facts = codabench_source.submissions_api(codabench_source.committed())
    assert facts["permission_classes"] == "[]"
    assert facts["anonymous_filter"] == ["leaderboard__isnull=False", "is_soft_deleted=False",
                                         "status=Submission.FINISHED"]
    assert "scores" in facts["anonymous_prefetch"]
    assert facts["submission_scores"] == "SubmissionScoreSerializer"
    assert facts["score_fields"] == ["id", "index", "score", "column_key"]


def test_without_a_split_the_pages_say_the_whole_test_set():
    from organizing.bundle import pages
    plain = pages.context([], None, [(40, "images", "agriculture-vision")])
    assert pages.scored_part(plain) == "the whole test set"
    assert pages.scored_images(plain) == "all test images"
    part = pages.context([], None, [(40, "images", "agriculture-vision", "public part: 20 of 40 "
                                     "images (fields 5 of 10)")])
    assert pages.scored_part(part).startswith(
        "the public part of the test set (20 of 40 images (fields 5 of 10)); the final ranking")


# --- Planetscapes VQA: split by image, scored from one results file -------------------------

VQA_SUB = os.path.join(VQA_KIT, "sample_submission")
PS_ARGS = ["--competition", "planetscapes", "--private-share", "0.5", "--start", "2027-03-01",
           "--end", "2027-05-31"]


@pytest.fixture(scope="module")
def ps_builds(tmp_path_factory):
    """The Planetscapes sample split at 0.5: every bundle, the merged one included, in the raw
    layout (bash bundle.sh, with its dry run) and in the packed one (in process)."""
    base = tmp_path_factory.mktemp("ps-private")
    raw = run_bundle("--out", base / "raw", "--merged", *PS_ARGS)
    assert raw.returncode == 0, raw.stderr
    packed = bundle_in_process(["--out", base / "packed", "--layout", "packed", "--no-smoke",
                                "--merged"] + PS_ARGS, NOW)
    assert packed.returncode == 0, packed.stderr
    return {"raw": (base / "raw", raw.stdout), "packed": (base / "packed", packed.stdout)}


def vqa_json(name):
    with open(os.path.join(VQA_REF, name), encoding="utf-8") as f:
        return json.load(f)


def vqa_part(ids, folder):
    """The oracle's reference of some questions alone: the raw files cut, no split."""
    os.makedirs(str(folder), exist_ok=True)
    shutil.copyfile(os.path.join(VQA_REF, "config.yaml"), str(folder / "config.yaml"))
    keep = set(ids)
    for name, key in (("questions.json", "questions"), ("annotations.json", "annotations")):
        doc = vqa_json(name)
        doc[key] = [e for e in doc[key] if e["question_id"] in keep]
        (folder / name).write_text(json.dumps(doc))
    return folder


def vqa_results(ids, folder, drop=()):
    """The sample submission's answers to these questions (less drop)."""
    with open(os.path.join(VQA_SUB, "results.json"), encoding="utf-8") as f:
        results = json.load(f)
    keep = set(ids) - set(drop)
    os.makedirs(str(folder), exist_ok=True)
    (folder / "results.json").write_text(json.dumps(
        [r for r in results if r["question_id"] in keep]))
    return folder


def reference_members(out):
    """(path, bytes) of every file of every reference_data zip in every zip the build wrote."""
    for name in sorted(p for p in os.listdir(str(out)) if p.endswith(".zip")):
        with open(str(out / name), "rb") as f:
            for path, body in members(f.read(), name):
                if "/reference_data" in path and ".zip/" in path:
                    yield path, body


@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_no_private_vqa_answer_is_in_any_zip_the_build_writes(ps_builds, layout, tmp_path):

    from scoring import reference_setup
    out, _ = ps_builds[layout]
    split = json.loads((out / "split-vqa.json").read_text())
    assert split["grouped_by"] == "image" and split["counts"]["private"]["units"] == 150
    images = {q["question_id"]: q["image_id"] for q in vqa_json("questions.json")["questions"]}
    assert not {images[q] for q in split["public"]} & {images[q] for q in split["private"]}
    private = set(split["private"])
    zips = [p for p in os.listdir(str(out)) if p.endswith(".zip")]
    assert len(zips) == 9                      # four tracks on two platforms, the merged one
    vqa_refs = 0
    for path, body in reference_members(out):
        if not path.endswith(".zip"):
            continue
        ref = zipfile.ZipFile(io.BytesIO(body))
        if "questions.json" not in ref.namelist():
            continue
        vqa_refs += 1
        for name in ref.namelist():
            if name == "test_manifest.json":               # every id, no answer: the kit's
                continue
            text = ref.read(name).decode("latin-1")        # no private id, in any file
            assert not [q for q in private
                        if re.search(r"(?<!\d){}(?!\d)".format(q), text)], (path, name)
        folder = tmp_path / str(vqa_refs)                   # opened as the scorer opens it
        ref.extractall(str(folder))
        reference = reference_setup.configure(str(folder)).open()
        assert sorted(reference.read("results").qids) == split["public"]
        assert sorted(reference.expect("results", None)) == sorted(images)
    assert vqa_refs == 3         # the VQA track's two bundles and the merged one


@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_no_private_pixel_label_is_in_any_planetscapes_zip(ps_builds, layout):
    """The semantic, instance and panoptic tracks read one reference: each split the same way
    (same reference, seed and rule), and no private image's labels/ or instances/ PNG, by name,
    bytes or pixels, is in any file of any zip (the merged bundle's included)."""
    out, _ = ps_builds[layout]
    splits = [json.loads((out / "split-{}.json".format(t)).read_text())
              for t in ("semantic", "instance", "panoptic")]
    assert all(s["public"] == splits[0]["public"] for s in splits)
    private = set(splits[0]["private"])
    assert private
    blobs, arrays = set(), set()
    for unit in private:
        for folder in ("labels", "instances"):
            with open(os.path.join(SEM_REF, folder, unit + ".png"), "rb") as f:
                body = f.read()
            blobs.add(body)
            arrays.add(array_hash(np.asarray(Image.open(io.BytesIO(body)))))
    assert_no_private_unit(out, private, blobs, arrays)


@pytest.mark.compat
@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_the_worker_scores_the_public_questions_alone(ps_builds, layout, tmp_path):
    out, _ = ps_builds[layout]
    split = json.loads((out / "split-vqa.json").read_text())
    run = _worker_run(out / "planetscapes2027-vqa-codabench.zip", VQA_SUB, tmp_path)
    assert run.returncode == 0, run.stderr
    got = json.loads((tmp_path / "output" / "scores.json").read_text())
    alone = run_score("--ref", vqa_part(split["public"], tmp_path / "public"), "--res",
                      vqa_results(split["public"], tmp_path / "public-sub"),
                      "--out", tmp_path / "alone")
    assert alone.returncode == 0, alone.stderr
    assert got == json.loads((tmp_path / "alone" / "scores.json").read_text())
    whole = run_score("--ref", VQA_REF, "--res", VQA_SUB, "--out", tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr
    assert got != json.loads((tmp_path / "whole" / "scores.json").read_text())
    page = (tmp_path / "output" / "detailed_results.html").read_text()
    assert "public part: 150 of 300 questions (images 50 of 100)" in page.lower()
    assert "Scores are means over the 150 questions of the test set's public part (of its 300;" \
        in html.unescape(page)
    written = page + run.stdout + run.stderr
    assert not [q for q in split["private"] if re.search(r"(?<!\d){}(?!\d)".format(q),
                                                         written)]


@pytest.mark.compat
@pytest.mark.parametrize("track", ["instance", "panoptic"])
def test_the_instance_and_panoptic_pages_say_they_score_the_public_part(ps_builds, track,
                                                                        tmp_path):
    out, _ = ps_builds["raw"]
    sub = os.path.join(ROOT, "competitions", "planetscapes", "starting_kit", track,
                       "sample_submission")
    run = _worker_run(out / "planetscapes2027-{}-codabench.zip".format(track), sub, tmp_path)
    assert run.returncode == 0, run.stderr
    page = html.unescape((tmp_path / "output" / "detailed_results.html").read_text())
    assert "of the test set's public part (of its" in page
    assert "all test images" not in page


def test_a_results_file_without_a_private_question_is_the_usual_named_mistake(ps_builds,
                                                                           tmp_path):
    out, _ = ps_builds["raw"]
    split = json.loads((out / "split-vqa.json").read_text())
    bundle = out / "planetscapes2027-vqa-codabench.zip"
    every = split["public"] + split["private"]
    messages = []
    for side in ("private", "public"):
        sub = vqa_results(every, tmp_path / side / "sub", drop=[split[side][0]])
        run = _worker_run(bundle, sub, tmp_path / side)
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
        assert str(split[side][0]) in run.stderr
        messages.append(run.stderr.replace(str(split[side][0]), "ID"))
        assert not (tmp_path / side / "output" / "scores.json").exists()
    assert messages[0] == messages[1]      # nothing tells a private question from a public one


def test_the_merged_bundle_and_its_plan_say_what_is_public(ps_builds):
    out, stdout = ps_builds["raw"]
    assert "public part: 150 of 300 questions (images 50 of 100); the final ranking uses the " \
        "private part" in stdout
    with zipfile.ZipFile(str(out / "planetscapes2027-codabench.zip")) as zf:
        doc = yaml.safe_load(zf.read("competition.yaml"))
    # Each merged column is titled after its task; "(public part)" is said once, in the
    # leaderboard's title (a column title holding both would pass Codabench's 36 characters).
    (board,) = doc["leaderboards"]
    titles = [c["title"] for c in board["columns"]]
    assert "VQA: Accuracy" in titles and "Semantic: IoU class" in titles
    assert board["title"].endswith("(public part)") and all(len(t) <= 36 for t in titles)
    with zipfile.ZipFile(str(out / "planetscapes2027-codabench.zip")) as zf:
        pages = b"".join(zf.read(n) for n in zf.namelist() if n.endswith(".html")).decode()
    assert "over all images of the test set's public part at once" in pages
    assert "whole test set" not in pages and "all test images" not in pages
