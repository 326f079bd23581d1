"""The panoptic submission: COCO's panoptic results format, as cityscapesScripts'
evalPanopticSemanticLabeling reads it.

The zip holds one .json file (predictions.json) and, beside it, the folder named after it
without the extension (predictions/) with one RGB PNG per test image, <image id>.png, whose
colour encodes the segment id: R + 256 G + 256^2 B, 0 (black) being void. The JSON is
{"annotations": [{"image_id": "<id>", "file_name": "<id>.png", "segments_info": [{"id": <int>,
"category_id": <label id>}, ...]}, ...]} (other keys are allowed and ignored).

A unit's prediction is two things, its PNG and its JSON entry: discover() reads and checks the
JSON once (in the main process, before the engine hands this format to its workers) and keeps
each image's segments by the PNG's path; read() decodes the PNG and checks it against them.
No ground truth is needed for any check (the kit runs them too).

Bounds: the JSON is at most MAX_JSON_BASE + MAX_JSON_PER_IMAGE bytes per test image, read
through the bounded JSON reader (integers of at most 4,300 digits; nesting beyond Python's
recursion limit is a named refusal); an image has at most MAX_SEGMENTS segments; a PNG is at
most 1 MiB + 4 bytes per pixel (an 8-bit RGB PNG stored uncompressed takes 3).
"""
import io
import json
import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from PIL import Image

from ... import regular_file
from ...folders import ignored
from ...formats.label_png import png
from ...formats.label_png.decode_errors import Undecodable, pillow_call
from ...formats.label_png.pillow_array import _direct, _not_loaded
from ...formats.label_png.kinds import NOT_PNG, NOT_REGULAR, TOO_LARGE, TRANSPOSED, WRONG_SIZE
from ...problems import EXTRA_FILE, ProblemLog
from ...readers import bounded_json
from ...submission import discovery
from ...task_api import PredictionProblem, Submission, SubmissionFormat
from .problems import (BAD_JSON, CATEGORY, FILE_NAME, NO_ANNOTATION, NO_FOLDER, NO_JSON, NOT_JSON,
                       NOT_RGB, SEGMENT_ID, SEGMENT_TWICE, TOO_MANY, TWICE, TWO_JSON,
                       UNKNOWN_IMAGE, UNLISTED, UNUSED)

MAX_SEGMENTS = 2048            # per image; Cityscapes' images have at most a few hundred
MAX_JSON_BASE = 16 << 20       # bytes, plus per test image:
MAX_JSON_PER_IMAGE = 32 << 10  # about 300 segments of 100 bytes (bbox and area included)
MAX_ID = (1 << 24) - 1         # three 8-bit channels
VOID = 0
MAX_BYTES_BASE, MAX_BYTES_PER_PIXEL = 1 << 20, 4

WORDS = {"files": "PNG files", "file": "PNG", "ext": ".png", "unit": "image", "units": "images",
         "zip_hint": ", holding predictions.json and the folder predictions/ of PNGs",
         "zip_layout": "in the folder named after the .json file, the .json at the root"}


class Segments(NamedTuple):
    """One image's segments_info, checked: ids sorted (void, 0, first) and their classes as
    positions among the evaluated labels (-1 for void)."""

    ids: np.ndarray      # int64, sorted, ids[0] == 0
    classes: np.ndarray  # int64


class Prediction(NamedTuple):
    """One image's checked prediction: its pixels as runs (the flattened image cut wherever the
    segment id changes: each run's first pixel and its segment's position), and per segment
    (void, 0, first) its id, its class (position among the evaluated labels; -1: void) and its
    area in pixels. A few tens of thousands of runs stand for two million pixels: every count
    the metric needs is a sum over runs (metric.joint_counts)."""

    starts: np.ndarray      # intp, ascending, starts[0] == 0
    segments: np.ndarray    # intp, per run the position of its segment in ids
    shape: Tuple[int, int]
    ids: np.ndarray
    classes: np.ndarray
    areas: np.ndarray

    def lengths(self) -> np.ndarray:
        return run_lengths(self.starts, self.shape[0] * self.shape[1])


def _jsons(res_dir: str) -> List[str]:
    """The .json files under res_dir (hidden names and __MACOSX/ aside; links not followed)."""
    found = []
    for folder, dirs, names in os.walk(res_dir):
        dirs[:] = sorted(d for d in dirs if not ignored(d))
        for name in sorted(names):
            if name.lower().endswith(".json") and not ignored(name):
                found.append(os.path.join(folder, name))
    return found


def _rel(res_dir: str, path: str) -> str:
    return os.path.relpath(path, res_dir).replace(os.sep, "/")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class PanopticPredictions(SubmissionFormat):
    """predictions.json + predictions/<id>.png; evaluated: the evaluated label ids, in the
    table's order (a category_id's class is its position there)."""

    def __init__(self, evaluated: Sequence[int], allowed_values: str) -> None:
        self.allowed = {int(v): k for k, v in enumerate(evaluated)}
        self.words = dict(WORDS, allowed_values=allowed_values, max_segments=str(MAX_SEGMENTS),
                          checked="the segments file, names, sizes, 8-bit RGB, every colour "
                                  "listed in segments_info and every listed id present, every "
                                  "category_id " + allowed_values)
        # PNG path -> its image's Segments (filled by discover: see the module's docstring)
        self.segments: Dict[str, Segments] = {}
        self.json_of: Dict[str, str] = {}  # the PNG folder -> its JSON file

    # --- finding the files, reading the JSON ----------------------------------------------

    def discover(self, res_dir: str, expected_ids: Optional[Sequence[str]]) -> Submission:
        log = ProblemLog()
        jsons = _jsons(res_dir)
        if not jsons:
            log.add(NO_JSON, "submission", "no file ending in .json")
            return Submission("", {}, log)
        # The .json beside its folder (COCO's pair); another .json is another task's file (in
        # a competition that scores one zip with several tasks: the VQA results file).
        paired = [j for j in jsons if discovery.is_json_pair(j)]
        if len(paired) > 1 or (not paired and len(jsons) > 1):
            for path in paired or jsons:
                log.add(TWO_JSON, _rel(res_dir, path))
            return Submission("", {}, log)
        json_path = (paired or jsons)[0]
        json_name = _rel(res_dir, json_path)
        folder = os.path.splitext(json_path)[0]
        if not os.path.isdir(folder) or os.path.islink(folder):
            log.add(NO_FOLDER, json_name, "expected the PNGs in {}/".format(
                _rel(res_dir, folder)))
            return Submission("", {}, log)
        found = discovery.discover(folder, expected_ids, ".png")
        self.json_of[found.root or folder] = json_path
        prefix = _rel(res_dir, folder) + "/"
        for kind in found.log.kinds():
            for name, detail in found.log.examples(kind):
                log.add(kind, name if name == "submission" else prefix + name, detail)
            for _ in range(found.log.count(kind) - len(found.log.examples(kind))):
                log.add(kind, prefix + "...")
        # Files beside the JSON and its folder are listed, not scored.
        top = os.path.dirname(json_path)
        for entry in sorted(os.listdir(top)):
            path = os.path.join(top, entry)
            if not ignored(entry) and path not in (json_path, folder) and \
                    not (top == res_dir and entry in discovery.PLATFORM_FILES):
                log.add(EXTRA_FILE, _rel(res_dir, path))
        n_images = len(expected_ids) if expected_ids is not None else len(found.files)
        entries = self._read_json(json_path, json_name, n_images, log)
        if entries is None:
            return Submission(found.root, {}, log)
        expected = None if expected_ids is None else set(expected_ids)
        for image_id in sorted(entries):
            if expected is not None and image_id not in expected:
                log.add(UNKNOWN_IMAGE, json_name, "image_id {}".format(json.dumps(image_id)))
        files = {}
        for unit, path in found.files.items():
            segments = entries.get(unit)
            if segments is None:
                log.add(NO_ANNOTATION, unit, "{}{}.png has no entry in {}".format(
                    prefix, unit, json_name))
                continue
            if segments is False:
                continue  # its entry has a problem, logged
            self.segments[path] = segments
            files[unit] = path
        return Submission(found.root, files, log)

    def _read_json(self, path: str, name: str, n_images: int,
                   log: ProblemLog) -> Optional[Dict[str, Any]]:
        """image id -> Segments (False: the entry has a problem, logged), or None if the file
        is unusable as a whole."""
        cap = MAX_JSON_BASE + MAX_JSON_PER_IMAGE * max(1, n_images)
        try:
            doc = bounded_json.loads(bounded_json.decode(
                regular_file.read_bytes(path, cap, follow_links=False)))
        except regular_file.Refused as exc:
            log.add(NOT_JSON, name, exc.detail() + (" ({:,} bytes allowed for {:,} images)".format(
                cap, n_images) if exc.kind == regular_file.TOO_LARGE else ""))
            return None
        except UnicodeDecodeError:
            log.add(NOT_JSON, name, "it is not UTF-8 text")
            return None
        except json.JSONDecodeError as exc:
            log.add(NOT_JSON, name, "{} at line {}, column {}".format(exc.msg, exc.lineno,
                                                                      exc.colno))
            return None
        except RecursionError:
            log.add(NOT_JSON, name, "it is nested too deeply")
            return None
        except bounded_json.LongInteger as exc:
            log.add(NOT_JSON, name, "it holds {}".format(exc))
            return None
        annotations = doc.get("annotations") if isinstance(doc, dict) else None
        if not isinstance(annotations, list):
            log.add(BAD_JSON, name, "the file must be an object with an \"annotations\" list")
            return None
        entries: Dict[str, Any] = {}
        for k, ann in enumerate(annotations):
            where = "{}: annotations[{}]".format(name, k)
            if not isinstance(ann, dict) or not isinstance(ann.get("image_id"), str):
                log.add(BAD_JSON, where, "not an object with \"image_id\" (a string)")
                continue
            image_id = ann["image_id"]
            if image_id in entries:
                log.add(TWICE, image_id, "two entries in {}".format(name))
                entries[image_id] = False
                continue
            entries[image_id] = self._entry(ann, image_id, where, log)
        return entries

    def _entry(self, ann: Dict[str, Any], image_id: str, where: str, log: ProblemLog) -> Any:
        """The checked Segments of one annotation, or False with its problems logged."""
        if ann.get("file_name") != image_id + ".png":
            log.add(FILE_NAME, image_id, "file_name is {}".format(
                json.dumps(ann.get("file_name"))[:80]))
            return False
        info = ann.get("segments_info")
        if not isinstance(info, list):
            log.add(BAD_JSON, where, "\"segments_info\" must be a list")
            return False
        if len(info) > MAX_SEGMENTS:
            log.add(TOO_MANY, image_id, "{:,} segments".format(len(info)))
            return False
        ok = True
        seen = set()
        ids, cats = [VOID], [-1]
        for j, seg in enumerate(info):
            if not isinstance(seg, dict) or "id" not in seg or "category_id" not in seg:
                log.add(BAD_JSON, "{}.segments_info[{}]".format(where, j),
                        "not an object with \"id\" and \"category_id\"")
                ok = False
                continue
            sid, cat = seg["id"], seg["category_id"]
            if not _is_int(sid) or not 1 <= sid <= MAX_ID:
                log.add(SEGMENT_ID, image_id, "id {}".format(json.dumps(sid)[:40]))
                ok = False
            elif sid in seen:
                log.add(SEGMENT_TWICE, image_id, "id {}".format(sid))
                ok = False
            if not _is_int(cat) or cat not in self.allowed:
                log.add(CATEGORY, image_id, "segment {}: category_id {}".format(
                    json.dumps(sid)[:40], json.dumps(cat)[:40]))
                ok = False
            if ok:
                seen.add(sid)
                ids.append(sid)
                cats.append(self.allowed[cat])
        if not ok:
            return False
        order = np.argsort(np.array(ids, dtype=np.int64), kind="stable")
        return Segments(np.array(ids, dtype=np.int64)[order],
                        np.array(cats, dtype=np.int64)[order])

    def comparable(self, prediction: Prediction) -> np.ndarray:
        """Per pixel its segment id and the segment's class (2^24 x (class + 1) + id): two
        PNGs predict the same when these agree everywhere."""
        pos = prediction.segments
        runs = prediction.ids[pos] + ((prediction.classes[pos] + 1) << 24)
        return np.repeat(runs, prediction.lengths()).reshape(prediction.shape)

    def zip_entries(self, found: Submission) -> List[Tuple[str, str]]:
        """The JSON at the zip's root and the PNGs in the folder named after it."""
        json_path = self.json_of[found.root]
        folder = os.path.splitext(os.path.basename(json_path))[0]
        return [(json_path, os.path.basename(json_path))] + [
            (path, folder + "/" + os.path.basename(path)) for path in found.files.values()]

    # --- one PNG ------------------------------------------------------------------------------

    def read(self, path: str, expectation: Optional[Tuple[int, int]]) -> Prediction:
        segments = self.segments.get(path)
        if segments is None:  # discover() did not list it: a bug of ours, never the participant's
            raise KeyError(path)
        return match_segments(read_rgb(path, expectation), segments)


def read_rgb(path: str, expected: Optional[Tuple[int, int]]) -> np.ndarray:
    """The (height, width) uint32 RGBX words of an 8-bit RGB PNG (R the lowest byte), all
    checks first (a link, a FIFO, a file too large for its size, the wrong size or mode are
    refused before decoding)."""
    try:
        fd = regular_file.open_regular(path, follow_links=False)
    except regular_file.Refused as exc:
        raise PredictionProblem(NOT_REGULAR if exc.kind == regular_file.NOT_REGULAR else NOT_PNG,
                                exc.detail()) from None
    try:
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(33)
            try:
                header = png.parse_header(head)
            except png.NotPNG as exc:
                raise PredictionProblem(NOT_PNG, str(exc)) from None
            if header.color_type != png.RGB or header.bit_depth != 8:
                raise PredictionProblem(NOT_RGB, "it is a {}-bit {} PNG".format(
                    header.bit_depth, png.COLOR_NAMES[header.color_type]))
            if expected is not None and (header.height, header.width) != tuple(expected):
                kind = TRANSPOSED if (header.width, header.height) == tuple(expected) \
                    else WRONG_SIZE
                raise PredictionProblem(kind, "it is {} x {} (width x height), expected {} x "
                                        "{}".format(header.width, header.height, expected[1],
                                                    expected[0]))
            cap = MAX_BYTES_BASE + MAX_BYTES_PER_PIXEL * header.width * header.height
            if size > cap:
                raise PredictionProblem(TOO_LARGE, "it is {:,} bytes; the limit for a {} x {} "
                                        "PNG is {:,} bytes".format(size, header.width,
                                                                   header.height, cap))
            data = head + f.read(max(0, size - len(head)))
    except OSError as exc:
        raise PredictionProblem(NOT_PNG, "it cannot be read ({})".format(
            exc.strerror or type(exc).__name__)) from None
    try:
        with pillow_call():
            img = Image.open(io.BytesIO(data))
        with img:
            if img.format != "PNG" or img.mode != "RGB" or \
                    img.size != (header.width, header.height):
                raise PredictionProblem(NOT_PNG, "it is not a valid PNG: its first image header "
                                        "says {} x {} RGB, a later one {} x {} {}".format(
                                            header.width, header.height, img.size[0],
                                            img.size[1], img.mode))
            arr = _decode_rgbx(img)
    except Undecodable as exc:
        raise PredictionProblem(NOT_PNG, "the PNG data is truncated or corrupt ({})".format(
            exc)) from None
    return arr


def _decode_rgbx(img: "Image.Image") -> np.ndarray:
    """The RGB PNG decoded straight into a (height, width) uint32 array of RGBX words (R the
    lowest byte, X = 255) by formats/label_png/pillow_array.py's direct decode: an image of mode
    RGBX over the array, which the PNG decoder fills (Pillow unpacks RGB into RGBX). Where Pillow
    does not share the array's memory, its own path (load, then tobytes: two more copies)."""
    width, height = img.size
    if width and height and _not_loaded(img):
        arr = _direct(img, "RGBX", np.dtype("<u4"))
        if arr is not None and arr.ndim == 2:
            return arr
    with pillow_call():
        img.load()
        raw = img.tobytes("raw", "RGBX")
    return np.frombuffer(raw, dtype="<u4").reshape(height, width).copy()


def _ids_shown(values) -> str:
    values = sorted(int(v) for v in values)
    return ", ".join(str(v) for v in values[:8]) + (", ..." if len(values) > 8 else "")


def run_starts(flat: np.ndarray, also: Optional[np.ndarray] = None) -> np.ndarray:
    """The first pixel of each run of equal values of a flattened image (one comparison pass),
    cut also wherever the boolean array `also` is set."""
    change = np.empty(flat.size, dtype=bool)
    change[:1] = True
    np.not_equal(flat[1:], flat[:-1], out=change[1:])
    if also is not None:
        change |= also
    return np.flatnonzero(change)


def run_lengths(starts: np.ndarray, size: int) -> np.ndarray:
    return np.diff(np.append(starts, size))


# The unlisted ids a message shows are found among this many runs holding them.
SHOWN_RUNS = 4096


def match_segments(words: np.ndarray, segments: Segments) -> Prediction:
    """Every colour of the PNG (uint32 words, R + 256 G + 256^2 B in the low 24 bits) must be
    listed (or void) and every listed id must occur; the pixels as runs. Linear in the pixels
    whatever the PNG holds: each run's id is looked up among the listed ones (at most
    MAX_SEGMENTS + 1), the areas are sums of run lengths."""
    listed = segments.ids
    flat = words.reshape(-1)
    starts = run_starts(flat)
    run_ids = (flat[starts] & np.uint32(0xFFFFFF)).astype(np.int64)
    lengths = run_lengths(starts, flat.size)
    pos = np.minimum(np.searchsorted(listed, run_ids), listed.size - 1)
    bad = listed[pos] != run_ids
    if bad.any():
        unlisted = np.unique(run_ids[bad][:SHOWN_RUNS]).tolist()
        raise PredictionProblem(UNLISTED, "{:,} pixels hold segment ids {} (as R + 256 G + "
                                "256^2 B)".format(int(lengths[bad].sum()),
                                                  _ids_shown(unlisted)))
    # Exact: float64 holds every pixel count of a bounded image.
    areas = np.bincount(pos, weights=lengths, minlength=listed.size).astype(np.int64)
    present = {v: n for v, n in zip(listed.tolist(), areas.tolist()) if n}
    unused = [v for v in listed[1:].tolist() if v not in present]
    if unused:
        raise PredictionProblem(UNUSED, "ids {}".format(_ids_shown(unused)))
    return Prediction(starts, pos, words.shape, listed, segments.classes, areas)
