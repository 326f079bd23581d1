"""PNG label predictions, shared by the image tasks: one single-channel PNG of label ids per
image, named <image id>.png. Reading checks it on the way; the checks need no ground truth.

The order matters: everything that can be refused from the header (not a PNG, wrong size, colour
image) is refused before a single pixel is decoded, so a decompression bomb costs nothing.
"""
import io
from typing import Optional, Sequence, Tuple

import numpy as np
from PIL import Image

from . import png, submission
from .problems import BAD_VALUES, NOT_PNG, NOT_SINGLE_CHANNEL, WRONG_SIZE
from .task_api import PredictionProblem, Submission, SubmissionFormat

# Pillow modes that hold one value per pixel (16-bit grayscale is 'I;16' or 'I' by version).
SINGLE_CHANNEL_MODES = ("1", "L", "P", "I", "I;16", "I;16B", "I;16L")


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
        raise PredictionProblem(WRONG_SIZE, "it is {} x {} (width x height), expected {} x {}".format(
            header.width, header.height, expected[1], expected[0]))
    return header


def decode(data: bytes) -> np.ndarray:
    """Decode PNG bytes already checked by check_header into a 2-D integer array."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.format != "PNG":
                raise PredictionProblem(NOT_PNG, "Pillow does not read it as a PNG")
            if img.mode not in SINGLE_CHANNEL_MODES:
                raise PredictionProblem(NOT_SINGLE_CHANNEL, "its mode is {}".format(img.mode))
            img.load()
            arr = np.asarray(img)
    except PredictionProblem:
        raise
    except Exception as exc:  # Pillow raises OSError, SyntaxError, ValueError, zlib.error...
        raise PredictionProblem(NOT_PNG, "the PNG data is truncated or corrupt ({})".format(
            str(exc).strip() or type(exc).__name__)) from None
    if arr.ndim != 2:
        raise PredictionProblem(NOT_SINGLE_CHANNEL, "it decodes to shape {}".format(arr.shape))
    return arr


def check_values(arr: np.ndarray, max_id: int) -> np.ndarray:
    """Return arr as uint8 if every value is a class id in 0..max_id, else raise."""
    if arr.dtype == np.bool_:
        return arr.view(np.uint8)
    if arr.size == 0 or (int(arr.min()) >= 0 and int(arr.max()) <= max_id):
        return arr if arr.dtype == np.uint8 or max_id > 255 else arr.astype(np.uint8)
    bad = arr[(arr < 0) | (arr > max_id)]
    values = np.unique(bad)
    shown = ", ".join(str(int(v)) for v in values[:8]) + (", ..." if values.size > 8 else "")
    raise PredictionProblem(BAD_VALUES, "{} pixels hold values {}".format(bad.size, shown))


def read_prediction(path: str, expected: Optional[Tuple[int, int]], max_id: int) -> np.ndarray:
    """All checks, then the label array (uint8, shape expected). The file is opened once; the
    rest of it is read only if its header passed (a bomb's body is never even read)."""
    try:
        with open(path, "rb") as f:
            head = f.read(33)
            check_header(head, expected)
            data = head + f.read()
    except IsADirectoryError:
        raise PredictionProblem(NOT_PNG, "it is a folder, not a file") from None
    except OSError as exc:
        raise PredictionProblem(NOT_PNG, "it cannot be read ({})".format(
            exc.strerror or exc)) from None
    return check_values(decode(data), max_id)


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
        }  # type: Dict[str, str]

    def discover(self, res_dir: str, expected_ids) -> Submission:
        return submission.discover(res_dir, expected_ids, ".png")

    def read(self, path: str, expectation: Optional[Tuple[int, int]]) -> np.ndarray:
        arr = read_prediction(path, expectation, self.max_id)
        if self.allowed is not None:
            check_allowed(arr, self.allowed)
        return arr


def check_allowed(arr: np.ndarray, allowed: Sequence[int]) -> None:
    """Raise unless every value (already within 0..max) is one of the allowed ids."""
    ok = np.zeros(int(max(allowed)) + 2 if allowed else 1, dtype=bool)
    ok[list(allowed)] = True
    hit = ok[np.minimum(arr, len(ok) - 1)]
    if hit.all():
        return
    bad = arr[~hit]
    values = np.unique(bad)
    shown = ", ".join(str(int(v)) for v in values[:8]) + (", ..." if values.size > 8 else "")
    raise PredictionProblem(BAD_VALUES, "{} pixels hold values {}".format(bad.size, shown))
