"""Which counter reads a file: by its content, never by its name alone (a checkpoint may be
called vocab.dat, raw floats notes.txt).

Every file that is not a zip is first walked as a pickle from its first byte, whatever its size
and name (pickle_walk.py): torch.load reads any such file through its legacy loader, and a
protocol 0 or 1 pickle has no header to recognise it by. A pickle that would import something
off the allow-list is refused as unsafe, naming it. Then the formats, by their first bytes:
a zip (a torch.save checkpoint, .npz, .keras), .npy, HDF5, a legacy torch.save file, safetensors,
ONNX (by name, or a protobuf that reads as a model), a tar; a bare pickle (its NumPy arrays are
counted); then what holds no weights (plain_files.py: text, images, PDF...), ignored; anything
else is not counted, and the count is incomplete.

count_file never raises for a file's content: a counter that fails in a way not foreseen fails
closed (refused, the jury decides), never as an internal error.
"""
import mmap
import os
import tarfile
import zipfile
from typing import Callable, Dict, FrozenSet, Optional, Tuple, Union

from scoring.problems import shown
from scoring.regular_file import kind_of_file
from . import (bounds, keras_files, legacy_torch, numpy_files, onnx_files, pickle_walk,
               plain_files, safetensors, torch_zip)
from .pickle_ops import OPCODES
from .result import (ZIP_ERRORS, IGNORED, NOT_COUNTED, REFUSED, FileCount,
                     FileRefused, NotCounted)

HDF5 = b"\x89HDF\r\n\x1a\n"
UNKNOWN_FORMAT = ("a format this counter does not read (counted: PyTorch zip checkpoints, "
                  "safetensors, ONNX, NumPy .npy/.npz, Keras .keras/.h5)")
_OTHER_FORMATS = ((b"GGUF", 0, "a GGUF model (llama.cpp)"), (b"TFL3", 4, "a TFLite model"),
                  (b"\x1f\x8b", 0, "a gzip-compressed file"), (b"7z\xbc\xaf", 0, "a 7-Zip archive"),
                  (b"Rar!", 0, "a RAR archive"), (b"\xfd7zXZ", 0, "an xz-compressed file"),
                  (b"BZh", 0, "a bzip2-compressed file"),
                  (b"\x28\xb5\x2f\xfd", 0, "a Zstandard-compressed file"))
_TAR_MEMBERS = 10000

Counter = Callable[[str, str, bounds.Budget], FileCount]


def _zip_counter(path: str, name: str, budget: bounds.Budget) -> Tuple[str, Counter]:
    declared = bounds.zip_entries(path)
    if declared > bounds.MAX_ZIP_ENTRIES:
        raise FileRefused("a zip of {:,} entries, more than the {:,} read".format(
            declared, bounds.MAX_ZIP_ENTRIES))
    if declared > budget.left["entries"]:
        raise budget.exhausted("entries", "the zip")
    budget.take("entries", declared)
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except ZIP_ERRORS as exc:
        raise FileRefused("a zip that cannot be read ({})".format(shown(str(exc)))) from None
    torch_zip.refuse_duplicates(names, "the zip")
    if name.endswith(".npz") or (names and all(n.endswith(".npy") for n in names)):
        return "NumPy .npz", numpy_files.count_npz
    if name.endswith(".keras") or keras_files.WEIGHTS_MEMBER in names:
        return "Keras .keras", keras_files.count_keras
    if any(n.endswith("/data.pkl") or n.endswith("/constants.pkl") for n in names):
        return torch_zip.FORMAT, torch_zip.count
    raise NotCounted("a zip that is no known checkpoint format (no data.pkl, no .npy members, "
                     "no {})".format(keras_files.WEIGHTS_MEMBER))


def _as_pickle(view: object, budget: bounds.Budget,
               modules: FrozenSet[str]) -> Union[None, str, pickle_walk.Walked]:
    """The file read as torch.load's legacy loader would read it: its first pickle's value; a
    reason, if it is a pickle this walk cannot read (nothing in it is imported); None if it is
    no pickle. FileRefused if it would run anything."""
    try:
        return pickle_walk.walk(view, "the pickle", budget, persistent=pickle_walk.NO_PERSISTENT)
    except pickle_walk.Damaged as exc:
        return str(exc) if exc.at_stop else None
    except pickle_walk.NotAPickle as exc:
        for name in exc.imports:
            if name.split(".", 1)[0] in modules:
                raise FileRefused("unsafe: the pickle imports {}, a module of the package itself: "
                                  "torch.load would import it, which runs its code (refused: "
                                  "nothing was run)".format(shown(name))) from None
        return None


def _tar(path: str) -> None:
    """The oldest torch.save format is a tar of pickles (sys_info, pickle, storages,
    tensors), which torch.load unpickles: not read, so refused; any other tar is not counted."""
    try:
        with tarfile.open(path, "r:") as tar:
            for _ in range(_TAR_MEMBERS):
                member = tar.next()
                if member is None:
                    break
                if member.name in ("pickle", "storages", "tensors"):
                    raise FileRefused("not readable: the oldest torch.save format (a tar of "
                                      "pickles, which torch.load unpickles and this counter "
                                      "does not read; refused: nothing was run): re-save the "
                                      "weights with a current torch.save")
    except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeDecodeError):
        pass
    raise NotCounted("a tar archive (a packed folder): unpack it, or re-save the weights with "
                     "a current torch.save")


def _first_pickle(path: str, head: bytes, size: int, budget: bounds.Budget,
                  modules: FrozenSet[str]) -> Union[None, str, pickle_walk.Walked]:
    # No pickle begins with a byte that is no opcode, nor with a PNG's signature (NEWFALSE,
    # then a text persistent id, which no loader resolves): Python's unpickler stops at once.
    if not size or head[0] not in OPCODES or head.startswith(b"\x89PNG\r\n\x1a\n"):
        return None
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as view:
        return _as_pickle(view, budget, modules)


def _by_content(path: str, name: str, head: bytes, size: int, budget: bounds.Budget,
                modules: FrozenSet[str]) -> Tuple[str, Counter]:
    """(the format's name, its counter); NotCounted, FileRefused or _Ignored."""
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _zip_counter(path, name, budget)
    first = _first_pickle(path, head, size, budget, modules)
    if isinstance(first, pickle_walk.Walked) and legacy_torch.is_magic(first):
        walked = first
        return legacy_torch.FORMAT, lambda p, s, b: legacy_torch.count(p, s, walked, b)
    if head.startswith(numpy_files.MAGIC):
        return "NumPy .npy", lambda p, s, b: numpy_files.count_npy(p, s)
    if head.startswith(HDF5):
        return "Keras HDF5", keras_files.count_h5
    if len(head) > 262 and head[257:262] == b"ustar":
        _tar(path)
    if safetensors.looks_like(head, size):
        return safetensors.FORMAT, safetensors.count
    if name.endswith(".onnx"):
        return onnx_files.FORMAT, onnx_files.count
    if isinstance(first, str):
        raise NotCounted("a bare pickle this counter cannot read ({}): save the state_dict() "
                         "with torch.save (torch 1.6 or later) or as safetensors".format(first))
    if first is not None:
        walked = first
        return "pickle", lambda p, s, b: _bare_pickle(s, walked, b)
    for magic, at, what in _OTHER_FORMATS:
        if head[at:at + len(magic)] == magic:
            raise NotCounted("{}, a format this counter does not read".format(what))
    if head[:1] == b"\x08":     # a protobuf's first field: ONNX's ir_version
        try:
            found = onnx_files.count(path, "", budget)
        except (FileRefused, NotCounted):
            pass
        else:
            return onnx_files.FORMAT, lambda p, s, b: found._replace(path=s)
    plain = plain_files.kind(path, head, size, budget)
    if plain:
        raise _Ignored(plain)
    raise NotCounted("{} ({:,} bytes)".format(UNKNOWN_FORMAT, size))


def _bare_pickle(shown_path: str, walked: pickle_walk.Walked,
                 budget: bounds.Budget) -> FileCount:
    """A pickle that is not a torch.save zip: its NumPy arrays are counted (a pickled dict of
    arrays holds weights); one without any is not counted."""
    found = torch_zip.tally(shown_path, "pickle of NumPy arrays", walked, budget)
    if not found.tensors:
        raise NotCounted("a bare pickle, not a torch.save zip checkpoint: save the state_dict() "
                         "with torch.save (torch 1.6 or later) or as safetensors")
    return found


class _Ignored(Exception):
    pass


def count_file(path: str, shown_path: str, budget: Optional[bounds.Budget] = None,
               modules: FrozenSet[str] = frozenset()) -> FileCount:
    """The file's count, or why it is not counted: never an exception for a file's content.
    modules: the names the package's own Python modules and folders can be imported by."""
    budget = bounds.default_budget(budget)
    name = os.path.basename(path)
    fmt = _format_guess(name)
    try:
        st = os.lstat(path)
        what = kind_of_file(st.st_mode)
        if what:
            return FileCount(shown_path, "-", NOT_COUNTED, "{}, not a regular file: never "
                             "followed or read".format(what))
        with open(path, "rb") as f:
            head = f.read(512)
        fmt, counter = _by_content(path, name.lower(), head, st.st_size, budget, modules)
        return counter(path, shown_path, budget)
    except _Ignored as exc:
        if str(exc) == "text" and safetensors.is_index(name):
            return FileCount(shown_path, "safetensors index", IGNORED,
                             safetensors.index_note(path))
        return FileCount(shown_path, "-", IGNORED, "not a model file: {}".format(exc))
    except NotCounted as exc:
        return FileCount(shown_path, fmt, NOT_COUNTED, shown(str(exc)))
    except FileRefused as exc:
        return FileCount(shown_path, fmt, REFUSED, shown(str(exc)))
    except OSError as exc:
        return FileCount(shown_path, fmt, NOT_COUNTED, "it cannot be read ({})".format(
            exc.strerror or type(exc).__name__))
    except (Exception, MemoryError, RecursionError) as exc:   # fail closed, never a crash
        return FileCount(shown_path, fmt, REFUSED, "it could not be read safely: the counter "
                         "failed on it ({}); refused, the jury decides".format(
                             type(exc).__name__))


# The format a file that cannot be read is named for, by its name.
_GUESSES: Dict[str, str] = {".pt": "PyTorch", ".pth": "PyTorch", ".ckpt": "checkpoint", ".bin": "binary",
            ".safetensors": "safetensors", ".onnx": "ONNX", ".npy": "NumPy .npy",
            ".npz": "NumPy .npz", ".h5": "HDF5", ".hdf5": "HDF5", ".keras": "Keras .keras",
            ".pkl": "pickle", ".pickle": "pickle"}


def _format_guess(name: str) -> str:
    return _GUESSES.get(os.path.splitext(name.lower())[1], "unknown")
