"""Decode an opened Pillow image into a numpy array with as few copies as Pillow allows.

np.asarray(img) goes through Image.tobytes(), which copies the decoded pixels into 64 KB chunks
and joins them: two extra passes over every image, about a sixth of decoding a 512 x 512 label
PNG and more for a 16-bit one. For 8-bit grayscale (label maps) and 16-bit grayscale (instance
maps) we let the decoder write straight into the array instead: Image.frombuffer over a numpy
array gives an image whose pixel memory IS the array, and ImageFile.load() decodes into an image
it finds already allocated with the right mode and size (Pillow 6.1 to 13). Each step is
verified, and any doubt takes the ordinary path, so the result always holds the values
np.asarray(img) gives, with its dtype (but see 16-bit grayscale PNGs below):
- only an image not loaded yet is given the array (a loaded one already holds its pixels);
- the image made over the array must show the array's own first and last pixels (Pillow copies
  instead of sharing for some modes and versions: mode 'I', for one);
- after load(), the image must still be that one (Pillow may allocate its own).

16-bit grayscale PNGs (instance maps) come out as native uint16 under every Pillow. Older Pillow
(6.1 to 9 at least; the worker's image has 6.1) opens them as mode 'I', 32-bit, and widens every
sample while decoding: decoded as the file stores it (mode 'I;16B', no conversion), then turned
to native byte order, an instance map takes about half the time (bench/decode.py and
bench/results-decode.md measure both paths). The mode is switched only for a PNG whose one tile is
16-bit big-endian grayscale ('I;16B', the only raw mode PNG has for it), before anything is
decoded; the values are the same samples (tests/core/test_pillow_array.py, under the oldest
versions in CI).
"""
from typing import Optional

import numpy as np
from PIL import Image

from .decode_errors import pillow_call

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
    # Shared memory: a change of the array's first and last samples shows in the image (a
    # pixel of several bands, as RGBX over uint32 words, shows its bytes in memory order).
    bands = len(image.getbands())
    for value in (1, 2):
        arr[0, 0] = arr[-1, -1] = value
        shown = value if bands == 1 else tuple(arr[:1, :1].tobytes())
        if image.getpixel((0, 0)) != shown or image.getpixel((width - 1, height - 1)) != shown:
            return None
    return image


def _not_loaded(img: "Image.Image") -> bool:
    """No pixel memory yet (an opened file before load()): `_im` in Pillow >= 10, whose `im`
    property may not be read before, `im` before that."""
    return img.__dict__.get("_im") is None and img.__dict__.get("im") is None


def _png_16bit_gray_as_i(img: "Image.Image") -> bool:
    """A 16-bit grayscale PNG that Pillow opened as mode 'I' (32-bit), not decoded yet."""
    tiles = list(getattr(img, "tile", None) or ())  # (codec, box, offset, rawmode) each
    first = tuple(tiles[0]) if len(tiles) == 1 else ()
    rawmode = first[3] if len(first) > 3 else None
    return (img.mode == "I" and getattr(img, "format", None) == "PNG" and rawmode == "I;16B"
            and _not_loaded(img))


def _set_mode(img: "Image.Image", mode: str) -> None:
    """The mode of an opened image: `_mode` behind a read-only property in Pillow >= 10,
    a plain attribute before."""
    if "_mode" in img.__dict__:
        img._mode = mode
    else:
        img.mode = mode


def _direct(img: "Image.Image", mode: str, dtype: np.dtype) -> Optional[np.ndarray]:
    """img decoded in `mode` straight into a new array, or None (nothing decoded) when Pillow
    would not share the array's memory."""
    width, height = img.size
    arr = np.empty((height, width), dtype=dtype)
    target = _image_over(arr, mode)
    if target is None:
        return None
    if img.mode != mode:
        _set_mode(img, mode)
    img.im = target.im
    with pillow_call():
        img.load()
    if img.im is target.im:
        return arr
    with pillow_call():
        return np.asarray(img)


def load_array(img: "Image.Image") -> np.ndarray:
    """img.load(), then its pixels as an array: the values of np.asarray(img) after load, with
    its dtype, except that a 16-bit grayscale PNG gives native uint16 under every Pillow.
    Undecodable if Pillow cannot decode the data."""
    sixteen = _png_16bit_gray_as_i(img)
    mode = "I;16B" if sixteen else img.mode
    dtype = DIRECT_DTYPES.get(mode)
    arr = None
    if dtype is not None and img.size[0] > 0 and img.size[1] > 0 and _not_loaded(img):
        arr = _direct(img, mode, dtype)
    if arr is None:
        with pillow_call():
            img.load()
            arr = np.asarray(img)
    return arr.astype(np.uint16) if sixteen else arr
