"""Which pairs of submissions compare.py tests: the family over which Holm's adjustment keeps the
chance of marking any pair of equally good submissions at most 5% (docs/confidence.md).

- all: every pair, the full significance map (M (M - 1) / 2 pairs). The default up to
  MAP_MAX submissions: a map of 20 x 20 cells can be read, and its 190 pairs cost seconds.
- neighbours: each submission against the next one in the ranking ("is 3rd separated from
  4th?") and against the leader, the first in rank order ("who is tied with the winner?"):
  2 M - 3 pairs. The default above MAP_MAX: a final leaderboard of 200 teams has 19,900 pairs,
  a map nobody reads, whose every pair would need 796,000 shuffles (shuffles_for), while a jury
  asks these 397 questions.

The models are indexed in rank order (ties by name), so "next" and "leader" are those of the
leaderboard compare.py writes. Fewer pairs also make each mark easier to reach: Holm's first
threshold is 0.05 / pairs.
"""
from typing import Any, Dict, List, NamedTuple, Tuple

ALL = "all"
NEIGHBOURS = "neighbours"
AUTO = "auto"
CHOICES = (AUTO, ALL, NEIGHBOURS)
MAP_MAX = 20  # submissions up to which `auto` tests every pair


class Family(NamedTuple):
    kind: str                      # ALL or NEIGHBOURS
    models: int                    # the submissions, indexed in rank order
    pairs: List[Tuple[int, int]]   # (a, b), a before b in rank order; each pair once

    def describe(self) -> str:
        """The family in words, as comparison.json and the page give it."""
        count = len(self.pairs)
        if self.kind == ALL:
            what = "every pair of the {} submissions".format(self.models)
        else:
            what = ("each submission against the next one in the ranking and against the "
                    "leader (the first in rank order)")
        return ("{}: {:,} pair{}; Holm's adjustment over these pairs keeps the chance of "
                "marking any of them, among equally good submissions, at most 5%".format(
                    what, count, "" if count == 1 else "s"))

    def as_json(self) -> Dict[str, Any]:
        return {"pairs": self.kind, "tested": len(self.pairs), "description": self.describe()}

    def listed(self) -> List[Tuple[int, int]]:
        """The ordered pairs comparison.json lists: for the full map every (a, b) with a != b,
        a-major (as before families were chosen); else each tested pair in both directions,
        in the family's order."""
        if self.kind == ALL:
            return [(a, b) for a in range(self.models) for b in range(self.models) if a != b]
        return [x for a, b in self.pairs for x in ((a, b), (b, a))]


def every_pair(models: int) -> List[Tuple[int, int]]:
    """(a, b) for every a < b, a-major: the full map."""
    return [(a, b) for a in range(models) for b in range(a + 1, models)]


def neighbours_and_leader(models: int) -> List[Tuple[int, int]]:
    """Per submission in rank order after the first: (the one before it, it), then (the
    leader, it) unless the one before it is the leader."""
    out = []
    for b in range(1, models):
        out.append((b - 1, b))
        if b >= 2:
            out.append((0, b))
    return out


def choose(kind: str, models: int) -> Family:
    """The family for `models` submissions (in rank order) from --pairs."""
    if kind not in CHOICES:
        raise ValueError("unknown family of pairs: {!r}".format(kind))
    if kind == AUTO:
        kind = ALL if models <= MAP_MAX else NEIGHBOURS
    return Family(kind, models,
                  every_pair(models) if kind == ALL else neighbours_and_leader(models))
