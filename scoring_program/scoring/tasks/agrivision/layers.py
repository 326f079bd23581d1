"""Read single-channel reference layers, skipping the decode of uniform ones already seen.

Most layers of most reference images are uniform (an absent class is all 0, a field that fills
the tile has an all-255 boundary and mask), and files written by one encoder for the same size
and value are byte-identical. So each process remembers, for small images that turned out
uniform, the exact header and compressed data they had; a later file with the same bytes is the
same image and is not decoded again. Exact by construction (inflate is deterministic), bounded
in memory, and it never changes a result: at worst every layer is decoded as before. The memo is
a LayerReader's (one per reference, and so one per worker process), never module state.
"""
import io
import struct
from typing import Dict, NamedTuple, Optional, Tuple

import numpy as np
from PIL import Image

from ...formats.label_png import png
from ...formats.label_png.decode_errors import pillow_call
from ...formats.label_png.pillow_array import load_array

# Only layers whose compressed data is this small are candidates (a uniform 512 x 512 layer
# compresses to well under 1 KB); checking big ones for uniformity would cost more than it saves.
CANDIDATE_BYTES = 4096
MAX_REMEMBERED = 256

class Layer(NamedTuple):
    shape: Tuple[int, int]
    value: Optional[int]        # the value of every pixel, if uniform
    array: Optional[np.ndarray]  # the pixels otherwise


def _data_key(data: bytes) -> Optional[bytes]:
    """IHDR body + all IDAT bodies, if small enough to be a candidate; else None."""
    if not data.startswith(png.SIGNATURE):
        return None
    parts, size = [], 0
    for kind, body, _ in png.chunks(data):
        if kind in (b"IHDR", b"IDAT"):
            size += len(body)
            if size > CANDIDATE_BYTES:
                return None
            parts.append(body)
    return b"".join(parts) if parts and len(parts[0]) == 13 else None


class WrongMode(Exception):
    """A layer's image mode is none of those allowed (the file's fault, said in str())."""

    def __reduce__(self):
        return (type(self), self.args)


class LayerReader:
    """Reads layers, remembering the bytes of small uniform ones."""

    def __init__(self) -> None:
        self.uniform: Dict[bytes, int] = {}

    def read(self, data: bytes, modes: Tuple[str, ...]) -> Layer:
        """Decode one layer's PNG bytes: Undecodable if Pillow cannot, WrongMode if its mode is
        not one of modes."""
        key = _data_key(data)
        if key is not None:
            value = self.uniform.get(key)
            if value is not None:
                width, height = struct.unpack(">II", key[:8])
                return Layer((height, width), value, None)
        with pillow_call():
            img = Image.open(io.BytesIO(data))
        with img:
            if img.mode not in modes:
                raise WrongMode("its mode is " + img.mode)
            arr = load_array(img)
        if key is not None:
            lo, hi = int(arr.min()), int(arr.max())
            if lo == hi:
                if len(self.uniform) < MAX_REMEMBERED:
                    self.uniform[key] = lo
                return Layer(arr.shape, lo, None)
        return Layer(arr.shape, None, arr)
