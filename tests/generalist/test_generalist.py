"""Generalist ranking (MaCVi consistency score): hand-computed cases through the real command,
hypothesis properties of the score, the outputs and the shipped sample."""
import csv
import io
import json
import math
import os
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generalist_util import SAMPLE, by_model, rank_case, run_generalist
from organizing.generalist import consistency as cons
from organizing.generalist.consistency import Board
from organizing.ranks import competition_ranks

# The command against the naive oracle, its sample outputs and C's exact fraction are marked
# compat: CI runs them on the oldest versions too (Python 3.7+ and PyYAML are what it needs).

EPS = 1e-12

# Three boards, hand-computed (see the comments): ties on a score board, a lower-is-better
# board, a rank column with a tie, models absent from boards, models on one board only, and an
# exact tie in C between A and B.
HAND_CONFIG = """
    leaderboards:
      - name: X
        file: x.csv
        model_column: team
        score_column: score
        higher_is_better: true
      - name: Y
        file: y.csv
        model_column: team
        score_column: error
        higher_is_better: false
      - name: Z
        file: z.csv
        model_column: team
        rank_column: rank
"""
HAND_FILES = {
    # X: 90 > 80 = 80 > 70 -> ranks 1, 2, 2, 4; N = 4; s = 1, 2/3, 2/3, 0
    "x.csv": """
        team,score
        A,90
        B,80
        C,80.0
        D,70
    """,
    # Y, lower is better: 0.1 < 0.2 < 0.3 = 0.30 -> B 1, A 2, C 3, E 3; N = 4; s = 1, 2/3, 1/3, 1/3
    "y.csv": """
        team,error
        C,0.3
        B,0.1
        E,0.30
        A,0.2
    """,
    # Z, ranks as given (a tie at 2): C 1, A 2, B 2, G 4; N = 4; s = 1, 2/3, 2/3, 0
    "z.csv": """
        rank,team
        1,C
        2,A
        2,B
        4,G
    """,
}


def naive_c(s_values, eps=EPS):
    """Independent oracle: the geometric mean as a plain product and root."""
    prod = 1.0
    for s in s_values:
        prod *= max(eps, s)
    return prod ** (1.0 / len(s_values))


@pytest.mark.compat
def test_hand_computed_ranking(tmp_path):
    _, doc = rank_case(tmp_path, HAND_CONFIG, HAND_FILES)
    m = by_model(doc)
    third = Fraction(1, 3)
    expected_s = {        # per model: X, Y, Z
        "A": (1, 2 * third, 2 * third),
        "B": (2 * third, 1, 2 * third),
        "C": (2 * third, third, 1),
        "D": (0, 0, 0),           # last on X, absent elsewhere
        "E": (0, third, 0),       # on Y only
        "G": (0, 0, 0),           # last on Z (rank 4 of 4), absent elsewhere
    }
    expected_rank = {"X": {"A": 1, "B": 2, "C": 2, "D": 4},
                     "Y": {"B": 1, "A": 2, "C": 3, "E": 3},
                     "Z": {"C": 1, "A": 2, "B": 2, "G": 4}}
    assert sorted(m) == sorted(expected_s)
    for model, svals in expected_s.items():
        for board, s in zip("XYZ", svals):
            entry = m[model]["leaderboards"][board]
            assert entry["s"] == float(s)
            assert entry["rank"] == expected_rank[board].get(model)
        assert m[model]["consistency"] == pytest.approx(naive_c([float(s) for s in svals]),
                                                        rel=1e-12)
    # A and B: the same s values on different boards -> bit-identical C, a shared rank 1.
    assert m["A"]["consistency"] == m["B"]["consistency"]
    assert m["A"]["consistency"] == pytest.approx((4 / 9) ** (1 / 3), rel=1e-14)
    order = [(x["model"], x["rank"]) for x in doc["models"]]
    # Ranked (on >= 2 boards) first, 1-1-3; then the unranked by C (E > D = G), then by name.
    assert order == [("A", 1), ("B", 1), ("C", 3), ("E", None), ("D", None), ("G", None)]
    assert m["D"]["consistency"] == pytest.approx(EPS, rel=1e-12)
    assert [b["entries"] for b in doc["leaderboards"]] == [4, 4, 4]
    assert m["C"]["weakest_leaderboard"] == "Y"
    assert m["A"]["weakest_leaderboard"] == "Y"   # Y and Z tie at 2/3: the first board wins


def test_min_leaderboards_one_ranks_everyone(tmp_path):
    config = HAND_CONFIG.replace("leaderboards:", "min_leaderboards: 1\n    leaderboards:", 1)
    _, doc = rank_case(tmp_path, config, HAND_FILES)
    order = [(x["model"], x["rank"]) for x in doc["models"]]
    # E (C = (eps^2/3)^(1/3)) before D and G (C = eps), which tie: 4, 5, 5.
    assert order == [("A", 1), ("B", 1), ("C", 3), ("E", 4), ("D", 5), ("G", 5)]
    assert by_model(doc)["E"]["consistency"] == pytest.approx(naive_c([0, 1 / 3, 0]), rel=1e-12)


def test_eps_and_aliases_from_config(tmp_path):
    config = """
        eps: 1e-6
        aliases: {"Team A (v2)": "Team A", " Team B ": "Team B"}
        leaderboards:
          - {name: one, file: a.csv, model_column: m, score_column: v, higher_is_better: true}
          - {name: two, file: b.csv, model_column: m, score_column: v, higher_is_better: true}
    """
    files = {"a.csv": "m,v\nTeam A,3\nTeam B,2\nTeam C,1\n",
             "b.csv": "m,v\nTeam A (v2),1\n  Team B  ,2\nTeam C,3\n"}
    _, doc = rank_case(tmp_path, config, files)
    m = by_model(doc)
    assert sorted(m) == ["Team A", "Team B", "Team C"]
    assert doc["eps"] == 1e-6
    assert m["Team A"]["consistency"] == pytest.approx(math.sqrt(1e-6), rel=1e-12)
    assert m["Team B"]["consistency"] == pytest.approx(0.5, rel=1e-12)


@pytest.mark.compat
def test_sample_outputs(tmp_path):
    out = tmp_path / "out"
    proc = run_generalist(os.path.join(SAMPLE, "config.yaml"), "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    doc = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    ranked = [(x["model"], x["rank"]) for x in doc["models"]]
    assert ranked == [("aurora", 1), ("borealis", 2), ("cirrus", 3), ("dune_lab", 4),
                      ("fjord", None), ("ember", None), ("gale", None)]
    m = by_model(doc)
    assert m["aurora"]["consistency"] == pytest.approx((1 * 0.75 * 2 / 3) ** (1 / 3), rel=1e-12)
    # The CodaLab export shows dense ranks (dune_lab "(3)"); the score gives 1-2-2-4.
    assert m["dune_lab"]["leaderboards"]["Thermal Object Detection"]["rank"] == 4
    # The Codabench username "dune-lab" joins "dune_lab" through the sample's alias.
    assert m["dune_lab"]["leaderboards"]["SeaDronesSee Tracking"]["rank"] == 4
    for name in ("ranking.json", "ranking.csv", "ranking.html"):
        assert (out / name).stat().st_size > 0
    assert sorted(os.listdir(str(tmp_path))) == ["out"]          # no temporary folder left
    rows = list(csv.DictReader(io.StringIO((out / "ranking.csv").read_text(encoding="utf-8"))))
    assert [r["model"] for r in rows] == [x["model"] for x in doc["models"]]
    assert rows[0]["rank"] == "1" and rows[-1]["rank"] == ""
    # Rounded as the page shows it (4 significant digits), and in full beside it.
    assert rows[0]["consistency"] == "0.7937"
    assert float(rows[0]["consistency_exact"]) == m["aurora"]["consistency"]
    html = (out / "ranking.html").read_text(encoding="utf-8")
    assert "Weakest leaderboard" in html and "dune_lab" in html and "<table" in html
    # The stdout table: one line per model, in order.
    lines = proc.stdout.splitlines()
    first = [i for i, line in enumerate(lines) if line.lstrip().startswith("1  aurora")]
    assert first, proc.stdout
    # Two runs give byte-identical files (no timestamps).
    again = tmp_path / "again"
    assert run_generalist(os.path.join(SAMPLE, "config.yaml"), "--out", again).returncode == 0
    for name in ("ranking.json", "ranking.csv", "ranking.html"):
        assert (again / name).read_bytes() == (out / name).read_bytes()


@pytest.mark.compat
def test_sample_readme_table_is_current(tmp_path):
    """The README's worked example is the command's actual stdout."""
    proc = run_generalist(os.path.join(SAMPLE, "config.yaml"), "--out", "ranking",
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    root = os.path.dirname(os.path.dirname(SAMPLE))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert proc.stdout.strip("\n") in readme


def test_existing_out_folder_files_are_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "ranking.json").write_text("old", encoding="utf-8")
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    proc = run_generalist(os.path.join(SAMPLE, "config.yaml"), "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "ranking.json").read_text(encoding="utf-8"))["models"]
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(os.listdir(str(tmp_path))) == ["out"]


# ---------------------------------------------------------------- properties of the score

def naive_competition_ranks(values, higher_is_better):
    better = (lambda a, b: a > b) if higher_is_better else (lambda a, b: a < b)
    return [1 + sum(1 for w in values if better(w, v)) for v in values]


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=30), st.booleans())
def test_competition_ranks_match_naive(values, hib):
    assert competition_ranks(values, hib) == naive_competition_ranks(values, hib)


s_values = st.lists(st.fractions(0, 1).map(float), min_size=1, max_size=8)
eps_values = st.sampled_from([1e-12, 1e-6, 0.01, 0.5])


@given(s_values, eps_values)
def test_c_between_eps_and_one(svals, eps):
    c = cons.consistency(svals, eps)
    assert eps <= c <= 1.0
    assert c == pytest.approx(naive_c(svals, eps), rel=1e-9)


@given(s_values, eps_values, st.randoms(use_true_random=False))
def test_c_does_not_depend_on_board_order(svals, eps, rnd):
    shuffled = list(svals)
    rnd.shuffle(shuffled)
    assert cons.consistency(shuffled, eps) == cons.consistency(svals, eps)


@st.composite
def leaderboards(draw, max_boards=4, max_models=7):
    """Boards with ranks as given (ties allowed), over a pool of models."""
    pool = ["m{}".format(i) for i in range(max_models)]
    boards = []
    for i in range(draw(st.integers(1, max_boards))):
        models = draw(st.lists(st.sampled_from(pool), min_size=2, max_size=max_models,
                               unique=True))
        ranks = {m: draw(st.integers(1, len(models))) for m in models}
        boards.append(Board("b{}".format(i), len(models), ranks))
    return boards


@given(leaderboards(), eps_values)
def test_rank_one_everywhere_gives_one(boards, eps):
    for b in boards:
        b.ranks["champion"] = 1
    boards = [Board(b.name, len(b.ranks), b.ranks) for b in boards]
    res = {m.model: m for m in cons.rank_models(boards, eps, min_leaderboards=1)}
    assert res["champion"].consistency == 1.0
    assert res["champion"].rank == 1


@given(leaderboards(), eps_values, st.data())
def test_better_rank_never_lowers_c(boards, eps, data):
    board = data.draw(st.sampled_from(boards))
    model = data.draw(st.sampled_from(sorted(board.ranks)))
    old = board.ranks[model]
    new = data.draw(st.integers(1, old))
    before = {m.model: m.consistency for m in cons.rank_models(boards, eps, 1)}
    board.ranks[model] = new
    after = {m.model: m.consistency for m in cons.rank_models(boards, eps, 1)}
    assert after[model] >= before[model]


@given(leaderboards(), eps_values, st.data())
def test_absent_is_never_better_than_last(boards, eps, data):
    board = data.draw(st.sampled_from(boards))
    model = data.draw(st.sampled_from(sorted(board.ranks)))
    others = {m: r for m, r in board.ranks.items() if m != model}
    if len(others) < 2:
        return
    # Present as last: every other entry keeps its place above it, N grows by one.
    last = dict(others)
    last[model] = len(others) + 1
    absent = dict(others)
    with_last = [Board(b.name, len(last), last) if b is board else b for b in boards]
    without = [Board(b.name, len(absent), absent) if b is board else b for b in boards]
    c_last = {m.model: m.consistency for m in cons.rank_models(with_last, eps, 1)}
    c_absent = {m.model: m.consistency for m in cons.rank_models(without, eps, 1)}
    assert c_absent.get(model, eps) <= c_last[model]


@given(leaderboards(), eps_values, st.integers(1, 3))
def test_ranking_is_competition_ranking_of_c(boards, eps, min_lb):
    res = cons.rank_models(boards, eps, min_lb)
    ranked = [m for m in res if m.rank is not None]
    for m in ranked:
        assert m.rank == 1 + sum(1 for o in ranked if o.consistency > m.consistency)
        assert (m.boards_present >= min_lb)
    keys = [(-m.consistency, m.model) for m in ranked]
    assert keys == sorted(keys)
    assert all(m.boards_present < min_lb for m in res if m.rank is None)
    assert res[:len(ranked)] == ranked


@pytest.mark.compat
@settings(max_examples=50)
@given(st.integers(2, 40), st.data())
def test_s_is_the_exact_fraction(n, data):
    r = data.draw(st.integers(1, n + 1))
    assert cons.s_value(r, n) == float(max(Fraction(0), 1 - Fraction(r - 1, n - 1)))
    assert cons.s_value(1, n) == 1.0 and cons.s_value(n, n) == 0.0 and cons.s_value(n + 1, n) == 0.0


def test_a_run_that_fails_while_writing_leaves_nothing(tmp_path, monkeypatch):
    """The outputs are moved into --out together: a bug while writing the second one leaves
    neither --out nor the temporary folder; a run that succeeds leaves the three files, in a
    folder as readable as the umask lets it be (not the temporary folder's private mode)."""
    from conftest import run_main
    from generalist_util import CONFIG, GOOD, write_case
    from organizing.commands import generalist as cli
    from organizing.generalist import output
    case, out = tmp_path / "case", tmp_path / "results" / "out"
    write_case(case, CONFIG, GOOD)

    def bug(*args):
        raise TypeError("a bug while writing ranking.csv")
    with monkeypatch.context() as m:
        m.setattr(output, "write_csv", bug)
        code, _, err = run_main(cli.main, [case / "config.yaml", "--out", out, "-q"])
    assert code == 4, err
    assert sorted(os.listdir(str(tmp_path))) == ["case"]
    code, _, err = run_main(cli.main, [case / "config.yaml", "--out", out, "-q"])
    assert code == 0, err
    assert sorted(os.listdir(str(out))) == ["ranking.csv", "ranking.html", "ranking.json"]
    assert os.listdir(str(out.parent)) == ["out"]
    assert os.stat(str(out)).st_mode & 0o777 != 0o700     # not mkdtemp's private mode


@st.composite
def csv_boards(draw):
    """2-3 plain CSV boards: scores with ties in either direction, or a rank column."""
    pool = ["m{}".format(i) for i in range(6)]
    boards = []
    for i in range(draw(st.integers(2, 3))):
        models = draw(st.lists(st.sampled_from(pool), min_size=2, max_size=6, unique=True))
        if draw(st.booleans()):
            values = [draw(st.integers(0, 4)) for _ in models]
            boards.append(("b{}".format(i), models, values, draw(st.booleans())))
        else:
            values = [draw(st.integers(1, len(models))) for _ in models]
            boards.append(("b{}".format(i), models, values, None))
    return boards, draw(st.integers(1, 2))


@pytest.mark.compat
@settings(max_examples=15, deadline=None)
@given(csv_boards())
def test_command_matches_naive_oracle(tmp_path_factory, case):
    boards, min_lb = case
    tmp = tmp_path_factory.mktemp("e2e")
    lines = ["min_leaderboards: {}".format(min_lb), "leaderboards:"]
    files = {}
    for name, models, values, hib in boards:
        lines += ["  - name: {}".format(name), "    file: {}.csv".format(name),
                  "    model_column: model"]
        if hib is None:
            lines.append("    rank_column: value")
        else:
            lines += ["    score_column: value",
                      "    higher_is_better: {}".format("true" if hib else "false")]
        # Scores written as 2, 2.0 or 2.00: equal values must tie whatever their spelling.
        cells = [str(v) if hib is None else "{}{}".format(v, [".0", "", ".00"][k % 3])
                 for k, v in enumerate(values)]
        files[name + ".csv"] = "model,value\n" + "".join(
            "{},{}\n".format(m, c) for m, c in zip(models, cells))
    _, doc = rank_case(tmp, "\n".join(lines) + "\n", files)
    oracle = {}
    for name, models, values, hib in boards:
        ranks = values if hib is None else naive_competition_ranks(values, hib)
        oracle[name] = (len(models), dict(zip(models, ranks)))
    got = by_model(doc)
    everyone = sorted({m for _, models, _, _ in boards for m in models})
    assert sorted(got) == everyone
    c = {}
    for model in everyone:
        svals = []
        for name, (n, ranks) in oracle.items():
            r = ranks.get(model, n + 1)
            s = max(0.0, 1 - (r - 1) / (n - 1))
            svals.append(s)
            assert got[model]["leaderboards"][name]["rank"] == ranks.get(model)
            assert got[model]["leaderboards"][name]["s"] == pytest.approx(s, abs=1e-15)
        c[model] = naive_c(svals)
        assert got[model]["consistency"] == pytest.approx(c[model], rel=1e-9)
    present = {m: sum(1 for _, models, _, _ in boards if m in models) for m in everyone}
    ranked = [m for m in everyone if present[m] >= min_lb]
    for model in everyone:
        if present[model] < min_lb:
            assert got[model]["rank"] is None
        else:
            c_got = {m: got[m]["consistency"] for m in ranked}
            assert got[model]["rank"] == 1 + sum(1 for m in ranked if c_got[m] > c_got[model])
