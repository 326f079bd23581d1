"""verify.py --split split.json (issue 35): results/ scored on each part of a split test set
with the organizer's full reference. The leaderboard showed the public part's score, so the
leaderboard match compares that one; the private part's score (with its interval), the one the
final ranking uses, is reported beside it."""
from typing import Any, Dict, Optional, Tuple

from final_package.checks import PASS, Check

from ..split import selection, side_by_side


def score_parts(setup: Any, split_path: str, files: Dict[str, str], workers: int
                ) -> Dict[str, Tuple[Optional[float], Optional[Tuple[float, float]]]]:
    """{part: (score, its interval)} of results/ (unit -> path) on the public and the private
    part; UsageError for a split of another reference."""
    chosen = selection.select(split_path, "public", setup.reference)
    assert chosen is not None   # split_path is given
    out = {}
    for part in (chosen, chosen.other()):
        assert part is not None   # public's other part is private
        cut = selection.restricted(setup.reference, part.units)
        mine = {u: (p, p) for u, p in selection.files_of(files, cut).items()}
        points, ends = side_by_side.score_part(setup.opened, cut, setup.fmt, [mine], workers,
                                               setup.key)
        out[part.part] = (points[0], ends[0])
    return out


def check(parts: Dict[str, Tuple[Optional[float], Optional[Tuple[float, float]]]],
          key: str) -> Check:
    def shown(value: Optional[float]) -> str:
        return "n/a" if value is None else "{:.4f}".format(value)

    (pub, _), (priv, ends) = parts["public"], parts["private"]
    interval = " (95% CI {}-{})".format(shown(ends[0]), shown(ends[1])) if ends else ""
    return Check("split parts", PASS,
                 "public part {} {} (what the leaderboard showed); private part {} {}{} (the "
                 "final ranking's)".format(key, shown(pub), key, shown(priv), interval),
                 ["public part: {} {}".format(key, shown(pub)),
                  "private part: {} {}{}".format(key, shown(priv), interval)],
                 {"public": None if pub is None else round(pub, 10),
                  "private": None if priv is None else round(priv, 10),
                  "private_ci": [round(e, 10) for e in ends] if ends else None})
