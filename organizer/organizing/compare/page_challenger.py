"""comparison.html's challengeR sections (compare/challenger.py): test-then-rank beside the
ranking, and the distribution of Kendall's tau between the ranking and each resample's (a
histogram, as challengeR's violin plot shows it, with its summary). Aggregates only."""
from typing import Any, Dict, List

from scoring.report import html
from scoring.report.html import _num, _text

from .floor import floor_sentence

NOTES = [
    "Test-then-rank (challengeR's testThenRank): each submission's number of significant wins "
    "(the marked cells of its row), as a share of the other submissions; ranked by that share, "
    "ties sharing the best rank. It ranks only what the test set supports.",
    "Kendall's tau between the ranking and the ranking of each resampled test set (tau-b, as "
    "R's cor(method = \"kendall\")): 1 when every resample ranks the submissions as the test "
    "set does; a spread far below 1 means the ranking would change on another test set.",
]


def notes(doc: Dict[str, Any]) -> List[str]:
    """The notes of the sections the page shows (test-then-rank only when every pair was
    tested)."""
    return NOTES if any("test_then_rank" in m for m in doc["models"]) else NOTES[1:]


def test_then_rank_table(models: List[Dict[str, Any]]) -> str:
    rows = [[m["model"], m["rank"], m["test_then_rank"]["wins"],
             "{:.2f}".format(m["test_then_rank"]["prop_significance"]),
             m["test_then_rank"]["rank"]] for m in models if "test_then_rank" in m]
    return html.counts_table(["Submission", "Rank by score", "Significant wins",
                              "Share of the others", "Test-then-rank"], rows)


def kendall_histogram(summary: Dict[str, Any]) -> str:
    """Bars of the resamples' Kendall's tau over [-1, 1], with the median and quartiles."""
    counts = summary["histogram"]
    bins = len(counts)
    width, height, left, top, plot_h = 560.0, 210.0, 44.0, 16.0, 140.0
    plot_w = width - left - 16.0
    peak = max(counts + [1])
    out = []
    step = plot_w / bins
    for k, c in enumerate(counts):
        if not c:
            continue
        h = plot_h * c / peak
        lo = -1.0 + 2.0 * k / bins
        out.append('<g><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" '
                   'fill="#2f6fbd" fill-opacity="0.8"/></g>'.format(
                       html.escape("tau {:.1f} to {:.1f}: {:d} resamples".format(lo, lo + 2.0 / bins, c)),
                       _num(left + step * k + 1), _num(top + plot_h - h),
                       _num(max(step - 2, 1.0)), _num(h)))
    base = top + plot_h
    out.append('<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#8c959f"/>'.format(
        _num(left), _num(base), _num(left + plot_w), _num(base)))
    for tick in (-1.0, -0.5, 0.0, 0.5, 1.0):
        out.append(_text(left + plot_w * (tick + 1.0) / 2.0, base + 16, "{:g}".format(tick), size=11,
                         anchor="middle", fill="#59636e"))
    if summary.get("median") is not None:
        line = "median {:.3f}, quartiles {:.3f} to {:.3f}, mean {:.3f} over {:d} resamples".format(
            summary["median"], summary["q25"], summary["q75"], summary["mean"],
            summary["resamples"] - summary["undefined"])
        if summary["undefined"]:
            line += " ({:d} with every submission tied: no tau)".format(summary["undefined"])
        out.append(_text(left, base + 40, line, size=12))
    # The shared figure: its font and scroll rule (html.figure), as every chart of every page.
    return html.figure("Kendall's tau between the ranking and each resample's ranking",
                       "histogram", width, height, out)


def floor_note(doc: Dict[str, Any]) -> str:
    """A line under the map when its test cannot mark any cell (compare/floor.py)."""
    sentence = floor_sentence(doc)
    return '<p class="na">{}</p>'.format(html.escape(sentence)) if sentence else ""


def sections(doc: Dict[str, Any]) -> List[Any]:
    """The (title, html) sections, empty without resamples."""
    if "kendall_tau" not in doc:
        return []
    out = []
    if any("test_then_rank" in m for m in doc["models"]):  # every pair tested
        out.append(("Test-then-rank", test_then_rank_table(doc["models"])))
    return out + [("Ranking stability: Kendall's tau", kendall_histogram(doc["kendall_tau"]))]
