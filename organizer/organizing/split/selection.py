"""One part of a split test set, selected on the organizer's full reference: what compare.py
--split FILE --part private|public|all does before scoring, and what the standings will do
(one call: select(), then restricted() and files_of(files, cut) for each submission).

Scoring a part is scoring a reference that holds those units alone: the reference's unit list
is cut to the part (restricted), each submission's files to the part (files_of); a submission
is still discovered and checked against the whole test set, so one that lacks a unit of the
other part is as incomplete as on the platform.
"""
from typing import Any, Dict, NamedTuple, Optional, Set

from scoring.problems import UsageError

from . import document

OTHER = {"public": "private", "private": "public"}


class Selection(NamedTuple):
    path: str                  # the split.json given
    doc: Dict[str, Any]        # its content
    part: str                  # public, private or all
    units: Set[str]            # the part's units

    def other(self) -> Optional["Selection"]:
        """The complementary part (None for all): its ranking is shown beside this one's."""
        if self.part not in OTHER:
            return None
        part = OTHER[self.part]
        return self._replace(part=part, units=document.part_units(self.doc, part))

    def counts(self) -> Dict[str, Any]:
        return self.doc.get("counts", {})


def select(split_path: Optional[str], part: Optional[str], reference: Any) -> Optional[Selection]:
    """--split and --part checked against the full reference (UsageError); None without
    --split."""
    if split_path is None:
        if part is not None:
            raise UsageError("--part selects a part of a split: give --split split.json too")
        return None
    doc = document.read(split_path)
    document.check_reference(doc, list(reference.split_units()))
    chosen = part or "private"
    return Selection(split_path, doc, chosen, document.part_units(doc, chosen))


def restricted(reference: Any, units: Set[str]) -> Any:
    """The reference cut to the units (Reference.restricted: image tasks cut their unit list,
    VQA the questions it scores)."""
    return reference.restricted(units)


def files_of(files: Dict[Any, Any], cut: Any) -> Dict[Any, Any]:
    """A submission's files (unit -> file) on the units the cut reference (restricted())
    still scores: an image task's part's images; a VQA results file, the one unit whose
    questions the cut reference chooses, stays whole."""
    held = set(cut.ids)
    return {u: f for u, f in files.items() if u in held}
