"""Leave-one-leaderboard-out rank ranges (issue 18, part 3) against a naive oracle that
recomputes the whole ranking M times, in the library and through the real command."""
import math
import os
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generalist_util import SAMPLE, by_model, rank_case, run_generalist
from organizing.generalist import consistency as cons
from organizing.generalist.consistency import Board


def naive_ranking(boards, eps, min_lb):
    """The definition, written out plainly: {model: rank or None}. boards: [(N, {model: r})]."""
    models = sorted({m for _, ranks in boards for m in ranks})
    c, present = {}, {}
    for m in models:
        logs = []
        for n, ranks in boards:
            r = ranks.get(m, n + 1)
            s = max(Fraction(0), 1 - Fraction(r - 1, n - 1))
            logs.append(math.log(max(eps, float(s))))
        c[m] = min(1.0, max(eps, math.exp(math.fsum(logs) / len(boards))))
        present[m] = sum(1 for _, ranks in boards if m in ranks)
    ranked = [m for m in models if present[m] >= min_lb]
    return {m: (1 + sum(1 for o in ranked if c[o] > c[m]) if m in ranked else None)
            for m in models}


def naive_range(boards, eps, min_lb):
    full = naive_ranking(boards, eps, min_lb)
    if len(boards) - 1 < max(1, min_lb):
        return {m: None for m in full}
    without = [naive_ranking(boards[:k] + boards[k + 1:], eps, min_lb)
               for k in range(len(boards))]
    out = {}
    for m, rank in full.items():
        if rank is None:
            out[m] = None
            continue
        got = [w.get(m) for w in without]       # absent from every other board: not listed
        ranked = [r for r in got if r is not None]
        out[m] = (min(ranked), None if len(ranked) < len(got) else max(ranked))
    return out


@st.composite
def boards_strategy(draw):
    pool = ["m{}".format(i) for i in range(8)]
    boards = []
    for _ in range(draw(st.integers(1, 5))):
        models = draw(st.lists(st.sampled_from(pool), min_size=2, max_size=8, unique=True))
        if draw(st.booleans()):       # ranks from scores: ties, no gaps beyond competition's
            scores = [draw(st.integers(0, 3)) for _ in models]
            ranks = {m: 1 + sum(1 for t in scores if t > s) for m, s in zip(models, scores)}
        else:                         # a rank column as given: anything from 1 to N + 2
            ranks = {m: draw(st.integers(1, len(models) + 2)) for m in models}
        boards.append((len(models), ranks))
    return boards


@settings(max_examples=300, deadline=None)
@given(boards_strategy(), st.integers(1, 4), st.sampled_from([1e-12, 1e-3, 0.3]))
def test_rank_range_matches_the_naive_oracle(boards, min_lb, eps):
    got = {m.model: m for m in cons.rank_models(
        [Board("b{}".format(i), n, ranks) for i, (n, ranks) in enumerate(boards)], eps, min_lb)}
    full = naive_ranking(boards, eps, min_lb)
    assert {m: r.rank for m, r in got.items()} == full
    assert {m: r.rank_range for m, r in got.items()} == naive_range(boards, eps, min_lb)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=60), st.data())
def test_exact_partials_sum_exactly(values, data):
    parts = cons.exact_partials(values)
    assert sum(map(Fraction, parts)) == sum(map(Fraction, values))
    assert len(parts) <= 40
    k = data.draw(st.integers(0, len(values) - 1))
    assert math.fsum(parts + [-values[k]]) == math.fsum(values[:k] + values[k + 1:])


def test_logs_of_many_boards_sum_exactly_without_each():
    """The case the code relies on: logs of s values, 50 boards, every one left out."""
    import random
    rnd = random.Random(3)
    for _ in range(200):
        logs = [math.log(max(1e-12, float(Fraction(rnd.randrange(0, n), n - 1))))
                for n in (rnd.randrange(2, 30000) for _ in range(50))]
        parts = cons.exact_partials(logs)
        for k in range(50):
            assert math.fsum(parts + [-logs[k]]) == math.fsum(logs[:k] + logs[k + 1:])


def test_defined_only_when_someone_can_be_ranked_without_a_board():
    assert not cons.leave_one_out_defined(2, 2)      # M = 2, the MaCVi default min 2
    assert cons.leave_one_out_defined(2, 1)
    assert not cons.leave_one_out_defined(1, 1)
    assert cons.leave_one_out_defined(3, 2)
    two = [Board("x", 2, {"A": 1, "B": 2}), Board("y", 2, {"A": 2, "B": 1})]
    assert [m.rank_range for m in cons.rank_models(two, 1e-12, 2)] == [None, None]
    # min_leaderboards 1: each board alone decides; B is first on y, second on x.
    got = {m.model: m.rank_range for m in cons.rank_models(two, 1e-12, 1)}
    assert got == {"A": (1, 2), "B": (1, 2)}


def test_a_model_on_exactly_min_leaderboards_boards_is_unranked_without_one():
    boards = [Board("x", 3, {"A": 1, "B": 2, "C": 3}), Board("y", 2, {"A": 1, "B": 2}),
              Board("z", 2, {"A": 1, "C": 2})]
    got = {m.model: m.rank_range for m in cons.rank_models(boards, 1e-12, 2)}
    # A is on all three: ranked 1 without any of them. B and C are on two: unranked without
    # y (B) or z (C) or x (both).
    assert got == {"A": (1, 1), "B": (2, None), "C": (2, None)}


def test_sample_ranges_through_the_command(tmp_path):
    out = tmp_path / "out"
    proc = run_generalist(os.path.join(SAMPLE, "config.yaml"), "--out", out)
    assert proc.returncode == 0, proc.stderr
    import json
    doc = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    got = {m["model"]: m["rank_range"] for m in doc["models"]}
    # Worked out in docs/generalist.md: without Thermal, SeaDronesSee, LaRS in turn.
    assert got == {"aurora": [1, 2], "borealis": [1, 3], "cirrus": [1, 4],
                   "dune_lab": [3, None], "fjord": None, "ember": None, "gale": None}
    assert doc["leave_one_out"] is True
    rows = [line for line in proc.stdout.splitlines() if line.lstrip().startswith("4  dune_lab")]
    assert rows and "3-u" in rows[0]
    import csv
    with open(str(out / "ranking.csv"), encoding="utf-8", newline="") as f:
        csv_rows = {r["model"]: r for r in csv.DictReader(f)}
    assert (csv_rows["dune_lab"]["rank_best_leave_one_out"],
            csv_rows["dune_lab"]["rank_worst_leave_one_out"]) == ("3", "unranked")
    assert (csv_rows["fjord"]["rank_best_leave_one_out"],
            csv_rows["fjord"]["rank_worst_leave_one_out"]) == ("", "")
    html = (out / "ranking.html").read_text(encoding="utf-8")
    assert "Without one leaderboard" in html and "3-unranked" in html


@settings(max_examples=12, deadline=None)
@given(boards_strategy(), st.integers(1, 3))
def test_command_ranges_match_the_oracle(tmp_path_factory, boards, min_lb):
    if min_lb > len(boards):
        return                                       # refused by the configuration
    tmp = tmp_path_factory.mktemp("range")
    lines = ["min_leaderboards: {}".format(min_lb), "leaderboards:"]
    files = {}
    for i, (_, ranks) in enumerate(boards):
        lines += ["  - name: b{}".format(i), "    file: b{}.csv".format(i),
                  "    model_column: model", "    rank_column: rank"]
        files["b{}.csv".format(i)] = "model,rank\n" + "".join(
            "{},{}\n".format(m, r) for m, r in sorted(ranks.items()))
    _, doc = rank_case(tmp, "\n".join(lines) + "\n", files)
    expected = naive_range(boards, 1e-12, min_lb)
    got = {m: (None if d["rank_range"] is None else tuple(d["rank_range"]))
           for m, d in by_model(doc).items()}
    assert got == expected


@pytest.mark.parametrize("n_boards", [2, 3])
def test_page_says_when_there_is_no_range(tmp_path, n_boards):
    lines = ["leaderboards:"]
    files = {}
    for i in range(n_boards):
        lines += ["  - {{name: b{0}, file: b{0}.csv, model_column: m, rank_column: r}}".format(i)]
        files["b{}.csv".format(i)] = "m,r\nA,1\nB,2\n"
    proc, doc = rank_case(tmp_path, "\n".join(lines) + "\n", files)
    html = (tmp_path / "out" / "ranking.html").read_text(encoding="utf-8")
    assert doc["leave_one_out"] is (n_boards == 3)
    assert ("No leave-one-leaderboard-out range" in html) is (n_boards == 2)
    assert ("w/o 1" in proc.stdout) is (n_boards == 3)
