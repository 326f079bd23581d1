"""safetensors files: an 8-byte little-endian header length N, N bytes of JSON
`{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, then the data.

Only the header is read. It is checked as the reference implementation checks it (safetensors'
`validate`): a header of at most 100 MB, known dtypes, each tensor's bytes equal to its shape's
elements times the dtype's size, and the tensors' byte ranges tiling the data exactly, in
order, without holes or overlaps, up to the end of the file. A header that lies about its
offsets is refused.

Bounded: the header is read entry by entry, never decoded as one JSON value (100 MB of small
JSON objects would take gigabytes as Python objects): each tensor's entry must have the shape
of one (at most 64 dimensions) and is decoded alone; __metadata__ (text to text) is skipped
string by string, at most MAX_SAFETENSORS_METADATA entries; at most MAX_SAFETENSORS_TENSORS
tensors. The header is decoded as Latin-1 (one byte a character, whatever it holds) after its
UTF-8 was checked.
"""
import codecs
import json
import os
import re
import struct
from typing import List, Optional, Set, Tuple

from scoring.problems import shown
from scoring.quoting import brief
from . import bounds, rule
from .result import FileCount, FileRefused, counted

FORMAT = "safetensors"
MAX_HEADER = bounds.MAX_SAFETENSORS_HEADER
DTYPES = {"F64": ("float64", 8), "F32": ("float32", 4), "F16": ("float16", 2),
          "BF16": ("bfloat16", 2), "F8_E4M3": ("float8_e4m3fn", 1), "F8_E5M2": ("float8_e5m2", 1),
          "I64": ("int64", 8), "I32": ("int32", 4), "I16": ("int16", 2), "I8": ("int8", 1),
          "U64": ("uint64", 8), "U32": ("uint32", 4), "U16": ("uint16", 2), "U8": ("uint8", 1),
          "BOOL": ("bool", 1), "C64": ("complex64", 8)}

_WS = re.compile(r"[ \t\n\r]*")
# One tensor's entry: three keys, each a short string or a list of at most 64 integers.
_VALUE = r'(?:"[^"\\]{0,64}"|\[[ \t\n\r0-9,]{0,1600}\])'
_ENTRY = re.compile(r'\{[ \t\n\r]*"[a-z_]{1,16}"[ \t\n\r]*:[ \t\n\r]*' + _VALUE +
                    r'(?:[ \t\n\r]*,[ \t\n\r]*"[a-z_]{1,16}"[ \t\n\r]*:[ \t\n\r]*' + _VALUE +
                    r'){0,2}[ \t\n\r]*\}')
_scanstring = json.decoder.scanstring     # type: ignore[attr-defined]
_decode_value = json.JSONDecoder().raw_decode


class _Header:
    """The header text and a position in it."""

    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def skip(self) -> str:
        """Skip whitespace; the next character ("" at the end)."""
        self.pos = _WS.match(self.text, self.pos).end()   # type: ignore[union-attr]
        return self.text[self.pos:self.pos + 1]

    def expect(self, ch: str, where: str) -> None:
        if self.skip() != ch:
            raise FileRefused("its header is not JSON (expected {!r} {} at character "
                              "{:,})".format(ch, where, self.pos))
        self.pos += 1

    def string(self, where: str) -> str:
        self.expect('"', where)
        try:
            value, self.pos = _scanstring(self.text, self.pos)
        except ValueError as exc:
            raise FileRefused("its header is not JSON ({})".format(brief(str(exc), 100))) \
                from None
        return value


def _name(raw: str) -> str:
    """A name decoded as Latin-1 back to its UTF-8 text."""
    try:
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return raw


def _skip_metadata(h: _Header, budget: bounds.Budget) -> int:
    """__metadata__: null, or an object of strings, read string by string (never kept); its
    entries."""
    if h.text.startswith("null", h.pos):
        h.pos += 4
        return 0
    h.expect("{", "for __metadata__")
    if h.skip() == "}":
        h.pos += 1
        return 0
    limit = budget.limit("entries", bounds.MAX_SAFETENSORS_METADATA)
    for n in range(limit):
        h.string("in __metadata__")
        h.expect(":", "in __metadata__")
        h.string("in __metadata__ (its values are text)")
        if h.skip() == "}":
            h.pos += 1
            return n + 1
        h.expect(",", "in __metadata__")
    if budget.binding("entries", bounds.MAX_SAFETENSORS_METADATA):
        raise budget.exhausted("entries", "its header")
    raise FileRefused("its __metadata__ holds more than {:,} entries".format(
        bounds.MAX_SAFETENSORS_METADATA))


def _entry(h: _Header, name: str) -> Tuple[str, list, list]:
    """(dtype, shape, data_offsets) of one tensor's entry, checked."""
    h.skip()
    m = _ENTRY.match(h.text, h.pos)
    if m is None:
        raise FileRefused("its header entry {} is not {{dtype, shape, data_offsets}}".format(
            brief(name)))
    entry, _ = _decode_value(m.group(0))
    h.pos = m.end()
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
        raise FileRefused("its header entry {} is not {{dtype, shape, data_offsets}}".format(
            brief(name)))
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if dtype not in DTYPES:
        raise FileRefused("tensor {} has the unknown dtype {}".format(brief(name), brief(dtype)))
    if not isinstance(shape, list) or len(shape) > bounds.MAX_DIMS or \
            not all(type(d) is int and 0 <= d <= bounds.MAX_DIM for d in shape):
        raise FileRefused("tensor {} has a malformed shape {}".format(brief(name), brief(shape)))
    if not (isinstance(offsets, list) and len(offsets) == 2 and
            all(type(o) is int and 0 <= o <= bounds.MAX_DIM for o in offsets) and
            offsets[0] <= offsets[1]):
        raise FileRefused("tensor {} has malformed data_offsets {}".format(brief(name),
                                                                          brief(offsets)))
    return dtype, shape, offsets


def _entries(text: str, figures: rule.Figures, budget: bounds.Budget) -> List[Tuple[int, int, str]]:
    """Each tensor's (begin, end, name), its elements added to figures."""
    h = _Header(text)
    own = bounds.MAX_SAFETENSORS_TENSORS
    limit = budget.limit("entries", own)
    h.expect("{", "at the start")
    names: Set[str] = set()
    ranges: List[Tuple[int, int, str]] = []
    if h.skip() == "}":
        h.pos += 1
    else:
        while True:
            raw = h.string("(a tensor's name)")
            if raw in names:
                raise FileRefused("its header names the tensor {} twice".format(
                    brief(_name(raw))))
            names.add(raw)
            h.expect(":", "after a name")
            if raw == "__metadata__":
                budget.take("entries", _skip_metadata(h, budget))
            else:
                if len(ranges) >= limit:
                    budget.take("entries", len(ranges))
                    if budget.binding("entries", own):
                        raise budget.exhausted("entries", "its header")
                    raise FileRefused("its header declares more than {:,} tensors".format(own))
                name = _name(raw)
                dtype, shape, offsets = _entry(h, name)
                numel = 1
                for d in shape:
                    numel *= d
                kind, width = DTYPES[dtype]
                if offsets[1] - offsets[0] != numel * width:
                    raise FileRefused("the header lies about tensor {}: its offsets {} span {:,} "
                                      "bytes, but {} {} holds {:,}".format(
                                          brief(name), offsets, offsets[1] - offsets[0], dtype,
                                          shape, numel * width))
                ranges.append((offsets[0], offsets[1], name))
                figures.add((name,), kind, False, numel, shape)
            if h.skip() == "}":
                h.pos += 1
                break
            h.expect(",", "between entries")
    if h.skip():
        raise FileRefused("its header is not JSON (data after its object)")
    budget.take("entries", len(ranges))
    return ranges


def looks_like(head: bytes, size: int) -> bool:
    if len(head) < 9:
        return False
    n = struct.unpack("<Q", head[:8])[0]
    return 0 < n <= size - 8 and head[8:9] == b"{"


def _read_header(path: str) -> Tuple[str, int, int]:
    """(the header as Latin-1 text, its length, the file's size)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise FileRefused("it is shorter than a safetensors header")
        n = struct.unpack("<Q", raw)[0]
        if n > MAX_HEADER or n > size - 8:
            raise FileRefused("its header length {:,} exceeds {} (the file has {:,} bytes)".format(
                n, "100 MB" if n > MAX_HEADER else "the file", size))
        data = f.read(n)
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=True)
    except UnicodeDecodeError as exc:
        raise FileRefused("its header is not JSON ({})".format(brief(str(exc), 100))) from None
    return data.decode("latin-1"), n, size


def count(path: str, shown_path: str, budget: Optional[bounds.Budget] = None) -> FileCount:
    text, n, size = _read_header(path)
    figures = rule.Figures()
    ranges = _entries(text, figures, bounds.default_budget(budget))
    data_size = size - 8 - n
    reach = 0
    for begin, end, name in sorted(ranges):
        if begin != reach:
            raise FileRefused("the header lies about its offsets: tensor {} starts at byte {:,} of "
                              "the data, where {:,} was expected ({})".format(
                                  brief(name), begin, reach,
                                  "an overlap" if begin < reach else "a hole"))
        reach = end
    if reach != data_size:
        raise FileRefused("the header lies about its offsets: the tensors end at byte {:,} of the "
                          "data, but the file holds {:,} data bytes".format(reach, data_size))
    result, note = figures.result()
    return counted(shown_path, FORMAT, result, len(ranges), note=note,
                   records=tuple(figures.records))


def is_index(name: str) -> bool:
    return name.endswith(".safetensors.index.json")


def index_note(path: str) -> str:
    return "the index of a sharded safetensors model ({}): its shards are counted".format(
        shown(os.path.basename(path)))

