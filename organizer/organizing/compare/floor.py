"""Whether the pair test can mark any pair at all: approximate randomization over n units gives
no p-value below 2 / 2^n (no unit swapped, or all), and Holm's first step asks for
0.05 / pairs. With too few units no pair can be marked, whatever the scores: the page and the
console say so where they give the number of marked pairs."""
from typing import Any, Dict


def floor_sentence(doc: Dict[str, Any]) -> str:
    """The sentence (plain text) when no pair can be marked, else ""."""
    models = len(doc["models"])
    pairs = doc["family"]["tested"] if "family" in doc else models * (models - 1) // 2
    units = doc.get("units") or 0
    if not pairs or units >= 64 or 2.0 / 2 ** units <= 0.05 / pairs:
        return ""
    return ("With {:,} resampled {} no pair can reach a p-value below {:.2g} (every unit "
            "swapped or none), above Holm's first threshold 0.05 / {} = {:.2g}: no pair can be "
            "marked. Compare fewer submissions, or read the rank intervals.".format(
                units, doc.get("noun", "units"), 2.0 / 2 ** units, pairs, 0.05 / pairs))
