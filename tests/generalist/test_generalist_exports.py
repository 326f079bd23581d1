"""CodaLab and Codabench leaderboard exports, as the platforms write them (docs/generalist.md),
read through the real command."""
import pytest

from generalist_util import by_model, rank_case, run_generalist, write_case
from scoring.generalist import exports

# CodaLab Competitions, "Download CSV" (Competition.get_results_csv on Python 3): labels come out
# as b'...', values as "<value> (<dense rank>)", one empty cell at the end of each data row.
CODALAB = (
    "submission_pk,User,b'mAP',b'F\\xc3\\xa9',b'Avg rank'\r\n"
    "2041,aurora,0.6120 (1),0.81 (1),1.00 (1),\r\n"
    "2038,borealis,0.5870 (2),0.79 (2),2.00 (2),\r\n"
    "2050,cirrus,0.5870 (2),0.77 (3),2.50 (3),\r\n"
    "2022,dune_lab,0.5210 (3),0.74 (4),3.50 (4),\r\n"
)
# Codabench, "This CSV" (CompetitionViewSet.results): <username>-<submission id>, then
# "<task>(<task id>)-<column title>" columns with the raw DecimalField scores.
CODABENCH = (
    "Username,fact_sheet_answers,Maritime MOT(31)-HOTA,Maritime MOT(31)-IDSW\r\n"
    "borealis-2211,,0.6120000000,112.0000000000\r\n"
    "aurora-2198,\"{'method': 'tracker, v2'}\",0.6010000000,131.0000000000\r\n"
    "fjord-2240,,0.5890000000,131.0000000000\r\n"
    "dune-lab-2250,,0.5530000000,160.0000000000\r\n"
)


def board(column_line, fmt=""):
    return """
        min_leaderboards: 1
        leaderboards:
          - name: only
            file: board.csv
            {}
          - name: other
            file: other.csv
            model_column: m
            rank_column: r
    """.format(("format: {}\n            ".format(fmt) if fmt else "") + column_line)


OTHER = "m,r\naurora,1\nzed,2\n"


def ranks(doc, name="only"):
    return {m["model"]: m["leaderboards"][name]["rank"] for m in doc["models"]
            if m["leaderboards"][name]["rank"] is not None}


def test_codalab_score_column_is_ranked_from_the_values(tmp_path):
    _, doc = rank_case(tmp_path, board("score_column: mAP\n            higher_is_better: true"),
                       {"board.csv": CODALAB, "other.csv": OTHER})
    # CodaLab's own "(3)" for dune_lab is a dense rank; from the values it is 4 (1-2-2-4).
    assert ranks(doc) == {"aurora": 1, "borealis": 2, "cirrus": 2, "dune_lab": 4}
    info = doc["leaderboards"][0]
    assert (info["format"], info["model_column"], info["score_column"]) == ("codalab", "User", "mAP")


def test_codalab_rank_column_is_codalab_rank_as_it_stands(tmp_path):
    _, doc = rank_case(tmp_path, board("rank_column: mAP"), {"board.csv": CODALAB, "other.csv": OTHER})
    assert ranks(doc) == {"aurora": 1, "borealis": 2, "cirrus": 2, "dune_lab": 3}


def test_codalab_non_ascii_label_and_lower_is_better(tmp_path):
    _, doc = rank_case(tmp_path, board("score_column: Avg rank\n            higher_is_better: false"),
                       {"board.csv": CODALAB, "other.csv": OTHER})
    assert ranks(doc) == {"aurora": 1, "borealis": 2, "cirrus": 3, "dune_lab": 4}
    _, doc = rank_case(tmp_path / "2", board("score_column: F\u00e9\n            higher_is_better: true"),
                       {"board.csv": CODALAB, "other.csv": OTHER})
    assert ranks(doc) == {"aurora": 1, "borealis": 2, "cirrus": 3, "dune_lab": 4}


def test_codalab_second_table(tmp_path):
    second = ("submission_pk,User,b'mAP'\r\n"
              "7,zed,0.9 (1),\r\n7,aurora,0.1 (2),\r\n")
    _, doc = rank_case(tmp_path, board("table: 2\n            score_column: mAP\n"
                                       "            higher_is_better: true"),
                       {"board.csv": CODALAB + second, "other.csv": OTHER})
    assert ranks(doc) == {"zed": 1, "aurora": 2}


def test_codalab_older_export(tmp_path):
    """Python 2 era (codalab-competitions issue #1673): a label row, `User,...`, a `""` row."""
    older = ('Results\r\n\r\nUser,F1,recall,Description,Date,Filename,Is on leaderboard?\r\n'
             '""\r\nuser001,1.0000 (1),0.2732 (2),,2017-01-18 03:15:03+00:00,a.zip,True\r\n'
             'user002,0.5000 (2),0.2775 (1),,2017-01-18 10:05:54+00:00,b.zip,True\r\n')
    _, doc = rank_case(tmp_path, board("score_column: recall\n            higher_is_better: true",
                                       fmt="codalab"),
                       {"board.csv": older, "other.csv": OTHER})
    assert ranks(doc) == {"user002": 1, "user001": 2}


def test_codalab_empty_table_and_sub_columns_are_refused(tmp_path):
    config = board("score_column: mAP\n            higher_is_better: true")
    empty = "submission_pk,User,b'mAP'\r\nNo data available\r\n"
    subs = ("submission_pk,User,Detection,Detection\r\n,b'mAP',b'AR'\r\n"
            "1,aurora,0.5 (1),,,\r\n")
    for text, line, words in ((empty, 1, "0 entries"), (subs, 2, "sub-columns")):
        path = write_case(tmp_path / "case", config, {"board.csv": text, "other.csv": OTHER})
        proc = run_generalist(path, "--out", tmp_path / "out")
        assert proc.returncode == 3, proc.stderr
        assert "board.csv, line {}: ".format(line) in proc.stderr and words in proc.stderr
        assert not (tmp_path / "out").exists()


def test_codabench_export_by_column_title(tmp_path):
    config = 'aliases: {"dune-lab": "dune_lab"}\n' + board(
        "score_column: IDSW\n            higher_is_better: false").replace("\n        ", "\n")
    _, doc = rank_case(tmp_path, config, {"board.csv": CODABENCH, "other.csv": OTHER})
    assert ranks(doc) == {"borealis": 1, "aurora": 2, "fjord": 2, "dune_lab": 4}
    info = doc["leaderboards"][0]
    assert (info["format"], info["model_column"], info["score_column"]) == (
        "codabench", "Username", "Maritime MOT(31)-IDSW")
    assert by_model(doc)["aurora"]["leaderboards"]["other"]["rank"] == 1


def test_codabench_export_by_full_header(tmp_path):
    _, doc = rank_case(tmp_path, board("score_column: Maritime MOT(31)-HOTA\n"
                                       "            higher_is_better: true"),
                       {"board.csv": CODABENCH, "other.csv": OTHER})
    assert ranks(doc) == {"borealis": 1, "aurora": 2, "fjord": 3, "dune-lab": 4}


def test_a_plain_csv_that_looks_like_nothing_special(tmp_path):
    """format: csv reads a Codabench file as a plain table: names keep their -<id> suffix."""
    _, doc = rank_case(tmp_path, board("model_column: Username\n            score_column: "
                                       "Maritime MOT(31)-HOTA\n            higher_is_better: true",
                                       fmt="csv"),
                       {"board.csv": CODABENCH, "other.csv": OTHER})
    assert "borealis-2211" in ranks(doc)


@pytest.mark.parametrize("label, expected", [
    ("b'mAP'", "mAP"), ("b'F\\xc3\\xa9'", "F\u00e9"), ('b"it\'s"', "it's"), ("mAP", "mAP"),
    ("b'", "b'"), ("bad'", "bad'"), (" b'x' ", "x"), ("b'\\xff'", "b'\\xff'")])
def test_unwrap_label(label, expected):
    assert exports.unwrap_label(label) == expected


@pytest.mark.parametrize("cell, expected", [
    ("0.7512 (1)", ("0.7512", "1")), ("- (-)", ("-", "-")), ("0.5", ("0.5", None)),
    ("1.0 (12) ", ("1.0", "12"))])
def test_codalab_cell(cell, expected):
    assert exports.codalab_cell(cell) == expected


@pytest.mark.parametrize("cell, expected", [
    ("alice-1234", "alice"), ("dune-lab-77", "dune-lab"), ("bob", "bob"), ("x-y", "x-y")])
def test_codabench_owner(cell, expected):
    assert exports.codabench_owner(cell) == expected


def test_detect():
    assert exports.detect([(1, ["submission_pk", "User", "b'x'"])]) == "codalab"
    assert exports.detect([(1, ["Username", "fact_sheet_answers", "T(1)-x"])]) == "codabench"
    assert exports.detect([(1, ["Team", "score"])]) == "csv"
    assert exports.detect([]) == "csv"
