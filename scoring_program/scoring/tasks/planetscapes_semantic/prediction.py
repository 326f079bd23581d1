"""Read one prediction: a single-channel PNG of label ids, the reference image's size.

The header checks (PNG, size, channels) and the decode are the shared ones of
scoring/predictions.py; what is a valid value is this task's: an id of the label table. An id in
the table but ignored in evaluation is valid (it scores as a false negative, as in the anchor).
"""
from typing import Tuple

import numpy as np

from ...predictions import PredictionProblem, check_header, decode
from ...problems import NOT_PNG, Kind

NOT_A_LABEL = Kind(
    "ps_bad_values", "predictions with pixel values that are not label ids",
    "every pixel must hold the id of a label of the challenge's label table (the `id` column, "
    "not trainId or a colour).")


def check_ids(arr: np.ndarray, allowed: np.ndarray, contiguous: bool, size: int) -> np.ndarray:
    """arr as uint8 if every value is an allowed id, else PredictionProblem naming the values."""
    if arr.dtype == np.bool_:
        arr = arr.view(np.uint8)
    top = int(arr.max()) if arr.size else 0
    low = int(arr.min()) if arr.size else 0
    if low >= 0 and top < size:
        small = arr if arr.dtype == np.uint8 else arr.astype(np.uint8)
        if contiguous or allowed[small].all():
            return small
    flat = arr.ravel().astype(np.int64)
    ok = np.zeros(flat.shape, dtype=bool)
    inside = (flat >= 0) & (flat < allowed.size)
    ok[inside] = allowed[flat[inside]]
    bad = np.unique(flat[~ok])
    shown = ", ".join(str(int(v)) for v in bad[:8]) + (", ..." if bad.size > 8 else "")
    raise PredictionProblem(NOT_A_LABEL, "{} pixels hold values {}, which are not label ids".format(
        int((~ok).sum()), shown))


def read_prediction(path: str, expected: Tuple[int, int], allowed: np.ndarray, contiguous: bool,
                    size: int) -> np.ndarray:
    """All checks, then the label ids (uint8, shape expected). The body is read only if the
    header passed, so a decompression bomb costs nothing."""
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
    return check_ids(decode(data), allowed, contiguous, size)
