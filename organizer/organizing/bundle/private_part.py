"""bundle.sh --private-share X (docs/bundle.md, "A private part"): the test set split into a
public and a private part by the group the intervals resample (organizing/split/), and a
reference holding the public part's labels only, for the platform.

The public reference is the raw reference with every private unit's label files left out
(a PNG named `<unit id>.png`, in any folder: Agriculture-Vision's boundaries/, masks/,
labels/<class>/; Planetscapes' labels/, instances/; for VQA, whose units are questions split
by image, questions.json and annotations.json rewritten without the private questions), its
config.yaml with a `public_part:`
block (scoring/public_part.py) and the whole test set's label-free manifest as
test_manifest.json; it is then opened, checked and packed as any reference is. The private
labels stay on the organizer's machine: anything the platform computes, participants can read
(codabench src/apps/api/views/submissions.py: SubmissionViewSet has permission_classes = [],
SubmissionSerializer.scores filters nothing).
"""
import json
import os
import shutil
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

from scoring import public_part
from scoring.config import CONFIG_FILE

from ..split import choose, document, grouping
from .reference import (REFERENCE_EXCLUDE, config_for_task, manifest_bytes, open_reference,
                        reference_config_file)
from .refusal import Refused, shown

Say = Callable[[str], None]
# Tasks whose units are label images named by their id: a private unit's PNGs left out (the
# Planetscapes pixel tasks read one reference: labels/, instances/).
IMAGE_TASKS = ("agriculture-vision", "planetscapes-semantic", "planetscapes-instance",
               "planetscapes-panoptic")
# Tasks scored from one results file whose split units are questions: the reference's two
# JSON files (file -> its list) rewritten without the private questions.
QUESTION_TASKS = ("planetscapes-vqa",)
# (the VQA reference's file names, docs/vqa.md: the organizer's code names no task
# module)
QUESTION_FILES = {"questions.json": "questions", "annotations.json": "annotations"}


class PrivateShare(NamedTuple):
    share: float
    seed: int = 0


class PublicReference(NamedTuple):
    folder: str               # the public part's raw reference, to bundle
    split: choose.Split
    json_text: str            # split.json
    line: str                 # "public part: N of M images (fields F of G)"


# What a split bundle's column labels end with: the long form, else the short one.
PUBLIC_MARKS = (" (public part)", " (public)")


def column_label(label: str) -> str:
    """A leaderboard column's label on a split bundle (Codabench: at most 36 characters)."""
    longer = label + PUBLIC_MARKS[0]
    return longer if len(longer) <= 36 else (label + PUBLIC_MARKS[1])[:36]


def public_files(root: str, private: set) -> List[Tuple[str, str]]:
    """(name in the zip, path) of every file of the raw reference but the private units'
    label PNGs and the inputs (images/)."""
    out = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in REFERENCE_EXCLUDE]
        dirs.sort()
        for name in sorted(files):
            stem, ext = os.path.splitext(name)
            if ext.lower() == ".png" and stem in private:
                continue
            out.append((os.path.normpath(os.path.join(rel, name)), os.path.join(folder, name)))
    return out


def write_public_questions(path: str, out: str, key: str, private: set) -> None:
    """A VQA reference file (questions.json, annotations.json) with the private questions'
    entries left out; its other fields (info, license...) as they are."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    doc[key] = [e for e in doc[key] if e.get("question_id") not in private]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def config_text(ref_dir: str, split: choose.Split, task_name: str = "") -> str:
    """The reference's config.yaml (naming task_name: config_for_task) with the public_part
    block after it."""
    path = reference_config_file(ref_dir)
    text = ""
    retasked = config_for_task(ref_dir, task_name)
    if retasked is not None:
        text = retasked.decode("utf-8")
    elif path:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    c = document.counts(split)
    block = ("\n# bundle.sh --private-share: this reference holds the labels of the public part "
             "only; every id of\n# the test set is in {} (no labels). docs/bundle.md, "
             "\"A private part\".\n{}:\n  manifest: {}\n  units: {}\n  of: {}\n  groups: {}\n"
             "  group_total: {}\n  group_noun: {}\n").format(
        public_part.MANIFEST_FILE, public_part.CONFIG_KEY, public_part.MANIFEST_FILE,
        c["public"]["units"], c["all"]["units"], c["public"]["groups"], c["all"]["groups"],
        split.grouping.group_noun)
    return (text.rstrip("\n") + "\n" if text else "") + block


def make_public_reference(build: str, track: str, setup: Any, ref: Any, reference_dir: str,
                          asked: PrivateShare, say: Say) -> PublicReference:
    """The split of the reference and the public part's reference folder (under build)."""
    task = setup.task
    if task.name not in IMAGE_TASKS + QUESTION_TASKS:
        raise Refused("--private-share: the {} track's task ({}) has no public part writer; "
                      "a split is built for {}".format(
                          track, task.name, ", ".join(IMAGE_TASKS + QUESTION_TASKS)))
    if task.name in QUESTION_TASKS and ref.layout != "raw":
        raise Refused("--private-share: give the {} track's reference in the raw layout ({}), "
                      "not {}: the build cuts the answers to the public questions and packs "
                      "them itself".format(track, " and ".join(QUESTION_FILES), ref.layout))
    if setup.ref_config.get(public_part.CONFIG_KEY) is not None:
        raise Refused("--private-share: {} is already a public part (its config.yaml has "
                      "{}:): give the full reference".format(shown(reference_dir),
                                                            public_part.CONFIG_KEY))
    try:
        split = choose.choose(grouping.grouping_of(setup, ref), asked.share, asked.seed)
    except ValueError as exc:
        raise Refused("--private-share: {}".format(exc)) from None
    folder = os.path.join(build, "public-reference-{}".format(track))
    private = set(split.private)
    for name, path in public_files(ref.root, private):
        if name == CONFIG_FILE:
            continue
        os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
        if task.name in QUESTION_TASKS and name in QUESTION_FILES:
            write_public_questions(path, os.path.join(folder, name), QUESTION_FILES[name],
                                   private)
            continue
        shutil.copyfile(path, os.path.join(folder, name))
    with open(os.path.join(folder, CONFIG_FILE), "w", encoding="utf-8") as f:
        f.write(config_text(reference_dir, split, task.name))
    with open(os.path.join(folder, public_part.MANIFEST_FILE), "wb") as f:
        f.write(manifest_bytes(task, ref))
    line = document.summary_line(split)
    say("Split (--private-share {}, seed {}): {}; private part: {:,} {} ({} {:,}), kept "
        "out of every zip".format(asked.share, asked.seed, line, len(split.private),
                                  split.grouping.unit_noun, split.grouping.group_noun,
                                  len(split.private_groups)))
    return PublicReference(folder, split, document.to_json(split, task.name), line)


def open_public(public: PublicReference) -> Tuple[Any, Any]:
    """The public reference opened as the worker's scorer will (its public_part block checked
    against what it holds): Refused with the scorer's message otherwise."""
    setup, ref = open_reference(public.folder)
    try:
        part = public_part.read(setup, ref)
    except Exception as exc:   # a ScoringError: the scorer's own message
        message = getattr(exc, "message", None)
        raise Refused(message().strip() if callable(message) else str(exc)) from None
    if part is None:
        raise Refused("the public reference lost its {} block".format(public_part.CONFIG_KEY))
    return setup, ref


def packed_extra(public: Optional[PublicReference]) -> List[Tuple[str, str]]:
    """What a packed public reference adds to the packer's files: the test set's manifest."""
    if public is None:
        return []
    return [(public_part.MANIFEST_FILE, os.path.join(public.folder, public_part.MANIFEST_FILE))]


def with_public_columns(track: Any) -> Any:
    """The track whose leaderboard columns say they score the public part."""
    import copy
    from .tracks import with_doc
    doc = copy.deepcopy(track.v15)
    for column in doc["leaderboard"]["columns"].values():
        if column.get("label"):
            column["label"] = column_label(str(column["label"]))
    return with_doc(track, doc)


def split_files(parts: List[Any]) -> List[Tuple[str, Any]]:
    """(file name, PublicReference) per split reference: split.json when there is one,
    split-<track>.json when tracks have references of their own."""
    seen: List[Tuple[str, Any]] = []
    for part in parts:
        if part.public is not None and all(p is not part.public for _, p in seen):
            seen.append((part.track.name, part.public))
    if len(seen) == 1:
        return [("split.json", seen[0][1])]
    return [("split-{}.json".format(track), public) for track, public in seen]


def write_splits(parts: List[Any], out: str, say: Say) -> List[str]:
    """split.json beside the bundles (never inside one: it names the private units)."""
    written = []
    for name, public in split_files(parts):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(public.json_text)
        written.append(os.path.join(out, name))
        say("  {:<44} the split (public and private units): keep it with the labels, "
            "never upload it".format(name))
    return written


def plan_split(parts: List[Any], written: List[str], say: Say) -> None:
    """The plan's words on the private part."""
    for (_, public), path in zip(split_files(parts), written):
        split = public.split
        say("  Private part (--private-share {}, --split-seed {}): {}; the final ranking uses "
            "the private part, scored by the organizers after the deadline: the bundles hold "
            "no private label, so the platform cannot score it (and participants could read "
            "any score it computed). After the deadline: python3 organizer/compare.py --ref "
            "FULL_REFERENCE --split {} --part private --out DIR SUBMISSIONS.".format(
                split.share, split.seed, public.line, shown(path)))
