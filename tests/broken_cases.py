"""Broken submissions, one builder per participant mistake, shared by the scorer's and the
starting kit's tests so both tools are held to the same cases.

Each builder(res_dir, ids, size) writes a submission for reference images `ids` of `size`
(height, width) into res_dir, with one mistake; CASES maps a name to (builder, the file the
message must name, a phrase the message must contain).
"""
import io
import os
import struct
import zlib

import numpy as np
from PIL import Image


def good(res_dir, ids, size, skip=()):
    os.makedirs(res_dir, exist_ok=True)
    rng = np.random.RandomState(len(ids))
    for i in ids:
        if i not in skip:
            Image.fromarray(rng.randint(0, 9, size=size).astype(np.uint8), "L").save(
                os.path.join(res_dir, i + ".png"))


def _replace(res_dir, ids, size, writer):
    good(res_dir, ids, size, skip=ids[:1])
    writer(os.path.join(res_dir, ids[0] + ".png"), size)


def _img(mode, value=0, dtype=np.uint8):
    def write(path, size):
        arr = np.full(size, value, dtype=dtype)
        if mode in ("RGB", "RGBA", "LA"):
            img = Image.new(mode, (size[1], size[0]))
        elif mode == "P":
            img = Image.fromarray(arr, "L").convert("P")
            img.putpalette([v for i in range(256) for v in (i, i, i)])
        elif mode == "I;16":  # Pillow saves I;16 as a 16-bit grayscale PNG
            img = Image.frombytes("I;16", (size[1], size[0]), arr.astype("<u2").tobytes())
        else:
            img = Image.fromarray(arr, mode)
        img.save(path, format="PNG")
    return write


def _bytes(data):
    def write(path, _size):
        with open(path, "wb") as f:
            f.write(data)
    return write


def _truncated(path, size):
    buf = io.BytesIO()
    rng = np.random.RandomState(0)
    Image.fromarray(rng.randint(0, 9, size=size).astype(np.uint8), "L").save(buf, "PNG")
    with open(path, "wb") as f:
        f.write(buf.getvalue()[: len(buf.getvalue()) // 2])


def _jpeg(path, size):
    Image.new("L", (size[1], size[0])).save(path, format="JPEG")


def _folder(path, size):
    os.makedirs(path)


def bomb_png(width, height):
    """A tiny valid-looking PNG whose header declares width x height (8-bit grayscale)."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _bomb(path, size):
    with open(path, "wb") as f:
        f.write(bomb_png(60000, 60000))


def _missing(res_dir, ids, size):
    good(res_dir, ids, size, skip=ids[:1])


def _duplicate(res_dir, ids, size):
    good(res_dir, ids, size)
    Image.new("L", (size[1], size[0])).save(os.path.join(res_dir, ids[0] + ".PNG"))


def _two_folders(res_dir, ids, size):
    good(os.path.join(res_dir, "run1"), ids, size)
    good(os.path.join(res_dir, "run2"), ids, size)


def _replacing(writer):
    return lambda res_dir, ids, size: _replace(res_dir, ids, size, writer)


def _wrong(dh, dw):
    return _replacing(lambda path, size: Image.new("L", (size[1] + dw, size[0] + dh)).save(path))


# name -> (builder, file named in the message ("{0}" = first id), phrase in the message)
CASES = {
    "missing": (_missing, "{0}.png", "without a prediction"),
    "empty": (_replacing(_bytes(b"")), "{0}.png", "empty"),
    "truncated": (_replacing(_truncated), "{0}.png", "truncated"),
    "jpeg_renamed": (_replacing(_jpeg), "{0}.png", "JPEG"),
    "text_renamed": (_replacing(_bytes(b"0 1 2 3\n4 5 6 7\n")), "{0}.png", "text file"),
    "folder_named_png": (_replacing(_folder), "{0}.png", "folder"),
    "wrong_width": (_wrong(0, 1), "{0}.png", "expected"),
    "wrong_height": (_wrong(-1, 0), "{0}.png", "expected"),
    "rgb": (_replacing(_img("RGB")), "{0}.png", "RGB"),
    "rgba": (_replacing(_img("RGBA")), "{0}.png", "RGBA"),
    "gray_alpha": (_replacing(_img("LA")), "{0}.png", "grayscale+alpha"),
    "bomb": (_replacing(_bomb), "{0}.png", "60000"),
    "duplicate": (_duplicate, "{0}.PNG", "same prediction"),
    "two_folders": (_two_folders, "run2/", "each could be the submission"),
}


def _values(mode, value, dtype=np.uint8):
    def build(res_dir, ids, size):
        _replace(res_dir, ids, size, _img(mode, value, dtype))
    return build


CASES["value_9"] = (_values("L", 9), "{0}.png", "values 9")
CASES["value_255"] = (_values("L", 255), "{0}.png", "values 255")
CASES["palette_index_9"] = (_values("P", 9), "{0}.png", "values 9")
CASES["16bit_value_300"] = (_values("I;16", 300, np.uint16), "{0}.png", "values 300")
