"""Every broken input of the generalist ranking through the real command: exit 3 (2 for the
command line), a message naming the file and the line, no traceback, nothing written. A test
that loops over cases runs one of them as the real command, the others through the same main in
this process."""
import os

import pytest

from generalist_util import CONFIG, GOOD, generalist_either, rank_case, run_generalist, write_case

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat



def case(config=CONFIG, **files):
    merged = dict(GOOD)
    merged.update({k.replace("_", "."): v for k, v in files.items()})
    return config, merged


# id -> (config, files, file named, line named, words in the message)
BROKEN = {
    "board with one entry": case(a_csv="team,score\nA,3\n") + ("a.csv", 1, "at least 2"),
    "board with no entries": case(a_csv="team,score\n\n") + ("a.csv", 1, "0 entries"),
    "empty board file": case(a_csv="") + ("a.csv", None, "no table"),
    "model twice": case(a_csv="team,score\nA,3\nB,2\nA,1\n") + ("a.csv", 4, "already on"),
    "model twice after aliases": case(
        'aliases: {"A v2": "A"}\n' + CONFIG, a_csv="team,score\nA,3\nA v2,2\nB,1\n")
        + ("a.csv", 3, "joined by the aliases"),
    "model twice after stripping": case(a_csv="team,score\nA,3\n A ,2\nB,1\n")
        + ("a.csv", 3, "already on"),
    "missing score": case(a_csv="team,score\nA,3\nB,\nC,1\n") + ("a.csv", 3, "missing score"),
    "short row": case(a_csv="team,score\nA,3\nB\nC,1\n") + ("a.csv", 3, "missing score"),
    "non-numeric score": case(a_csv="team,score\nA,3\nB,n/a\nC,1\n") + ("a.csv", 3, "not a number"),
    "comma decimal": case(a_csv='team,score\nA,3\nB,"0,5"\nC,1\n') + ("a.csv", 3, "not a number"),
    "NaN score": case(a_csv="team,score\nA,3\nB,NaN\nC,1\n") + ("a.csv", 3, "not a finite"),
    "inf score": case(a_csv="team,score\nA,-inf\nB,2\nC,1\n") + ("a.csv", 2, "not a finite"),
    "rank zero": case(b_csv="team,rank\nA,0\nB,1\nC,2\n") + ("b.csv", 2, "positive integer"),
    "rank negative": case(b_csv="team,rank\nA,-1\nB,1\nC,2\n") + ("b.csv", 2, "positive integer"),
    "rank fraction": case(b_csv="team,rank\nA,1\nB,2.5\nC,3\n") + ("b.csv", 3, "positive integer"),
    "rank text": case(b_csv="team,rank\nA,1\nB,2\nC,third\n") + ("b.csv", 4, "positive integer"),
    "rank missing": case(b_csv="team,rank\nA,1\nB,\nC,3\n") + ("b.csv", 3, "missing rank"),
    "missing model name": case(a_csv="team,score\nA,3\n,2\nC,1\n") + ("a.csv", 3, "no model name"),
    "row longer than header": case(a_csv="team,score\nA,3\nB, Jr.,2\nC,1\n")
        + ("a.csv", 3, "unquoted comma"),
    "missing board file": case(CONFIG.replace("file: b.csv", "file: gone.csv"))
        + ("config.yaml", 7, "gone.csv"),
    "missing score column": case(CONFIG.replace("score_column: score", "score_column: mAP"))
        + ("a.csv", 1, "no score column 'mAP'"),
    "missing model column": case(CONFIG.replace("model_column: team\n    score",
                                                "model_column: Team\n    score"))
        + ("a.csv", 1, "no model column 'Team'"),
    "missing rank column": case(CONFIG.replace("rank_column: rank", "rank_column: Rank"))
        + ("b.csv", 1, "no rank column 'Rank'"),
    "column twice in header": case(a_csv="team,score,score\nA,3,3\nB,2,2\n")
        + ("a.csv", 1, "ambiguous"),
    "both rank and score column": case(CONFIG.replace("rank_column: rank",
                                                      "rank_column: rank\n    score_column: x"))
        + ("config.yaml", 7, "not both"),
    "neither rank nor score column": case(CONFIG.replace("    rank_column: rank\n", ""))
        + ("config.yaml", 7, "not neither"),
    "score without direction": case(CONFIG.replace("    higher_is_better: true\n", ""))
        + ("config.yaml", 2, "higher_is_better"),
    "direction not a boolean": case(CONFIG.replace("higher_is_better: true",
                                                   "higher_is_better: maybe"))
        + ("config.yaml", 6, "true or false"),
    "direction with a rank column": case(CONFIG.replace("rank_column: rank",
                                                        "rank_column: rank\n    higher_is_better: true"))
        + ("config.yaml", 11, "only goes with score_column"),
    "unknown top-level key": case("epsilon: 0.1\n" + CONFIG) + ("config.yaml", 1, "unknown key 'epsilon'"),
    "unknown board key": case(CONFIG.replace("file: b.csv", "file: b.csv\n    weight: 2"))
        + ("config.yaml", 9, "unknown key 'weight'"),
    "two boards with one name": case(CONFIG.replace("name: two", "name: one"))
        + ("config.yaml", 7, "two leaderboards are named 'one'"),
    "duplicate key in config": case(CONFIG.replace("file: a.csv", "file: a.csv\n    file: b.csv"))
        + ("config.yaml", 4, "appears twice"),
    "invalid YAML": case(CONFIG + "  - [unclosed\n") + ("config.yaml", 12, "not valid YAML"),
    "config not a mapping": case("- just\n- a list\n") + ("config.yaml", 1, "must be a mapping"),
    "no leaderboards": case("eps: 0.1\n") + ("config.yaml", None, "no leaderboards"),
    "eps zero": case("eps: 0\n" + CONFIG) + ("config.yaml", 1, "0 < eps < 1"),
    "eps text": case("eps: tiny\n" + CONFIG) + ("config.yaml", 1, "0 < eps < 1"),
    "eps nan": case("eps: .nan\n" + CONFIG) + ("config.yaml", 1, "0 < eps < 1"),
    "min_leaderboards not an integer": case("min_leaderboards: 1.5\n" + CONFIG)
        + ("config.yaml", 1, "positive integer"),
    "min_leaderboards above the boards": case("min_leaderboards: 3\n" + CONFIG)
        + ("config.yaml", 1, "nobody could be ranked"),
    "alias chain": case('aliases: {"A1": "A2", "A2": "A"}\n' + CONFIG)
        + ("config.yaml", 1, "leads to another alias"),
    "alias to nothing": case('aliases: {"A1": ""}\n' + CONFIG) + ("config.yaml", 1, "non-empty text"),
    "plain CSV without model_column": case(CONFIG.replace("model_column: team\n    score", "score"))
        + ("config.yaml", 2, "needs model_column"),
    "table on a plain CSV": case(CONFIG.replace("file: a.csv", "file: a.csv\n    table: 2"))
        + ("config.yaml", 2, "is for CodaLab"),
    "unknown format": case(CONFIG.replace("file: a.csv", "file: a.csv\n    format: excel"))
        + ("config.yaml", 4, "format must be one of"),
    "board file not UTF-8": case(a_csv=b"team,score\nA,3\n\xe9quipe,2\n") + ("a.csv", 3, "not UTF-8"),
    "config not UTF-8": (b"leaderboards: \xff\n", GOOD, "config.yaml", None, "not UTF-8"),
    "NUL byte in board": case(a_csv="team,score\nA,3\nB\x00,2\n") + ("a.csv", 3, "NUL byte"),
    "CSV field beyond the csv module's limit": case(a_csv="team,score\nA,3\nB,\"" + "9" * 200000
                                                     + "\"\n") + ("a.csv", 3, "not readable as CSV"),
    "CodaLab export, a value missing": case(
        CONFIG.replace("model_column: team\n    score_column: score", "score_column: mAP"),
        a_csv="submission_pk,User,b'mAP'\r\n11,A,0.50 (1),\r\n12,B,- (-),\r\n")
        + ("a.csv", 3, "missing score"),
    "CodaLab export, anonymous": case(
        CONFIG.replace("model_column: team\n    score_column: score", "score_column: mAP"),
        a_csv="submission_pk,User,b'mAP'\r\n11,Anonymous,0.50 (1),\r\n12,Anonymous,0.4 (2),\r\n")
        + ("a.csv", 3, "download the CSV as the organizer"),
    "CodaLab export, two tables": case(
        CONFIG.replace("model_column: team\n    score_column: score", "score_column: mAP"),
        a_csv="submission_pk,User,b'mAP'\r\n11,A,0.50 (1),\r\n12,B,0.4 (2),\r\n"
              "submission_pk,User,b'mAP'\r\n11,A,0.50 (1),\r\n12,B,0.4 (2),\r\n")
        + ("a.csv", None, "lines 1, 4"),
    "Codabench export, two submissions of one user": case(
        CONFIG.replace("model_column: team\n    score_column: score", "score_column: mAP"),
        a_csv="Username,fact_sheet_answers,Det(3)-mAP\r\nann-7,,0.5000000000\r\n"
              "bob-9,,0.4000000000\r\nann-4,,0.3000000000\r\n")
        + ("a.csv", 4, "keep one per model"),
    "Codabench export, a column of several tasks": case(
        CONFIG.replace("model_column: team\n    score_column: score", "score_column: mAP"),
        a_csv="Username,fact_sheet_answers,Day(3)-mAP,Night(4)-mAP\r\nann-7,,0.5,0.4\r\n"
              "bob-9,,0.4,0.3\r\n")
        + ("a.csv", 1, "ambiguous"),
}


def _assert_clean_failure(proc, out, parent, code=3):
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not os.path.exists(str(out))
    assert sorted(os.listdir(str(parent))) == ["case"], "a temporary folder was left behind"


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_input(tmp_path, name):
    config, files, named, line, words = BROKEN[name]
    folder = tmp_path / "case"
    if isinstance(config, bytes):
        write_case(folder, "", files)
        (folder / "config.yaml").write_bytes(config)
        path = str(folder / "config.yaml")
    else:
        path = write_case(folder, config, files)
    out = tmp_path / "out"
    proc = generalist_either(path, "--out", out, real=name == "model twice")
    _assert_clean_failure(proc, out, tmp_path)
    assert proc.stderr.startswith("ERROR: the generalist ranking cannot be computed")
    where = os.path.join(str(folder), named) + ("" if line is None else ", line {}:".format(line))
    assert where in proc.stderr, proc.stderr
    assert words in proc.stderr, proc.stderr


def test_every_problem_is_reported_at_once(tmp_path):
    files = dict(GOOD)
    files["a.csv"] = "team,score\nA,x\nB,NaN\nC,1\n"
    files["b.csv"] = "team,rank\nA,0\nB,1\nC,1.5\n"
    path = write_case(tmp_path / "case", "foo: 1\n" + CONFIG, files)
    proc = run_generalist(path, "--out", tmp_path / "out")
    _assert_clean_failure(proc, tmp_path / "out", tmp_path)
    # The configuration's problems first, then every file's, in the same run.
    assert "unknown key 'foo'" in proc.stderr
    lines = proc.stderr.splitlines()
    assert "unknown key 'foo'" in lines[1]
    for fragment in ("a.csv, line 2", "a.csv, line 3", "b.csv, line 2", "b.csv, line 4"):
        assert fragment in proc.stderr
    path = write_case(tmp_path / "case", CONFIG, files)
    proc = generalist_either(path, "--out", tmp_path / "out", real=False)   # the same main
    _assert_clean_failure(proc, tmp_path / "out", tmp_path)
    for fragment in ("a.csv, line 2", "a.csv, line 3", "b.csv, line 2", "b.csv, line 4"):
        assert fragment in proc.stderr


def test_a_broken_entry_s_file_is_read_in_the_same_run(tmp_path):
    """Two mistakes in one entry (no higher_is_better, a score column the file lacks) and one
    in another board's file: all three in one run, in the configuration's order, each once."""
    config = CONFIG.replace("    higher_is_better: true\n", "").replace(
        "score_column: score", "score_column: mAPP")
    files = dict(GOOD, **{"b.csv": "team,rank\nA,2\nB,1\nC,third\n"})
    path = write_case(tmp_path / "case", config, files)
    proc = run_generalist(path, "--out", tmp_path / "out")
    _assert_clean_failure(proc, tmp_path / "out", tmp_path)
    problems = proc.stderr.splitlines()[1:]
    assert len(problems) == 3, proc.stderr
    assert "config.yaml, line 2: score_column needs higher_is_better" in problems[0]
    assert "a.csv, line 1: no score column 'mAPP'" in problems[1]
    assert "b.csv, line 4: rank 'third'" in problems[2]
    # Both a score and a rank column: the file is read for its rank column, said once.
    config = CONFIG.replace("rank_column: rank", "rank_column: rank\n    score_column: score")
    proc = generalist_either(write_case(tmp_path / "case", config, files), "--out",
                             tmp_path / "out", real=False)   # the same main, in this process
    _assert_clean_failure(proc, tmp_path / "out", tmp_path)
    problems = proc.stderr.splitlines()[1:]
    assert len(problems) == 2 and "not both" in problems[0] and "rank 'third'" in problems[1]
    # A broken entry whose file is missing says that too.
    config = CONFIG.replace("file: b.csv", "file: gone.csv\n    format: excel")
    proc = generalist_either(write_case(tmp_path / "case", config, files), "--out",
                             tmp_path / "out", real=False)
    _assert_clean_failure(proc, tmp_path / "out", tmp_path)
    assert "format must be one of" in proc.stderr and "gone.csv cannot be read" in proc.stderr


def test_many_bad_rows_are_capped(tmp_path):
    rows = "".join("M{},x\n".format(i) for i in range(40))
    path = write_case(tmp_path / "case", CONFIG, dict(GOOD, **{"a.csv": "team,score\n" + rows}))
    proc = run_generalist(path, "--out", tmp_path / "out")
    _assert_clean_failure(proc, tmp_path / "out", tmp_path)
    assert proc.stderr.count("not a number") == 10
    assert "... and 30 more problems in this file" in proc.stderr


def test_failure_leaves_an_existing_out_folder_untouched(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "ranking.json").write_text("previous", encoding="utf-8")
    path = write_case(tmp_path / "case", CONFIG, dict(GOOD, **{"a.csv": "team,score\nA,1\n"}))
    proc = run_generalist(path, "--out", out)
    assert proc.returncode == 3
    assert os.listdir(str(out)) == ["ranking.json"]
    assert (out / "ranking.json").read_text(encoding="utf-8") == "previous"


def test_usage_errors_exit_2(tmp_path):
    proc = run_generalist(tmp_path / "nope.yaml", "--out", tmp_path / "out")
    assert proc.returncode == 2 and "no configuration file" in proc.stderr
    path = write_case(tmp_path / "case", CONFIG, GOOD)
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    proc = generalist_either(path, "--out", tmp_path / "afile", real=False)   # the same main
    assert proc.returncode == 2 and "not a folder" in proc.stderr
    proc = run_generalist()
    assert proc.returncode == 2 and "usage" in proc.stderr
    for p in (proc,):
        assert "Traceback" not in p.stderr


def test_empty_rows_and_bom_are_tolerated(tmp_path):
    files = {"a.csv": "\ufeffteam,score\r\n\r\nA,3\r\n,\r\n  ,  \r\nB,2\r\n\r\nC,1\r\n\r\n",
             "b.csv": "\n\nteam,rank\n\nA,2\nB,1\n\nC,3\n\n"}
    _, doc = rank_case(tmp_path, "\ufeff" + CONFIG, files)
    assert [b["entries"] for b in doc["leaderboards"]] == [3, 3]
    assert [(m["model"], m["rank"]) for m in doc["models"]] == [("A", 1), ("B", 1), ("C", 3)]


def test_unused_alias_is_a_warning(tmp_path):
    proc, doc = rank_case(tmp_path, 'aliases: {"Z old": "Z"}\n' + CONFIG, GOOD)
    assert "WARNING: alias 'Z old' matches no model" in proc.stderr
    assert doc["warnings"] == ["alias 'Z old' matches no model on any leaderboard"]
