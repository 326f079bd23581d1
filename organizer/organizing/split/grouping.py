"""The group of each test unit under which the split is drawn: the group the confidence
intervals resample (config.yaml's `resample_by:`, the task's Intervals.clusters), so that no
group has units on both sides and each part's interval (drawn by the same groups) is honest.
Where `resample_by:` leaves every unit on its own, the task's own coarsest group
(Intervals.split_by) still keeps together what belongs together:

- Agriculture-Vision: fields (its default `resample_by: field`, and its split_by);
- Planetscapes semantic: the configured `resample_by: prefix N` (the city, the drive), else
  images;
- Planetscapes VQA: the image of each question (questions.json, public): questions about one
  image never fall on both sides.
"""
from typing import Any, Callable, List, NamedTuple


class Grouping(NamedTuple):
    units: List[Any]                 # the test set's units, sorted (image ids, question ids)
    key: Callable[[Any], str]        # unit -> its group (a string)
    rule: str                        # "field", "image", "prefix 2"...
    unit_noun: str                   # "images", "questions"
    group_noun: str                  # "fields", "groups", "images"


def grouping_of(setup: Any, reference: Any) -> Grouping:
    """The units of an opened reference and the group of each, as its task resamples them
    (ValueError for a task without intervals)."""
    intervals = setup.task.intervals
    if intervals is None:
        raise ValueError("task {} resamples nothing: it has no groups to split by".format(
            setup.task.name))
    rule = setup.intervals.by
    units, key = intervals.clusters(reference, rule)
    if key is None and intervals.split_by:
        rule = intervals.split_by
        units, key = intervals.clusters(reference, rule)
    unit_noun = reference.size()[1]
    if key is None:
        return Grouping(list(units), str, rule, unit_noun, unit_noun)
    noun = {"field": "fields", "image": "images"}.get(rule, "groups")
    return Grouping(list(units), lambda u: str(key(u)), rule, unit_noun, noun)
