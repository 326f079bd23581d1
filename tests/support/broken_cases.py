"""Broken submissions, one builder per participant mistake, shared by the scorer's and the
starting kit's tests so both tools are held to the same cases.

Each builder(res_dir, ids, size, classes=9) writes a submission for reference images `ids` of
`size` (height, width) into res_dir, with one mistake. Its valid images hold class ids 0 to
classes - 1; every case's wrong value is 9 or more, so a task with fewer classes reuses them.
CASES maps a name to (builder, the file the message must name, a phrase the message must
contain).
"""
import functools
import io
import os
import struct
import zlib

import numpy as np
from PIL import Image


def good(res_dir, ids, size, skip=(), classes=9):
    os.makedirs(res_dir, exist_ok=True)
    rng = np.random.RandomState(len(ids))
    for i in ids:
        if i not in skip:
            Image.fromarray(rng.randint(0, classes, size=size).astype(np.uint8), "L").save(
                os.path.join(res_dir, i + ".png"))


def _replace(res_dir, ids, size, writer, classes=9):
    good(res_dir, ids, size, skip=ids[:1], classes=classes)
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


def _missing(res_dir, ids, size, classes=9):
    good(res_dir, ids, size, skip=ids[:1], classes=classes)


def _duplicate(res_dir, ids, size, classes=9):
    good(res_dir, ids, size, classes=classes)
    Image.new("L", (size[1], size[0])).save(os.path.join(res_dir, ids[0] + ".PNG"))


def _two_folders(res_dir, ids, size, classes=9):
    good(os.path.join(res_dir, "run1"), ids, size, classes=classes)
    good(os.path.join(res_dir, "run2"), ids, size, classes=classes)


def _replacing(writer):
    return lambda res_dir, ids, size, classes=9: _replace(res_dir, ids, size, writer, classes)


def _wrong(dh, dw):
    return _replacing(lambda path, size: Image.new("L", (size[1] + dw, size[0] + dh)).save(path))


def png_bytes(width, height, rows, bit_depth=8, color_type=0, before=b"", extra=b""):
    """A PNG written by hand: `before` goes ahead of the IHDR, `extra` between IHDR and IDAT."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0))
    return (b"\x89PNG\r\n\x1a\n" + before + ihdr + extra + chunk(b"IDAT", zlib.compress(rows)) +
            chunk(b"IEND", b""))


def png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


@functools.lru_cache(maxsize=16)
def _second_ihdr_bytes(width, height, color_type, bit_depth, size):
    """The file _second_ihdr writes (made once per process: compressing the 81 MB of a
    9000 x 9000 image takes half a second, and several tests write it)."""
    h, w = size
    first = png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
    ww, hh = width or w, height or h
    channels = 3 if color_type == 2 else 1
    rows = b"".join(b"\0" + bytes((ww * channels * bit_depth + 7) // 8) for _ in range(hh))
    data = png_bytes(ww, hh, rows, bit_depth, color_type)
    return data[:8] + first + data[8:]


def _second_ihdr(width, height, color_type=0, bit_depth=8):
    """First IHDR says the expected size and 8-bit grayscale; a second one, which Pillow obeys,
    says width x height of another colour type: the data decodes to that."""
    def write(path, size):
        with open(path, "wb") as f:
            f.write(_second_ihdr_bytes(width, height, color_type, bit_depth, tuple(size)))
    return write


def _padded(path, size):
    """A valid prediction followed, before IEND, by private chunks: far above the size cap."""
    h, w = size
    rows = b"".join(b"\0" + bytes(w) for _ in range(h))
    pad = png_chunk(b"prVt", bytes(1 << 20)) * (3 + 4 * h * w // (1 << 20))
    with open(path, "wb") as f:
        f.write(png_bytes(w, h, rows, extra=pad))


def pack_rows(samples, bit_depth):
    """PNG scanlines (filter byte 0) of a 2-D array of samples at a bit depth below 8."""
    per = 8 // bit_depth
    out = []
    for row in samples:
        row = list(row) + [0] * (-len(row) % per)
        packed = bytearray()
        for k in range(0, len(row), per):
            byte = 0
            for v in row[k:k + per]:
                byte = (byte << bit_depth) | int(v)
            packed.append(byte)
        out.append(b"\0" + bytes(packed))
    return b"".join(out)


def _low_depth(bit_depth, value):
    def write(path, size):
        h, w = size
        samples = np.zeros(size, dtype=np.uint8)
        samples[0, 0] = value
        with open(path, "wb") as f:
            f.write(png_bytes(w, h, pack_rows(samples, bit_depth), bit_depth))
    return write


def _fifo(path, size):
    os.mkfifo(path)


def _symlink(res_dir, ids, size, classes=9):
    """<id0>.png is a link to another image: it must not be followed."""
    good(res_dir, ids, size, skip=ids[:1], classes=classes)
    os.symlink(os.path.join(res_dir, ids[1] + ".png"), os.path.join(res_dir, ids[0] + ".png"))


def _symlink_loop(res_dir, ids, size, classes=9):
    good(res_dir, ids, size, skip=ids[:1], classes=classes)
    os.symlink(ids[0] + ".png", os.path.join(res_dir, ids[0] + ".png"))


def _bad_depth(path, size):
    h, w = size
    with open(path, "wb") as f:
        f.write(png_bytes(w, h, b"\0" * h, 16, 3))   # 16-bit palette does not exist


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
    def build(res_dir, ids, size, classes=9):
        _replace(res_dir, ids, size, _img(mode, value, dtype), classes)
    return build


CASES["value_9"] = (_values("L", 9), "{0}.png", "values 9")
CASES["value_255"] = (_values("L", 255), "{0}.png", "values 255")
CASES["palette_index_9"] = (_values("P", 9), "{0}.png", "values 9")
CASES["16bit_value_300"] = (_values("I;16", 300, np.uint16), "{0}.png", "values 300")
CASES["second_ihdr_9000"] = (_replacing(_second_ihdr(9000, 9000)), "{0}.png", "9000 x 9000")
CASES["second_ihdr_rgb"] = (_replacing(_second_ihdr(None, None, 2)), "{0}.png", "mode RGB")
CASES["second_ihdr_4_bit"] = (_replacing(_second_ihdr(None, None, 0, 4)), "{0}.png", "L;4")
CASES["padded_above_cap"] = (_replacing(_padded), "{0}.png", "1 MiB + 4 bytes per pixel")
CASES["gray4_value_9"] = (_replacing(_low_depth(4, 9)), "{0}.png", "values 9")
CASES["gray4_value_15"] = (_replacing(_low_depth(4, 15)), "{0}.png", "values 15")
CASES["fifo"] = (_replacing(_fifo), "{0}.png", "FIFO")
CASES["symlink"] = (_symlink, "{0}.png", "symbolic link")
CASES["symlink_loop"] = (_symlink_loop, "{0}.png", "symbolic link")
CASES["palette_16_bit"] = (_replacing(_bad_depth), "{0}.png", "header is invalid")


# case -> the problem kind (problems.Kind code) the case must be reported as: a check that fails
# every case for the wrong reason ("bad values" for a missing file) is caught by this.
KINDS = {
    "missing": "missing", "empty": "not_png", "truncated": "not_png", "jpeg_renamed": "not_png",
    "text_renamed": "not_png", "folder_named_png": "not_png", "wrong_width": "wrong_size",
    "wrong_height": "wrong_size", "rgb": "not_single_channel", "rgba": "not_single_channel",
    "gray_alpha": "not_single_channel", "bomb": "wrong_size", "duplicate": "duplicate",
    "two_folders": "ambiguous_root", "value_9": "bad_values", "value_255": "bad_values",
    "palette_index_9": "bad_values", "16bit_value_300": "bad_values",
    "second_ihdr_9000": "not_png", "second_ihdr_rgb": "not_png", "second_ihdr_4_bit": "not_png",
    "padded_above_cap": "too_large", "gray4_value_9": "bad_values", "gray4_value_15": "bad_values",
    "fifo": "not_regular", "symlink": "not_regular", "symlink_loop": "not_regular",
    "palette_16_bit": "not_png",
}
assert sorted(KINDS) == sorted(CASES)
