"""Standard competition ranking (1-2-2-4), the one rule by which compare.py, its challengeR
analysis and generalist.py rank: an entry's rank is 1 + the number of entries strictly better.

Values are compared exactly, never within a tolerance (Decimal, int or float; equal numbers hash
equally, so Decimal('0.5') and Decimal('0.50') are one value). None (an undefined score) is worse
than every number, whichever direction is better, and ties with the other Nones.
"""
import collections
from typing import Any, List, Sequence


def competition_ranks(values: Sequence[Any], higher_is_better: bool = True) -> List[int]:
    """Per value (in the given order) its rank: 1 + the number of values strictly better."""
    counts = collections.Counter(v for v in values if v is not None)
    rank_of = {}
    better = 0
    for v in sorted(counts, reverse=higher_is_better):     # best first
        rank_of[v] = 1 + better
        better += counts[v]
    last = 1 + better  # below every number
    return [last if v is None else rank_of[v] for v in values]
