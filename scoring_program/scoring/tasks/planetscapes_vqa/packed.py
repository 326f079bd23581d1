"""The packed VQA reference: exactly what Truth holds, in one file that reads in a small
fraction of json.load(annotations.json) (docs/vqa-packed-format.md has the full description).

    <ref>/packed.json              manifest, written last: format, version, task, counts, and the
                                   payload's size and CRC-32
    <ref>/packed-annotations.json  the payload: one ASCII JSON object of a few long fields
    <ref>/questions.json           the raw reference's, byte for byte (public; read as for raw)
    <ref>/config.yaml              the raw reference's

annotations.json is a million small objects (ten answer records per question); what the metric
needs of them is, per question, the ten compared forms, the disagree flag, the two types and
the rare twins classes. The payload stores every distinct form once (a string table), the forms
of all questions as one array of indexes into it (ten per question), the types as indexes into
their own small tables, the flags as one byte each, all as base64 little-endian arrays: reading
is json.loads of a few strings, base64 and array decoding, and C-level map/zip passes.

Strings (forms, question types) are stored as one UTF-8 text with the surrogatepass error
handler plus their lengths, not as JSON strings: JSON would join two lone surrogates that
normalization made adjacent into one character. Every Python string round-trips exactly.

pack() reads the raw reference through the scorer's own checked readers (a broken one is refused
with the same messages), writes the payload, reads it back through the scorer's reader and
compares the Truth field by field with the raw one, and only then writes the manifest. The
reader checks the manifest, the payload's size and CRC-32, every count and every index, and that
questions.json lists the packed questions: anything else is a BrokenReference (exit 3) telling
the organizers to pack again, never a traceback nor a wrong score.
"""
import array
import base64
import json
import os
import shutil
import sys
import zlib
from itertools import accumulate, chain
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, cast

from ... import regular_file
from ...quoting import brief
from ...readers import bounded_json, packed_json
from ...problems import BrokenReference, Kind, ProblemLog, ScoringError
from ...task_api import Packing, Reference
from .problems import REF_PACKED
from .normalize import Normalizer
from .reference import ANSWER_TYPES, HUMANS, QUESTIONS, Truth, read_annotations, read_questions

FORMAT = "planetscapes-vqa-packed"
VERSION = 1
TASK = "planetscapes-vqa"
MANIFEST = "packed.json"
PAYLOAD = "packed-annotations.json"
CONFIG = "config.yaml"
FIELDS = ("qids", "forms", "disagree", "answer_types", "question_types", "twins")  # not norm
COUNTS = ("questions", "forms", "question_types", "twins", "disagreeing")

# array typecodes of unsigned integers by byte width (the C sizes are fixed on every platform
# CPython runs on; checked here rather than assumed).
_TYPECODES = {1: "B", 2: "H", 4: "I"}
assert all(array.array(c).itemsize == w for w, c in _TYPECODES.items())
_BIG_ENDIAN = sys.byteorder == "big"

PACK_MISMATCH = Kind(
    "vqa_pack_mismatch", "fields of the packed reference that do not read back as the raw one",
    "score with the raw reference and report this bug of pack.py (no packed.json was written, "
    "so the folder is not taken for a packed reference).")


class PackMismatch(ScoringError):
    """The packer's own check failed: a bug, not a broken reference."""

    exit_code = 4
    preamble = "INTERNAL ERROR: the packed reference does not read back as the raw one."


class Damaged(Exception):
    """The payload is not what the manifest describes (the message says how)."""


# What a payload that passed the CRC check but is not this format's (written by another tool)
# makes the decoder raise: Damaged (every field's presence and type is checked), json, base64,
# array and the UTF-8 codec's ValueError, json's RecursionError and LongInteger. Anything else
# is a bug of ours (exit 4), not the organizers' reference.
PAYLOAD_ERRORS = (Damaged, ValueError, RecursionError, bounded_json.LongInteger)

_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer"}


# --- writing --------------------------------------------------------------------------------

def _ints(values: Sequence[int]) -> Dict[str, Any]:
    """An array of unsigned integers: {"width": bytes per value, "data": base64, little-endian}."""
    top = max(values, default=0)
    if top >= 1 << 32:
        raise ValueError("a packed index above 2**32")
    width = 1 if top < 1 << 8 else 2 if top < 1 << 16 else 4
    arr = array.array(_TYPECODES[width], values)
    if _BIG_ENDIAN:
        arr.byteswap()
    return {"width": width, "data": base64.b64encode(arr.tobytes()).decode("ascii")}


def _strings(values: Sequence[str]) -> Dict[str, Any]:
    """A string table: the strings' lengths (in code points) and their concatenation in UTF-8
    (surrogatepass: lone surrogates too), base64."""
    text = "".join(values).encode("utf-8", "surrogatepass")
    return {"lengths": _ints([len(s) for s in values]),
            "utf8": base64.b64encode(text).decode("ascii")}


def _table(items: Iterable[str]) -> Tuple[List[str], List[int]]:
    """(distinct items in order of first appearance, the index of every item)."""
    index: Dict[str, int] = {}
    positions = [index.setdefault(x, len(index)) for x in items]
    return list(index), positions


def encode(truth: Truth) -> Tuple[bytes, Dict[str, int]]:
    """The payload of a Truth, and the counts the manifest states."""
    forms, records = _table(chain.from_iterable(truth.forms))
    atypes, aidx = _table(truth.answer_types)
    qtypes, qidx = _table(truth.question_types)
    doc = {
        "questions": len(truth.qids),
        "qids": list(truth.qids),
        "forms": _strings(forms),
        "records": _ints(records),
        "answer_types": _strings(atypes),
        "answer_type": _ints(aidx),
        "question_types": _strings(qtypes),
        "question_type": _ints(qidx),
        "disagree": _ints([1 if d else 0 for d in truth.disagree]),
        "twins": [[i, list(classes)] for i, classes in sorted(truth.twins.items())],
    }
    data = json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    counts = {"questions": len(truth.qids), "forms": len(forms), "question_types": len(qtypes),
              "twins": len(truth.twins), "disagreeing": truth.disagreeing}
    return data, counts


# --- reading --------------------------------------------------------------------------------

def _field(obj: Any, key: str, kind: type, where: str) -> Any:
    """obj[key] if obj is an object holding key with a value of type kind; Damaged otherwise."""
    if type(obj) is not dict:
        raise Damaged("{} is not {}".format(where, _TYPE_NAMES[dict]))
    if key not in obj:
        raise Damaged("{} has no field {}".format(where, brief(key)))
    value = obj[key]
    if type(value) is not kind:
        raise Damaged("{}: {} is not {}".format(where, brief(key), _TYPE_NAMES[kind]))
    return value


def _read_ints(field: Dict[str, Any], name: str, count: Optional[int]) -> Sequence[int]:
    """`count` unsigned integers (any number if None): bytes or an array, both iterate as ints.
    Indexes are not compared with their table here: looking them up raises IndexError."""
    width = _field(field, "width", int, name)
    if width not in _TYPECODES:
        raise Damaged("{}: width {} is none of {}".format(
            name, brief(width), ", ".join(map(str, sorted(_TYPECODES)))))
    raw = base64.b64decode(_field(field, "data", str, name))
    if width == 1:
        values: Sequence[int] = raw
    else:
        values = array.array(_TYPECODES[width])
        values.frombytes(raw)
        if _BIG_ENDIAN:
            values.byteswap()
    if count is not None and len(values) != count:
        raise Damaged("{} holds {:,} values, {:,} expected".format(name, len(values), count))
    return values


def _look_up(table: List[str], indexes: Sequence[int], name: str) -> List[str]:
    try:
        return list(map(table.__getitem__, indexes))
    except IndexError:
        raise Damaged("{} holds an index beyond its table".format(name)) from None


def _read_strings(field: Dict[str, Any], name: str, count: Optional[int]) -> List[str]:
    lengths = _read_ints(_field(field, "lengths", dict, name), name, count)
    text = base64.b64decode(_field(field, "utf8", str, name)).decode("utf-8", "surrogatepass")
    ends = list(accumulate(lengths))
    if (ends[-1] if ends else 0) != len(text):
        raise Damaged("{}: the lengths do not add up to the text".format(name))
    return list(map(text.__getitem__, map(slice, [0] + ends[:-1], ends)))


# No payload holds more of anything: a count above it is not one (and is not printed whole).
MAX_COUNT = 1 << 48


def _count(manifest: Dict[str, Any], key: str) -> int:
    value = manifest.get(key)
    if type(value) is not int or not 0 <= value < MAX_COUNT:
        raise Damaged("{} has no count of {} ({})".format(MANIFEST, key, brief(value)))
    return value


def _types(doc: Dict[str, Any], table_key: str, index_key: str, n: int,
           count: Optional[int]) -> List[str]:
    """A type per question, from its table and the questions' indexes into it."""
    table = _read_strings(_field(doc, table_key, dict, "the payload"), table_key, count)
    if len(set(table)) != len(table):
        raise Damaged("{} lists a type twice".format(table_key))
    return _look_up(table, _read_ints(_field(doc, index_key, dict, "the payload"), index_key, n),
                    index_key)


def decode(data: bytes, manifest: Dict[str, Any]) -> Truth:
    """The Truth of a payload, checked against its manifest: Damaged, or one of PAYLOAD_ERRORS
    (the caller reports them all as damage), otherwise."""
    if manifest.get("task") != TASK:
        raise Damaged("{} is for task {}, not {}".format(MANIFEST, brief(manifest.get("task")),
                                                         TASK))
    size, crc = manifest.get("bytes"), manifest.get("crc32")
    if len(data) != size:
        raise Damaged("{:,} bytes, {} says {} (truncated or changed after packing)".format(
            len(data), MANIFEST, brief(size)))
    if zlib.crc32(data) != crc:
        raise Damaged("CRC-32 {}, {} says {} (damaged or changed after packing)".format(
            zlib.crc32(data), MANIFEST, brief(crc)))
    n, n_forms, n_qtypes, n_twins, n_disagree = (_count(manifest, k) for k in COUNTS)
    doc = bounded_json.loads(data.decode("ascii"))
    questions = _field(doc, "questions", int, "the payload")
    if questions != n or not n:
        raise Damaged("{} questions, {} says {:,}".format(brief(questions), MANIFEST, n))
    qids = _field(doc, "qids", list, "the payload")
    if len(qids) != n or set(map(type, qids)) != {int} or len(set(qids)) != n:
        raise Damaged("qids is not a list of {:,} distinct integers".format(n))
    table = _read_strings(_field(doc, "forms", dict, "the payload"), "forms", n_forms)
    flat = _look_up(table, _read_ints(_field(doc, "records", dict, "the payload"), "records",
                                      HUMANS * n), "records")
    forms = list(zip(*[iter(flat)] * HUMANS))  # back to ten per question
    del flat, table
    answer_types = _types(doc, "answer_types", "answer_type", n, None)
    if not set(answer_types) <= set(ANSWER_TYPES):
        raise Damaged("an answer type is none of {}".format(", ".join(ANSWER_TYPES)))
    question_types = _types(doc, "question_types", "question_type", n, n_qtypes)
    flags_field = _field(doc, "disagree", dict, "the payload")
    flags = _read_ints(flags_field, "disagree", n)
    # width 1: _read_ints gives the bytes themselves
    if flags_field["width"] != 1 or cast(bytes, flags).translate(None, b"\0\1"):
        raise Damaged("disagree holds another value than 0 and 1")
    disagree = list(map(bool, flags))
    if sum(disagree) != n_disagree:
        raise Damaged("{:,} disagreeing questions, {} says {:,}".format(
            sum(disagree), MANIFEST, n_disagree))
    twins = {}
    for entry in _field(doc, "twins", list, "the payload"):
        i, classes = entry if type(entry) is list and len(entry) == 2 else (None, None)
        if type(i) is not int or not 0 <= i < n or i in twins or type(classes) is not list or \
                len(classes) != HUMANS or set(map(type, classes)) != {int}:
            raise Damaged("twins: an entry is not [question index, {} classes]".format(HUMANS))
        twins[i] = tuple(classes)
    if len(twins) != n_twins:
        raise Damaged("{:,} questions with twins, {} says {:,}".format(
            len(twins), MANIFEST, n_twins))
    return Truth(qids, forms, disagree, answer_types, question_types, twins, Normalizer())


def _broken(name: str, detail: str) -> BrokenReference:
    log = ProblemLog()
    log.add(REF_PACKED, name, detail)
    return BrokenReference(log)


def is_packed(root: str) -> bool:
    """packed.json is there: whatever it is (a FIFO, a folder), it is then read as the manifest
    and refused if it is not one, never skipped."""
    return os.path.lexists(os.path.join(root, MANIFEST))


def read_packed(root: str, questions: Dict[int, Any],
                manifest: Optional[Dict[str, Any]] = None) -> Truth:
    """The Truth of the packed reference at root, checked against its manifest (read from
    root unless given: the packer's check) and against questions.json (`questions`).
    BrokenReference, saying to pack again, on any problem."""
    if manifest is None:
        manifest = packed_json.read_manifest(root, MANIFEST, FORMAT, VERSION, REF_PACKED)
    size = manifest.get("bytes")
    if type(size) is not int or size < 0:
        raise _broken(MANIFEST, "it states no size of {}".format(PAYLOAD))
    try:
        # A regular file (a link to one is followed), read only up to the size the manifest
        # states: a FIFO, a device or a payload grown since packing costs nothing.
        data = bounded_json.read_bytes(os.path.join(root, PAYLOAD), follow_links=True,
                                       max_bytes=size)
    except regular_file.Refused as exc:
        raise _broken(PAYLOAD, "{}{}".format(exc.detail(), "; {} says {:,} bytes (truncated or "
                      "changed after packing)".format(MANIFEST, size)
                      if exc.kind == regular_file.TOO_LARGE else "")) from None
    try:
        truth = decode(data, manifest)
    except PAYLOAD_ERRORS as exc:
        raise _broken(PAYLOAD, "{}{}".format(
            "" if isinstance(exc, Damaged) else "not a {} v{} payload: {}: ".format(
                FORMAT, VERSION, type(exc).__name__), exc)) from None
    if questions.keys() != set(truth.qids):
        raise _broken(QUESTIONS, "it does not list the {:,} packed questions ({:,} listed): it "
                      "is not the questions.json packed with them".format(
                          len(truth.qids), len(questions)))
    return truth


# --- packing --------------------------------------------------------------------------------

def pack(root: str, out_root: str, progress=None) -> Tuple[int, int]:
    """Pack the raw reference at root (its folder, as find_root gives it) into out_root.
    Returns (questions, bytes of the payload). BrokenReference if the raw reference is broken
    (the scorer's messages); PackMismatch if the packed one does not read back identically."""
    questions = read_questions(root)
    truth = read_annotations(root, questions, Normalizer())
    data, counts = encode(truth)
    os.makedirs(out_root, exist_ok=True)
    with open(os.path.join(out_root, PAYLOAD), "wb") as payload:
        payload.write(data)
    for name in (QUESTIONS, CONFIG):
        if os.path.isfile(os.path.join(root, name)):
            shutil.copyfile(os.path.join(root, name), os.path.join(out_root, name))
    manifest = {"format": FORMAT, "version": VERSION, "task": TASK}
    manifest.update(counts)
    manifest.update({"bytes": len(data), "crc32": zlib.crc32(data)})
    # Read back what is on disk, through the scorer's reader, before marking the pack complete.
    again = read_packed(out_root, read_questions(out_root), manifest)
    differ = [f for f in FIELDS if getattr(again, f) != getattr(truth, f)]
    if differ:
        log = ProblemLog()
        for field in differ:
            log.add(PACK_MISMATCH, "Truth." + field)
        raise PackMismatch(log)
    with open(os.path.join(out_root, MANIFEST), "w") as f:  # last: marks the pack complete
        json.dump(manifest, f, indent=0)
        f.write("\n")
    if progress:
        progress(len(truth.qids))
    return len(truth.qids), len(data)


class VQAPacking(Packing[Reference]):
    """The task's Packing role."""

    layout = "docs/vqa-packed-format.md"

    def pack(self, reference: Reference, out_dir: str, workers: int,
             progress=None) -> Tuple[int, int]:
        """Checked as the scorer checks it; one process (workers is not used). Returns
        (questions, payload bytes)."""
        # open_reference's root is a folder (None is the label-free check's stand-in).
        return pack(cast(str, reference.root), out_dir, progress)
