"""The instance format, as the anchor reads it (cityscapesScripts' evalInstanceLevelSemanticLabeling):
per image `<image id>.txt`, one line per predicted instance `<mask path> <label id> <confidence>`,
the mask a binary PNG of the image's size, its path relative to the .txt file.

Every file is hostile (docs/planetscapes-instance.md): the .txt is read only if it is a regular
file of at most MAX_TXT_BYTES, with at most MAX_PER_IMAGE lines; each mask goes through the
label-PNG checks (link, FIFO, size cap, header before any pixel, decoder held to the header) and
must be grayscale, of the image's size and binary. What the metric keeps of a mask is its
bounding box's crop (booleans), and those crops may cover at most MAX_COVER times the image, so
a worker's memory is bounded whatever the submission.

Where the anchor is stricter or looser than a participant needs, and no score can change: blank
lines are skipped (the anchor stops on them); fields may be separated by any whitespace; a
label id may be written 26 or 26.0 (the anchor reads int(float(x)); 26.5 is refused here, the
anchor would read 26); the same mask twice in one file is refused (the anchor keeps the last line).
"""
import math
import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ... import regular_file
from ...formats.label_png import png
from ...formats.label_png.kinds import NOT_PNG, NOT_REGULAR, TOO_LARGE
from ...formats.label_png.prediction import check_header, decode, max_prediction_bytes
from ...problems import ProblemLog
from ...submission import discovery
from ...task_api import PredictionProblem, Submission, SubmissionFormat
from .problems import (BAD_CONFIDENCE, BAD_LABEL, BAD_LINE, DUPLICATE_LINE, MASK_MISSING,
                       MASK_NOT_BINARY, MASK_PALETTE, MASKS_TOO_LARGE, OUTSIDE, TOO_MANY,
                       TXT_TOO_LARGE)

# Bounds (docs/planetscapes-instance.md). Cityscapes-style methods keep about 100 instances per
# image (Mask R-CNN's default); ten times that per image, and 100 per image on average over the
# test set: a million masks for 19,708 images is refused before one is decoded.
MAX_PER_IMAGE = 1000
MAX_PER_IMAGE_ON_AVERAGE = 100
MAX_TXT_BYTES = 1 << 20
# The masks of one image are kept as their bounding boxes' crops (one byte per pixel) until the
# image is matched: at most this many times the image's pixels (64 MB for 2048 x 1024).
MAX_COVER = 32


class Mask(NamedTuple):
    """One predicted instance: its line's label id and confidence, its pixel count, and its
    mask as the crop of its bounding box (rows y0:y1, columns x0:x1; booleans)."""

    label: int
    confidence: float
    pixels: int
    box: Tuple[int, int, int, int]   # y0, x0, y1, x1
    crop: np.ndarray


def _line_problem(kind, number: int, detail: str) -> PredictionProblem:
    return PredictionProblem(kind, "line {}: {}".format(number, detail))


def parse_lines(text: str, labels: Sequence[int]) -> List[Tuple[int, str, int, float]]:
    """(line number, mask path, label id, confidence) of every non-blank line; the first
    problem raised. labels: the ids a line may give (classes with instances, those ignored in
    evaluation included: the anchor accepts and skips them)."""
    out = []
    seen: Dict[str, int] = {}
    allowed = set(labels)
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3:
            raise _line_problem(BAD_LINE, number, "{} fields, expected 3".format(len(fields)))
        path, label_text, conf_text = fields
        try:
            label_value = float(label_text)
        except ValueError:
            raise _line_problem(BAD_LINE, number, "label id {!r} is not a number".format(
                label_text[:40])) from None
        if not math.isfinite(label_value) or label_value != int(label_value):
            raise _line_problem(BAD_LABEL, number, "label id {!r} is not an integer".format(
                label_text[:40]))
        label = int(label_value)
        if label not in allowed:
            raise _line_problem(BAD_LABEL, number, "label id {}".format(label))
        try:
            confidence = float(conf_text)
        except ValueError:
            raise _line_problem(BAD_LINE, number, "confidence {!r} is not a number".format(
                conf_text[:40])) from None
        if not math.isfinite(confidence):
            raise _line_problem(BAD_CONFIDENCE, number, "confidence {}".format(conf_text[:40]))
        key = os.path.normpath(path)
        if key in seen:
            raise _line_problem(DUPLICATE_LINE, number, "{} (also line {})".format(
                path[:200], seen[key]))
        seen[key] = number
        out.append((number, path, label, confidence))
        if len(out) > MAX_PER_IMAGE:
            raise PredictionProblem(TOO_MANY, "more than {:,} instances".format(MAX_PER_IMAGE))
    return out


def mask_path(txt_path: str, rel: str, root: str, number: int) -> str:
    """The mask's path, refused if it leaves root, the folder holding the .txt files (absolute,
    '..' above it, through a link): what is read is inside the predictions' folder, whichever
    submission the format reads."""
    if os.path.isabs(rel) or "\\" in rel or "\x00" in rel:
        raise _line_problem(OUTSIDE, number, "{} is not a relative path with '/'".format(
            rel[:200]))
    path = os.path.normpath(os.path.join(os.path.dirname(txt_path), rel))
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root or \
            os.path.commonpath([os.path.realpath(os.path.dirname(path)), real_root]) != real_root:
        raise _line_problem(OUTSIDE, number, rel[:200])
    return path


def read_mask(path: str, rel: str, number: int, shape: Optional[Tuple[int, int]]
              ) -> Tuple[int, Tuple[int, int, int, int], np.ndarray]:
    """(pixel count, bounding box, crop) of one binary mask PNG."""
    try:
        fd = regular_file.open_regular(path, follow_links=False)
    except regular_file.Refused as exc:
        if exc.kind == regular_file.UNREADABLE and not os.path.lexists(path):
            raise _line_problem(MASK_MISSING, number, rel[:200]) from None
        kind = NOT_REGULAR if exc.kind == regular_file.NOT_REGULAR else NOT_PNG
        raise _line_problem(kind, number, "{}: {}".format(rel[:200], exc.detail())) from None
    try:
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(33)
            try:
                header = check_header(head, shape)
            except PredictionProblem as exc:
                raise _line_problem(exc.kind, number, "{}: {}".format(rel[:200], exc.detail)) \
                    from None
            if header.color_type == png.PALETTE:
                raise _line_problem(MASK_PALETTE, number, rel[:200])
            cap = max_prediction_bytes(header.height, header.width)
            if size > cap:
                raise _line_problem(TOO_LARGE, number, "{}: {:,} bytes, the limit is {:,}".format(
                    rel[:200], size, cap))
            data = head + f.read(max(0, size - len(head)))
    except OSError as exc:
        raise _line_problem(NOT_PNG, number, "{}: it cannot be read ({})".format(
            rel[:200], exc.strerror or type(exc).__name__)) from None
    try:
        arr = decode(data, header)
    except PredictionProblem as exc:
        raise _line_problem(exc.kind, number, "{}: {}".format(rel[:200], exc.detail)) from None
    return crop_of(arr, rel, number)


def crop_of(arr: np.ndarray, rel: str = "", number: int = 0
            ) -> Tuple[int, Tuple[int, int, int, int], np.ndarray]:
    """(pixels, (y0, x0, y1, x1), boolean crop) of a decoded mask; MASK_NOT_BINARY if it holds
    two different non-zero values. An empty mask: 0 pixels, an empty box."""
    if arr.dtype == np.bool_:
        arr = arr.view(np.uint8)
    rows = np.flatnonzero(arr.any(axis=1))
    if not rows.size:
        return 0, (0, 0, 0, 0), np.zeros((0, 0), dtype=bool)
    y0, y1 = int(rows[0]), int(rows[-1]) + 1
    band = arr[y0:y1]
    cols = np.flatnonzero(band.any(axis=0))
    x0, x1 = int(cols[0]), int(cols[-1]) + 1
    crop = band[:, x0:x1]
    on = crop != 0
    pixels = int(np.count_nonzero(on))
    top = crop.max()
    if int(np.count_nonzero(crop == top)) != pixels:
        values = np.unique(crop[on])
        raise _line_problem(MASK_NOT_BINARY, number, "{}: non-zero values {}{}".format(
            rel[:200], ", ".join(str(int(v)) for v in values[:4]),
            ", ..." if values.size > 4 else ""))
    return pixels, (y0, x0, y1, x1), on


class InstanceFiles(SubmissionFormat):
    """<image id>.txt per image, masks anywhere in the submission (paths relative to the .txt).

    labels: the label ids a line may give (the classes with instances, ignored ones included:
    the anchor accepts and skips those)."""

    def __init__(self, labels: Sequence[int], described: str) -> None:
        self.labels = sorted(labels)
        self.words = {
            "files": "prediction .txt files", "file": "prediction .txt file", "ext": ".txt",
            "unit": "image", "units": "images", "classes": described,
            "max_per_image": "{:,}".format(MAX_PER_IMAGE),
            "max_per_image_on_average": "{:,}".format(MAX_PER_IMAGE_ON_AVERAGE),
            "max_cover": str(MAX_COVER), "max_txt_bytes": "{:,}".format(MAX_TXT_BYTES),
            "zip_hint": ", zipping the .txt files with the masks (make_submission.py in the "
                        "starting kit does it)",
        }

    def discover(self, res_dir: str, expected_ids) -> Submission:
        """The .txt files as discovery finds them; the PNGs around them are masks, not extra
        files. Over the bound on the total of instances, nothing is scored."""
        found = discovery.discover(res_dir, expected_ids, ".txt",
                                   expected_other=lambda name: name.lower().endswith(".png"))
        log = ProblemLog()
        log.merge(found.log)
        files, lines = {}, 0
        for unit, path in found.files.items():
            n = _count_lines(path)
            if n > MAX_PER_IMAGE:
                log.add(TOO_MANY, os.path.relpath(path, res_dir).replace(os.sep, "/"),
                        "{:,} instances, more than {:,}".format(n, MAX_PER_IMAGE))
                continue
            files[unit] = path
            lines += n
        images = len(expected_ids) if expected_ids is not None else len(found.files)
        bound = MAX_PER_IMAGE_ON_AVERAGE * max(images, 1)
        if lines > bound:
            log.add(TOO_MANY, "submission", "{:,} lines in {:,} .txt files, more than {:,} "
                    "({:,} per image on average)".format(lines, len(found.files), bound,
                                                         MAX_PER_IMAGE_ON_AVERAGE))
            files = {}
        return Submission(found.root, files, log)

    def zip_entries(self, found: Submission) -> List[Tuple[str, str]]:
        """The .txt files and the masks they name, under their paths in the submission folder
        (the .txt files' relative mask paths stay valid in the zip); run on a checked folder."""
        root = found.root
        entries = {}
        for path in found.files.values():
            entries[path] = os.path.relpath(path, root).replace(os.sep, "/")
            data = regular_file.read_bytes(path, MAX_TXT_BYTES)
            for number, rel, _, _ in parse_lines(data.decode("utf-8"), self.labels):
                mask = mask_path(path, rel, root, number)
                entries[mask] = os.path.relpath(mask, root).replace(os.sep, "/")
        return sorted(entries.items(), key=lambda entry: entry[1])

    def read(self, path: str, expectation: Optional[Tuple[int, int]]) -> List[Mask]:
        try:
            data = regular_file.read_bytes(path, MAX_TXT_BYTES)
        except regular_file.Refused as exc:
            if exc.kind == regular_file.TOO_LARGE:
                raise PredictionProblem(TXT_TOO_LARGE, exc.detail()) from None
            raise PredictionProblem(NOT_REGULAR if exc.kind == regular_file.NOT_REGULAR
                                    else BAD_LINE, exc.detail()) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise PredictionProblem(BAD_LINE, "it is not UTF-8 text") from None
        shape = tuple(expectation) if expectation is not None else None
        masks = []
        covered = 0
        limit = None if shape is None else MAX_COVER * shape[0] * shape[1]
        for number, rel, label, confidence in parse_lines(text, self.labels):
            path_mask = mask_path(path, rel, os.path.dirname(path), number)
            pixels, box, crop = read_mask(path_mask, rel, number, shape)  # type: ignore
            covered += crop.size
            if limit is not None and covered > limit:
                raise PredictionProblem(MASKS_TOO_LARGE, "line {}: the masks' boxes cover more "
                                        "than {} times the image".format(number, MAX_COVER))
            masks.append(Mask(label, confidence, pixels, box, crop))
        return masks


def _count_lines(path: str) -> int:
    """Non-blank lines of a .txt (0 if it cannot be read: read() says why)."""
    try:
        data = regular_file.read_bytes(path, MAX_TXT_BYTES)
    except regular_file.Refused:
        return 0
    return sum(1 for line in data.splitlines() if line.strip())
