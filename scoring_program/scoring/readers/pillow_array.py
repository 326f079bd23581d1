"""Decode an opened Pillow image into a numpy array with as few copies as Pillow allows.

np.asarray(img) goes through Image.tobytes(), which copies the decoded pixels into 64 KB chunks
and joins them: two extra passes over every image, about a sixth of decoding a 512 x 512 label
PNG and more for a 16-bit one. For 8-bit grayscale (label maps) and 16-bit grayscale (instance
maps) we let the decoder write straight into the array instead: Image.frombuffer over a numpy
array gives an image whose pixel memory IS the array, and ImageFile.load() decodes into an image
it finds already allocated with the right mode and size (Pillow 6.1 to 13). Each step is
verified, and any doubt takes the ordinary path, so the result is always what np.asarray(img)
gives (same values, same dtype):
- only an image not loaded yet is given the array (a loaded one already holds its pixels);
- the image made over the array must show the array's own first and last pixels (Pillow copies
  instead of sharing for some modes and versions: Pillow 6.1 opens 16-bit PNGs as mode 'I',
  which frombuffer copies);
- after load(), the image must still be that one (Pillow may allocate its own).
"""
import re
from typing import Optional

import numpy as np
from PIL import Image

# Modes decoded in place, with the dtype np.asarray gives them (Pillow's array interface).
DIRECT_DTYPES = {"L": np.dtype("u1"), "I;16": np.dtype("<u2"), "I;16L": np.dtype("<u2"),
                 "I;16B": np.dtype(">u2")}


def _image_over(arr: np.ndarray, mode: str) -> Optional["Image.Image"]:
    """An image of `mode` whose pixel memory is arr, or None if Pillow would not share it."""
    height, width = arr.shape
    try:
        image = Image.frombuffer(mode, (width, height), arr, "raw", mode, 0, 1)
    except (ValueError, TypeError):
        return None
    # Shared memory: a change of the array's first and last samples shows in the image.
    for value in (1, 2):
        arr[0, 0] = arr[-1, -1] = value
        if image.getpixel((0, 0)) != value or image.getpixel((width - 1, height - 1)) != value:
            return None
    return image


def _not_loaded(img: "Image.Image") -> bool:
    """No pixel memory yet (an opened file before load()): `_im` in Pillow >= 10, whose `im`
    property may not be read before, `im` before that."""
    return img.__dict__.get("_im") is None and img.__dict__.get("im") is None


def load_array(img: "Image.Image") -> np.ndarray:
    """img.load(), then its pixels as an array (equal to np.asarray(img) after load)."""
    dtype = DIRECT_DTYPES.get(img.mode)
    if dtype is not None and img.size[0] > 0 and img.size[1] > 0 and _not_loaded(img):
        width, height = img.size
        arr = np.empty((height, width), dtype=dtype)
        target = _image_over(arr, img.mode)
        if target is not None:
            img.im = target.im
            img.load()
            if img.im is target.im:
                return arr
    img.load()
    return np.asarray(img)


# Pillow's messages may name a Python object ("<_io.BytesIO object at 0x7f...>"), which changes
# from run to run: messages must not.
_OBJECT_REPR = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>")


def pillow_says(exc: Exception) -> str:
    text = " ".join(_OBJECT_REPR.sub("", str(exc)).split())
    return text or type(exc).__name__
