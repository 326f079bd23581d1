"""Read a pickle without unpickling it: its opcodes (pickletools.genops, the standard library's
disassembler) drive a small stack machine that builds inert values only.

Unpickling runs code: GLOBAL imports any callable, REDUCE calls it (os.system through
`__reduce__`). Here no global is ever imported and nothing is ever called. A global is accepted
only if it is on the allow-list below (what a tensor state dict or a training checkpoint holds:
the tensor rebuild functions, the storage types, OrderedDict, torch.Size, the bytes codec,
NumPy scalars and arrays, argparse.Namespace), and each accepted "call" is done by our own
function that builds a record (a tensor's storage, offset, size and stride). Anything else is
refused and named, before anything else happens: the file would run code when loaded with
torch.load, or pickles objects no tensor checkpoint needs.
"""
import pickletools
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

from scoring.problems import shown
from scoring.quoting import brief
from . import rule
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


class Global(NamedTuple):
    module: str
    name: str

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
    """A NumPy array inside the pickle: its dtype and shape (set by BUILD)."""
    __slots__ = ("dtype", "shape")

    def __init__(self) -> None:
        self.dtype: str = ""
        self.shape: tuple = ()


class Inert:
    """An accepted object that is no tensor: a NumPy scalar or dtype, a Namespace."""
    __slots__ = ("what", "detail")

    def __init__(self, what: str, detail: Any = None) -> None:
        self.what, self.detail = what, detail


class _Mark:
    pass


MARK = _Mark()


def _ints(value: Any, what: str) -> tuple:
    if not isinstance(value, tuple) or not all(type(v) is int and v >= 0 for v in value):
        raise FileRefused("malformed tensor: its {} is not a tuple of non-negative integers "
                      "({})".format(what, brief(value)))
    return value


def _tensor(storage: Any, offset: Any, size: Any, stride: Any, dtype: Optional[str] = None) -> Tensor:
    if not isinstance(storage, Storage):
        raise FileRefused("malformed tensor: its storage is {}, not a storage record".format(
            brief(type(storage).__name__)))
    if type(offset) is not int or offset < 0:
        raise FileRefused("malformed tensor: its storage offset is {}".format(brief(offset)))
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride):
        raise FileRefused("malformed tensor: {} sizes but {} strides".format(len(size), len(stride)))
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


def _ordered_dict(args: tuple) -> dict:
    if not args:
        return {}
    if len(args) == 1 and isinstance(args[0], list) and \
            all(isinstance(p, tuple) and len(p) == 2 for p in args[0]):
        return _dict(args[0])
    raise FileRefused("malformed OrderedDict arguments")


def _dict(pairs: List[tuple]) -> dict:
    out = {}
    for k, v in pairs:
        try:
            out[k] = v
        except TypeError:
            raise FileRefused("a dict key is {}, which no checkpoint holds".format(
                type(k).__name__)) from None
    return out


def _encode(args: tuple) -> bytes:
    # protocol 2 pickles bytes as _codecs.encode(text, 'latin1'): the value, not a call
    if len(args) == 2 and isinstance(args[0], str) and args[1] in ("latin1", "latin-1"):
        return args[0].encode("latin-1", "replace")
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


# Accepted globals: (module, name) -> what REDUCE does with it (None: only a value).
CALLS: Dict[Tuple[str, str], Callable[[tuple], Any]] = {
    ("collections", "OrderedDict"): _ordered_dict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_v3,
    ("torch._utils", "_rebuild_parameter"): _parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _parameter,
    ("torch", "Size"): lambda args: tuple(args[0]) if args and isinstance(args[0], (tuple, list))
    else (),
    ("torch", "device"): lambda args: "device",
    ("_codecs", "encode"): _encode,
    ("builtins", "set"): lambda args: list(args[0]) if args and isinstance(args[0], list) else [],
    ("builtins", "frozenset"): lambda args: list(args[0]) if args and isinstance(args[0], list)
    else [],
}
for _m in _NUMPY:
    CALLS[(_m, "scalar")] = _numpy_scalar
    CALLS[(_m, "dtype")] = _numpy_dtype
    CALLS[(_m, "_reconstruct")] = _numpy_reconstruct
VALUES = {("numpy", "ndarray"), ("argparse", "Namespace")}
VALUES.update(("torch", name) for name in STORAGE_DTYPES)
# What torch.save writes for the dtypes with no typed storage (float8, uint16...): the untyped
# storage by its defining module, with _rebuild_tensor_v3 naming the dtype.
VALUES.add(("torch.storage", "UntypedStorage"))


def _hint(g: Global) -> str:
    if g.module in ("__main__",) or g.module.startswith(("torch.nn", "models", "model")) or \
            g.name[:1].isupper():
        return (" It looks like a whole object (torch.save(model)): save "
                "model.state_dict() instead, which holds tensors only.")
    return ""


def _refuse_global(g: Global) -> FileRefused:
    if g.module == "torch" or g.module.startswith("torch."):
        # torch's own rebuild functions for quantized, sparse, nested or subclassed tensors:
        # not code from the file, but nothing this counter can size without running it.
        return FileRefused("not readable: the pickle uses {}, which this counter does not read "
                       "(quantized, sparse or subclassed tensors, or a torch object that is no "
                       "tensor; refused: nothing was run). Save a plain state_dict() of the "
                       "float model.{}".format(shown(str(g)), _hint(g)))
    return FileRefused("unsafe: the pickle imports {}, which is not a tensor, a storage or a plain "
                   "container; torch.load would import it and could run code from the file "
                   "(refused: nothing was run).{}".format(shown(str(g)), _hint(g)))


def _global(module: str, name: str) -> Any:
    g = Global(module, name)
    if (module, name) in CALLS or (module, name) in VALUES:
        return g
    if module == "torch" and name in TORCH_DTYPES:
        return Inert("torch dtype", _DTYPE_NAMES.get(name, name))
    raise _refuse_global(g)


class Walked(NamedTuple):
    root: Any
    storages: Dict[str, Storage]


def walk(data: bytes, what: str = "the pickle") -> Walked:
    """The inert value of the pickle data; FileRefused naming the first thing refused."""
    stack: List[Any] = []
    items: List[Any] = []
    marks: List[int] = []
    memo: Dict[int, Any] = {}
    storages: Dict[str, Storage] = {}

    def pop_mark() -> List[Any]:
        if not marks:
            raise FileRefused("{} is malformed (no MARK)".format(what))
        start = marks.pop()
        items = stack[start:]
        del stack[start:]
        return items

    def pop() -> Any:
        if not stack:
            raise FileRefused("{} is malformed (its stack runs empty)".format(what))
        return stack.pop()

    try:
        for op, arg, _ in pickletools.genops(data):
            name = op.name
            if name in ("PROTO", "FRAME"):
                continue
            if name == "STOP":
                return Walked(pop(), storages)
            if name in ("BININT", "BININT1", "BININT2", "LONG1", "LONG4", "LONG", "INT",
                        "BINFLOAT", "FLOAT", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8",
                        "UNICODE", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8",
                        "BINSTRING", "SHORT_BINSTRING", "STRING"):
                stack.append(arg)
            elif name == "NONE":
                stack.append(None)
            elif name in ("NEWTRUE", "NEWFALSE"):
                stack.append(name == "NEWTRUE")
            elif name == "EMPTY_DICT":
                stack.append({})
            elif name in ("EMPTY_LIST",):
                stack.append([])
            elif name == "EMPTY_TUPLE":
                stack.append(())
            elif name == "EMPTY_SET":
                stack.append([])
            elif name == "MARK":
                marks.append(len(stack))
            elif name == "TUPLE":
                stack.append(tuple(pop_mark()))
            elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
                n = int(name[-1])
                if len(stack) < n:
                    raise FileRefused("{} is malformed (its stack runs empty)".format(what))
                top = tuple(stack[len(stack) - n:])
                del stack[len(stack) - n:]
                stack.append(top)
            elif name == "LIST":
                stack.append(pop_mark())
            elif name == "DICT":
                items = pop_mark()
                stack.append(_dict(list(zip(items[::2], items[1::2]))))
            elif name == "FROZENSET":
                stack.append(pop_mark())
            elif name in ("APPEND", "APPENDS", "ADDITEMS"):
                items = [pop()] if name == "APPEND" else pop_mark()
                target = stack[-1] if stack else None
                if not isinstance(target, list):
                    raise FileRefused("{} appends to {}, not a list".format(what,
                                                                        type(target).__name__))
                target.extend(items)
            elif name in ("SETITEM", "SETITEMS"):
                if name == "SETITEM":
                    value = pop()
                    items = [pop(), value]
                else:
                    items = pop_mark()
                target = stack[-1] if stack else None
                if not isinstance(target, dict):
                    raise FileRefused("{} sets an item of {}, not a dict".format(
                        what, type(target).__name__))
                target.update(_dict(list(zip(items[::2], items[1::2]))))
            elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
                if not stack:
                    raise FileRefused("{} is malformed (its stack runs empty)".format(what))
                memo[int(arg or 0)] = stack[-1]
            elif name == "MEMOIZE":
                if not stack:
                    raise FileRefused("{} is malformed (its stack runs empty)".format(what))
                memo[len(memo)] = stack[-1]
            elif name in ("GET", "BINGET", "LONG_BINGET"):
                if not isinstance(arg, int) or arg not in memo:
                    raise FileRefused("{} is malformed (memo {} read before it is set)".format(
                        what, arg))
                stack.append(memo[arg])
            elif name == "POP":
                pop()
            elif name == "POP_MARK":
                pop_mark()
            elif name == "DUP":
                stack.append(stack[-1] if stack else pop())
            elif name == "GLOBAL":
                module, _, attr = str(arg).partition(" ")
                stack.append(_global(module, attr))
            elif name == "STACK_GLOBAL":
                attr, module = pop(), pop()
                if not isinstance(module, str) or not isinstance(attr, str):
                    raise FileRefused("{} is malformed (STACK_GLOBAL of non-strings)".format(what))
                stack.append(_global(module, attr))
            elif name == "REDUCE":
                args, func = pop(), pop()
                stack.append(_reduce(func, args, what))
            elif name in ("NEWOBJ", "NEWOBJ_EX"):
                if name == "NEWOBJ_EX":
                    pop()
                args, cls = pop(), pop()
                if cls != Global("argparse", "Namespace"):
                    raise FileRefused("unsafe: the pickle creates an object of {} (refused: nothing "
                                  "was run)".format(shown(str(cls))))
                stack.append(Inert("argparse.Namespace", {}))
            elif name == "BUILD":
                state = pop()
                target = stack[-1] if stack else None
                _build(target, state, what)
            elif name == "BINPERSID":
                stack.append(_storage(pop(), storages, what))
            else:
                # INST, OBJ (protocol 0 objects), EXT1/2/4 (registered extensions), PERSID,
                # NEXT_BUFFER, READONLY_BUFFER: no torch.save writes them.
                raise FileRefused("unsafe or unsupported: the pickle uses the opcode {} (refused: "
                              "nothing was run)".format(name))
    except FileRefused:
        raise
    except (ValueError, IndexError, KeyError, TypeError, UnicodeDecodeError, EOFError) as exc:
        raise FileRefused("{} is not a readable pickle ({})".format(what, brief(str(exc), 120))) \
            from None
    raise FileRefused("{} ends without STOP".format(what))


def _reduce(func: Any, args: Any, what: str) -> Any:
    if not isinstance(func, Global):
        raise FileRefused("{} calls {}, which is not a function".format(what,
                                                                   type(func).__name__))
    call = CALLS.get((func.module, func.name))
    if call is None:
        raise FileRefused("unsafe: the pickle calls {} (refused: nothing was run)".format(
            shown(str(func))))
    if not isinstance(args, tuple):
        raise FileRefused("{} calls {} with arguments that are not a tuple".format(what, func))
    return call(args)


def _build(target: Any, state: Any, what: str) -> None:
    if isinstance(target, Array):
        # ndarray.__setstate__((version, shape, dtype, is_fortran, data))
        if isinstance(state, tuple) and len(state) == 5 and isinstance(state[2], Inert):
            target.shape = _ints(tuple(state[1]), "shape")
            target.dtype = str(state[2].detail)
            return
        raise FileRefused("{}: a numpy array with a malformed state".format(what))
    if isinstance(target, Inert):
        return           # a Namespace's attributes, a dtype's flags: kept inert
    if isinstance(target, (dict, Tensor)):
        return           # a state dict's _metadata; a parameter's state
    raise FileRefused("{} sets the state of {}, which no checkpoint does".format(
        what, type(target).__name__))


def _storage(pid: Any, storages: Dict[str, Storage], what: str) -> Storage:
    if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
        raise FileRefused("{} has a persistent id that is not a torch storage ({})".format(
            what, brief(pid)))
    _, kind, key, location, numel = pid
    if not (isinstance(kind, Global) and (kind.module, kind.name) in VALUES and
            kind.name in STORAGE_DTYPES):
        raise FileRefused("{}: a storage of unknown type {}".format(what, brief(str(kind))))
    if not isinstance(key, str) or type(numel) is not int or numel < 0:
        raise FileRefused("{}: a malformed storage record ({})".format(what, brief(pid)))
    storage = Storage(kind.name, key, str(location), numel)
    seen = storages.get(key)
    if seen is not None and seen != storage:
        raise FileRefused("{}: storage {} is declared twice, differently".format(what, shown(key)))
    storages[key] = storage
    return storage


def leaves(root: Any) -> Iterator[Tuple[tuple, Any, bool]]:
    """(path, tensor or array, under an optimizer state dict) for every tensor and NumPy array
    reachable from root. A container is visited once for each thing its paths can say of it
    (under an optimizer state, an EMA copy, neither: rule.container_category), so a pickle can
    be cyclic, and one state dict pickled under `ema` and, by reference, under `model` is seen
    as the model too, not only as the copy its first path names."""
    seen = set()
    todo: List[Tuple[tuple, Any, bool, Optional[str]]] = [((), root, False, None)]
    while todo:
        path, value, optimizer, said = todo.pop()
        if isinstance(value, (Tensor, Array)):
            yield path, value, optimizer
            continue
        if not isinstance(value, (dict, list, tuple, Inert)) or \
                (id(value), optimizer, said) in seen:
            continue
        seen.add((id(value), optimizer, said))
        if isinstance(value, Inert):
            continue
        if isinstance(value, dict):
            optimizer = optimizer or ("state" in value and "param_groups" in value)
            items = list(value.items())
        else:
            items = list(enumerate(value))
        for key, child in reversed(items):
            todo.append((path + (key,), child, optimizer, said if said is not None or
                         not isinstance(key, str) else rule.container_category(key)))
