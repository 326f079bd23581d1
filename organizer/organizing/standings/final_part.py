"""standings.py --split split.json --part private|public|all (issue 35): the prize places
ranked on one part of a split test set. The standings score nothing: compare.py --leaderboard
--split FILE --part P scored each team's leaderboard submission (the one the leaderboard shows,
never its best private one: that would select on the private labels) on the part, and wrote
the part into comparison.json ("split"). Here the comparison is checked to be of this split
and this part, and each team's score on the part is read beside its leaderboard rank.
"""
from typing import Any, Dict, NamedTuple, Optional

from scoring.problems import UsageError, shown

from ..platform_files.problems import PlatformFileProblem
from ..split import document


class FinalPart(NamedTuple):
    part: str                             # public, private or all
    split_file: str
    counts: Dict[str, Any]                # split.json's counts
    scores: Dict[str, Optional[float]]    # model -> its score on the part (None: invalid)
    kendall_tau: Optional[float]          # between the public and private rankings, if shown
    unit_noun: str

    def summary(self) -> Dict[str, Any]:
        """standings.json's "split"."""
        c = self.counts.get(self.part) or {}
        return {"file": self.split_file, "part": self.part, "counts": self.counts,
                "units": c.get("units"), "unit_noun": self.unit_noun,
                "kendall_tau": self.kendall_tau}


def read(split_path: Optional[str], part: Optional[str],
         comparison: Optional[Dict[str, Any]]) -> Optional[FinalPart]:
    """The part the places are ranked on (None without --split); UsageError for --part
    without --split, --split without --comparison, or a comparison of another part;
    PlatformFileProblem for a comparison of another split."""
    if split_path is None:
        if part is not None:
            raise UsageError("--part ranks on a part of a split test set: give --split "
                             "split.json and the --comparison compare.py made with it")
        return None
    chosen = part or "private"
    doc = document.read(split_path)
    if comparison is None:
        raise UsageError("--split: the standings score nothing; give --comparison DIR, made by "
                         "compare.py --leaderboard ... --split {} --part {}".format(
                             shown(split_path), chosen))
    made = comparison.get("split")
    if not isinstance(made, dict):
        raise UsageError("--split {} --part {}: the comparison {} was made without --split "
                         "(its scores are the whole test set's); re-run compare.py with "
                         "--split {} --part {}".format(shown(split_path), chosen,
                                                       shown(comparison["path"]),
                                                       shown(split_path), chosen))
    if made.get("part") != chosen:
        raise UsageError("--part {}: the comparison {} ranks the {} part; give --part {} or "
                         "re-run compare.py with --part {}".format(
                             chosen, shown(comparison["path"]), made.get("part"),
                             made.get("part"), chosen))
    mine = (doc.get("counts"), doc.get("seed"), doc.get("grouped_by"))
    theirs = (made.get("counts"), made.get("seed"), made.get("grouped_by"))
    if mine != theirs:
        raise PlatformFileProblem("the comparison {} was made with another split than {} "
                                  "(seed, grouping or counts differ): give the split.json "
                                  "compare.py used".format(shown(comparison["path"]),
                                                           shown(split_path)))
    return FinalPart(chosen, split_path, doc.get("counts") or {}, comparison["scores"],
                     made.get("kendall_tau"), str(doc.get("unit_noun") or "units"))
