"""Exact histograms of small non-negative integer keys, as fast as the platform allows.

np.bincount casts its input to intp and costs about 1 ns per element; Pillow's histogram of an
8-bit image is a C loop over bytes. On label images, though, most pixels share one key, and a
histogram loop then waits on the previous increment of that same counter at every pixel. Viewing
the bytes as an RGBA image makes Pillow keep four counters (one per band) for interleaved pixels:
four independent chains, about twice as fast again. The four band histograms sum to the exact
histogram.
"""
import numpy as np
from PIL import Image


def histogram(key: np.ndarray, length: int) -> np.ndarray:
    """Counts of 0..length-1 in key (every value < length), as int64."""
    if key.dtype != np.uint8 or length > 256 or not key.flags.c_contiguous:
        return np.bincount(key.ravel(), minlength=length)
    flat = key.reshape(-1)
    main = flat.size - flat.size % 4
    counts = np.zeros(256, dtype=np.int64)
    if main:
        img = Image.frombuffer("RGBA", (main // 4, 1), flat[:main], "raw", "RGBA", 0, 1)
        counts += np.array(img.histogram(), dtype=np.int64).reshape(4, 256).sum(axis=0)
    if main < flat.size:
        counts += np.bincount(flat[main:], minlength=256)
    return counts[:length]
