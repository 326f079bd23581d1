"""ranking.html: the ranking, a heat map of s (models x boards) and each model's weakest board.

Reuses the project's page frame and table from report/html.py; the heat map is an HTML table
with coloured cells (s is a share in [0, 1], unlike the count matrices report/html.py draws).
"""
from html import escape
from typing import List, Sequence

from ..report.html import counts_table, page
from .boards import ReadBoard
from .config import Config
from .consistency import ModelResult
from .output import format_c

# ColorBrewer "Blues", light to dark, for s = 0 .. 1.
_SCALE = [(0xF7, 0xFB, 0xFF), (0xC6, 0xDB, 0xEF), (0x6B, 0xAE, 0xD6), (0x21, 0x71, 0xB5),
          (0x08, 0x30, 0x6B)]


def _colour(s: float) -> str:
    s = min(1.0, max(0.0, s))
    pos = s * (len(_SCALE) - 1)
    i = min(int(pos), len(_SCALE) - 2)
    t = pos - i
    rgb = [int(round(a + (b - a) * t)) for a, b in zip(_SCALE[i], _SCALE[i + 1])]
    return "#%02x%02x%02x" % tuple(rgb)


def _heatmap(boards: Sequence[ReadBoard], results: Sequence[ModelResult]) -> str:
    out = ['<div class="table-wrap"><table class="heat"><thead><tr><th>Model</th>']
    for b in boards:
        out.append('<th class="num">{}<br><small>N = {}</small></th>'.format(
            escape(b.spec.name), b.board.n))
    out.append("</tr></thead><tbody>")
    for m in results:
        out.append("<tr><td>{}</td>".format(escape(m.model)))
        for b in boards:
            st = m.standings[b.spec.name]
            text = "absent" if st.rank is None else "rank {}/{}".format(st.rank, b.board.n)
            style = "background:{};color:{}".format(_colour(st.s),
                                                    "#fff" if st.s > 0.55 else "#1f2328")
            if m.weakest == b.spec.name:
                style += ";outline:3px solid #cf222e;outline-offset:-3px"
            out.append('<td class="num" style="{}" title="{}">{:.3f}<br><small>{}</small></td>'
                       .format(style, escape(text), st.s, escape(text)))
        out.append("</tr>")
    out.append("</tbody></table></div>")
    out.append('<p class="lead">Cell: s = max(0, 1 - (r - 1)/(N - 1)); dark is good. The red '
               'outline marks each model\'s weakest leaderboard.</p>')
    return "".join(out)


def render(config: Config, boards: Sequence[ReadBoard], results: Sequence[ModelResult],
           warnings: List[str]) -> str:
    intro = (
        "<p>Each model's consistency C is the geometric mean over all {} leaderboards of "
        "max(eps, s), eps = {}, where s = max(0, 1 - (r - 1)/(N - 1)) and r is the model's rank "
        "(N + 1 when absent). Ties on a leaderboard share the best rank (1-2-2-4); equal C share "
        "a rank. Models on fewer than {} leaderboards are listed but not ranked.</p>").format(
            len(boards), escape(repr(config.eps)), config.min_leaderboards)
    rows = []
    for m in results:
        st = m.standings[m.weakest]
        rows.append(["-" if m.rank is None else str(m.rank), m.model, format_c(m.consistency),
                     "{} / {}".format(m.boards_present, len(boards)),
                     "{} (s = {:.3f}{})".format(m.weakest, st.s,
                                               ", absent" if st.rank is None else "")])
    ranking = counts_table(["Rank", "Model", "C", "Leaderboards", "Weakest leaderboard"], rows)
    info = [[b.spec.name, b.board.n, b.used_column,
             ("higher is better" if b.spec.higher_is_better else "lower is better")
             if b.spec.score_column else "rank as given", b.format, b.spec.path]
            for b in boards]
    sections = [
        ("", intro),
        ("Ranking", ranking),
        ("s per model and leaderboard", _heatmap(boards, results)),
        ("Leaderboards", counts_table(["Leaderboard", "Entries", "Column", "Direction",
                                       "Format", "File"], info)),
    ]
    if warnings:
        sections.append(("Warnings", "<ul class=\"warnings\">{}</ul>".format(
            "".join("<li>{}</li>".format(escape(w)) for w in warnings))))
    footer = "Configuration {} (sha256 {}).".format(config.path, config.sha256)
    return page("Generalist ranking", sections, footer)
