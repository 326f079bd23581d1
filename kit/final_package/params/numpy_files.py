"""NumPy `.npy` and `.npz` files: only the .npy headers are read (magic `\\x93NUMPY`, version, a
Python-literal dict with `descr`, `fortran_order`, `shape`), parsed with ast.literal_eval (a
literal, never code). An object dtype would need pickle (allow_pickle): refused. The data must
be exactly the shape's elements times the dtype's size.

Bounded: a header of at most bounds.MAX_NPY_HEADER bytes (numpy.load's own limit), at most
bounds.MAX_DIMS dimensions each below 2^63; a dtype numpy cannot make (an item size of 2^70) is
refused, whatever numpy raises for it.
"""
import ast
import os
import struct
import zipfile
from typing import IO, Optional, Tuple

from scoring.problems import shown
from scoring.quoting import brief
from scoring import zips
from . import bounds, rule
from .result import ZIP_ERRORS, FileCount, FileRefused, counted

MAGIC = b"\x93NUMPY"
MAX_HEADER = bounds.MAX_NPY_HEADER


def _header(f: IO[bytes], what: str) -> Tuple[str, tuple, int, int]:
    """(dtype name, shape, bytes per element, header length) of the .npy at f's position."""
    head = f.read(10)
    if len(head) < 10 or head[:6] != MAGIC:
        raise FileRefused("{} is not a .npy array (no \\x93NUMPY magic)".format(what))
    major = head[6]
    if major == 1:
        n, start = struct.unpack("<H", head[8:10])[0], 10
    elif major in (2, 3):
        n, start = struct.unpack("<I", head[8:10] + f.read(2))[0], 12
    else:
        raise FileRefused("{} has the unknown .npy version {}".format(what, major))
    if n > MAX_HEADER:
        raise FileRefused("{} has a .npy header of {:,} bytes, more than the {:,} numpy.load "
                          "reads".format(what, n, MAX_HEADER))
    text = f.read(n)
    try:
        meta = ast.literal_eval(text.decode("utf-8" if major == 3 else "latin-1"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError):
        raise FileRefused("{} has a .npy header that is not a Python literal".format(what)) \
            from None
    if not isinstance(meta, dict) or set(meta) != {"descr", "fortran_order", "shape"}:
        raise FileRefused("{} has a .npy header without exactly descr, fortran_order and "
                      "shape".format(what))
    shape = meta["shape"]
    if not isinstance(shape, tuple) or len(shape) > bounds.MAX_DIMS or \
            not all(type(d) is int and 0 <= d <= bounds.MAX_DIM for d in shape):
        raise FileRefused("{} has a malformed shape {}".format(what, brief(shape)))
    import numpy
    try:
        dtype = numpy.dtype(meta["descr"])
        width = int(dtype.itemsize)
        if width < 0:       # numpy 1.16 wraps an item size of 2^70 around to -1
            raise OverflowError(width)
    except Exception:       # TypeError, ValueError, OverflowError...: numpy cannot make it
        raise FileRefused("{} has a dtype numpy cannot make: {}".format(
            what, brief(meta["descr"]))) from None
    if dtype.hasobject:
        raise FileRefused("unsafe: {} holds Python objects (dtype {}), which only a pickle can "
                      "load (allow_pickle): refused, nothing was run".format(what, dtype))
    return dtype.name, shape, width, start + n


def _numel(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _check_size(what: str, total: int, header: int, numel: int, width: int) -> None:
    if total - header != numel * width:
        raise FileRefused("{} declares {:,} elements of {} bytes ({:,} bytes) but holds {:,} data "
                      "bytes".format(what, numel, width, numel * width, total - header))


def count_npy(path: str, shown_path: str, budget: Optional[bounds.Budget] = None) -> FileCount:
    with open(path, "rb") as f:
        kind, shape, width, header = _header(f, "the file")
    numel = _numel(shape)
    _check_size("the file", os.path.getsize(path), header, numel, width)
    figures = rule.Figures()
    figures.add((os.path.basename(path)[:-4],), kind, False, numel, shape)
    result, note = figures.result()
    return counted(shown_path, "NumPy .npy", result, 1, note=note,
                   records=tuple(figures.records))


def count_npz(path: str, shown_path: str, budget: Optional[bounds.Budget] = None) -> FileCount:
    """Every member's header (at most the package's entries left)."""
    budget = bounds.default_budget(budget)
    figures = rule.Figures()
    tensors = 0
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                zips.check_members(zf, path + ".d")
            except zips.ArchiveProblem as exc:
                raise FileRefused("the .npz zip is unsafe: {}".format(shown(str(exc)))) from None
            members = [i for i in zf.infolist() if not i.is_dir()]
            if len(members) > budget.left["entries"]:
                raise budget.exhausted("entries", "the .npz zip")
            budget.take("entries", len(members))
            for info in sorted(members, key=lambda i: i.filename):
                what = "member {}".format(shown(info.filename))
                with zf.open(info) as f:
                    kind, shape, width, header = _header(f, what)
                numel = _numel(shape)
                _check_size(what, info.file_size, header, numel, width)
                name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                figures.add((name,), kind, False, numel, shape)
                tensors += 1
    except ZIP_ERRORS as exc:
        raise FileRefused("the .npz zip cannot be read ({})".format(
            shown(str(exc)) or type(exc).__name__)) from None
    result, note = figures.result()
    return counted(shown_path, "NumPy .npz", result, tensors, note=note,
                   records=tuple(figures.records))
