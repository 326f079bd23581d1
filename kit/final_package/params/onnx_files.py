"""ONNX models: a protobuf ModelProto whose weights are the graph's initializers (TensorProto
`dims`, raw data in place or external data beside the model) and the tensors of Constant nodes,
in subgraphs too (If, Loop, Scan). Read with our own wire-format reader (protobuf.py), so no
`onnx` package is needed and tensor data is skipped, never read.

External data (`data_location = EXTERNAL`, keys location, offset, length): the location must be
a relative path inside the model's folder (no absolute path, no `..`, no link: the path
traversal of CVE-2022-25882 and CVE-2024-27318), a regular file long enough for the tensor; the
byte ranges each tensor takes are kept, so the data file's other bytes can be checked (census.py:
an external data file is the model's only where its tensors, or zero padding, fill it).

Bounded: protobuf.py's fields; at most bounds.MAX_DIMS dimensions a tensor; graphs nested at
most bounds.MAX_PROTOBUF_DEPTH deep.
"""
import mmap
import os
import stat
from typing import Dict, List, Optional, Set, Tuple

from scoring.problems import shown
from scoring.quoting import brief
from . import bounds, rule
from .protobuf import MAX_DEPTH, SPAN, VARINT, Reader, signed64
from .result import FileCount, FileRefused, counted

FORMAT = "ONNX"
# TensorProto.DataType -> (name, bits per element)
DATA_TYPES = {1: ("float32", 32), 2: ("uint8", 8), 3: ("int8", 8), 4: ("uint16", 16),
              5: ("int16", 16), 6: ("int32", 32), 7: ("int64", 64), 8: ("string", 0),
              9: ("bool", 8), 10: ("float16", 16), 11: ("float64", 64), 12: ("uint32", 32),
              13: ("uint64", 64), 14: ("complex64", 64), 15: ("complex128", 128),
              16: ("bfloat16", 16), 17: ("float8_e4m3fn", 8), 18: ("float8_e4m3fnuz", 8),
              19: ("float8_e5m2", 8), 20: ("float8_e5m2fnuz", 8), 21: ("uint4", 4),
              22: ("int4", 4), 23: ("float4_e2m1", 4)}
# Field numbers (onnx/onnx.proto)
MODEL_GRAPH = 7
GRAPH_NODE, GRAPH_INITIALIZER, GRAPH_SPARSE_INITIALIZER = 1, 5, 15
NODE_NAME, NODE_OP_TYPE, NODE_ATTRIBUTE = 3, 4, 5
ATTR_T, ATTR_G, ATTR_TENSORS, ATTR_GRAPHS, ATTR_SPARSE = 5, 6, 10, 11, 22
T_DIMS, T_DATA_TYPE, T_FLOAT_DATA, T_NAME, T_RAW, T_DOUBLE_DATA, T_EXTERNAL, T_LOCATION = \
    1, 2, 4, 8, 9, 10, 13, 14
SPARSE_VALUES = 1


class _Count:
    def __init__(self, reader: Reader, folder: str) -> None:
        self.r, self.folder = reader, folder
        self.figures = rule.Figures()
        self.tensors = 0
        self.data_files: Set[Tuple[str, int, int]] = set()   # (file, first byte, end)

    def graph(self, start: int, length: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise FileRefused("its graphs nest more than {} deep".format(MAX_DEPTH))
        for number, wire, value, n in self.r.fields(start, start + length):
            if wire != SPAN:
                continue
            if number == GRAPH_INITIALIZER:
                self.tensor(value, n, "")
            elif number == GRAPH_SPARSE_INITIALIZER:
                for num, w, v, m in self.r.fields(value, value + n):
                    if num == SPARSE_VALUES and w == SPAN:
                        self.tensor(v, m, "")
            elif number == GRAPH_NODE:
                self.node(value, n, depth)

    def node(self, start: int, length: int, depth: int) -> None:
        op, name = "", ""
        attributes: List[tuple] = []
        for number, wire, value, n in self.r.fields(start, start + length):
            if wire == SPAN and number == NODE_OP_TYPE:
                op = self.r.read(value, n).decode("utf-8", "replace")
            elif wire == SPAN and number == NODE_NAME:
                name = self.r.read(value, n).decode("utf-8", "replace")
            elif wire == SPAN and number == NODE_ATTRIBUTE:
                attributes.append((value, n))
        for value, n in attributes:
            for number, wire, v, m in self.r.fields(value, value + n):
                if wire != SPAN:
                    continue
                if number in (ATTR_T, ATTR_TENSORS):     # a Constant's value, or any tensor
                    self.tensor(v, m, "{}:{}".format(op, name))
                elif number == ATTR_SPARSE:
                    for num, w, sv, sm in self.r.fields(v, v + m):
                        if num == SPARSE_VALUES and w == SPAN:
                            self.tensor(sv, sm, "{}:{}".format(op, name))
                elif number in (ATTR_G, ATTR_GRAPHS):
                    self.graph(v, m, depth + 1)

    def tensor(self, start: int, length: int, where: str) -> None:
        dims: List[int] = []
        data_type, name = 1, ""
        raw: Optional[int] = None
        floats = doubles = location = 0
        external: Dict[str, str] = {}
        for number, wire, value, n in self.r.fields(start, start + length):
            if number == T_DIMS:
                if wire == VARINT:
                    dims.append(signed64(value))
                elif wire == SPAN:
                    for v in self.r.varints(value, n):
                        dims.append(signed64(v))
                        if len(dims) > bounds.MAX_DIMS:
                            break
                if len(dims) > bounds.MAX_DIMS:
                    raise FileRefused("a tensor has more than {} dimensions".format(
                        bounds.MAX_DIMS))
            elif number == T_DATA_TYPE and wire == VARINT:
                data_type = value
            elif number == T_NAME and wire == SPAN:
                name = self.r.read(value, n).decode("utf-8", "replace")
            elif number == T_RAW and wire == SPAN:
                raw = n
            elif number == T_FLOAT_DATA:
                floats += n // 4 if wire == SPAN else 1
            elif number == T_DOUBLE_DATA:
                doubles += n // 8 if wire == SPAN else 1
            elif number == T_EXTERNAL and wire == SPAN:
                key = val = ""
                for num, w, v, m in self.r.fields(value, value + n):
                    if w == SPAN and num == 1:
                        key = self.r.read(v, m).decode("utf-8", "replace")
                    elif w == SPAN and num == 2:
                        val = self.r.read(v, m).decode("utf-8", "replace")
                external[key] = val
            elif number == T_LOCATION and wire == VARINT:
                location = value
        label = name or where or "an unnamed tensor"
        if any(d < 0 for d in dims):
            raise FileRefused("tensor {} has a negative dimension {}".format(brief(label), dims))
        if data_type not in DATA_TYPES:
            raise FileRefused("tensor {} has the unknown data type {}".format(brief(label),
                                                                          data_type))
        kind, bits = DATA_TYPES[data_type]
        numel = 1
        for d in dims:
            numel *= d
        need = (numel * bits + 7) // 8
        if location == 1:
            self.external(label, external, need)
        elif raw is not None and bits and raw != need:
            raise FileRefused("tensor {} declares {:,} elements of {} ({:,} bytes) but its raw data "
                          "holds {:,} bytes".format(brief(label), numel, kind, need, raw))
        elif raw is None and (floats or doubles) and floats + doubles != numel:
            raise FileRefused("tensor {} declares {:,} elements but holds {:,}".format(
                brief(label), numel, floats + doubles))
        self.figures.add((label,), kind, False, numel, dims)
        self.tensors += 1

    def external(self, label: str, keys: Dict[str, str], need: int) -> None:
        where = keys.get("location", "")
        parts = where.replace("\\", "/").split("/")
        if not where or where.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
            raise FileRefused("unsafe: tensor {} names its external data {}: only a relative path "
                              "inside the model's folder is read".format(brief(label),
                                                                         brief(where)))
        if not where.isprintable():      # a NUL or a control character: no file has that name
            raise FileRefused("unsafe: tensor {} names its external data {}, a name with a "
                              "control character".format(brief(label), brief(where)))
        path = os.path.join(self.folder, *parts)
        try:
            real = os.path.realpath(path)
            inside = real.startswith(os.path.realpath(self.folder) + os.sep)
            st = os.lstat(path) if inside else None
        except (OSError, ValueError):
            raise FileRefused("tensor {}'s external data file {} is missing".format(
                brief(label), shown(where))) from None
        if st is None:
            raise FileRefused("unsafe: tensor {}'s external data {} lies outside the model's "
                              "folder".format(brief(label), brief(where)))
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused("tensor {}'s external data {} is not a regular file".format(
                brief(label), shown(where)))
        offset = _number(keys.get("offset", "0") or "0", label)
        length = _number(keys["length"], label) if keys.get("length") else st.st_size - offset
        if offset < 0 or length != need or offset + length > st.st_size:
            raise FileRefused("tensor {} needs {:,} bytes of external data, but {} gives {:,} at "
                              "offset {:,} of a {:,}-byte file".format(
                                  brief(label), need, shown(where), length, offset, st.st_size))
        self.data_files.add(("/".join(p for p in parts if p not in ("", ".")), offset,
                             offset + length))


def _number(text: str, label: str) -> int:
    """An external data offset or length: a decimal of at most 20 digits."""
    if len(text) > 20 or not text.strip().isdigit():
        raise FileRefused("tensor {} has a malformed external offset or length {}".format(
            brief(label), brief(text)))
    return int(text)


def count(path: str, shown_path: str, budget: Optional[bounds.Budget] = None) -> FileCount:
    size = os.path.getsize(path)
    graphs = 0
    if size:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as view:
            reader = Reader(view, size, bounds.default_budget(budget))
            c = _Count(reader, os.path.dirname(os.path.abspath(path)))
            try:
                for number, wire, value, n in reader.fields(0, size):
                    if number == MODEL_GRAPH and wire == SPAN:
                        c.graph(value, n, 0)
                        graphs += 1
            finally:
                reader.done()
    if not graphs:
        raise FileRefused("not an ONNX model: no graph found")
    result, note = c.figures.result()
    return counted(shown_path, FORMAT, result, c.tensors, note=note,
                   records=tuple(c.figures.records))._replace(
        data_files=tuple(sorted(c.data_files)))
