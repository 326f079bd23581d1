"""Does a Development phase's reference (--dev-reference) hold test labels? The Development phase
scores every participant's submissions against it, up to its limits, and shows the scores: a
development reference that is the test reference, a copy of it, or shares units (or questions)
with the same labels hands the test labels out one score at a time.
"""
from typing import Any, Dict, Hashable, Iterator, List, Optional, Tuple

import numpy as np

from .reference import open_reference
from .refusal import same_folder, shown

SHOWN = 3   # units named in the message


def _items(unit_id: str, truth: Any) -> Iterator[Tuple[Hashable, Any]]:
    """The labelled items of one unit: a question set (VQA: one unit holds every question)
    item by item, since a validation set sharing some questions with the test set leaks those;
    anything else (an image's labels) whole."""
    qids, forms = getattr(truth, "qids", None), getattr(truth, "forms", None)
    if isinstance(qids, list) and isinstance(forms, list):
        for qid, form in zip(qids, forms):
            yield ("question", qid), form
    else:
        yield unit_id, truth


def _equal(a: Any, b: Any) -> bool:
    """Labels as the readers give them: arrays, tuples (named or not) of them, plain values."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            a.shape == b.shape and bool(np.array_equal(a, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _truths(reference: Any, ids: List[str]) -> Dict[Hashable, Any]:
    return {key: value for unit in ids for key, value in _items(unit, reference.read(unit))}


def _label(key: Hashable) -> str:
    return "question {}".format(key[1]) if isinstance(key, tuple) else str(key)


def holds_test_labels(reference: str, dev_reference: str) -> Optional[str]:
    """Why dev_reference holds test labels (the reason, for the refusal), or None. Refused
    (reference.open_reference) if either reference is broken."""
    if same_folder(reference, dev_reference):
        return "it is the test reference ({}) itself".format(shown(reference))
    _, test = open_reference(reference)
    _, dev = open_reference(dev_reference)
    shared = sorted(set(test.ids) & set(dev.ids))
    if not shared:
        return None
    # Only the units both hold are read; a unit read in one is compared item by item.
    test_items, dev_items = _truths(test, shared), _truths(dev, shared)
    same = sorted((k for k in test_items.keys() & dev_items.keys()
                   if _equal(test_items[k], dev_items[k])), key=str)
    if not same:
        return None
    total, noun = dev.size()
    whole = "all {:,}".format(total) if len(same) == total else \
        "{:,} of its {:,}".format(len(same), total)
    return "{} {} ({}{}) {} the same id and the same labels as in the test reference {}".format(
        whole, noun, ", ".join(_label(k) for k in same[:SHOWN]),
        ", ..." if len(same) > SHOWN else "", "has" if len(same) == 1 else "have",
        shown(reference))
