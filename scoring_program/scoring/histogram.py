"""Exact histograms of small non-negative integer keys, as fast as the platform allows.

np.bincount casts its input to intp and costs about 1 ns per element; Pillow's histogram of an
8-bit image is a C loop over bytes, 3-5x faster. For keys that fit a byte (the common case for
the packed reference) we take Pillow's; otherwise numpy's. Both are exact integer counts.
"""
import numpy as np
from PIL import Image


def histogram(key: np.ndarray, length: int) -> np.ndarray:
    """Counts of 0..length-1 in key (every value < length), as int64."""
    if key.dtype == np.uint8 and length <= 256 and key.ndim == 2 and key.flags.c_contiguous:
        h, w = key.shape
        img = Image.frombuffer("L", (w, h), key, "raw", "L", 0, 1)  # shares key's memory
        return np.array(img.histogram()[:length], dtype=np.int64)
    return np.bincount(key.ravel(), minlength=length)
