"""A reference that holds the labels of the test set's public part only (bundle.sh
--private-share, docs/bundle.md "A private part"): the platform scores that part, the
organizers score the private part after the deadline on their own machine, because anything a
platform computes is readable by participants (Codabench's submissions API).

Such a reference says so in its config.yaml, with the label-free manifest of the whole test set
(every id and size, the very file the starting kit holds) beside its labels:

    public_part:
      manifest: test_manifest.json   # in the reference's folder
      units: 20                      # labels held (the public part)
      of: 40                         # ids in the manifest (the whole test set)
      groups: 5                      # the public part's groups (fields)...
      group_total: 10                # ...of the test set's
      group_noun: fields

The scorer then checks the whole submission (every id of the manifest present and valid, the
private ones against the manifest's public facts) and scores the public ids. Nothing it writes
says which ids are private: only the counts above. A reference with a manifest of more ids than
its labels and no such block, or whose block disagrees with what it holds, is the organizers'
mistake (BrokenReference, exit 3).
"""
import json
import os
from typing import Any, Dict, NamedTuple, Optional

from . import regular_file
from .manifests import MAX_MANIFEST_BYTES
from .problems import REF_CONFIG, BrokenReference, ProblemLog
from .quoting import brief

CONFIG_KEY = "public_part"
MANIFEST_FILE = "test_manifest.json"   # the bundle's name for it
INTS = ("units", "of", "groups", "group_total")


class PublicPart(NamedTuple):
    stand_in: Any          # the manifest's stand-in reference (every id, no label)
    fmt: Any               # its submission format (the label-free check's)
    units: int
    of: int
    groups: int
    group_total: int
    group_noun: str
    unit_noun: str

    def scored_on(self) -> str:
        """What the page's notes say the scores are computed over."""
        return ("the {:,} {} of the test set's public part (of its {:,}; the private part is "
                "scored by the organizers after the deadline)".format(
                    self.units, self.unit_noun, self.of))

    def line(self) -> str:
        """What the console and the page say."""
        return ("public part: {:,} of {:,} {} ({} {:,} of {:,}); the final ranking uses the "
                "private part, scored by the organizers after the deadline".format(
                    self.units, self.of, self.unit_noun, self.group_noun, self.groups,
                    self.group_total))


def _broken(detail: str, name: str = "config.yaml") -> BrokenReference:
    log = ProblemLog()
    log.add(REF_CONFIG, name, detail)
    return BrokenReference(log)


def _block(ref_config: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    block = ref_config.get(CONFIG_KEY)
    if block is None:
        return None
    if not isinstance(block, dict) or not isinstance(block.get("manifest"), str) or \
            not isinstance(block.get("group_noun", ""), str) or \
            any(type(block.get(k)) is not int or block[k] < 0 for k in INTS):
        raise _broken("{} must be a mapping of manifest (a file name), {} (counts) and "
                      "group_noun, not {}".format(CONFIG_KEY, ", ".join(INTS), brief(block)))
    return block


def _manifest(root: str, name: str) -> Dict[str, Any]:
    if os.path.basename(name) != name or name.startswith("."):
        raise _broken("{}: manifest must name a file in the reference's folder, not {}".format(
            CONFIG_KEY, brief(name)))
    try:
        doc = json.loads(regular_file.read_bytes(os.path.join(root, name), MAX_MANIFEST_BYTES,
                                                 follow_links=True))
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        return doc
    except (OSError, ValueError, regular_file.Refused) as exc:
        raise _broken("the test set's manifest cannot be read ({})".format(
            getattr(exc, "strerror", None) or exc), name) from None


def read(setup: Any, reference: Any) -> Optional[PublicPart]:
    """The public part a reference declares (None: the reference is the whole test set);
    BrokenReference if the declaration and the reference disagree."""
    block = _block(setup.ref_config)
    root = reference.root
    if block is None:
        if root and os.path.lexists(os.path.join(root, MANIFEST_FILE)):
            raise _broken("the reference holds {} but its config.yaml has no {} block: a "
                          "reference with the labels of a part only must say so (bundle.sh "
                          "--private-share writes both)".format(MANIFEST_FILE, CONFIG_KEY))
        return None
    if not root:
        raise _broken("{}: this task's reference has no folder to hold a manifest".format(
            CONFIG_KEY))
    manifest = _manifest(root, block["manifest"])
    if manifest.get("task", setup.task.name) != setup.task.name:
        raise _broken("the manifest is of task {}, the reference of {}".format(
            brief(manifest.get("task")), setup.task.name), block["manifest"])
    try:   # the task's own manifest (images and sizes; VQA's question ids)
        stand_in, fmt = setup.task.manifest.open(manifest)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _broken("the test set's manifest cannot be read (not a {} manifest: {})".format(
            setup.task.name, brief(str(exc))), block["manifest"]) from None
    every, held = set(stand_in.split_units()), set(reference.split_units())
    outside = sorted(held - every)
    if outside:
        raise _broken("{} labelled ids are not in the manifest of the test set (e.g. {})".format(
            len(outside), outside[0]), block["manifest"])
    if (len(held), len(every)) != (block["units"], block["of"]) or not 0 < len(held) < len(every):
        raise _broken("{} says {} of {} ids, the reference holds the labels of {:,} of the "
                      "manifest's {:,}".format(CONFIG_KEY, block["units"], block["of"],
                                               len(held), len(every)))
    return PublicPart(stand_in, fmt, block["units"], block["of"], block["groups"],
                      block["group_total"], block.get("group_noun", "groups") or "groups",
                      reference.size()[1])
