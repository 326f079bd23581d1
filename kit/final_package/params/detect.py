"""Which counter reads a file: its first bytes first (a .bin may be a PyTorch zip or a
safetensors file), its name second. A file that no counter reads is NOT_COUNTED with the
reason, and the count is then incomplete; text, configuration and code are IGNORED.
"""
import os
import zipfile
from typing import Callable, Dict

from scoring.problems import shown
from scoring.regular_file import kind_of_file
from . import keras_files, numpy_files, onnx_files, pickle_walk, safetensors, torch_zip
from .result import ZIP_ERRORS, IGNORED, NOT_COUNTED, REFUSED, FileCount, NotCounted, FileRefused

# Names that may hold weights: looked for in the whole package (models/ is read file by file).
WEIGHT_EXTENSIONS = (".pt", ".pth", ".ckpt", ".bin", ".safetensors", ".onnx", ".npy", ".npz",
                     ".h5", ".hdf5", ".keras", ".pkl", ".pickle", ".tar", ".pb", ".tflite",
                     ".msgpack", ".params", ".caffemodel", ".joblib", ".gguf", ".weights",
                     ".t7", ".mar", ".engine", ".trt", ".pdparams")
TEXT_EXTENSIONS = (".txt", ".md", ".json", ".yaml", ".yml", ".cfg", ".ini", ".toml", ".py",
                   ".sh", ".log", ".csv", ".rst", ".html", ".pdf", ".ipynb", ".png", ".jpg",
                   ".jpeg", ".svg")
LEGACY_TORCH = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"
HDF5 = b"\x89HDF\r\n\x1a\n"
MAX_BARE_PICKLE = 64 << 20
UNKNOWN_FORMAT = ("a format this counter does not read (counted: PyTorch zip checkpoints, "
                  "safetensors, ONNX, NumPy .npy/.npz, Keras .keras/.h5)")

Counter = Callable[[str, str], FileCount]


def might_hold_weights(name: str) -> bool:
    return name.lower().endswith(WEIGHT_EXTENSIONS)


def _zip_counter(path: str, name: str) -> Counter:
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except ZIP_ERRORS as exc:
        raise FileRefused("a zip that cannot be read ({})".format(shown(str(exc)))) from None
    if name.endswith(".npz") or (names and all(n.endswith(".npy") for n in names)):
        return numpy_files.count_npz
    if name.endswith(".keras") or keras_files.WEIGHTS_MEMBER in names:
        return keras_files.count_keras
    if any(n.endswith("/data.pkl") or n.endswith("/constants.pkl") for n in names):
        return torch_zip.count
    raise NotCounted("a zip that is no known checkpoint format (no data.pkl, no .npy members, "
                     "no {})".format(keras_files.WEIGHTS_MEMBER))


def _bare_pickle(path: str, shown_path: str) -> FileCount:
    """A pickle that is not a torch zip: walked for safety (a pickle that would run code is
    refused), then not counted."""
    size = os.path.getsize(path)
    if size <= MAX_BARE_PICKLE:
        with open(path, "rb") as f:
            data = f.read(MAX_BARE_PICKLE)
        try:
            pickle_walk.walk(data, "the pickle")
        except FileRefused as exc:
            if str(exc).startswith("unsafe"):
                raise
    raise NotCounted("a bare pickle, not a torch.save zip checkpoint: save the state_dict() with "
                     "torch.save (torch 1.6 or later) or as safetensors")


def counter_for(path: str) -> Counter:
    name = os.path.basename(path).lower()
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(512)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _zip_counter(path, name)
    if head.startswith(numpy_files.MAGIC):
        return numpy_files.count_npy
    if head.startswith(HDF5):
        return keras_files.count_h5
    if head.startswith(LEGACY_TORCH):
        raise NotCounted("a legacy PyTorch file (torch.save before 1.6, or "
                         "_use_new_zipfile_serialization=False): re-save it with a current "
                         "torch.save")
    if len(head) > 262 and head[257:262] == b"ustar":
        raise NotCounted("a tar archive (the oldest torch.save format, or a packed folder): "
                         "unpack it or re-save the weights with a current torch.save")
    if safetensors.looks_like(head, size):
        return safetensors.count
    if name.endswith(".onnx"):
        return onnx_files.count
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return _bare_pickle
    if name.endswith(TEXT_EXTENSIONS):
        raise _Ignored()
    raise NotCounted(UNKNOWN_FORMAT)


class _Ignored(Exception):
    pass


def count_file(path: str, shown_path: str) -> FileCount:
    """The file's count, or why it is not counted: never an exception for a file's content."""
    name = os.path.basename(path)
    st = os.lstat(path)
    what = kind_of_file(st.st_mode)
    if what:
        return FileCount(shown_path, "-", NOT_COUNTED, "{}, not a regular file: never "
                         "followed or read".format(what))
    if safetensors.is_index(name):
        return FileCount(shown_path, "safetensors index", IGNORED, safetensors.index_note(path))
    fmt = _format_guess(name)
    try:
        counter = counter_for(path)
        fmt = FORMATS.get(counter, fmt)
        return counter(path, shown_path)
    except _Ignored:
        return FileCount(shown_path, "-", IGNORED, "not a model file")
    except NotCounted as exc:
        return FileCount(shown_path, fmt, NOT_COUNTED, shown(str(exc)))
    except FileRefused as exc:
        return FileCount(shown_path, fmt, REFUSED, shown(str(exc)))
    except OSError as exc:
        return FileCount(shown_path, fmt, NOT_COUNTED, "it cannot be read ({})".format(
            exc.strerror or type(exc).__name__))


FORMATS: Dict[Counter, str] = {torch_zip.count: torch_zip.FORMAT, safetensors.count: safetensors.FORMAT,
           onnx_files.count: onnx_files.FORMAT, numpy_files.count_npy: "NumPy .npy",
           numpy_files.count_npz: "NumPy .npz", keras_files.count_h5: "Keras HDF5",
           keras_files.count_keras: "Keras .keras", _bare_pickle: "pickle"}


_GUESSES: Dict[str, str] = {".pt": "PyTorch", ".pth": "PyTorch", ".ckpt": "checkpoint", ".bin": "binary",
            ".safetensors": "safetensors", ".onnx": "ONNX", ".npy": "NumPy .npy",
            ".npz": "NumPy .npz", ".h5": "HDF5", ".hdf5": "HDF5", ".keras": "Keras .keras",
            ".pkl": "pickle", ".pickle": "pickle"}


def _format_guess(name: str) -> str:
    return _GUESSES.get(os.path.splitext(name.lower())[1], "unknown")
