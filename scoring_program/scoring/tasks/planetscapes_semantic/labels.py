"""The label table: configuration, never code.

config.yaml holds `labels:` as a list of rows (name, id, category, has_instances, ignore_in_eval;
trainId and color optional and unused) or the word `cityscapes` for the Cityscapes table, and an
optional `average_instance_size:` {class name: pixels}. Everything is checked here, once, in the
main process: a table the metric cannot use is the organizers' mistake (exit 3), reported with the
row it is in.
"""
import re
from typing import Any, Dict, List, Mapping, NamedTuple, Optional

import numpy as np

from ...problems import BrokenReference, ProblemLog
from ...quoting import brief
from .problems import REF_CONFIG
from . import cityscapes_labels

CONFIG = "config.yaml"

REQUIRED = (("name", str), ("id", int), ("category", str), ("has_instances", bool),
            ("ignore_in_eval", bool))
OPTIONAL = ("trainId", "color")
# A class with instances writes class_id * 1000 + k into a 16-bit image: class_id <= 65.
MAX_INSTANCE_CLASS = 65535 // 1000
MAX_ID = 255  # label images are 8-bit
# An average instance size is a number of pixels: at least one, at most the pixels of the largest
# image a PNG can hold. Within these bounds every weighted sum of the iIoU stays finite.
MAX_AVERAGE_SIZE = (2 ** 31 - 1) ** 2


def key_name(name: str) -> str:
    """Leaderboard key part of a class or category name: lowercased, every run of characters
    other than a-z0-9 replaced by one underscore."""
    return re.sub("[^a-z0-9]+", "_", name.lower())


def _key_shown(key: str) -> str:
    """A score key or field name in a message, cut if long (a score key is as long as the name it
    comes from)."""
    return key if len(key) <= 80 else "{}... ({:,} characters)".format(key[:60], len(key))


class Label(NamedTuple):
    name: str
    id: int
    category: str
    has_instances: bool
    ignore_in_eval: bool
    row: int = 0  # 1-based row of config.yaml's table (for messages)


class LabelTable:
    """A checked label table with the derived id sets the metric needs."""

    def __init__(self, labels: List[Label], average_sizes: Dict[str, float], source: str) -> None:
        self.labels = labels
        self.source = source  # "cityscapes" or "config.yaml"
        self.average_sizes = average_sizes  # configured sizes by class name (may be partial)
        self.in_images = [lab for lab in labels if lab.id >= 0]
        self.by_id = {lab.id: lab for lab in self.in_images}
        self.size = max(self.by_id) + 1  # confusion matrix side: ids 0..max
        # Categories in order of first appearance (the anchor's category2labels order).
        self.categories: List[str] = []
        for lab in labels:
            if lab.category not in self.categories:
                self.categories.append(lab.category)
        self.members = {c: [lab for lab in labels if lab.category == c] for c in self.categories}
        self.allowed = np.zeros(MAX_ID + 1, dtype=bool)
        self.allowed[[lab.id for lab in self.in_images]] = True
        self.contiguous = bool(self.allowed[:self.size].all())

    # Which values exist at all (the others are never defined: no key is written for them).
    def evaluated(self) -> List[Label]:
        """Classes with a class IoU: in images and not ignored."""
        return [lab for lab in self.in_images if not lab.ignore_in_eval]

    def instance_classes(self) -> List[Label]:
        """Classes with an iIoU: in images, not ignored, with instances."""
        return [lab for lab in self.evaluated() if lab.has_instances]

    def category_ids(self, category: str) -> List[int]:
        """Category IoU members: the category's non-ignored classes."""
        return [lab.id for lab in self.members[category]
                if lab.id >= 0 and not lab.ignore_in_eval]

    def instance_category_ids(self, category: str) -> Optional[List[int]]:
        """Category iIoU members (ignored ones included), or None when some class of the category
        (id >= 0) has no instances: then the category has no iIoU."""
        ids = []
        for lab in self.members[category]:
            if lab.id < 0:
                continue
            if not lab.has_instances:
                return None
            ids.append(lab.id)
        return ids

    def iou_categories(self) -> List[str]:
        return [c for c in self.categories if self.category_ids(c)]

    def iiou_categories(self) -> List[str]:
        return [c for c in self.categories if self.instance_category_ids(c) is not None]

    def score_keys(self) -> List[str]:
        keys = ["iou_class", "iiou_class", "iou_category", "iiou_category"]
        keys += ["iou_class_" + key_name(lab.name) for lab in self.evaluated()]
        keys += ["iiou_class_" + key_name(lab.name) for lab in self.instance_classes()]
        keys += ["iou_category_" + key_name(c) for c in self.iou_categories()]
        keys += ["iiou_category_" + key_name(c) for c in self.iiou_categories()]
        return keys


def _type_name(value: Any) -> str:
    return {bool: "true/false", int: "an integer", str: "text", float: "a number",
            list: "a list", dict: "a mapping", type(None): "empty"}.get(type(value),
                                                                        type(value).__name__)


def _row_name(i: int, row: Any) -> str:
    if isinstance(row, dict) and isinstance(row.get("name"), str):
        return "labels row {} ({})".format(i + 1, brief(row["name"]))
    return "labels row {}".format(i + 1)


def _parse_rows(rows: Any, log: ProblemLog) -> List[Label]:
    if not isinstance(rows, list) or not rows:
        log.add(REF_CONFIG, CONFIG, "`labels:` must be a non-empty list of rows or the word "
                "`cityscapes`, not {}".format(_type_name(rows) if rows != [] else "an empty list"))
        return []
    labels = []
    for i, row in enumerate(rows):
        where = _row_name(i, row)
        if not isinstance(row, dict):
            log.add(REF_CONFIG, CONFIG, "{}: a row must be a mapping, not {}".format(
                where, _type_name(row)))
            continue
        bad = False
        for field, kind in REQUIRED:
            if field not in row:
                log.add(REF_CONFIG, CONFIG, "{}: missing field `{}`".format(where, field))
                bad = True
            elif not isinstance(row[field], kind) or (kind is int and isinstance(row[field], bool)):
                log.add(REF_CONFIG, CONFIG, "{}: `{}` must be {}, not {} ({})".format(
                    where, field, _type_name(kind()), _type_name(row[field]), brief(row[field])))
                bad = True
        # Keys may be of any YAML type (1, null, a date): sorted and shown as text.
        for field in sorted(set(row) - {f for f, _ in REQUIRED} - set(OPTIONAL), key=str):
            log.add(REF_CONFIG, CONFIG, "{}: unknown field `{}` (known: {})".format(
                where, _key_shown(str(field)), ", ".join([f for f, _ in REQUIRED] + list(OPTIONAL))))
            bad = True
        if bad:
            continue
        if not row["name"].strip() or not row["category"].strip():
            log.add(REF_CONFIG, CONFIG, "{}: name and category must not be empty".format(where))
            continue
        if not -1 <= row["id"] <= MAX_ID:
            log.add(REF_CONFIG, CONFIG, "{}: id {} is outside 0-{} (label images are 8-bit; "
                    "-1 marks a label that never occurs in images)".format(where, brief(row["id"]),
                                                                          MAX_ID))
            continue
        if row["has_instances"] and row["id"] > MAX_INSTANCE_CLASS:
            log.add(REF_CONFIG, CONFIG, "{}: a class with instances needs an id of at most {} "
                    "(16-bit instance images hold class_id * 1000 + k)".format(
                        where, MAX_INSTANCE_CLASS))
            continue
        labels.append(Label(row["name"], row["id"], row["category"], row["has_instances"],
                            row["ignore_in_eval"], i + 1))
    return labels


def _check_unique(labels: List[Label], log: ProblemLog) -> None:
    seen: Dict[Any, Label] = {}

    def claim(what: Any, shown: str, lab: Label) -> None:
        if what in seen:
            log.add(REF_CONFIG, CONFIG, "labels row {} ({}): {} (also row {}, {})".format(
                lab.row, brief(lab.name), shown, seen[what].row, brief(seen[what].name)))
        else:
            seen[what] = lab

    for lab in labels:
        if lab.id >= 0:
            claim(("id", lab.id), "duplicate id {}".format(lab.id), lab)
        if ("name", lab.name) in seen:  # one message, not also one for its key
            claim(("name", lab.name), "duplicate name", lab)
            continue
        claim(("name", lab.name), "duplicate name", lab)
        claim(("class key", key_name(lab.name)), "score key `{}` of another label".format(
            _key_shown(key_name(lab.name))), lab)
    keys: Dict[str, str] = {}
    for lab in labels:
        k = key_name(lab.category)
        if keys.setdefault(k, lab.category) != lab.category:
            log.add(REF_CONFIG, CONFIG, "categories {} and {} have the same score key "
                    "`{}`".format(brief(keys[k]), brief(lab.category), _key_shown(k)))
    if labels and not any(lab.id >= 0 and not lab.ignore_in_eval for lab in labels):
        log.add(REF_CONFIG, CONFIG, "no label is evaluated (every label has ignore_in_eval: "
                "true or id -1)")


def _parse_sizes(value: Any, labels: List[Label], log: ProblemLog) -> Dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        log.add(REF_CONFIG, CONFIG, "`average_instance_size:` must map class names to pixels, "
                "not {}".format(_type_name(value)))
        return {}
    by_name = {lab.name: lab for lab in labels}
    sizes = {}
    for name, size in value.items():
        lab = by_name.get(name)
        if lab is None:
            log.add(REF_CONFIG, CONFIG, "average_instance_size: {} is not a label name".format(
                brief(name)))
        elif not lab.has_instances:
            log.add(REF_CONFIG, CONFIG, "average_instance_size: {} has has_instances: false".format(
                brief(name)))
        elif (isinstance(size, bool) or not isinstance(size, (int, float))
              or not 1 <= size <= MAX_AVERAGE_SIZE):  # exact for any int; False for NaN
            log.add(REF_CONFIG, CONFIG, "average_instance_size: {} must be a positive number of "
                    "pixels, from 1 to {:.2g} (the pixels of the largest PNG image), not {}".format(
                        brief(name), float(MAX_AVERAGE_SIZE), brief(size)))
        else:
            sizes[name] = float(size)
    return sizes


def load(ref_config: Mapping[str, Any]) -> LabelTable:
    """The checked table of a reference's config.yaml; BrokenReference naming every problem."""
    log = ProblemLog()
    spec = ref_config.get("labels")
    if spec is None:
        log.add(REF_CONFIG, CONFIG, "no `labels:` table (a list of label rows, or `cityscapes`)")
        raise BrokenReference(log)
    if spec == "cityscapes":
        rows, default_sizes, source = cityscapes_labels.rows(), \
            dict(cityscapes_labels.AVERAGE_INSTANCE_SIZE), "cityscapes"
    elif isinstance(spec, str):
        log.add(REF_CONFIG, CONFIG, "`labels: {}`: the only named table is `cityscapes`".format(
            brief(spec)))
        raise BrokenReference(log)
    else:
        rows, default_sizes, source = spec, {}, CONFIG
    labels = _parse_rows(rows, log)
    _check_unique(labels, log)
    sizes = _parse_sizes(ref_config.get("average_instance_size"), labels, log)
    if log.fatal:
        raise BrokenReference(log)
    default_sizes.update(sizes)
    return LabelTable(labels, default_sizes, source)
