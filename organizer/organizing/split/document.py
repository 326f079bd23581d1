"""split.json: the split as the bundle build writes it beside the bundles, and as compare.py
(and the standings) read it back with the organizer's full reference.

    {"split_version": 1, "task": ..., "rule": choose.RULE, "seed": 0, "share": 0.5,
     "grouped_by": "field", "unit_noun": "images", "group_noun": "fields",
     "counts": {"public": {"units": N, "groups": F}, "private": {...}, "all": {...}},
     "public": [unit ids], "private": [...], "public_groups": [...], "private_groups": [...]}

Unit ids are the reference's (image names; VQA question ids, numbers). The text is the same
bytes for the same reference, share and seed (sorted keys and lists).
"""
import json
from typing import Any, Dict, List, Optional, Set

from scoring.problems import UsageError

from .choose import RULE, Split

VERSION = 1
PARTS = ("public", "private", "all")


def counts(split: Split) -> Dict[str, Dict[str, int]]:
    pub, priv = len(split.public), len(split.private)
    pg, vg = len(split.public_groups), len(split.private_groups)
    return {"public": {"units": pub, "groups": pg}, "private": {"units": priv, "groups": vg},
            "all": {"units": pub + priv, "groups": pg + vg}}


def to_json(split: Split, task: str) -> str:
    g = split.grouping
    doc = {"split_version": VERSION, "task": task, "rule": RULE, "seed": split.seed,
           "share": split.share, "grouped_by": g.rule, "unit_noun": g.unit_noun,
           "group_noun": g.group_noun, "counts": counts(split),
           "public": split.public, "private": split.private,
           "public_groups": split.public_groups, "private_groups": split.private_groups}
    return json.dumps(doc, sort_keys=True, indent=1) + "\n"


def summary_line(split: Split) -> str:
    """What the plan and the pages say: "public part: N of M images (fields F of G)"."""
    c = counts(split)
    g = split.grouping
    return "public part: {:,} of {:,} {} ({} {:,} of {:,})".format(
        c["public"]["units"], c["all"]["units"], g.unit_noun, g.group_noun,
        c["public"]["groups"], c["all"]["groups"])


def read(path: str) -> Dict[str, Any]:
    """A split.json, checked enough to select units (UsageError naming the file otherwise)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if not isinstance(doc, dict) or doc.get("split_version") != VERSION:
            raise ValueError("not a split.json of version {}".format(VERSION))
        for key in ("public", "private"):
            if not isinstance(doc.get(key), list):
                raise ValueError("no list {!r}".format(key))
        if set(map(str, doc["public"])) & set(map(str, doc["private"])):
            raise ValueError("a unit is in both parts")
        return doc
    except (OSError, ValueError) as exc:
        raise UsageError("--split {}: {} (give the split.json that bundle.sh "
                         "--private-share wrote)".format(path, getattr(exc, "strerror", None)
                                                         or exc)) from None


def part_units(doc: Dict[str, Any], part: str) -> Set[str]:
    """The units of one part (public, private or all), as strings (the ids a reference and a
    submission use: image names; a VQA question id as text). The function the standings call
    to score each team's submission on one part."""
    if part not in PARTS:
        raise UsageError("--part must be one of {}, not {}".format(", ".join(PARTS), part))
    chosen: List[Any] = doc["public"] + doc["private"] if part == "all" else doc[part]
    return set(str(u) for u in chosen)


def check_reference(doc: Dict[str, Any], reference_ids: Optional[List[Any]]) -> None:
    """The split must be of this reference: every unit of it, nothing else (UsageError)."""
    if reference_ids is None:
        return
    ids = set(str(u) for u in reference_ids)
    split_ids = part_units(doc, "all")
    if ids != split_ids:
        missing, extra = sorted(split_ids - ids), sorted(ids - split_ids)
        raise UsageError("--split: the split is not of this reference ({} of its units not "
                         "in the reference{}, {} reference units not in the split{}): give the "
                         "full reference the split was drawn from".format(
                             len(missing), " e.g. " + missing[0] if missing else "",
                             len(extra), " e.g. " + extra[0] if extra else ""))
