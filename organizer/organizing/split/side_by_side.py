"""The public and the private ranking side by side (compare.py --split): per submission its
public rank and score, its private rank, score and interval; Kendall's tau-b between the two
rankings (how far the leaderboard predicted the final ranking). comparison.json's "split" and
the page's section.

What a command that ranks submissions on a part calls (compare.py; the standings can too):
selection.select() -> each submission's files cut with selection.files_of() and scored on
selection.restricted(reference, part.units) -> other_part() for the complementary part ->
split_doc() -> section() on the page.
"""
import os
from typing import Any, Dict, List, Optional, Tuple

from scoring.report import html

from ..compare.challenger import kendall_tau_b
from ..ranks import competition_ranks
from . import selection


def table(models: List[str], public: Dict[str, Optional[float]],
          private: Dict[str, Optional[float]],
          private_ci: Dict[str, Optional[Tuple[float, float]]]) -> Dict[str, Any]:
    """The rows (in private rank order, ties by name) and tau (None with fewer than two
    submissions scored on both parts, or no two distinct scores)."""
    pub_ranks = dict(zip(models, competition_ranks([public.get(m) for m in models])))
    priv_ranks = dict(zip(models, competition_ranks([private.get(m) for m in models])))
    rows = []
    for m in sorted(models, key=lambda m: (priv_ranks[m], m)):
        ends = private_ci.get(m)
        rows.append({"model": m, "public_rank": pub_ranks[m], "public_score": public.get(m),
                     "private_rank": priv_ranks[m], "private_score": private.get(m),
                     "private_ci": list(ends) if ends else None})
    both = [m for m in models if public.get(m) is not None and private.get(m) is not None]
    tau = kendall_tau_b([float(public[m] or 0) for m in both],
                        [float(private[m] or 0) for m in both]) if len(both) > 1 else None
    return {"rows": rows, "kendall_tau": tau, "models_on_both": len(both)}


def section(split: Dict[str, Any], key: str) -> Tuple[str, str]:
    """The page's section: the two rankings and tau."""
    counts = split["counts"]
    noun = split.get("unit_noun", "units")
    rows = [[r["public_rank"], r["private_rank"], r["model"], r["public_score"],
             r["private_score"],
             "{}\u2013{}".format(html.format_score(r["private_ci"][0]),
                                 html.format_score(r["private_ci"][1]))
             if r["private_ci"] else "n/a"] for r in split["rows"]]
    tau = split["kendall_tau"]
    lead = ('<p class="lead">Each submission scored on the public part (what the leaderboard '
            'showed: {:,} {}) and on the private part ({:,} {}), split by {} '
            '(split.json, seed {}). The final ranking is the private one. Kendall\'s tau-b '
            'between the two rankings: <b>{}</b> (1: the same order; 0: no relation).</p>'
            .format(counts["public"]["units"], noun, counts["private"]["units"], noun,
                    html.escape(str(split.get("grouped_by", "?"))), split.get("seed", "?"),
                    "n/a" if tau is None else "{:.3f}".format(tau)))
    return ("Public and private parts", lead + html.counts_table(
        ["Public rank", "Private rank", "Submission", "Public {}".format(key),
         "Private {}".format(key), "95% CI (private)"], rows))


def score_part(setup: Any, reference: Any, fmt: Any, files: List[Dict[Any, Any]],
               workers: int, key: str) -> Tuple[List[Optional[float]],
                                                List[Optional[Tuple[float, float]]]]:
    """Each submission (its files, unit -> (path, name shown)) scored on a reference (already
    cut to a part): its ranking score and that score's own interval, as score.py gives them.
    A problem was reported by the run that discovered and scored the asked part."""
    from scoring import confidence, engine
    task, settings = setup.task, setup.settings
    scored = engine.evaluate_many(task, reference, fmt, settings, files, workers, None)
    points: List[Optional[float]] = []
    ends: List[Optional[Tuple[float, float]]] = []
    for state in scored.states:
        summary = task.summarize(state, reference, settings)
        points.append(dict(summary.scores).get(key))
        res = confidence.resampling_of(task, state, summary, reference, settings,
                                       setup.intervals.by) if setup.intervals.enabled else None
        intervals = confidence.intervals_of(task, res)
        ends.append(intervals.interval(key) if intervals else None)
    return points, ends


def other_part(setup: Any, full: Any, fmt: Any, part: Any, models: List[str],
               files: List[Dict[Any, Any]], workers: int, key: str
               ) -> Tuple[Any, Dict[str, Optional[float]], Dict[str, Any]]:
    """The part complementary to `part` (a selection.Selection), each model scored on it from
    its files (unit -> (path, name shown); any part's: they are cut here) with the full
    reference: (that part, model -> score, model -> interval)."""
    other = part.other()
    cut = selection.restricted(full, other.units)
    points, ends = score_part(setup, cut, fmt, [selection.files_of(f, cut) for f in files],
                              workers, key)
    return other, dict(zip(models, points)), dict(zip(models, ends))


def split_doc(part: Any, other: Any, rows: List[Dict[str, Any]],
              own: Dict[str, Any], key: str) -> Dict[str, Any]:
    """comparison.json's "split": the part ranked, the counts, and (with the other part
    scored: other_part()) both rankings side by side and Kendall's tau. rows: the ranked
    part's rows ({"model", "scores"}), own: model -> its interval there."""
    doc = {"file": os.path.basename(part.path), "part": part.part, "counts": part.counts(),
           "seed": part.doc.get("seed"), "grouped_by": part.doc.get("grouped_by"),
           "unit_noun": part.doc.get("unit_noun")}
    if other is None:
        return doc
    _, points, ends = other
    mine = {r["model"]: r["scores"].get(key) for r in rows}
    if part.part == "private":
        public, private, private_ci = points, mine, own
    else:
        public, private, private_ci = mine, points, ends
    return dict(doc, **table([r["model"] for r in rows], public, private, private_ci))
