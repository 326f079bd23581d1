"""PNG label predictions (the label-PNG format), shared by the image tasks: one single-channel PNG
of label ids per image, named <image id>.png. Reading checks it on the way; the checks need no ground truth.

The order matters: everything that can be refused without reading the file (a link, a FIFO, a
device, a file too large to be a label PNG) or from its header (not a PNG, wrong size, colour
image) is refused before a single pixel is decoded, so a decompression bomb costs nothing. The
decoder is then held to the header that was checked: a second IHDR that would make Pillow decode
another size or mode is refused before decoding, and the decoded array must have the checked
shape.

Low bit depths: the class id of a pixel is the sample stored in the file, whatever the bit depth
(1, 2, 4, 8 or 16 bits, grayscale or palette index). Pillow scales 2- and 4-bit grayscale samples
to 0-255 (sample 2 of a 4-bit file reads as 34); we undo that scaling exactly.
"""
import io
import os
from typing import Optional, Sequence, Tuple

import numpy as np
from PIL import Image

from . import png
from ... import regular_file
from ...problems import CANNOT_OPEN
from ...metrics.histogram import histogram
from ...submission import discovery
from .decode_errors import Undecodable, pillow_call
from .pillow_array import load_array
from .kinds import (BAD_VALUES, NOT_PNG, NOT_REGULAR, NOT_SINGLE_CHANNEL, TOO_LARGE, TRANSPOSED,
                    WRONG_SIZE)
from ...task_api import PredictionProblem, Submission, SubmissionFormat

# A prediction file may hold at most this many bytes: 1 MiB + 4 bytes per pixel of the expected
# image. A 16-bit grayscale PNG stored without any compression takes 2 bytes per pixel (plus one
# filter byte per row and a few bytes per chunk), so every honest label PNG fits with room for
# metadata (ICC profile, text); 512 x 512 -> 2 MiB, 2048 x 1024 -> 9 MiB. A file above the cap is
# refused before it is read: padding a PNG with private chunks costs us nothing.
MAX_BYTES_BASE = 1 << 20
MAX_BYTES_PER_PIXEL = 4


def max_prediction_bytes(height: int, width: int) -> int:
    return MAX_BYTES_BASE + MAX_BYTES_PER_PIXEL * height * width



def check_header(head: bytes, expected: Optional[Tuple[int, int]]) -> png.Header:
    """Header checks on a file's first bytes; expected is (height, width) or None if unknown."""
    try:
        header = png.parse_header(head)
    except png.NotPNG as exc:
        raise PredictionProblem(NOT_PNG, str(exc)) from None
    channels = png.describe_channels(header)
    if channels:
        raise PredictionProblem(NOT_SINGLE_CHANNEL, channels)
    if expected is not None and (header.height, header.width) != tuple(expected):
        if (header.width, header.height) == tuple(expected):
            raise PredictionProblem(TRANSPOSED, "it is {} x {} (width x height), the test image "
                                    "{} x {}".format(header.width, header.height, expected[1],
                                                     expected[0]))
        raise PredictionProblem(WRONG_SIZE, "it is {} x {} (width x height), expected {} x {}".format(
            header.width, header.height, expected[1], expected[0]))
    return header


def _describe(header: png.Header) -> str:
    return "{} x {} {}-bit {}".format(header.width, header.height, header.bit_depth,
                                      png.COLOR_NAMES[header.color_type])


def decode(data: bytes, header: Optional[png.Header] = None) -> np.ndarray:
    """Decode PNG bytes already checked by check_header into a 2-D integer array of the stored
    samples. header (the checked one; parsed from data if None) bounds the decode: Pillow must
    agree with it on size and mode before it decodes anything."""
    if header is None:
        header = check_header(data[:33], None)
    try:
        with pillow_call():
            img = Image.open(io.BytesIO(data))
    except Undecodable as exc:
        raise _corrupt(exc) from None
    with img:
        if img.format != "PNG":
            raise PredictionProblem(NOT_PNG, "Pillow does not read it as a PNG")
        tile: Tuple[object, ...] = img.tile[0] if len(img.tile) == 1 else ()
        rawmode = tile[3] if len(tile) > 3 else None
        if img.size != (header.width, header.height) or \
                img.mode not in png.pillow_modes(header) or rawmode != png.pillow_rawmode(header):
            # Pillow takes the last IHDR before the image data; we checked the first.
            raise PredictionProblem(NOT_PNG, "it is not a valid PNG: its first image header "
                                    "says {} but a later one says {} x {} (mode {}, {})".format(
                                        _describe(header), img.size[0], img.size[1], img.mode,
                                        rawmode))
        try:
            arr = load_array(img)
        except Undecodable as exc:
            raise _corrupt(exc) from None
    if arr.shape != (header.height, header.width):
        raise PredictionProblem(NOT_PNG, "it is not a valid PNG: it decodes to shape {} "
                                "instead of the {} its header declares".format(
                                    "x".join(str(n) for n in arr.shape), _describe(header)))
    if header.color_type == png.GRAY and header.bit_depth < 8:
        arr = _stored_samples(arr, header.bit_depth)
    return arr


def _corrupt(exc: Undecodable) -> PredictionProblem:
    return PredictionProblem(NOT_PNG, "the PNG data is truncated or corrupt ({})".format(exc))


def _stored_samples(arr: np.ndarray, bit_depth: int) -> np.ndarray:
    """The samples of a 1-, 2- or 4-bit grayscale PNG as stored, from Pillow's scaled 0-255
    values (mode '1' gives booleans or 0/255, 'L' gives sample * 255 / (2^depth - 1))."""
    if arr.dtype == np.bool_:  # Pillow's bool arrays may hold 0/255 bytes: compare, not view
        return (arr.view(np.uint8) != 0).view(np.uint8)
    scale = 255 // ((1 << bit_depth) - 1)  # 255, 85, 17: exact divisors
    return (arr // scale).astype(np.uint8)


def check_values(arr: np.ndarray, max_id: int) -> np.ndarray:
    """Return arr as uint8 if every value is a class id in 0..max_id, else raise."""
    if arr.dtype == np.bool_:
        return (arr.view(np.uint8) != 0).view(np.uint8)
    # An unsigned array needs no minimum: under numpy 1.16 (the worker image's) each reduction
    # of a 2048 x 1024 uint8 image costs 1 ms (0.03 ms under numpy 2).
    if arr.size == 0 or ((arr.dtype.kind == "u" or int(arr.min()) >= 0) and
                         int(arr.max()) <= max_id):
        return arr if arr.dtype == np.uint8 or max_id > 255 else arr.astype(np.uint8)
    bad = arr[(arr < 0) | (arr > max_id)]
    values = np.unique(bad)
    shown = ", ".join(str(int(v)) for v in values[:8]) + (", ..." if values.size > 8 else "")
    raise PredictionProblem(BAD_VALUES, "{} pixels hold values {}".format(bad.size, shown))


def _open_regular(path: str) -> int:
    """A descriptor on path if it is a regular file (regular_file.py: links are not followed, a
    FIFO is opened without blocking and refused, what is read is what was checked); a
    PredictionProblem naming what it is otherwise."""
    try:
        return regular_file.open_regular(path, follow_links=False)
    except regular_file.Refused as exc:
        kind = {regular_file.NOT_REGULAR: NOT_REGULAR,
                regular_file.UNREADABLE: CANNOT_OPEN}.get(exc.kind, NOT_PNG)
        raise PredictionProblem(kind, exc.detail()) from None


def read_prediction(path: str, expected: Optional[Tuple[int, int]], max_id: int) -> np.ndarray:
    """All checks, then the label array (uint8, shape expected). The file is opened once, only
    if it is a regular file of at most max_prediction_bytes; the rest of it is read only if its
    header passed (a bomb's body is never even read)."""
    fd = _open_regular(path)
    try:
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(33)
            header = check_header(head, expected)
            cap = max_prediction_bytes(header.height, header.width)
            if size > cap:
                raise PredictionProblem(TOO_LARGE, "it is {:,} bytes; the limit for a {} x {} "
                                        "prediction is {:,} bytes (1 MiB + 4 bytes per pixel)".format(
                                            size, header.width, header.height, cap))
            # Exactly the size checked (<= cap), whatever the file does meanwhile: asking read()
            # for the cap itself would allocate cap bytes for every file.
            data = head + f.read(max(0, size - len(head)))
    except OSError as exc:   # the system's refusal (I/O), not the content's: not "re-encode"
        raise PredictionProblem(CANNOT_OPEN, "it cannot be read ({})".format(
            exc.strerror or type(exc).__name__)) from None
    return check_values(decode(data, header), max_id)


class PngLabels(SubmissionFormat):
    """One PNG of label ids per image. Values must lie in 0..max_id and, if `allowed` is given,
    be one of those ids (a table with gaps); the checked array is what the metric state gets."""

    def __init__(self, max_id: int, allowed: Optional[Sequence[int]] = None,
                 allowed_values: str = "") -> None:
        self.max_id = max_id
        self.allowed = None if allowed is None else sorted(set(int(v) for v in allowed))
        if self.allowed == list(range(max_id + 1)):
            self.allowed = None  # every id in range: the range check says it all
        self.words = {
            "files": "PNG files", "file": "PNG", "ext": ".png", "unit": "image",
            "units": "images",
            "allowed_values": allowed_values or "a class id from 0 to {}".format(max_id),
            "zip_hint": ", zipping the PNG files themselves (make_submission.py in the starting "
                        "kit does it)",
        }

    def discover(self, res_dir: str, expected_ids) -> Submission:
        return discovery.discover(res_dir, expected_ids, ".png")

    def read(self, path: str, expectation: Optional[Tuple[int, int]]) -> np.ndarray:
        arr = read_prediction(path, expectation, self.max_id)
        if self.allowed is not None:
            check_allowed(arr, self.allowed)
        return arr


def check_allowed(arr: np.ndarray, allowed: Sequence[int]) -> None:
    """Raise unless every value (already within 0..max) is one of the allowed ids.

    One histogram of the values, then a look-up of the few values present: no per-pixel table
    look-up, and no arithmetic in the array's own dtype (an id of 255 in a uint8 array must not
    overflow, whatever numpy's casting rules)."""
    if arr.size == 0:
        return
    counts = histogram(arr, 256 if arr.dtype == np.uint8 else int(arr.max()) + 1)
    present = np.flatnonzero(counts)
    ok = np.zeros(counts.size, dtype=bool)
    ok[[v for v in allowed if 0 <= v < counts.size]] = True
    values = present[~ok[present]]
    if not values.size:
        return
    shown = ", ".join(str(int(v)) for v in values[:8]) + (", ..." if values.size > 8 else "")
    raise PredictionProblem(BAD_VALUES, "{} pixels hold values {}".format(
        int(counts[values].sum()), shown))
