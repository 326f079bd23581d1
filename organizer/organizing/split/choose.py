"""Which groups are private: a rule anyone can re-run from the reference and the seed.

The rule (RULE, written into split.json): sort the distinct groups; give each the number
SHA-256("<seed>:<group>") (its 32 bytes read as a big-endian integer); the round(share x G)
groups with the lowest numbers (ties by name), at least 1 and at most G - 1, are private,
every other group public. A unit is on its group's side. The hash, not a random stream, so
the side of a group depends on the seed and its own name only: adding a field to the test set
moves no other field.
"""
import hashlib
from typing import Any, Dict, List, NamedTuple, Sequence

from .grouping import Grouping

RULE = ("groups sorted; each numbered by SHA-256 of '<seed>:<group>' (big-endian); the "
        "round(share x groups) lowest numbers (at least 1, at most groups - 1) are private")


class Split(NamedTuple):
    share: float                 # the private share asked (of the groups)
    seed: int
    grouping: Grouping
    public: List[Any]            # units, sorted
    private: List[Any]
    public_groups: List[str]     # sorted
    private_groups: List[str]


def private_count(groups: int, share: float) -> int:
    """How many of `groups` groups are private at this share (ValueError if fewer than 2)."""
    if groups < 2:
        raise ValueError("the test set has {} group{}: a split needs at least 2".format(
            groups, "" if groups == 1 else "s"))
    return min(groups - 1, max(1, int(round(share * groups))))


def number(seed: int, group: str) -> int:
    return int.from_bytes(hashlib.sha256("{}:{}".format(seed, group).encode("utf-8")).digest(),
                          "big")


def choose(grouping: Grouping, share: float, seed: int) -> Split:
    """The split of grouping's units (ValueError on a share outside (0, 1) or too few
    groups)."""
    if not 0 < share < 1:
        raise ValueError("the private share must lie strictly between 0 and 1, not {}".format(
            share))
    members: Dict[str, List[Any]] = {}
    for unit in grouping.units:
        members.setdefault(grouping.key(unit), []).append(unit)
    groups = sorted(members)
    ordered = sorted(groups, key=lambda g: (number(seed, g), g))
    private_groups = sorted(ordered[:private_count(len(groups), share)])
    hidden = set(private_groups)
    return Split(share, seed, grouping,
                 sorted(u for g in groups if g not in hidden for u in members[g]),
                 sorted(u for g in private_groups for u in members[g]),
                 [g for g in groups if g not in hidden], private_groups)


def units_of(split: Split, part: str) -> Sequence[Any]:
    return {"public": split.public, "private": split.private,
            "all": sorted(split.public + split.private)}[part]
