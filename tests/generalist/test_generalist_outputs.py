"""The generalist's outputs (issue 15 and 17): one format for C everywhere, rounded and exact
values in the CSV, every weakest board outlined, raw values beside ranks, the aliases used, the
heat map capped; and the scale rewrites give exactly the values of the definitions."""
import csv
import json
import math
import os
import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generalist_util import SAMPLE, rank_case, run_generalist
from organizing.generalist import consistency as cons
from organizing.generalist.output import format_c
from organizing.generalist.page import HEATMAP_MODELS, shown_value


@pytest.mark.parametrize("value, text", [
    (1.0, "1.000"), (0.7937005259840997, "0.7937"), (0.6299605249474366, "0.6300"),
    (0.00123456, "0.001235"), (0.00099996, "0.001000"), (0.000999949, "9.999e-04"),
    (9.085602964160698e-05, "9.086e-05"), (1e-12, "1.000e-12"), (0.05, "0.05000")])
def test_format_c(value, text):
    assert format_c(value) == text


@given(st.floats(1e-12, 1.0))
def test_format_c_is_four_significant_digits_in_one_style(value):
    text = format_c(value)
    assert abs(float(text) - value) <= 5e-4 * value
    if "e" in text:
        assert re.match(r"^\d\.\d{3}e-\d\d$", text) and float(text) < 1e-3
    else:
        digits = text.replace(".", "").lstrip("0")
        assert len(digits) == 4 and float(text) >= 1e-3


def test_shown_value():
    assert shown_value("0.6120000000") == "0.612"
    assert shown_value("112.0000000000") == "112"
    assert shown_value("0.0000000000") == "0"
    assert shown_value("1e-05") == "1e-05" and shown_value("12") == "12"
    assert shown_value("1" * 40) == "1" * 15 + "\u2026"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample") / "out"
    proc = run_generalist(os.path.join(SAMPLE, "config.yaml"), "--out", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    with open(str(out / "ranking.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return proc, doc, rows, (out / "ranking.html").read_text(encoding="utf-8")


def test_c_in_one_format_on_stdout_page_and_csv(sample):
    proc, doc, rows, html = sample
    table = {line.split()[1]: line for line in proc.stdout.splitlines()
             if re.match(r"^\s+[-\d]+\s+\S", line)}
    for m, row in zip(doc["models"], rows):
        c = format_c(m["consistency"])
        assert row["model"] == m["model"] and row["consistency"] == c
        assert float(row["consistency_exact"]) == m["consistency"]     # repr round-trips
        assert table[m["model"]].split()[2] == c
        assert "<td>{}</td><td class=\"num\">{}</td>".format(m["model"], c) in html or \
            "<td>{}</td><td>{}</td>".format(m["model"], c) in html


def test_every_weakest_board_is_outlined(sample):
    _, doc, _, html = sample
    outlined = {m["model"]: 0 for m in doc["models"]}
    for model, rect in heat_cells(html):
        outlined[model] += 'stroke="#cf222e" stroke-width="3"' in rect
    for m in doc["models"]:
        assert outlined[m["model"]] == len(m["weakest_leaderboards"]), m["model"]
        assert m["weakest_leaderboard"] == m["weakest_leaderboards"][0]
    assert by_name(doc)["ember"]["weakest_leaderboards"] == [
        "Thermal Object Detection", "SeaDronesSee Tracking", "LaRS Panoptic"]
    assert "[1][2][3]" in [line for line in sample[0].stdout.splitlines() if " ember " in line][0]


def heat_cells(html):
    """(model, the cell's rect) for every cell of the heat map, from the cells' tooltips."""
    heat = html.split("on each leaderboard (columns)</figcaption>")[1].split("</svg>")[0]
    return [(tip.split(" on ")[0], rect) for tip, rect in
            re.findall(r'<g><title>([^<]*)</title>(<rect class="hm-cell"[^>]*>)', heat)]


def heat_rows(html):
    """The models the heat map shows, in order (its row labels)."""
    heat = html.split("on each leaderboard (columns)</figcaption>")[1].split("</svg>")[0]
    return re.findall(r'<text class="hm-row"[^>]*><title>([^<]*)</title>', heat)


def by_name(doc):
    return {m["model"]: m for m in doc["models"]}


def test_raw_values_beside_ranks_on_the_page(sample):
    html = sample[3]
    assert "rank 1/5, mAP 0.612" in html                     # CodaLab's 0.6120
    assert "rank 1/5, SeaDronesSee MOT(31)-IDSW 112" in html  # Codabench's 112.0000000000
    assert "rank 2/4<" in html                               # a rank column: no value


def test_aliases_used_are_listed(sample):
    proc, doc, _, html = sample
    assert doc["aliases_used"] == [{"alias": "dune-lab", "name": "dune_lab",
                                    "leaderboards": ["SeaDronesSee Tracking"]}]
    assert "Aliases used: dune-lab -> dune_lab ([2])." in proc.stdout
    assert "Aliases used: dune-lab &rarr; dune_lab (SeaDronesSee Tracking)." in html


def test_heat_map_shows_the_first_models_only(tmp_path):
    n = HEATMAP_MODELS + 10
    board = "m,v\n" + "".join("model{:03d},{}\n".format(i, i) for i in range(n))
    config = """
        leaderboards:
          - {name: x, file: x.csv, model_column: m, score_column: v, higher_is_better: true}
          - {name: y, file: y.csv, model_column: m, score_column: v, higher_is_better: false}
    """
    _, doc = rank_case(tmp_path, config, {"x.csv": board, "y.csv": board})
    html = (tmp_path / "out" / "ranking.html").read_text(encoding="utf-8")
    shown = heat_rows(html)
    assert len(shown) == HEATMAP_MODELS and len(heat_cells(html)) == 2 * HEATMAP_MODELS
    assert shown == [m["model"] for m in doc["models"][:HEATMAP_MODELS]]
    assert "The heat map shows the first 50 of the 60 models" in html
    ranking = html.split('class="counts"')[1].split("</table>")[0]
    assert ranking.count("<tr>") == n + 1                           # the ranking: everyone
    assert len((tmp_path / "out" / "ranking.csv").read_text(encoding="utf-8").splitlines()) \
        == n + 1


# ---------------------------------------------------------------- scale rewrites, same values

@settings(max_examples=500)
@given(st.integers(2, 10 ** 15), st.data())
def test_s_on_ints_is_the_exact_fraction_rounded_once(n, data):
    """max(0, N - r) / (N - 1) on Python ints (correctly rounded true division) is the float
    of the exact fraction, which the code computed with Fraction before (10 s at scale)."""
    r = data.draw(st.one_of(st.integers(1, min(n + 1, 50)), st.integers(1, n + 1),
                            st.integers(max(1, n - 50), n + 1)))
    exact = float(max(Fraction(0), 1 - Fraction(r - 1, n - 1)))
    assert cons.s_value(r, n) == exact
    assert (max(0, n - r) / (n - 1)) == exact


@pytest.mark.parametrize("n", [2, 3, 7, 1000, 20011])
def test_s_table_is_s_value(n):
    table = cons.s_table(n)
    assert table[1:] == [float(max(Fraction(0), 1 - Fraction(r - 1, n - 1)))
                         for r in range(1, n + 2)]
    assert cons.table_index(None, n) == n + 1 and cons.table_index(n + 7, n) == n + 1


def test_ranking_json_is_the_document_it_describes(sample):
    """The streamed file: one JSON document; every model's boards in configuration order,
    each rank and s from the definitions."""
    _, doc, _, _ = sample
    names = [b["name"] for b in doc["leaderboards"]]
    sizes = [b["entries"] for b in doc["leaderboards"]]
    for m in doc["models"]:
        assert list(m["leaderboards"]) == names
        for name, n in zip(names, sizes):
            entry = m["leaderboards"][name]
            r = n + 1 if entry["rank"] is None else entry["rank"]
            assert entry["s"] == float(max(Fraction(0), 1 - Fraction(r - 1, n - 1)))
        logs = [math.log(max(1e-12, e["s"])) for e in m["leaderboards"].values()]
        assert m["consistency"] == min(1.0, max(1e-12, math.exp(math.fsum(logs) / 3)))
    assert set(doc) >= {"models", "leaderboards", "rules", "aliases_used", "warnings",
                        "leave_one_out"}


def test_csv_columns(sample):
    _, doc, rows, _ = sample
    header = list(rows[0])
    assert header[:8] == ["rank", "model", "consistency", "consistency_exact",
                          "leaderboards_present", "weakest_leaderboard",
                          "rank_best_leave_one_out", "rank_worst_leave_one_out"]
    assert header[8:] == [h for b in doc["leaderboards"] for h in ("{} rank".format(b["name"]),
                                                                    "{} s".format(b["name"]))]
    aurora = rows[0]
    assert (aurora["Thermal Object Detection rank"], aurora["Thermal Object Detection s"],
            aurora["LaRS Panoptic s"]) == ("1", "1.000", "0.667")
    assert rows[-1]["SeaDronesSee Tracking rank"] == "" and \
        rows[-1]["SeaDronesSee Tracking s"] == "0.000"
