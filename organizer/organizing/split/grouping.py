"""The group of each test unit under which the split is drawn: the group the confidence
intervals resample (scoring/resample_units.py), so that no group has units on both sides and
each part's interval (drawn by the same groups) is honest.

- Agriculture-Vision: its `resample_by:` (default field: a tile's field, tasks/agrivision/
  intervals.field_of); `image` or `prefix N` when config.yaml says so.
- Planetscapes semantic: its `resample_by:` (default image; `prefix N`: the city, the drive).
- Planetscapes VQA: the image of each question (questions.json, public) whatever `resample_by:`
  says: questions about one image must not fall on both sides.
"""
from typing import Any, Callable, Dict, List, NamedTuple

from scoring import resample_units


class Grouping(NamedTuple):
    units: List[Any]                 # the test set's units, sorted (reference.ids or questions)
    key: Callable[[Any], str]        # unit -> its group (a string)
    rule: str                        # "field", "image", "prefix 2"...
    unit_noun: str                   # "images", "questions"
    group_noun: str                  # "fields", "groups", "images"


def grouping_of(setup: Any, reference: Any) -> Grouping:
    """The units of an opened reference and the group of each, as its task resamples them."""
    name = setup.task.name
    by = setup.intervals.by
    if name == "planetscapes-vqa":
        from scoring.tasks.planetscapes_vqa.reference import read_questions
        image_of = read_questions(reference.root)
        return Grouping(sorted(image_of), lambda q: str(image_of[q]), "image", "questions",
                        "images")
    named: Dict[str, Callable[[Any], Any]] = {}
    if name == "agriculture-vision":
        from scoring.tasks.agrivision.intervals import field_of
        named = {"field": field_of}
    unit_rule = "image"
    key = resample_units.key_of(by or unit_rule, unit_rule, named) if by else None
    noun = "fields" if by == "field" else ("images" if key is None else "groups")
    return Grouping(sorted(reference.ids), key or str, by or unit_rule, "images", noun)
