"""Every mistake the bundle check must catch: introduce it into a good bundle, see it refused with
a message that says what is wrong. The good bundles come from bundle.sh (organizer/bundle.py) on
a tiny reference.
"""
import datetime
import io
import os
import pathlib
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import yaml

from conftest import ROOT, built_once  # noqa: E402

from organizing.bundle import check as bundle_check  # noqa: E402
from organizing.bundle import command as bundle_command  # noqa: E402
from platforms.codabench import CODABENCH  # noqa: E402
from platforms.codalab import CODALAB  # noqa: E402
import agrivision_data as rawdata  # noqa: E402

V15 = "agrivision2021-supervised-codalab.zip"
V2 = "agrivision2021-supervised-codabench.zip"


def build_good(folder):
    tmp = pathlib.Path(folder)
    rng = np.random.RandomState(3)
    for i in range(2):
        boundary, mask, labels, storm, _ = rawdata.random_image(rng, 32, 32)
        rawdata.write_reference(str(tmp / "ref"), "F{}_0-0-512-512".format(i), boundary, mask,
                                labels, storm)
    code = bundle_command.main(["--reference", str(tmp / "ref"), "--out", str(tmp / "out"), "--no-smoke"])
    assert code == 0
    return str(tmp / "out")


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """build_good, once for the whole run (conftest.built_once: by one xdist worker for all;
    the tests only read the good bundles, and write their broken copies elsewhere)."""
    return pathlib.Path(built_once(tmp_path_factory, "bundle-check-good", build_good))


def members(source):
    with zipfile.ZipFile(source if hasattr(source, "read") else str(source)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def zip_bytes(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def rewrite(src, dst, edit_yaml=None, replace=None, drop=(), edit_program=None):
    """A copy of bundle src with one mistake: edit_yaml(doc) edits competition.yaml,
    edit_program(files) the scoring program's members, replace/drop outer members."""
    files = members(src)
    if edit_yaml:
        doc = yaml.safe_load(files["competition.yaml"])
        edit_yaml(doc)
        files["competition.yaml"] = yaml.safe_dump(doc, sort_keys=False).encode()
    if edit_program:
        program = members(io.BytesIO(files["scoring_program.zip"]))
        edit_program(program)
        files["scoring_program.zip"] = zip_bytes(program)
    files.update(replace or {})
    for name in drop:
        del files[name]
    with open(str(dst), "wb") as f:
        f.write(zip_bytes(files))
    return bundle_check.check_bundle(str(dst))


def errors_of(report):
    return "\n".join(report.line(p) for p in report.errors)


def test_the_good_bundles_pass(good):
    for name in os.listdir(str(good)):
        report = bundle_check.check_bundle(str(good / name))
        assert not report.errors, report.lines()


def test_the_command_line_exits_1_on_a_refused_bundle(good, tmp_path, capsys):
    rewrite(good / V15, tmp_path / "bad.zip", edit_yaml=lambda d: d.pop("title"))
    assert bundle_check.main([str(good / V15)]) == 0
    assert bundle_check.main([str(good / V15), str(tmp_path / "bad.zip")]) == 1
    out = capsys.readouterr().out
    assert "bad.zip: ERROR competition.yaml: missing required key `title`" in out


def _set(path, value):
    """An edit that sets doc[path...] = value (a KeyError-free deep set)."""
    def edit(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def _del(path):
    def edit(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return edit


def _column(key, **changes):
    def edit(doc):
        doc["leaderboard"]["columns"][key].update(changes)
    return edit


def _rename_column(old, new):
    def edit(doc):
        cols = doc["leaderboard"]["columns"]
        doc["leaderboard"]["columns"] = {(new if k == old else k): v for k, v in cols.items()}
    return edit


def _v2_column(index, **changes):
    def edit(doc):
        doc["leaderboards"][0]["columns"][index].update(changes)
    return edit


def _command(command):
    def edit(files):
        files["metadata"] = ("command: " + command + "\ndescription: x\n").encode()
    return edit


def _metadata(text):
    def edit(files):
        files["metadata"] = text.encode()
    return edit


def _wrap_program(files):
    wrapped = {"scoring_program/" + n: d for n, d in files.items()}
    files.clear()
    files.update(wrapped)


# (id, bundle, rewrite arguments, phrase the error must contain)
CASES = [
    # required keys, v1.5
    ("v15 no title", V15, dict(edit_yaml=_del(["title"])), "missing required key `title`"),
    ("v15 no html.data", V15, dict(edit_yaml=_del(["html", "data"])),
     "missing required key `data` (the unpacker reads overview, evaluation, terms and data)"),
    ("v15 no html.terms", V15, dict(edit_yaml=_del(["html", "terms"])), "missing required key `terms`"),
    ("v15 no phases", V15, dict(edit_yaml=_del(["phases"])), "missing required key `phases`"),
    ("v15 phase without reference", V15, dict(edit_yaml=_del(["phases", 1, "reference_data"])),
     "phases.1: missing required key `reference_data`"),
    ("v15 phase without start", V15, dict(edit_yaml=_del(["phases", 1, "start_date"])),
     "phases.1: missing required key `start_date`"),
    ("v15 phases as a list", V15, dict(edit_yaml=lambda d: d.update(phases=list(d["phases"].values()))),
     "phases: must be a non-empty mapping"),
    ("v15 no leaderboard", V15, dict(edit_yaml=_del(["leaderboard"])),
     "missing required key `leaderboard`"),
    ("v15 no columns", V15, dict(edit_yaml=_del(["leaderboard", "columns"])),
     "missing required key `columns`"),
    ("v15 column without rank", V15, dict(edit_yaml=_del(["leaderboard", "columns", "miou", "rank"])),
     "leaderboard.columns.miou: missing required key `rank`"),
    ("v15 unknown top-level key", V15, dict(edit_yaml=_set(["docker_image"], "x")),
     "unknown top-level key `docker_image`: CodaLab passes it to Competition() and crashes"),
    ("v15 version 1.5", V15, dict(edit_yaml=_set(["version"], 1.5)), "write `version: 2`"),
    ("v15 unknown phase key", V15, dict(edit_yaml=_set(["phases", 1, "time_limit"], 600)),
     "unknown phase key `time_limit`"),
    # keys of other CodaLab versions: not CompetitionPhase fields, they crash get_or_create()
    ("v15 phase hide_output", V15, dict(edit_yaml=_set(["phases", 1, "hide_output"], True)),
     "unknown phase key `hide_output`"),
    ("v15 phase ingestion_program_only_during_scoring", V15,
     dict(edit_yaml=_set(["phases", 1, "ingestion_program_only_during_scoring"], True)),
     "unknown phase key `ingestion_program_only_during_scoring`"),
    ("v15 phase is_parallel_parent", V15,
     dict(edit_yaml=_set(["phases", 1, "is_parallel_parent"], False)),
     "unknown phase key `is_parallel_parent`"),
    ("v15 phase parent_phasenumber", V15,
     dict(edit_yaml=_set(["phases", 1, "parent_phasenumber"], 1)),
     "unknown phase key `parent_phasenumber`"),
    ("v15 top-level queue", V15, dict(edit_yaml=_set(["queue"], "my-queue")),
     "top-level key `queue`: CodaLab passes it to Competition(), where it is a relation"),
    ("a folder named like a yaml", V15, dict(replace={"extra.yaml/": b""}),
     "other entries with '.yaml'"),
    ("v15 title too long", V15, dict(edit_yaml=_set(["title"], "x" * 101)), "at most 100"),
    # referenced files
    ("page missing", V15, dict(drop=["pages/evaluation.html"]),
     "html.evaluation: file 'pages/evaluation.html' is not in the bundle"),
    ("empty page", V15, dict(replace={"pages/data.html": b""}), "is empty"),
    ("empty terms", V2, dict(replace={"pages/terms.html": b""}), "is empty"),
    ("logo missing", V15, dict(drop=["logo.png"]), "logo 'logo.png' is not"),
    ("logo not an image", V15, dict(replace={"logo.png": b"hello"}),
     "is not a PNG, JPEG or GIF"),
    ("reference zip missing", V15, dict(drop=["reference_data.zip"]),
     "reference_data.zip is not in the bundle"),
    ("data reference without .zip", V15,
     dict(edit_yaml=_set(["phases", 1, "scoring_program"], "scoring_program")),
     "does not end in .zip"),
    ("second yaml", V15, dict(replace={"a.yaml": b"x: 1\n"}), "other entries with '.yaml'"),
    ("macOS junk in the bundle", V15, dict(replace={"__MACOSX/._competition.yaml": b"x"}),
     "macOS metadata"),
    # scoring program zip
    ("program zipped as a folder", V15, dict(edit_program=_wrap_program),
     "inside the folder scoring_program/: Codabench does not flatten it"),
    ("program without metadata", V15, dict(edit_program=lambda f: f.pop("metadata")),
     "no `metadata` file at its root"),
    ("program with __pycache__", V15,
     dict(edit_program=lambda f: f.update({"scoring/__pycache__/cli.cpython-37.pyc": b"x"})),
     "compiled Python"),
    ("metadata.yaml differs", V2,
     dict(edit_program=lambda f: f.update({"metadata.yaml": b"command: python3 x\n"})),
     "metadata.yaml and metadata differ"),
    ("command with a redirection", V15,
     dict(edit_program=_command("python3 $program/score.py $input $output > log.txt")),
     "uses shell syntax (>)"),
    ("command with &&", V15,
     dict(edit_program=_command("cd $program && python3 score.py $input $output")),
     "uses shell syntax (&)"),
    ("command with quotes", V15,
     dict(edit_program=_command("python3 '$program/score.py' $input $output")), "shell syntax"),
    ("command without $output", V15, dict(edit_program=_command("python3 $program/score.py $input")),
     "does not use $output"),
    ("command with two spaces", V15,
     dict(edit_program=_command("python3  $program/score.py $input $output")), "two spaces"),
    ("command runs a missing script", V15,
     dict(edit_program=_command("python3 $program/run.py $input $output")), "has no run.py"),
    ("unknown placeholder", V15,
     dict(edit_program=_command("python3 $program/score.py $input $output $workdir")),
     "$workdir is not a placeholder"),
    ("no command", V15, dict(edit_program=_metadata("description: x\n")), "no `command:`"),
    ("extra metadata key", V15,
     dict(edit_program=_metadata("command: python3 $program/score.py $input $output\n"
                                 "data: extra.zip\n")), "fetches every other string value"),
    # sort vs sorting, colours, dates
    ("v15 sorting instead of sort", V15, dict(edit_yaml=_column("miou", sorting="asc")),
     "unknown column key `sorting`: v1.5 reads `sort`"),
    ("v15 bad sort", V15, dict(edit_yaml=_column("miou", sort="descending")), "is not asc or desc"),
    ("v2 sort instead of sorting", V2, dict(edit_yaml=_v2_column(0, sort="desc")),
     "`sort` is the v1.5 key: v2 reads `sorting`"),
    ("v15 bad colour", V15, dict(edit_yaml=_set(["phases", 1, "color"], "red")),
     "'red' is not a CodaLab phase color"),
    ("v15 quoted bare date", V15, dict(edit_yaml=_set(["phases", 1, "start_date"], "2021-04-15")),
     "Django's parse_datetime refuses a quoted date without a time"),
    ("v15 unreadable quoted date", V15,
     dict(edit_yaml=_set(["phases", 1, "start_date"], "15/04/2021 10:00")),
     "is not a date CodaLab reads"),
    ("v15 end before start", V15, dict(edit_yaml=_set(["end_date"], datetime.date(2021, 1, 1))),
     "is not after the last phase's start"),
    ("v15 phase numbers", V15, dict(edit_yaml=_set(["phases", 1, "phasenumber"], 2)),
     "must be 1, 2, 3"),
    ("v2 timestamp with a time", V2,
     dict(edit_yaml=_set(["phases", 0, "end"], datetime.datetime(2021, 6, 5, 23, 59))),
     "Codabench keeps only the date of an unquoted YAML timestamp"),
    ("v2 unreadable date", V2, dict(edit_yaml=_set(["phases", 0, "start"], "April 15")),
     "not a date Codabench can read"),
    ("v2 end before start", V2, dict(edit_yaml=_set(["phases", 0, "end"], "2021-04-01")),
     "ends (2021-04-01 00:00:00) before it starts"),
    # nothing open now
    ("v15 every phase over", V15,
     dict(edit_yaml=lambda d: (d["phases"].pop(2), d.update(end_date="2021-06-05 23:59:59"))),
     "no phase accepts submissions on"),
    ("v2 every phase over", V2, dict(edit_yaml=_set(["phases", 1, "end"], "2022-01-01")),
     "Codabench marks no phase Current"),
    # leaderboard against the scoring program's keys
    ("v15 missing column", V15, dict(edit_yaml=_del(["leaderboard", "columns", "iou_water"])),
     "no column for the score keys iou_water that the scoring program writes"),
    ("v15 misspelt column", V15, dict(edit_yaml=_rename_column("iou_water", "iou_waters")),
     "columns iou_waters are not keys the scoring program writes"),
    ("v15 ranked by another column", V15,
     dict(edit_yaml=_column("iou_water", selection_default=2, rank=0)),
     "ranked by 'iou_water', not by the scoring program's first key 'miou'"),
    ("v15 rankings disagree", V15, dict(edit_yaml=_column("iou_water", rank=0)),
     "CodaLab would rank by miou (selection_default) and Codabench by iou_water"),
    ("v15 mIoU sorted asc", V15, dict(edit_yaml=_column("miou", sort="asc")),
     "column miou sorts 'asc'"),
    ("v15 column not an alias", V15, dict(edit_yaml=_column("miou", leaderboard="RESULTS")),
     "names no declared leaderboard"),
    ("v15 numeric format", V15, dict(edit_yaml=_column("miou", numeric_format=12)), "1 to 10 decimals"),
    ("v2 missing column", V2,
     dict(edit_yaml=lambda d: d["leaderboards"][0]["columns"].pop()),
     "no column for the score keys iou_weed_cluster"),
    ("v2 column key the program never writes", V2,
     dict(edit_yaml=_v2_column(1, key="iou_backgrounds")),
     "columns iou_backgrounds are not keys the scoring program writes"),
    ("v2 extra column", V2,
     dict(edit_yaml=lambda d: d["leaderboards"][0]["columns"].append(
         {"title": "Rank", "key": "rank", "index": 10, "sorting": "asc", "precision": 0})),
     "columns rank are not keys the scoring program writes"),
    ("v2 column key too long", V2, dict(edit_yaml=_v2_column(1, key="iou_" + "x" * 40)),
     "the platform stores at most 36"),
    ("v2 ranked by another column", V2, dict(edit_yaml=_set(["leaderboards", 0, "primary_index"], 3)),
     "ranked by 'iou_drydown'"),
    ("v2 primary_index names no column", V2,
     dict(edit_yaml=_set(["leaderboards", 0, "primary_index"], 42)),
     "42 is the index of no column"),
    ("v2 column title too long", V2, dict(edit_yaml=_v2_column(2, title="T" * 37)),
     "title is 37 characters, the platform stores at most 36"),
    ("v2 task without index", V2, dict(edit_yaml=_del(["tasks", 0, "index"])),
     "missing required key `index`"),
    ("v2 task without scoring program", V2, dict(edit_yaml=_del(["tasks", 0, "scoring_program"])),
     "tasks[0]: missing required key `scoring_program`"),
    ("v2 phase without tasks", V2, dict(edit_yaml=_del(["phases", 1, "tasks"])),
     "phases must list at least one task"),
    ("v2 empty page", V2, dict(replace={"pages/overview.html": b""}), "is empty"),
    # v2 structure
    ("v2 no tasks", V2, dict(edit_yaml=_del(["tasks"])), "missing required key `tasks`"),
    ("v2 no terms", V2, dict(edit_yaml=_del(["terms"])), "missing required key `terms`"),
    ("v2 no image", V2, dict(edit_yaml=_del(["image"])), "missing required key `image`"),
    ("v2 singular leaderboard", V2,
     dict(edit_yaml=lambda d: d.update(leaderboard=d.pop("leaderboards"))),
     "`leaderboard:` is the v1.5 form; v2 reads `leaderboards:`"),
    ("v2 unknown task", V2, dict(edit_yaml=_set(["phases", 0, "tasks"], [7])),
     "task index 7 is not declared"),
    ("v2 v1.5 docker key", V2, dict(edit_yaml=_set(["competition_docker_image"], "x")),
     "v2 reads `docker_image`"),
    ("v2 page missing", V2, dict(drop=["pages/data.html"]), "is not in the bundle"),
    # The organizer's settings, as Codabench validates them (issue 25)
    ("v2 unknown submission rule", V2,
     dict(edit_yaml=_set(["leaderboards", 0, "submission_rule"], "Force_Worst")),
     "'Force_Worst' is not one of Add, Add_And_Delete"),
    ("v2 forced rule in a phase of several tasks", V2,
     dict(edit_yaml=lambda d: (d["tasks"].append(dict(d["tasks"][0], index=1)),
                               d["phases"][0].update(tasks=[0, 1]))),
     "leaderboards[0].submission_rule: Force_Best in a phase of several tasks (Test): Codabench "
     "applies it to each task's child submission"),
    ("v2 fact-sheet question without a key", V2,
     dict(edit_yaml=_del(["fact_sheet", "method", "key"])),
     "fact_sheet.method: a question has exactly the keys key, type, title, selection, "
     "is_required, is_on_leaderboard; key is missing or extra"),
    ("v2 fact-sheet question with a key of another", V2,
     dict(edit_yaml=_set(["fact_sheet", "method", "key"], "name")),
     "fact_sheet.method: its key must be 'method'"),
    ("v2 fact-sheet flag as a YAML boolean", V2,
     dict(edit_yaml=_set(["fact_sheet", "method", "is_required"], True)),
     "is_required: write the string \"true\" or \"false\", not True"),
    ("v2 fact-sheet question of no known type", V2,
     dict(edit_yaml=_set(["fact_sheet", "parameters", "type"], "number")),
     "type 'number' is not one of checkbox, text, select"),
    ("v2 fact-sheet text question with choices", V2,
     dict(edit_yaml=_set(["fact_sheet", "parameters", "selection"], ["1M", "10M"])),
     "only those answers would pass"),
    ("v2 fact sheet not a mapping", V2, dict(edit_yaml=_set(["fact_sheet"], ["method"])),
     "fact_sheet must be a mapping"),
    ("v2 contact that is no address", V2,
     dict(edit_yaml=_set(["contact_email"], "the organizers")),
     "'the organizers' is not an email address"),
    ("v2 queue by name", V2, dict(edit_yaml=_set(["queue"], "my-gpu-queue")),
     "'my-gpu-queue' is not a queue's vhost"),
    ("v2 a documented key the unpacker never reads", V2,
     dict(edit_yaml=_set(["phases", 0, "accepts_only_result_submissions"], True)),
     "phases[0].accepts_only_result_submissions: Codabench's v2 unpacker never reads this key"),
    ("v2 leaderboard index (the serializer drops it)", V2,
     dict(edit_yaml=_set(["leaderboards", 0, "index"], 0)),
     "leaderboards[0].index: Codabench's v2 unpacker never reads this key"),
    ("v2 column key of the v1.5 form", V2,
     dict(edit_yaml=_v2_column(1, numeric_format=4)),
     "leaderboards[0].columns[1].numeric_format: Codabench's v2 unpacker never reads"),
]


@pytest.mark.parametrize("name,bundle_name,changes,phrase", CASES, ids=[c[0] for c in CASES])
def test_each_mistake_is_refused_with_a_clear_message(good, tmp_path, name, bundle_name, changes,
                                                      phrase):
    report = rewrite(good / bundle_name, tmp_path / bundle_name, **changes)
    assert report.errors, "not refused: " + name
    assert phrase in errors_of(report), errors_of(report)


def test_a_time_limit_above_the_codabench_queue_cap_is_a_warning(good, tmp_path):
    report = rewrite(good / V2, tmp_path / V2,
                     edit_yaml=_set(["phases", 0, "execution_time_limit"], 1200))
    assert not report.errors
    assert "exceeds the 600 s cap" in "\n".join(report.lines())


def test_a_phase_without_a_daily_limit_is_a_warning(good, tmp_path):
    report = rewrite(good / V15, tmp_path / V15,
                     edit_yaml=_del(["phases", 1, "max_submissions_per_day"]))
    assert not report.errors, errors_of(report)
    assert "phases.1: no max_submissions_per_day: CodaLab then allows 999 a day" in \
        "\n".join(report.line(p) for p in report.warnings)


def test_on_the_organizers_own_queue_a_long_time_limit_is_no_warning(good, tmp_path):
    def edit(doc):
        doc["phases"][0]["execution_time_limit"] = 1200
        doc["queue"] = "0f6e2c9a-7b1d-4c38-9a54-3e2b1d0c4f77"
    report = rewrite(good / V2, tmp_path / V2, edit_yaml=edit)
    assert not report.errors and not report.warnings, report.lines()


def test_scorer_keys_come_from_the_bundled_program(good, tmp_path):
    """A scoring program writing other keys makes the (unchanged) leaderboard wrong."""
    def other_keys(files):
        path = "scoring/tasks/agrivision/task.py"
        files[path] = files[path].replace(b'score_keys = ["miou"]', b'score_keys = ["mean_iou"]')
    report = rewrite(good / V15, tmp_path / V15, edit_program=other_keys)
    assert "no column for the score keys mean_iou" in errors_of(report)


def test_a_v2_scoring_program_may_be_a_folder(good, tmp_path):
    """Codabench zips a folder itself: the check looks inside the folder the same way."""
    files = members(good / V2)
    program = members(io.BytesIO(files.pop("scoring_program.zip")))
    files.update({"scoring_program/" + n: d for n, d in program.items()})
    doc = yaml.safe_load(files["competition.yaml"])
    doc["tasks"][0]["scoring_program"] = "scoring_program"
    files["competition.yaml"] = yaml.safe_dump(doc, sort_keys=False).encode()
    (tmp_path / V2).write_bytes(zip_bytes(files))
    report = bundle_check.check_bundle(str(tmp_path / V2))
    assert not report.errors, report.lines()
    del files["scoring_program/metadata"]
    (tmp_path / V2).write_bytes(zip_bytes(files))
    assert "no `metadata` file at its root" in errors_of(bundle_check.check_bundle(str(tmp_path / V2)))


def test_a_quoted_date_and_time_is_read_by_codalab(good, tmp_path):
    """Django's parse_datetime reads a quoted 'YYYY-MM-DD HH:MM:SS' (and CodaLab localizes it):
    no error, and no warning either (Codabench's importer keeps a quoted time). The pages were
    written for 00:00 (their date check is tested apart)."""
    def dates_only(report):
        return [p for p in report.problems if p.severity != "note" and
                not p.where.startswith("html.")]
    report = rewrite(good / V15, tmp_path / V15,
                     edit_yaml=_set(["phases", 1, "start_date"], "2021-04-15 08:30:00"))
    assert not dates_only(report), report.lines()
    report = rewrite(good / V15, tmp_path / V15, edit_yaml=_set(
        ["phases", 1, "start_date"], datetime.datetime(2021, 4, 15, 8, 30)))
    assert not [p for p in dates_only(report) if p.severity == "error"], report.lines()
    assert "keeps only the date of an unquoted timestamp: quote it ('2021-04-15 08:30:00')" in \
        "\n".join(report.lines())


def test_a_v15_bundle_without_a_logo_is_accepted_as_codalab_does(good, tmp_path):
    report = rewrite(good / V15, tmp_path / V15, edit_yaml=_del(["image"]))
    assert not report.errors, report.lines()
    assert "Codabench's v1.5 importer refuses a bundle without one" in "\n".join(report.lines())


def test_a_v15_column_key_with_a_colon_can_never_be_scored(good, tmp_path):
    report = rewrite(good / V15, tmp_path / V15, edit_yaml=_rename_column("iou_water", "iou:water"))
    assert "holds a colon: CodaLab's worker splits each scores.txt line" in errors_of(report)


def test_a_whitespace_page_is_accepted_as_the_unpacker_does(good, tmp_path):
    report = rewrite(good / V2, tmp_path / V2, replace={"pages/data.html": b" \n"})
    assert not report.errors, report.lines()


def test_no_open_phase_is_accepted_when_intended_or_for_another_day(good, tmp_path):
    closed = dict(edit_yaml=_set(["phases", 1, "end"], "2022-01-01"))
    rewrite(good / V2, tmp_path / V2, **closed)
    bundle = str(tmp_path / V2)
    assert not bundle_check.check_bundle(bundle, allow_closed=True).errors
    report = bundle_check.check_bundle(bundle, now=datetime.datetime(2021, 12, 1))
    assert not report.errors and report.open_phases == ["Post-challenge"]
    assert bundle_check.main([bundle]) == 1
    assert bundle_check.main(["--allow-closed", bundle]) == 0
    assert bundle_check.main(["--open-on", "2021-05-01", bundle]) == 0


def test_a_bundle_that_opens_later_is_accepted_and_says_when(good, tmp_path):
    """Organizers upload before the start: only a bundle whose phases have all ended is
    refused (the pages' dates are checked apart: here they still tell 2021)."""
    def later(doc):
        doc["phases"][0]["start"] = "2999-01-01"
        doc["phases"][0]["end"] = "2999-02-01 23:59:59"
        doc["phases"][1]["start"] = "2999-02-02"
    report = rewrite(good / V2, tmp_path / V2, edit_yaml=later)
    assert [p for p in report.errors if p.where == "phases"] == []
    assert report.open_phases == [] and report.opens_later == (
        "Test", datetime.datetime(2999, 1, 1))
    assert bundle_check.open_state(report) == "no phase open yet: Test opens on 2999-01-01 " \
                                              "00:00:00 UTC"
    report = bundle_check.check_bundle(str(tmp_path / V2), open_on=datetime.datetime(2999, 1, 1))
    assert [p for p in report.errors if p.where == "phases"] == []    # open at its start
    report = bundle_check.check_bundle(str(tmp_path / V2), open_on=datetime.datetime(2998, 1, 1))
    assert "no phase accepts submissions on 2998-01-01 00:00:00 UTC (Codabench marks no phase " \
           "Current; --open-on): Test opens on 2999-01-01 00:00:00" in errors_of(report)


def open_labels(model, doc, now):
    """The labels of the phases the platform's model takes submissions for at `now`."""
    return [model.phase_label(p) for p in model.open_phases(doc, now)]


def test_the_phase_codalab_keeps_open_is_the_one_codabench_marks_current():
    """Both platforms' rules, from their code: CodaLab's CompetitionPhase.is_active (open from
    its start until phase number + 1 starts, the last one until end_date; start <= now) and
    Codabench's phase status, which its upload form reads (PhaseDetailSerializer.get_status:
    Current when start <= now and now <= end)."""
    v15 = {"end_date": "2021-06-05 23:59:59", "phases": {
        1: {"phasenumber": 1, "label": "A", "start_date": datetime.date(2021, 4, 15)},
        2: {"phasenumber": 2, "label": "B", "start_date": "2021-05-01 12:00:00"}}}
    at = datetime.datetime
    assert open_labels(CODALAB, v15, at(2021, 4, 14, 23, 59)) == []
    assert open_labels(CODALAB, v15, at(2021, 4, 15)) == ["A"]          # start <= now
    assert open_labels(CODALAB, v15, at(2021, 5, 1, 11, 59, 59)) == ["A"]
    assert open_labels(CODALAB, v15, at(2021, 5, 1, 12)) == ["B"]
    assert open_labels(CODALAB, v15, at(2021, 6, 5, 23, 59, 58)) == ["B"]
    assert open_labels(CODALAB, v15, at(2021, 6, 6)) == []
    never = {"phases": {1: dict(v15["phases"][1]),
                        2: dict(v15["phases"][2], phase_never_ends=True)}}
    # phase_never_ends: open whatever the dates, before its start too (CodaLab's code)
    assert open_labels(CODALAB, never, at(2021, 4, 20)) == ["A", "B"]
    v2 = {"phases": [{"index": 0, "name": "A", "start": datetime.date(2021, 4, 15),
                      "end": "2021-05-01 11:59:59"},
                     {"index": 1, "name": "B", "start": "2021-05-01 12:00:00"}]}
    assert open_labels(CODABENCH, v2, at(2021, 4, 14, 23, 59, 59)) == []
    assert open_labels(CODABENCH, v2, at(2021, 4, 15)) == ["A"]            # start <= now
    assert open_labels(CODABENCH, v2, at(2021, 5, 1, 11, 59, 59)) == ["A"]  # now <= end
    assert open_labels(CODABENCH, v2, at(2021, 5, 1, 11, 59, 59, 1)) == []
    assert open_labels(CODABENCH, v2, at(2021, 5, 1, 12)) == ["B"]
    assert open_labels(CODABENCH, v2, at(2030, 1, 1)) == ["B"]


def test_pages_whose_dates_are_no_phases_are_refused(good, tmp_path):
    """A page telling another timeline than the phases' (e.g. written for other dates), or a
    template token nobody filled in, is refused, through the check's command."""
    overview = members(good / V15)["pages/overview.html"].decode()
    assert "2021-04-15 00:00 UTC: the Test phase opens." in overview   # the template's
    stale = overview.replace("2021-04-15 00:00 UTC", "2021-04-14")
    rewrite(good / V15, tmp_path / "stale.zip", replace={"pages/overview.html":
                                                          stale.encode()})
    rewrite(good / V2, tmp_path / "token.zip", replace={
        "pages/terms.html": b"<p>The test phase runs {{challenge_period}}.</p>"})
    env = dict(os.environ, BUNDLE_NOW="2030-01-01")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "organizer", "bundle_check.py"),
                           str(tmp_path / "stale.zip"), str(tmp_path / "token.zip"),
                           str(good / V2)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stdout
    assert "stale.zip: ERROR html.overview: pages/overview.html gives the dates 2021-04-14, " \
           "which are no phase's start or end (phases: Test from 2021-04-15 00:00:00 to " \
           "2021-06-05 23:59:59; Post-challenge from 2021-06-06 00:00:00, no end)" in proc.stdout
    assert "token.zip: ERROR terms: pages/terms.html holds the template tokens " \
           "{{challenge_period}}, never filled in" in proc.stdout
    assert "{}: OK (0 warnings); open for submissions: Post-challenge".format(V2) in proc.stdout


def test_a_v15_bundle_notes_that_codabench_would_end_its_phases_a_day_early(good, tmp_path):
    """Codabench's importer of v1.5 bundles (unpackers/v1.py) ends a phase at the next phase's
    start minus one day: a note on the v1.5 bundle only, and none with a single phase."""
    notes = bundle_check.check_bundle(str(good / V15)).notes
    assert [n.message for n in notes] == [
        "imported into Codabench, this CodaLab v1.5 bundle ends each phase one day early "
        "(Codabench's v1.5 importer ends a phase at the next phase's start minus one day): "
        "Test would end 2021-06-05 00:00:00 instead of 2021-06-05 23:59:59 UTC. Upload the "
        "Codabench v2 bundle to Codabench"]
    assert not bundle_check.check_bundle(str(good / V2)).notes

    def one_phase(doc):
        del doc["phases"][2]
        doc["end_date"] = "2021-06-05 23:59:59"
    report = rewrite(good / V15, tmp_path / V15, edit_yaml=one_phase)
    assert not report.notes, report.lines()
