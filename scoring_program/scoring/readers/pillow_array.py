"""Decode an opened Pillow image into a numpy array with as few copies as Pillow allows.

np.asarray(img) goes through Image.tobytes(), which copies the decoded pixels into 64 KB chunks
and joins them: two extra passes over every image, about a sixth of decoding a 512 x 512 label
PNG. For 8-bit grayscale (label maps) we let the decoder write straight into the array instead:
Image.frombuffer over a numpy array gives an image whose pixel memory IS the array, and
ImageFile.load() decodes into an image it finds already allocated with the right mode and size
(Pillow 6.1 to 13). If Pillow ever replaces that image while loading, we notice and take the
ordinary path, so the result is always what np.asarray(img) gives.
"""
import re

import numpy as np
from PIL import Image


def load_array(img: "Image.Image") -> np.ndarray:
    """img.load(), then its pixels as an array (equal to np.asarray(img) after load)."""
    if img.mode == "L" and img.size[0] > 0 and img.size[1] > 0:
        width, height = img.size
        arr = np.empty((height, width), dtype=np.uint8)
        target = Image.frombuffer("L", (width, height), arr, "raw", "L", 0, 1)
        img.im = target.im
        img.load()
        if img.im is target.im:
            return arr
    else:
        img.load()
    return np.asarray(img)


# Pillow's messages may name a Python object ("<_io.BytesIO object at 0x7f...>"), which changes
# from run to run: messages must not.
_OBJECT_REPR = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>")


def pillow_says(exc: Exception) -> str:
    text = " ".join(_OBJECT_REPR.sub("", str(exc)).split())
    return text or type(exc).__name__
