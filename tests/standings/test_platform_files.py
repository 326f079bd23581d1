"""The platform's downloads and exports read as the platform writes them: names and CSVs are
made here by the platform's own lines (tests/support/codabench_source.py runs the committed
extract of codalab/codabench), then read back by organizer/organizing/platform_files."""
import datetime
import json
import os
import tempfile
import types
import zipfile

import pytest
from hypothesis import given, strategies as st

import codabench_source
from organizing.platform_files import downloads, listing, names, participants, results_export
from organizing.platform_files.problems import PlatformFileProblem

EXTRACT = codabench_source.committed()
UTC = datetime.timezone.utc
usernames = st.from_regex(r"\A[a-z0-9_-]{1,20}\Z")   # Codabench's username rule
moments = st.datetimes(min_value=datetime.datetime(2020, 1, 1),
                       max_value=datetime.datetime(2035, 1, 1), timezones=st.just(UTC))
file_names = st.from_regex(r"\A[A-Za-z0-9_. -]{1,30}\.zip\Z")


def submission(sid, owner, phase, when, file_name="submission.zip"):
    return types.SimpleNamespace(
        id=sid, owner=owner, phase=types.SimpleNamespace(id=phase),
        data=types.SimpleNamespace(created_when=when, data_file=types.SimpleNamespace(
            name="dataset/2027/abc/" + file_name)))


def test_the_platforms_name_of_a_known_submission():
    # what the issue quotes, made by the platform's own f-string and the browser's rename
    name = codabench_source.bulk_name(EXTRACT, submission(
        48611, "alphaseg", 12, datetime.datetime(2027, 5, 10, 14, 5, 7, tzinfo=UTC)))
    assert name == "48611_alphaseg_PhaseId12_2027-05-10_05-07_submission.zip"
    facts = names.parse(name)
    assert (facts.submission_id, facts.owner, facts.phase_id, facts.date, facts.minute_second,
            facts.file_name) == (48611, "alphaseg", 12, "2027-05-10", "05-07", "submission.zip")


@given(st.integers(1, 10 ** 9), usernames, st.integers(1, 10 ** 6), moments, file_names)
def test_every_bulk_name_parses_back(sid, owner, phase, when, file_name):
    name = codabench_source.bulk_name(EXTRACT, submission(sid, owner, phase, when, file_name))
    facts = names.parse(name)
    assert facts is not None and facts.platform == "codabench"
    assert (facts.submission_id, facts.owner, facts.phase_id, facts.file_name) == \
        (sid, owner, phase, file_name)
    assert facts.date == when.date().isoformat()      # the UTC date the limits count by
    assert facts.minute_second == when.strftime("%M-%S")


def test_codalab_download_names():
    # codalab/apps/web/views.py download_leaderboard_results: "%s - %s submission.zip" with
    # the username, or "Team %s " when the account set a team name
    team = names.parse("Team Red Fox  - 4 submission.zip")
    assert (team.platform, team.owner, team.number, team.is_submission) == \
        ("codalab", "Team Red Fox", 4, True)
    user = names.parse("bob_1 - 12 submission.zip")
    assert (user.owner, user.number) == ("bob_1", 12)
    assert names.parse("bob_1 - 12 output.zip").is_submission is False
    assert names.parse("submission.zip") is None


def test_a_bulk_zip_lists_every_entry(tmp_path):
    when = datetime.datetime(2027, 5, 10, 14, 5, 7, tzinfo=UTC)
    bulk = tmp_path / "bulk_submissions.zip"
    with zipfile.ZipFile(bulk, "w") as z:
        for sid, owner in ((7, "a_b-c"), (8, "d")):
            z.writestr(codabench_source.bulk_name(EXTRACT, submission(sid, owner, 3, when)),
                       b"PK\x05\x06" + b"\0" * 18)
        z.writestr("failed.txt", "The following submissions failed to download:\n\nx")
        z.writestr("notes.txt", "mine")
    opened = downloads.open_bulk(str(bulk))
    try:
        assert [(f.facts.submission_id, f.facts.owner) for f in opened.files] == \
            [(7, "a_b-c"), (8, "d")]
        assert [n for n, _ in opened.others] == ["failed.txt", "notes.txt"]
        assert all(reason for _, reason in opened.others)
    finally:
        opened.cleanup()
    days = listing.read(str(bulk))
    assert [(s.owner, s.day, s.status) for s in days] == \
        [("a_b-c", "2027-05-10", None), ("d", "2027-05-10", None)]


def phase_of(rows, tasks=({"id": 7, "name": "Agriculture-Vision"},)):
    return {"id": 12, "name": "Final", "tasks": list(tasks), "submissions": rows}


def test_the_codabench_results_csv_with_a_fact_sheet():
    rows = [{"owner": "alpha_seg", "parent": None, "id": 101, "task": 7,
             "fact_sheet_answers": {"team": "A"},
             "scores": [{"column_key": "miou", "score": "0.6133000000"},
                        {"column_key": "iou_water", "score": "0.7000000000"}]},
            {"owner": "bob-2", "parent": None, "id": 102, "task": 7,
             "fact_sheet_answers": {"team": "B"}, "scores": []}]   # a failed run: no scores
    text = codabench_source.results_csv(EXTRACT, "Results", {"miou": "mIoU",
                                                             "iou_water": "water"},
                                        phase_of(rows))
    assert text.splitlines()[0].count("fact_sheet_answers") == 2     # the platform's quirk
    read = read_text(text)
    assert read.format == "codabench" and read.column == "Agriculture-Vision(7)-mIoU"
    assert [(r.owner, r.submission_id, r.score) for r in read.rows] == \
        [("alpha_seg", 101, 0.6133), ("bob-2", 102, None)]
    assert read_text(text, "water").rows[0].score == 0.7


def test_a_multi_task_row_is_named_after_the_parent():
    rows = [{"owner": "c", "parent": 500, "id": 501, "task": 7, "fact_sheet_answers": None,
             "scores": [{"column_key": "miou", "score": "0.5"}]}]
    read = read_text(codabench_source.results_csv(EXTRACT, "R", {"miou": "mIoU"},
                                                  phase_of(rows)))
    assert [(r.owner, r.submission_id) for r in read.rows] == [("c", 500)]


def read_text(text, column=None):
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="") as f:
        f.write(text)
    try:
        return results_export.read(f.name, column)
    finally:
        os.remove(f.name)


def test_codalab_and_compare_exports():
    codalab = ("submission_pk,User,b'mIoU',\r\n11,alice,0.6133 (1),\r\n12,bob,0.5000 (2),\r\n")
    read = read_text(codalab)
    assert read.format == "codalab"
    assert [(r.owner, r.submission_id, r.score) for r in read.rows] == \
        [("alice", 11, 0.6133), ("bob", 12, 0.5)]
    ours = "model,rank,miou\nteam_b,1,0.7\nteam_a,2,0.6\n"
    assert [(r.owner, r.score) for r in read_text(ours).rows] == [("team_b", 0.7),
                                                                  ("team_a", 0.6)]


@pytest.mark.parametrize("text", ["a,b\n1,2\n", "Username,fact_sheet_answers,T(1)-m\nno_id,,1\n",
                                  "Username,fact_sheet_answers,T(1)-m\na-1,,nan\n"])
def test_an_export_not_read_is_one_named_problem(text):
    with pytest.raises(PlatformFileProblem) as info:
        read_text(text)
    assert "leaderboard export" in str(info.value) or "not a leaderboard export" in \
        str(info.value)


def test_the_submissions_listing_counts_utc_days(tmp_path):
    path = tmp_path / "subs.json"
    path.write_text(json.dumps({"results": [
        {"id": 1, "owner": "a", "created_when": "2027-05-10T23:30:00+00:00",
         "status": "Finished", "parent": None},
        # 01:30 at +02:00 is 23:30 the day before in UTC
        {"id": 2, "owner": "a", "created_when": "2027-05-11T01:30:00.123456+02:00",
         "status": "Failed", "parent": None},
        {"id": 3, "owner": "a", "created_when": "2027-05-11T00:10:00Z", "status": "Finished",
         "parent": 1}]}))
    got = listing.read(str(path))
    assert [(s.submission_id, s.day, s.status, s.top_level) for s in got] == \
        [(1, "2027-05-10", "Finished", True), (2, "2027-05-10", "Failed", True),
         (3, "2027-05-11", "Finished", False)]


def test_participants_map_emails(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"id": 1, "username": "alpha", "email": "A@Lab.org",
                                 "status": "approved"}]))
    assert participants.emails_to_usernames(str(path)) == {"a@lab.org": "alpha"}
    path.write_text("[1]")
    with pytest.raises(PlatformFileProblem):
        participants.emails_to_usernames(str(path))


@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda t: t.encode("utf-8")))
def test_any_bytes_end_in_a_reading_or_a_named_refusal(data):
    from organizing.teams import roster
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "f.json")
        with open(path, "wb") as f:
            f.write(data)
        for read in (results_export.read, listing.read_json, participants.emails_to_usernames,
                     roster.read):
            try:
                read(path)
            except PlatformFileProblem:
                pass


def test_deep_json_is_a_named_refusal(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000 + "]" * 100000)
    for read in (listing.read_json, participants.emails_to_usernames):
        with pytest.raises(PlatformFileProblem):
            read(str(path))


def test_the_submissions_tabs_csv(tmp_path):
    # the submissions tab's "Download as CSV" (?format=csv): rest_framework_csv flattens nested
    # fields into dotted columns and writes an empty cell for a null parent
    path = tmp_path / "submissions.csv"
    path.write_text("created_when,id,owner,parent,phase,scores.0.score,status\r\n"
                    "2027-05-10T23:30:00Z,1,a,,12,0.5,Finished\r\n"
                    "2027-05-11T00:30:00+02:00,2,a,,12,,Failed\r\n"
                    "2027-05-11T09:00:00Z,3,a,1,12,0.6,Finished\r\n")
    got = listing.read(str(path))
    assert [(s.submission_id, s.day, s.status, s.top_level) for s in got] == \
        [(1, "2027-05-10", "Finished", True), (2, "2027-05-10", "Failed", True),
         (3, "2027-05-11", "Finished", False)]
    path.write_text("id,who\n1,a\n")
    with pytest.raises(PlatformFileProblem):
        listing.read(str(path))


def test_the_participants_tabs_csv(tmp_path):
    # participant_manager.tag's own header and quoting, run from the extract
    path = tmp_path / "participants.csv"
    path.write_text(codabench_source.participants_csv(EXTRACT, [
        {"id": 3, "username": "alpha", "email": "A@Lab.org", "is_bot": False,
         "status": "approved"},
        {"id": 4, "username": "quote\"d", "email": "q@x.org", "is_bot": True,
         "status": "approved"}]))
    assert path.read_text().splitlines()[0] == '"ID","Username","Email","Is Bot","Status"'
    assert participants.emails_to_usernames(str(path)) == {"a@lab.org": "alpha",
                                                           "q@x.org": 'quote"d'}
