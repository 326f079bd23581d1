"""safetensors files: an 8-byte little-endian header length N, N bytes of JSON
`{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, then the data.

Only the header is read. It is checked as the reference implementation checks it (safetensors'
`validate`): a header of at most 100 MB, known dtypes, each tensor's bytes equal to its shape's
elements times the dtype's size, and the tensors' byte ranges tiling the data exactly, in
order, without holes or overlaps, up to the end of the file. A header that lies about its
offsets is refused.
"""
import json
import os
import struct
from typing import Any, Dict, List

from scoring.problems import shown
from scoring.quoting import brief
from . import rule
from .result import FileCount, FileRefused, counted

FORMAT = "safetensors"
MAX_HEADER = 100 * 1000 * 1000
DTYPES = {"F64": ("float64", 8), "F32": ("float32", 4), "F16": ("float16", 2),
          "BF16": ("bfloat16", 2), "F8_E4M3": ("float8_e4m3fn", 1), "F8_E5M2": ("float8_e5m2", 1),
          "I64": ("int64", 8), "I32": ("int32", 4), "I16": ("int16", 2), "I8": ("int8", 1),
          "U64": ("uint64", 8), "U32": ("uint32", 4), "U16": ("uint16", 2), "U8": ("uint8", 1),
          "BOOL": ("bool", 1), "C64": ("complex64", 8)}


def _no_duplicates(pairs: List[Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise FileRefused("its header names the tensor {} twice".format(brief(k)))
        out[k] = v
    return out


def looks_like(head: bytes, size: int) -> bool:
    if len(head) < 9:
        return False
    n = struct.unpack("<Q", head[:8])[0]
    return 0 < n <= size - 8 and head[8:9] == b"{"


def count(path: str, shown_path: str) -> FileCount:
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise FileRefused("it is shorter than a safetensors header")
        n = struct.unpack("<Q", raw)[0]
        if n > MAX_HEADER or n > size - 8:
            raise FileRefused("its header length {:,} exceeds {} (the file has {:,} bytes)".format(
                n, "100 MB" if n > MAX_HEADER else "the file", size))
        text = f.read(n)
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FileRefused("its header is not JSON ({})".format(brief(str(exc), 100))) from None
    if not isinstance(header, dict):
        raise FileRefused("its header is not a JSON object")
    data_size = size - 8 - n
    figures = rule.Figures()
    ranges = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise FileRefused("its header entry {} is not {{dtype, shape, data_offsets}}".format(
                brief(name)))
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in DTYPES:
            raise FileRefused("tensor {} has the unknown dtype {}".format(brief(name), brief(dtype)))
        if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            raise FileRefused("tensor {} has a malformed shape {}".format(brief(name), brief(shape)))
        if not (isinstance(offsets, list) and len(offsets) == 2 and
                all(type(o) is int and o >= 0 for o in offsets) and offsets[0] <= offsets[1]):
            raise FileRefused("tensor {} has malformed data_offsets {}".format(brief(name),
                                                                          brief(offsets)))
        numel = 1
        for d in shape:
            numel *= d
        kind, width = DTYPES[dtype]
        if offsets[1] - offsets[0] != numel * width:
            raise FileRefused("the header lies about tensor {}: its offsets {} span {:,} bytes, but "
                          "{} {} holds {:,}".format(brief(name), offsets,
                                                    offsets[1] - offsets[0], dtype, shape,
                                                    numel * width))
        ranges.append((offsets[0], offsets[1], name))
        figures.add((name,), kind, False, numel)
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
    return counted(shown_path, FORMAT, result, len(ranges), note=note)


def is_index(name: str) -> bool:
    return name.endswith(".safetensors.index.json")


def index_note(path: str) -> str:
    return "the index of a sharded safetensors model ({}): its shards are counted".format(
        shown(os.path.basename(path)))
