"""Per-pixel slots of a few distinct values: a multiplicative hash chosen to be one-to-one on
the values an image holds, so that one joint histogram of (reference slot, predicted slot)
gives every intersection without mapping each pixel to a dense index first (a gather per pixel
costs as much as decoding the image under numpy 1.16; the hash is two arithmetic passes).

slot(v) = ((v * multiplier) mod 2^32) >> (32 - bits), one-to-one on the values given (checked);
positions[slot] = the value's position in the sorted values, -1 for a slot no value takes.
"""
from typing import NamedTuple, Sequence

import numpy as np

# Odd 32-bit multipliers (Knuth's golden-ratio one first), tried in turn for each table size.
MULTIPLIERS = (2654435761, 2246822519, 3266489917, 668265263, 374761393, 2869860233,
               1597334677, 3812015801, 2028178513, 1220703125)
MAX_BITS = 20


class Slots(NamedTuple):
    multiplier: int
    bits: int
    positions: np.ndarray   # intp, 2^bits entries


def of_values(values: Sequence[int]) -> Slots:
    """A one-to-one slot hash for these distinct values (each < 2^32); ValueError if none
    fits MAX_BITS (never for the few thousand values an image may hold)."""
    v = np.asarray(values, dtype=np.uint64)
    n = len(v)
    bits = max(1, int(n - 1).bit_length() + 1)
    while bits <= MAX_BITS:
        for m in MULTIPLIERS:
            s = ((v * np.uint64(m)) & np.uint64(0xFFFFFFFF)) >> np.uint64(32 - bits)
            if len(np.unique(s)) == n:
                positions = np.full(1 << bits, -1, dtype=np.intp)
                positions[s.astype(np.intp)] = np.arange(n)
                return Slots(m, bits, positions)
        bits += 1
    raise ValueError("no one-to-one slot hash for {} values".format(n))


def of_pixels(pixels: np.ndarray, slots: Slots, fresh: bool = False) -> np.ndarray:
    """Each pixel's slot (uint32), pixels an unsigned array of the values (uint32 or narrower);
    fresh: pixels is a temporary uint32 array of the caller's, overwritten."""
    out = pixels.astype(np.uint32, copy=not fresh)
    out *= np.uint32(slots.multiplier)
    out >>= np.uint32(32 - slots.bits)
    return out
