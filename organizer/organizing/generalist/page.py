"""ranking.html: the ranking, a heat map of s (models x boards) and each model's weakest board.

Reuses the project's page frame, table and heat map from report/html.py. The heat map shows
the first HEATMAP_MODELS models only: 20,000 x 50 cells are 180 MB of HTML that no one reads;
every value is in ranking.csv and ranking.json. Every name is shown escaped (problems.shown,
then HTML-escaped).
"""
import os
from html import escape
from typing import List, Sequence

from scoring.problems import shown
from scoring.report import html
from scoring.report.html import counts_table, page
from .boards import ReadBoard
from .config import Config
from .consistency import ModelResult, s_table, table_index
from .output import aliases_used, format_c, format_range, format_s, options_note

HEATMAP_MODELS = 50
VALUE_CHARS = 16         # a score as written, shown beside its rank: cut beyond this
WEAKEST = ("#cf222e", "3")  # the outline of a model's weakest leaderboard: red, 3 px


def _h(text: str) -> str:
    return escape(shown(text))


def shown_value(cell: str) -> str:
    """A score as written, for reading: Codabench's 10-decimal padding trimmed (0.6120000000 ->
    0.612, 112.0000000000 -> 112), anything long cut (the CSV and JSON have the ranks)."""
    if "." in cell and "e" not in cell.lower():
        cell = cell.rstrip("0").rstrip(".") or "0"
    if len(cell) > VALUE_CHARS:
        cell = cell[:VALUE_CHARS - 1] + "\u2026"
    return cell


def _heatmap(boards: Sequence[ReadBoard], results: Sequence[ModelResult]) -> str:
    """The shared heat map (report/html.py): models x leaderboards, each cell s with the rank
    and the score as written under it, each model's weakest leaderboards outlined in red."""
    shown_models = results[:HEATMAP_MODELS]
    tables = [s_table(b.board.n) for b in boards]
    cells = []
    for m in shown_models:
        row = []
        for i, (b, r) in enumerate(zip(boards, m.ranks)):
            s = tables[i][table_index(r, b.board.n)]
            lines = [format_s(s), "absent" if r is None else "rank {}/{}".format(r, b.board.n)]
            text = lines[1]
            value = b.values.get(m.model) if r is not None else None
            if value is not None:
                lines.append(shown(shown_value(value)))
                text += ", {} {}".format(b.value_column, shown_value(value))
            tip = "{} on {}: {} (s = {})".format(m.model, b.spec.name, text, format_s(s))
            row.append(html.HeatCell(s, lines, shown(tip), i in m.weakest))
        cells.append(row)
    columns = ["{} (N = {})".format(shown(b.spec.name), b.board.n) for b in boards]
    out = [html.heat_map("s of each model (rows) on each leaderboard (columns)", "heatmap",
                         [shown(m.model) for m in shown_models], columns, cells,
                         ("0", "1", "s"), outline=WEAKEST, row_class="hm-row", label_chars=40)]
    note = ""
    if len(results) > len(shown_models):
        note = (" The heat map shows the first {} of the {:,} models; every model's rank and s "
                "on every leaderboard are in ranking.csv and ranking.json.".format(
                    len(shown_models), len(results)))
    out.append('<p class="lead">Cell: s = max(0, 1 - (r - 1)/(N - 1)); dark is good; under it '
               'the rank and the score as written in the leaderboard\'s column (see '
               'Leaderboards). The red outline marks each model\'s weakest leaderboard (every '
               'one of them on a tie).{}</p>'.format(escape(note)))
    return "".join(out)


def _weakest(m: ModelResult, boards: Sequence[ReadBoard], tables: List[List[float]]) -> str:
    i = m.weakest[0]
    r = m.ranks[i]
    s = tables[i][table_index(r, boards[i].board.n)]
    names = ", ".join(shown(boards[j].spec.name) for j in m.weakest)
    return "{} (s = {}{})".format(names, format_s(s), ", absent" if r is None else "")


def render(config: Config, boards: Sequence[ReadBoard], results: Sequence[ModelResult],
           warnings: List[str], leave_one_out: bool) -> str:
    intro = (
        "<p>Each model's consistency C is the geometric mean over all {} leaderboards of "
        "max(eps, s), eps = {}, where s = max(0, 1 - (r - 1)/(N - 1)) and r is the model's rank "
        "(N + 1 when absent). Ties on a leaderboard share the best rank (1-2-2-4); equal C share "
        "a rank. Models on fewer than {} leaderboards are listed but not ranked.</p>").format(
            len(boards), escape(repr(config.eps)), config.min_leaderboards)
    if leave_one_out:
        intro += ("<p><b>Without one leaderboard</b>: the best and worst rank of the model over "
                  "the {} rankings computed with one leaderboard left out (same rules; "
                  "\"unranked\": on fewer than {} of the remaining leaderboards). A wide range "
                  "means the place depends on one leaderboard.</p>").format(
                      len(boards), config.min_leaderboards)
    else:
        intro += ("<p>No leave-one-leaderboard-out range: with one of the {} leaderboards left "
                  "out, no model could be on {} leaderboards.</p>").format(
                      len(boards), config.min_leaderboards)
    used = aliases_used(config, boards)
    if used:
        intro += "<p>Aliases used: {}.</p>".format("; ".join(
            "{} &rarr; {} ({})".format(_h(a["alias"]), _h(a["name"]),
                                       _h(", ".join(a["leaderboards"]))) for a in used))
    headers = ["Rank", "Model", "C", "Leaderboards"]
    if leave_one_out:
        headers.append("Without one leaderboard")
    headers.append("Weakest leaderboard")
    rows = []
    tables = [s_table(b.board.n) for b in boards]
    for m in results:
        row = ["-" if m.rank is None else str(m.rank), shown(m.model), format_c(m.consistency),
               "{} / {}".format(m.boards_present, len(boards))]
        if leave_one_out:
            row.append(format_range(m.rank_range) or "-")
        row.append(_weakest(m, boards, tables))
        rows.append(row)
    # Each file as the configuration names it (relative to its folder, in the footer).
    config_dir = os.path.dirname(config.path)
    info = [[shown(b.spec.name), b.board.n, shown(b.used_column), shown(b.describe()),
             b.format, shown(os.path.relpath(b.spec.path, config_dir) if config_dir
                             else b.spec.path), options_note(b) or "-"]
            for b in boards]
    sections = [
        ("", intro),
        ("Ranking", counts_table(headers, rows)),
        ("s per model and leaderboard", _heatmap(boards, results)),
        ("Leaderboards", counts_table(["Leaderboard", "Entries", "Column", "Ranked by",
                                       "Format", "File", "Options"], info)),
    ]
    if warnings:
        sections.append(("Warnings", "<ul class=\"warnings\">{}</ul>".format(
            "".join("<li>{}</li>".format(_h(w)) for w in warnings))))
    footer = "Configuration {} (sha256 {}).".format(shown(config.path), config.sha256)
    return page("Generalist ranking", sections, footer)

