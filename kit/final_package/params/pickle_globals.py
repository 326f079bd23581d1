"""What a pickle may import, and the inert records that stand for what it builds.

An allow-list, not a deny-list: torch.load(weights_only=False) imports and calls whatever a
pickle names, and any function can run code when a pickle calls it (os.system, and torch's own
torch.hub._load_local, which imports a hubconf.py). Only what is known to rebuild tensors,
storages and plain containers is accepted, and each accepted "call" is done by our own function
below, which builds a record (a tensor's storage, offset, size and stride) and never imports
anything. torch's rebuild functions of tensors this counter cannot size (quantized, sparse,
nested) are named apart: not readable, refused all the same. Everything else is refused as
unsafe, naming it.
"""
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from scoring.problems import shown
from scoring.quoting import brief
from . import bounds
from .pickle_ops import Blob
from .result import FileRefused

# Storage types (persistent ids) -> (dtype, bytes per element). UntypedStorage counts bytes.
STORAGE_DTYPES = {
    "FloatStorage": ("float32", 4), "DoubleStorage": ("float64", 8),
    "HalfStorage": ("float16", 2), "BFloat16Storage": ("bfloat16", 2),
    "ComplexFloatStorage": ("complex64", 8), "ComplexDoubleStorage": ("complex128", 16),
    "LongStorage": ("int64", 8), "IntStorage": ("int32", 4), "ShortStorage": ("int16", 2),
    "CharStorage": ("int8", 1), "ByteStorage": ("uint8", 1), "BoolStorage": ("bool", 1),
    "QInt8Storage": ("qint8", 1), "QUInt8Storage": ("quint8", 1), "QInt32Storage": ("qint32", 4),
    "QUInt4x2Storage": ("quint4x2", 1), "QUInt2x4Storage": ("quint2x4", 1),
    "UntypedStorage": ("uint8", 1),
}
# torch.<dtype> globals (_rebuild_tensor_v3's dtype argument) -> bytes per element.
TORCH_DTYPES = {
    "float32": 4, "float": 4, "float64": 8, "double": 8, "float16": 2, "half": 2,
    "bfloat16": 2, "complex64": 8, "complex128": 16, "complex32": 4, "int64": 8, "long": 8,
    "int32": 4, "int": 4, "int16": 2, "short": 2, "int8": 1, "uint8": 1, "bool": 1,
    "uint16": 2, "uint32": 4, "uint64": 8, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
}
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                "int": "int32", "short": "int16"}
_NUMPY = ("numpy", "numpy.core.multiarray", "numpy._core.multiarray", "numpy.core.numeric",
          "numpy._core.numeric")
# torch's own rebuild functions of tensors this counter cannot size (torch.load's weights_only
# unpickler accepts them): not code from the file, but refused all the same.
UNSIZED_TENSORS = frozenset((
    "_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_sparse_csr_tensor",
    "_rebuild_meta_tensor_no_storage", "_rebuild_nested_tensor", "_rebuild_wrapper_subclass",
    "_rebuild_device_tensor_from_numpy", "_rebuild_xla_tensor", "_rebuild_mtia_tensor"))


class Global(NamedTuple):
    """A global the allow-list accepts (never imported: a name only)."""
    module: str
    name: str

    def __str__(self) -> str:
        return "{}.{}".format(self.module, self.name)


class Foreign:
    """A global off the allow-list: what torch.load would import, and what it would run if the
    pickle went on to call it, build it or return it."""
    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __str__(self) -> str:
        return "{}.{}".format(self.module, self.name)


class Storage(NamedTuple):
    kind: str        # "FloatStorage", ...
    key: str         # the record's name under data/
    location: str
    numel: int       # elements (bytes for UntypedStorage)


class Tensor:
    __slots__ = ("storage", "offset", "shape", "stride", "dtype", "is_parameter")

    def __init__(self, storage: Storage, offset: int, shape: tuple, stride: tuple,
                 dtype: str) -> None:
        self.storage, self.offset, self.shape, self.stride = storage, offset, shape, stride
        self.dtype, self.is_parameter = dtype, False


class Array:
    """A NumPy array inside the pickle: its dtype and shape (set by BUILD or _frombuffer)."""
    __slots__ = ("dtype", "shape")

    def __init__(self, dtype: str = "", shape: tuple = ()) -> None:
        self.dtype, self.shape = dtype, shape


class Inert:
    """An accepted object that is no tensor: a NumPy scalar or dtype, a Namespace."""
    __slots__ = ("what", "detail")

    def __init__(self, what: str, detail: Any = None) -> None:
        self.what, self.detail = what, detail


def plausible(module: str, name: str) -> bool:
    """Names a Python module could have: what a pickler writes (a module's __name__ and a
    qualified name). Anything else is no import Python's unpickler could make."""
    return all(part.isidentifier() for part in module.split(".")) and \
        all(part.isidentifier() for part in name.split("."))


def numel_of(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def ints(value: Any, what: str) -> tuple:
    """A size or stride: at most MAX_DIMS non-negative integers, each below 2^63."""
    if not isinstance(value, tuple) or len(value) > bounds.MAX_DIMS or \
            not all(type(v) is int and 0 <= v <= bounds.MAX_DIM for v in value):
        raise FileRefused("malformed tensor: its {} is not a tuple of at most {} non-negative "
                          "64-bit integers ({})".format(what, bounds.MAX_DIMS, brief(value)))
    return value


def _tensor(storage: Any, offset: Any, size: Any, stride: Any,
            dtype: Optional[str] = None) -> Tensor:
    if not isinstance(storage, Storage):
        raise FileRefused("malformed tensor: its storage is {}, not a storage record".format(
            brief(type(storage).__name__)))
    if type(offset) is not int or not 0 <= offset <= bounds.MAX_DIM:
        raise FileRefused("malformed tensor: its storage offset is {}".format(brief(offset)))
    size, stride = ints(size, "size"), ints(stride, "stride")
    if len(size) != len(stride):
        raise FileRefused("malformed tensor: {} sizes but {} strides".format(len(size),
                                                                             len(stride)))
    return Tensor(storage, offset, size, stride, dtype or STORAGE_DTYPES[storage.kind][0])


def _rebuild_v2(args: tuple) -> Tensor:
    if len(args) < 4:
        raise FileRefused("malformed tensor: _rebuild_tensor with {} arguments".format(len(args)))
    return _tensor(args[0], args[1], args[2], args[3])


def _rebuild_v3(args: tuple) -> Tensor:
    if len(args) < 7 or not isinstance(args[6], Inert) or args[6].what != "torch dtype":
        raise FileRefused("malformed tensor: _rebuild_tensor_v3 without a torch dtype")
    return _tensor(args[0], args[1], args[2], args[3], args[6].detail)


def _parameter(args: tuple) -> Tensor:
    if not args or not isinstance(args[0], Tensor):
        raise FileRefused("malformed parameter: it wraps no tensor")
    args[0].is_parameter = True
    return args[0]


def key_ok(key: Any) -> bool:
    """A dict key a checkpoint holds: a plain value or a flat tuple of plain values (hashing a
    tuple nested deep recurses in C: a million levels overflow the stack)."""
    if type(key) in _PLAIN or isinstance(key, (Tensor, Array, Inert, Foreign, Blob)):
        return True
    return type(key) in (tuple, Global, Storage) and all(type(k) in _PLAIN for k in key)


_PLAIN = (str, int, float, bool, bytes, type(None))


def as_dict(pairs: List[tuple]) -> dict:
    out = {}
    for k, v in pairs:
        if not key_ok(k):
            raise FileRefused("a dict key is {}, which no checkpoint holds".format(
                "a nested tuple" if isinstance(k, tuple) else type(k).__name__))
        out[k] = v
    return out


def _ordered_dict(args: tuple) -> dict:
    if not args:
        return {}
    if len(args) == 1 and isinstance(args[0], list) and \
            all(isinstance(p, tuple) and len(p) == 2 for p in args[0]):
        return as_dict(args[0])
    raise FileRefused("malformed OrderedDict arguments")


def _encode(args: tuple) -> Any:
    # protocol 2 pickles bytes as _codecs.encode(text, 'latin1'): the value, not a call
    if len(args) == 2 and isinstance(args[0], (str, Blob)) and args[1] in ("latin1", "latin-1"):
        return args[0].encode("latin-1", "replace") if isinstance(args[0], str) else args[0]
    raise FileRefused("_codecs.encode with arguments no pickler writes")


def _numpy_scalar(args: tuple) -> Inert:
    return Inert("numpy scalar")


def _numpy_dtype(args: tuple) -> Inert:
    if not args or not isinstance(args[0], str):
        raise FileRefused("malformed numpy dtype")
    return Inert("numpy dtype", args[0])


def _numpy_reconstruct(args: tuple) -> Array:
    if not args or args[0] != Global("numpy", "ndarray"):
        raise FileRefused("numpy _reconstruct of something that is not an ndarray")
    return Array()


def _numpy_frombuffer(args: tuple) -> Array:
    # protocol 5: numpy.core.numeric._frombuffer(buffer, dtype, shape, order)
    if len(args) != 4 or not isinstance(args[1], Inert) or args[1].what != "numpy dtype":
        raise FileRefused("numpy _frombuffer with arguments numpy does not write")
    array = Array(str(args[1].detail), ints(tuple(args[2]) if isinstance(args[2], (tuple, list))
                                           else args[2], "shape"))
    check_array_data(array, args[0])
    return array


def itemsize(descr: str) -> Optional[int]:
    """Bytes per element of a simple NumPy dtype string ('<f4' -> 4), None if not simple."""
    code = descr.lstrip("<>|=")
    digits = code[1:]
    if code[:1] in ("f", "i", "u", "c", "b", "V", "S") and digits.isdigit() and len(digits) < 6:
        return int(digits)
    return None


def check_array_data(array: Array, data: Any) -> None:
    """The array's data must hold exactly its elements (a header lying about its shape)."""
    width = itemsize(array.dtype)
    length = data.length if isinstance(data, Blob) else len(data) if \
        isinstance(data, (bytes, bytearray)) else None
    if width is not None and length is not None and length != numel_of(array.shape) * width:
        raise FileRefused("a NumPy array of shape {} and dtype {} holds {:,} data bytes".format(
            brief(array.shape), brief(array.dtype), length))


def _size(args: tuple) -> Any:
    return tuple(args[0]) if args and isinstance(args[0], (tuple, list)) else ()


def _set(args: tuple) -> list:
    return list(args[0]) if args and isinstance(args[0], list) else []


# Accepted globals: (module, name) -> what REDUCE does with it.
CALLS: Dict[Tuple[str, str], Callable[[tuple], Any]] = {
    ("collections", "OrderedDict"): _ordered_dict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_v3,
    ("torch._utils", "_rebuild_parameter"): _parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _parameter,
    ("torch", "Size"): _size,
    ("torch", "device"): lambda args: "device",
    ("_codecs", "encode"): _encode,
    ("builtins", "set"): _set,
    ("builtins", "frozenset"): _set,
}
for _m in _NUMPY:
    CALLS[(_m, "scalar")] = _numpy_scalar
    CALLS[(_m, "dtype")] = _numpy_dtype
    CALLS[(_m, "_reconstruct")] = _numpy_reconstruct
    CALLS[(_m, "_frombuffer")] = _numpy_frombuffer
# Accepted globals that are values only (a class NEWOBJ builds, a storage type, ndarray).
VALUES = {("numpy", "ndarray"), ("argparse", "Namespace")}
VALUES.update(("torch", name) for name in STORAGE_DTYPES)
# What torch.save writes for the dtypes with no typed storage (float8, uint16...): the untyped
# storage by its defining module, with _rebuild_tensor_v3 naming the dtype.
VALUES.add(("torch.storage", "UntypedStorage"))


def accepted(module: str, name: str) -> Any:
    """The value of an accepted global: a Global, or an Inert torch dtype; None if it is not
    accepted."""
    if (module, name) in CALLS or (module, name) in VALUES:
        return Global(module, name)
    if module == "torch" and name in TORCH_DTYPES:
        return Inert("torch dtype", _DTYPE_NAMES.get(name, name))
    return None


def _hint(g: Any) -> str:
    if g.module in ("__main__",) or g.module.startswith(("torch.nn", "models", "model")) or \
            g.name[:1].isupper():
        return (" It looks like a whole object (torch.save(model)): save "
                "model.state_dict() instead, which holds tensors only.")
    return ""


def refusal(g: Any) -> FileRefused:
    """Why a global off the allow-list is refused, naming it."""
    what = shown(str(g))
    if g.module == "torch._utils" and g.name in UNSIZED_TENSORS:
        return FileRefused("not readable: the pickle uses {}, which this counter does not read "
                           "(quantized, sparse or subclassed tensors; refused: nothing was run). "
                           "Save a plain state_dict() of the float model.".format(what))
    if g.module == "torch" or g.module.startswith("torch."):
        return FileRefused("unsafe: the pickle imports {}, a torch function that is not one of "
                           "the tensor rebuild functions this counter reads; torch.load would "
                           "import and call it, and torch functions can run code (torch.hub."
                           "_load_local runs a hubconf.py) (refused: nothing was run). Save a "
                           "plain state_dict() with torch.save.{}".format(what, _hint(g)))
    return FileRefused("unsafe: the pickle imports {}, which is not a tensor, a storage or a plain "
                       "container; torch.load would import it and could run code from the file "
                       "(refused: nothing was run).{}".format(what, _hint(g)))
