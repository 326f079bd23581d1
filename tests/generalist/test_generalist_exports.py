"""CodaLab and Codabench leaderboard exports, as the platforms write them (docs/generalist.md),
read through the real command (a test that runs it on several cases runs one of them for real,
the others through the same main in this process)."""
import pytest

from generalist_util import (by_model, codabench_export, codalab_export, generalist_either,
                             rank_case, run_generalist, write_case)
from organizing.generalist import exports

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


def test_codalab_scores_are_shown_as_written_without_codalabs_rank(tmp_path):
    """The page shows each model's score as the export writes it: `0.6120`, not CodaLab's cell
    `0.6120 (1)` whose `(1)` is its dense rank (and verify.py reads the claimed score there)."""
    rank_case(tmp_path, board("score_column: mAP\n            higher_is_better: true"),
              {"board.csv": CODALAB, "other.csv": OTHER})
    page = (tmp_path / "out" / "ranking.html").read_text(encoding="utf-8")
    assert "aurora on only: rank 1/4, mAP 0.612 (s = 1.000)" in page
    assert "0.6120 (1)" not in page and "0.5210 (3)" not in page


def test_codalab_rank_column_is_codalab_rank_as_it_stands(tmp_path):
    _, doc = rank_case(tmp_path, board("rank_column: mAP"), {"board.csv": CODALAB, "other.csv": OTHER})
    assert ranks(doc) == {"aurora": 1, "borealis": 2, "cirrus": 2, "dune_lab": 3}


def test_codalab_non_ascii_label_and_lower_is_better(tmp_path):
    _, doc = rank_case(tmp_path, board("score_column: Avg rank\n            higher_is_better: false"),
                       {"board.csv": CODALAB, "other.csv": OTHER})
    assert ranks(doc) == {"aurora": 1, "borealis": 2, "cirrus": 3, "dune_lab": 4}
    _, doc = rank_case(tmp_path / "2", board("score_column: F\u00e9\n            higher_is_better: true"),
                       {"board.csv": CODALAB, "other.csv": OTHER}, real=False)
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
        proc = generalist_either(path, "--out", tmp_path / "out", real=text == empty)
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


# ---------------------------------------------------------------- exports as they come (issue 15)

def two_boards(options, score_line="score_column: mAP\n            higher_is_better: true"):
    """`only` (the export, with options) and `other` (a plain rank board)."""
    return board(score_line + "".join("\n            {}: {}".format(k, v)
                                      for k, v in options.items()))


# Codabench, several submissions per user (the leaderboard keeps them all), a failed run with
# empty cells, and a user whose name ends in digits.
CODABENCH_MANY = codabench_export(("Maritime MOT", 31), ["HOTA", "IDSW"], [
    ("aurora", 2198, [0.601, 131]),
    ("borealis", 2211, [0.612, 112]),
    ("aurora", 2260, [0.640, 140]),       # aurora's best HOTA, but more ID switches
    ("cirrus", 2305, [None, None]),       # failed run
    ("dune-lab-2", 2250, [0.553, 160]),
    ("borealis", 2190, [0.500, 100]),     # borealis's fewest ID switches
])


def test_codabench_several_submissions_per_user_refused_by_default(tmp_path):
    path = write_case(tmp_path / "case", two_boards({}, "score_column: HOTA\n            "
                                                       "higher_is_better: true"),
                      {"board.csv": CODABENCH_MANY, "other.csv": OTHER})
    proc = run_generalist(path)
    assert proc.returncode == 3
    assert "board.csv, line 4: model 'aurora' is already on this leaderboard (line 2)" in \
        proc.stderr
    assert "keep one per model, or set `duplicates: best`" in proc.stderr
    assert "board.csv, line 5: missing score in column 'Maritime MOT(31)-HOTA' (a failed " \
           "run? `missing: absent`" in proc.stderr


@pytest.mark.parametrize("column, higher, expected", [
    # HOTA, higher is better: aurora 0.640, borealis 0.612, dune-lab-2 0.553.
    ("HOTA", "true", {"aurora": 1, "borealis": 2, "dune-lab-2": 3}),
    # IDSW, lower is better: borealis 100, aurora 131, dune-lab-2 160.
    ("IDSW", "false", {"borealis": 1, "aurora": 2, "dune-lab-2": 3}),
])
def test_codabench_duplicates_best_and_missing_absent(tmp_path, column, higher, expected):
    config = two_boards({"duplicates": "best", "missing": "absent"},
                        "score_column: {}\n            higher_is_better: {}".format(column,
                                                                                   higher))
    # The real command for HOTA; IDSW through the same main in this process.
    proc, doc = rank_case(tmp_path, config, {"board.csv": CODABENCH_MANY, "other.csv": OTHER},
                          real=column == "HOTA")
    assert ranks(doc) == expected
    info = doc["leaderboards"][0]
    assert info["entries"] == 3                       # N counts the kept rows
    assert (info["duplicates"], info["rows_dropped_as_duplicates"]) == ("best", 2)
    assert (info["missing"], info["rows_without_value"]) == ("absent", 1)
    # cirrus's only row failed: absent from this board, and on no other one, so not listed.
    assert "cirrus" not in by_model(doc)
    assert "duplicates: best, 2 rows dropped; missing: absent, 1 row without a value" in \
        proc.stdout
    # The value shown beside the rank on the page is the kept row's.
    html = (tmp_path / "out" / "ranking.html").read_text(encoding="utf-8")
    shown = "0.64" if column == "HOTA" else "100"
    assert "rank 1/3, Maritime MOT(31)-{} {}".format(column, shown) in html or \
        "rank 2/3, Maritime MOT(31)-{} {}".format(column, shown) in html


def test_missing_absent_alone_lets_a_failed_run_and_a_good_one_through(tmp_path):
    text = codabench_export(("T", 1), ["mAP"], [("ann", 7, [None]), ("ann", 9, [0.5]),
                                                 ("bob", 3, [0.4])])
    _, doc = rank_case(tmp_path, two_boards({"missing": "absent"}),
                       {"board.csv": text, "other.csv": OTHER})
    assert ranks(doc) == {"ann": 1, "bob": 2}
    assert doc["leaderboards"][0]["entries"] == 2


CODALAB_FAILED = codalab_export(["mAP"], [(11, "aurora", [("0.6120", "1")]),
                                          (12, "borealis", [("-", "-")]),
                                          (13, "cirrus", [("0.5870", "2")])])


@pytest.mark.parametrize("column", ["score_column: mAP\n            higher_is_better: true",
                                    "rank_column: mAP"])
def test_codalab_missing_value(tmp_path, column):
    path = write_case(tmp_path / "case", two_boards({}, column),
                      {"board.csv": CODALAB_FAILED, "other.csv": OTHER})
    proc = run_generalist(path)
    assert proc.returncode == 3 and "board.csv, line 3: missing" in proc.stderr
    assert "`missing: absent`" in proc.stderr
    _, doc = rank_case(tmp_path, two_boards({"missing": "absent"}, column),
                       {"board.csv": CODALAB_FAILED, "other.csv": OTHER}, real=False)
    assert ranks(doc) == {"aurora": 1, "cirrus": 2}


def test_codalab_anonymous_rows_are_never_merged(tmp_path):
    text = codalab_export(["mAP"], [(11, "Anonymous", [("0.6", "1")]),
                                    (12, "Anonymous", [("0.5", "2")])])
    path = write_case(tmp_path / "case", two_boards({"duplicates": "best"}),
                      {"board.csv": text, "other.csv": OTHER})
    proc = run_generalist(path)
    assert proc.returncode == 3
    assert "different participants): download the CSV as the organizer" in proc.stderr


def test_rank_column_with_duplicates_best_is_ranked_again(tmp_path):
    """The given ranks counted the dropped rows: the kept ones are ranked by them (1-2-2-4)."""
    text = "m,r\nA,1\nA,2\nB,3\nC,3\nD,5\n"
    _, doc = rank_case(tmp_path, two_boards({"duplicates": "best"}, "model_column: m\n"
                                            "            rank_column: r"),
                       {"board.csv": text, "other.csv": OTHER})
    assert ranks(doc) == {"A": 1, "B": 2, "C": 2, "D": 4}
    assert doc["leaderboards"][0]["entries"] == 4


def test_ties_between_duplicates_keep_the_first_row(tmp_path):
    text = "m,v\nA,2\nB,1\nA,2.0\n"
    _, doc = rank_case(tmp_path, two_boards({"duplicates": "best"}, "model_column: m\n"
                                            "            score_column: v\n"
                                            "            higher_is_better: true"),
                       {"board.csv": text, "other.csv": OTHER})
    assert ranks(doc) == {"A": 1, "B": 2}
    assert by_model(doc)["A"]["leaderboards"]["only"]["rank"] == 1


@pytest.mark.parametrize("option", ["duplicates: first", "missing: zero", "duplicates: true"])
def test_bad_option_values(tmp_path, option):
    config = board("score_column: mAP\n            higher_is_better: true\n            " + option)
    path = write_case(tmp_path / "case", config, {"board.csv": CODALAB_FAILED,
                                                  "other.csv": OTHER})
    proc = generalist_either(path, real=option == "missing: zero")
    key = option.split(":")[0]
    assert proc.returncode == 3
    assert "{} must be one of {}".format(key, "error, best" if key == "duplicates"
                                         else "error, absent") in proc.stderr


# ---------------------------------------------------------------- compare.py's leaderboard.csv

COMPARE = ("model,rank,miou,miou_ci_low,miou_ci_high,iou_water\n"
           "sub-a,1,0.8123,0.80,0.82,0.91\n"
           "sub-b,2,0.7990,0.78,0.81,0.88\n"
           "sub-c,2,0.7990,0.78,0.81,0.85\n"
           "sub-d,4,0.6012,0.58,0.62,0.70\n")
COMPARE_CONFIG = """
    leaderboards:
      - name: Segmentation
        file: leaderboard.csv
      - name: other
        file: other.csv
        model_column: m
        rank_column: r
"""


def test_compare_leaderboard_needs_only_name_and_file(tmp_path):
    proc, doc = rank_case(tmp_path, COMPARE_CONFIG, {
        "leaderboard.csv": COMPARE, "other.csv": "m,r\nsub-a,2\nsub-d,1\n"})
    seg = {m["model"]: m["leaderboards"]["Segmentation"]["rank"] for m in doc["models"]}
    assert seg == {"sub-a": 1, "sub-b": 2, "sub-c": 2, "sub-d": 4}
    info = doc["leaderboards"][0]
    assert (info["format"], info["model_column"], info["rank_column"], info["ranking_key"],
            info["higher_is_better"], info["entries"]) == (
        "compare", "model", "rank", "miou", True, 4)
    assert "[1] Segmentation: 4 entries, miou (higher is better); leaderboard.csv (compare)" in \
        proc.stdout
    html = (tmp_path / "out" / "ranking.html").read_text(encoding="utf-8")
    assert "rank 1/4, miou 0.8123" in html


def test_compare_leaderboard_columns_can_still_be_named(tmp_path):
    config = COMPARE_CONFIG.replace("file: leaderboard.csv", "file: leaderboard.csv\n"
                                    "        score_column: iou_water\n"
                                    "        higher_is_better: true")
    _, doc = rank_case(tmp_path, config, {"leaderboard.csv": COMPARE,
                                          "other.csv": "m,r\nsub-a,2\nsub-d,1\n"})
    seg = {m["model"]: m["leaderboards"]["Segmentation"]["rank"] for m in doc["models"]}
    assert seg == {"sub-a": 1, "sub-b": 2, "sub-c": 3, "sub-d": 4}


@pytest.mark.parametrize("header", ["Model,Rank,miou", "model,rank", "model,score,rank",
                                    " model,rank,miou"])
def test_only_the_exact_compare_header_is_recognised(tmp_path, header):
    text = header + "\n" + "".join("x{},{},0.5\n".format(i, i) for i in range(1, 3))
    path = write_case(tmp_path / "case", COMPARE_CONFIG, {
        "leaderboard.csv": text, "other.csv": "m,r\nx1,1\nx2,2\n"})
    proc = generalist_either(path, real=header == "model,rank")
    assert proc.returncode == 3
    assert "config.yaml, line 2: leaderboard 'Segmentation': give either score_column" in \
        proc.stderr and "not neither" in proc.stderr and "is read as csv" in proc.stderr


def test_detect_compare():
    assert exports.detect([(1, ["model", "rank", "miou", "miou_ci_low"])]) == "compare"
    assert exports.detect([(1, []), (2, ["model", "rank", "accuracy"])]) == "compare"
    assert exports.detect([(1, ["model", "rank", ""])]) == "csv"


# ---------------------------------------------------------------- scores read fast, compared exactly

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from organizing.generalist import boards  # noqa: E402
from organizing.ranks import competition_ranks  # noqa: E402


@settings(max_examples=3000)
@given(st.text(alphabet="0123456789.+-eE_ nainfINFty\u0661\uff11x", max_size=12))
def test_fast_score_check_accepts_what_the_number_pattern_does(cell):
    """The fast check (float) accepts exactly the decimal numbers _NUMBER describes (those a
    float can hold; the others take the Decimal path)."""
    cell = cell.strip()
    if boards._is_number(cell):
        assert boards._NUMBER.match(cell), cell
    elif boards._NUMBER.match(cell):
        assert float(cell) in (float("inf"), float("-inf")), cell


decimal_texts = st.builds(
    lambda sign, whole, frac, zeros: sign + whole + ("." + frac if frac is not None else "")
    + "0" * zeros, st.sampled_from(["", "-", "+"]), st.text("0123456789", min_size=1,
                                                            max_size=9),
    st.one_of(st.none(), st.text("0123456789", max_size=9)), st.integers(0, 8))


@settings(max_examples=500)
@given(st.lists(decimal_texts, min_size=1, max_size=30), st.booleans())
def test_exact_scores_rank_as_decimals(texts, higher):
    """Floats for short plain decimals, Decimals otherwise: the same ranks as exact decimals."""
    from decimal import Decimal
    exact = [Decimal(t) for t in texts]
    assert competition_ranks(boards.exact_scores(texts), higher) == \
        competition_ranks(exact, higher)
    short = all(len(t) <= 15 for t in texts)
    assert all(isinstance(v, float if short else Decimal) for v in boards.exact_scores(texts))


def test_exact_scores_close_decimals_are_not_merged():
    """16+ characters: 0.1000000000000001 and 0.1 are different scores; as floats they would
    nearly be, so they stay Decimals."""
    texts = ["0.10000000000000001", "0.1", "0.100000000000000000"]
    assert competition_ranks(boards.exact_scores(texts), True) == [1, 2, 2]
    assert competition_ranks(boards.exact_scores(["1e-400", "0", "1e400"]), True) == [2, 3, 1]
