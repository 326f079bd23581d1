"""comparison.html: the ranking with each score's interval, the significance map and the rank
stability (blob) plot, as inline SVG from the shared HTML blocks. Aggregates only."""
from typing import Any, Dict, List, Optional, Sequence, Tuple

from scoring.report import html
from . import family, page_challenger
from scoring.report.html import _num, _text, _text_width, _truncate


NOTES = [
    "Each score's interval is the 95% studentized bootstrap interval of that submission alone "
    "(as score.py writes it): 1,000 test sets drawn with replacement from the test's "
    "independent units (Agriculture-Vision: fields, all their tiles together), each scored "
    "and set against its own standard error; classes the test set holds no reference pixel "
    "of may score anything from 0 to 1 (docs/confidence.md).",
    "Assumption: the resampled units (fields, images, questions; config.yaml resample_by) are "
    "independent draws from the same population. Units that are not (frames of one video "
    "resampled one by one) make the intervals too narrow.",
]


def comparison_notes(doc: Dict[str, Any]) -> List[str]:
    """What the comparisons' numbers mean, as the page shows them (the map of every pair, or
    the table of the neighbours and the leader; the rank-stability plot up to MAP_MAX)."""
    if doc["family"]["pairs"] == family.ALL:
        paired = ("A cell's number is the bootstrap probability of superiority: the share of the "
                  "1,000 resamples in which the row scores strictly higher than the column "
                  "(identical submissions get 0 both ways). It is not a p-value.")
    else:
        paired = ("A difference's interval is the middle 95% of that difference over the 1,000 "
                  "resamples.")
    plot = ("; the rank-stability plot shows how often each rank occurred"
             if len(doc["models"]) <= family.MAP_MAX else "")
    return ["The comparisons use a paired bootstrap: in every resample all submissions are "
            "scored on the SAME drawn units. " + paired,
            test_note(doc),
            "The rank interval is the middle 95% of the submission's ranks over the resamples "
            "(1-2-2-4 ranking){}.".format(plot)]


def test_note(doc: Dict[str, Any]) -> str:
    """What a mark means, and over which pairs Holm's adjustment runs (comparison.json's
    family)."""
    tested = doc["family"]
    if tested["pairs"] == family.ALL:
        what = ("A cell marked * passes", "over every pair of the map",
                "at most 5% of maps mark any cell")
    else:
        what = ("A pair marked * (separated) passes",
                "over the {:,} pairs tested: each submission against the next one in the "
                "ranking and against the leader".format(tested["tested"]),
                "at most 5% of such comparisons mark any of these pairs")
    return ("{} the approximate randomization test of the ranked score (the two submissions' "
            "predictions of each resampled unit swapped at random; the p-value is the share of "
            "shuffles whose difference is at least the observed one) after Holm's adjustment "
            "{}, at 5%: among equally good submissions, {} (bench/results-confidence.md). "
            "Without a mark the order of the two may well flip on another test set of the same "
            "kind.".format(*what))


def neighbours_table(doc: Dict[str, Any]) -> str:
    """The family of neighbours and leader (compare/family.py): per submission in rank order,
    the difference from the one above it and from the leader, its 95% interval, the
    Holm-adjusted p-value, and * where the pair is separated (marked)."""
    models = doc["models"]
    by_pair = {(q["a"], q["b"]): q for q in doc["pairs"]}
    leader = models[0]["model"] if models else ""

    def columns(above: str, name: str) -> List[Any]:
        q = by_pair.get((above, name))
        if q is None:
            return ["", "", "", ""]
        ends = q["diff_ci"]
        return [q["diff"], "{}\u2013{}".format(html.format_score(ends[0]),
                                              html.format_score(ends[1])) if ends else "n/a",
                "n/a" if q["p_holm"] is None else "{:.3g}".format(q["p_holm"]),
                "*" if q["significant"] else ""]

    rows = []
    for k, m in enumerate(models[1:], 1):
        above = models[k - 1]["model"]
        rows.append([m["rank"], m["model"], m["score"]] + columns(above, m["model"]) +
                    (["(the one above)", "", "", ""] if k == 1 else
                     columns(leader, m["model"])))
    lead = ('<p class="lead">Each submission against the one just above it in the ranking '
            '("is 3rd separated from 4th?") and against the leader, {} ("who is tied with the '
            'winner?"): the difference of the scores (above minus this one), its 95% paired '
            'bootstrap interval, the p-value of the approximate randomization test after '
            'Holm\'s adjustment over the {:,} pairs tested, and * where it is at most 0.05 '
            '(Holm-adjusted p &lt;= 0.05). Other pairs are not tested: compare.py --pairs all '
            'tests every pair.</p>'.format(html.escape(leader), doc["family"]["tested"]))
    return lead + html.counts_table(
        ["Rank", "Submission", "Score", "Below the one above", "95% CI", "p (Holm)",
         "Separated", "Below the leader", "95% CI", "p (Holm)", "Separated"], rows)


def significance_map(names: Sequence[str], p: List[List[Optional[float]]],
                     marked: Optional[List[List[bool]]] = None) -> str:
    """Models x models, the shared heat map; cell (a, b) = p(a better than b), the bootstrap
    probability of superiority, marked and outlined where marked[a][b] (the pair test after
    Holm's adjustment)."""
    cells = []
    for i, a in enumerate(names):
        row = []
        for j, b in enumerate(names):
            value = p[i][j]
            if i == j or value is None:
                row.append(html.HeatCell(None))
                continue
            mark = bool(marked and marked[i][j])
            row.append(html.HeatCell(value, ["{:.2f}{}".format(value, "*" if mark else "")],
                                     "p({} better than {}) = {:.3f}: {} scores higher in {:.1f}% of "
                                     "the resamples".format(a, b, value, a, 100 * value), mark))
        cells.append(row)
    lead = ('<p class="lead">Each cell is the bootstrap probability of superiority: the share of '
            'the 1,000 resampled test sets in which the row\'s submission scores higher than the '
            'column\'s (not a p-value). * marks a pair that passes the approximate randomization '
            'test after Holm\'s adjustment over every pair of the map, at 5%.</p>')
    return lead + html.heat_map(
        "Significance map: p(row better than column); * significant (Holm-adjusted p <= 0.05)",
        "heatmap", names, names, cells, ("0", "1", "p(row better)"), empty_fill="#eaeef2")


def blob_plot(names: Sequence[str], shares: List[List[float]],
              rank_ci: List[Optional[List[int]]]) -> str:
    """For each model (a row) a circle per rank whose area is the share of resamples with
    that rank, and a line over its 95% rank interval (challengeR's blob plot)."""
    n = len(names)
    shown = [_truncate(x, 24) for x in names]
    font = 12.0
    step = float(max(28, min(48, int(560 / max(n, 1)))))
    label_w = max([_text_width(x, font) for x in shown] + [20.0])
    left, top = 12.0 + label_w, 30.0
    width, height = left + n * step + 20.0, top + n * step + 30.0
    out = []
    for r in range(n):
        out.append(_text(left + step * (r + 0.5), top - 10, str(r + 1), size=font,
                         anchor="middle"))
    out.append(_text(left + step * n / 2, height - 8, "rank", size=font, anchor="middle",
                     fill="#59636e"))
    for m, name in enumerate(shown):
        cy = top + step * (m + 0.5)
        out.append(_text(left - 8, cy + 4, name, size=font, anchor="end"))
        span = rank_ci[m]
        if span:
            lo, hi = span
            out.append('<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#8c959f" stroke-width="2"/>'
                       .format(_num(left + step * (lo - 0.5)), _num(cy),
                               _num(left + step * (hi - 0.5)), _num(cy)))
        for r, share in enumerate(shares[m]):
            if share <= 0:
                continue
            radius = (step / 2 - 2) * share ** 0.5  # area proportional to the share
            out.append('<g><title>{}</title><circle cx="{}" cy="{}" r="{}" fill="#2f6fbd" '
                       'fill-opacity="0.8"/></g>'.format(
                           html.escape("{}: rank {:d} in {:.1f}% of the resamples".format(
                               names[m], r + 1, 100 * share)),
                           _num(left + step * (r + 0.5)), _num(cy), _num(max(radius, 1.0))))
    return html.figure("Rank stability: the share of resamples in which each submission has "
                       "each rank", "blobs", width, height, out)


def render(title: str, doc: Dict[str, Any], intervals: Dict[str, Optional[Tuple[float, float]]],
           shares: Optional[List[List[float]]], invalid: List[Dict[str, str]],
           facts: List[List[Any]], extra: Sequence[Tuple[str, str]] = ()) -> str:
    """doc: comparison.json's content; intervals: model -> its own score interval; extra:
    sections after the ranking (compare.py --split: the public and private rankings)."""
    models = doc["models"]
    names = [m["model"] for m in models]
    key = doc["key"]
    rows = []
    for m in models:
        ends = intervals.get(m["model"])
        rows.append([m["rank"], m["model"], m["score"],
                     "{}\u2013{}".format(html.format_score(ends[0]), html.format_score(ends[1]))
                     if ends else "n/a",
                     "{}\u2013{}".format(*m["rank_ci"]) if m["rank_ci"] else "n/a"])
    sections = [("Ranking", '<p class="lead">By the task\'s ranking score, {} (its key in '
                            'scores.txt and on the leaderboard).</p>'.format(html.escape(key)) +
                 html.counts_table(["Rank", "Submission", "Score ({})".format(key),
                                    "95% CI of the score", "95% CI of the rank"], rows))]
    sections += list(extra)
    if shares is not None:
        sections += _comparisons(doc, names, shares)
    elif doc.get("confidence") is False:
        sections.append(("Comparisons", '<p class="na">The reference\'s config.yaml says '
                                        '<code>confidence: false</code>: no intervals and no '
                                        'comparisons, as score.py.</p>'))
    else:
        sections.append(("Comparisons", '<p class="na">This task gives no per-unit statistics '
                                        'to resample: no intervals.</p>'))
    if invalid:
        sections.append(("Left out", html.counts_table(
            ["Submission", "Why"], [[x["model"], x["error"]] for x in invalid])))
    notes = NOTES[:1] + comparison_notes(doc) + NOTES[1:] + page_challenger.notes(doc) \
        if shares is not None else NOTES
    sections.append(("How to read this", html.notes_list(notes)))
    sections.append(("Run information", html.counts_table(["Item", "Value"], facts)))
    return html.page(title, sections, "Aggregate results only; no per-unit data is shown.")


def _comparisons(doc: Dict[str, Any], names: List[str],
                 shares: List[List[float]]) -> List[Tuple[str, str]]:
    """The tests of the family (the map of every pair, or the table of neighbours and
    leader), the rank stability plot (up to family.MAP_MAX submissions: above, the ranking's
    rank intervals say it) and challengeR's sections."""
    out = []
    if doc["family"]["pairs"] == family.ALL:
        p = {(q["a"], q["b"]): q["p_a_better"] for q in doc["pairs"]}
        sig = {(q["a"], q["b"]): bool(q.get("significant")) for q in doc["pairs"]}
        matrix = [[None if a == b else p[(a, b)] for b in names] for a in names]
        marks = [[a != b and sig[(a, b)] for b in names] for a in names]
        out.append(("Is the row better than the column?",
                    significance_map(names, matrix, marks) + page_challenger.floor_note(doc)))
    else:
        out.append(("Is each submission separated from the next one, and from the leader?",
                    neighbours_table(doc) + page_challenger.floor_note(doc)))
    if len(names) <= family.MAP_MAX:
        out.append(("Rank stability", blob_plot(names, shares,
                                                [m["rank_ci"] for m in doc["models"]])))
    return out + page_challenger.sections(doc)
