"""PyTorch-format zip checkpoints written by hand, without torch: the pickle assembled opcode by
opcode as torch.save writes it (protocol 2, `_rebuild_tensor_v2`, persistent ids
`('storage', torch.FloatStorage, key, 'cpu', numel)`), the records under data/. For the hostile
cases of the tests (a pickle calling os.system, an unknown global, a record shorter than its
storage) and for the 2 GB checkpoint of bench/verify_params.py (records written in blocks)."""
import struct
import zipfile
from typing import Dict, Iterable, List, Optional, Tuple

PROTO, MARK, TUPLE, REDUCE, BINPERSID = b"\x80\x02", b"(", b"t", b"R", b"Q"
EMPTY_DICT, EMPTY_TUPLE, SETITEMS, STOP, NEWFALSE = b"}", b")", b"u", b".", b"\x89"
WIDTH = {"FloatStorage": 4, "HalfStorage": 2, "LongStorage": 8, "DoubleStorage": 8, "IntStorage": 4}


def glob(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def text(value: str) -> bytes:
    raw = value.encode("utf-8")
    return b"X" + struct.pack("<I", len(raw)) + raw


def integer(n: int) -> bytes:
    return b"J" + struct.pack("<i", n) if n < 2 ** 31 else b"\x8a\x08" + struct.pack("<q", n)


def ints(values: Iterable[int]) -> bytes:
    return MARK + b"".join(integer(v) for v in values) + TUPLE


class T:
    """One tensor: a view (offset, size, stride) of the storage `key`."""

    def __init__(self, key: str, size: Tuple[int, ...], kind: str = "FloatStorage",
                 offset: int = 0, stride: Optional[Tuple[int, ...]] = None,
                 numel: Optional[int] = None) -> None:
        self.key, self.size, self.kind, self.offset = key, size, kind, offset
        if stride is None:
            stride, step = [], 1
            for s in reversed(size):
                stride.insert(0, step)
                step *= s
        self.stride = tuple(stride)
        n = 1
        for s in size:
            n *= s
        self.numel = n + offset if numel is None else numel

    def pickle(self) -> bytes:
        pid = MARK + text("storage") + glob("torch", self.kind) + text(self.key) + text("cpu") + \
            integer(self.numel) + TUPLE
        return glob("torch._utils", "_rebuild_tensor_v2") + MARK + pid + BINPERSID + \
            integer(self.offset) + ints(self.size) + ints(self.stride) + NEWFALSE + \
            glob("collections", "OrderedDict") + EMPTY_TUPLE + REDUCE + TUPLE + REDUCE


def state_dict(entries: List[Tuple[str, bytes]]) -> bytes:
    """A dict {name: value} whose values are already pickled (T.pickle(), or anything)."""
    body = b"".join(text(name) + value for name, value in entries)
    return PROTO + EMPTY_DICT + MARK + body + SETITEMS + STOP


def dict_of(entries: List[Tuple[bytes, bytes]]) -> bytes:
    """A nested dict value: keys and values already pickled (text("k"), integer(0)...)."""
    return EMPTY_DICT + MARK + b"".join(k + v for k, v in entries) + SETITEMS


def calls(module: str, name: str, *args: str) -> bytes:
    """A value that, unpickled, calls module.name(*args): REDUCE of a GLOBAL."""
    return glob(module, name) + MARK + b"".join(text(a) for a in args) + TUPLE + REDUCE


def write(path: str, pickle: bytes, records: Dict[str, int], prefix: str = "archive",
          extra: Iterable[Tuple[str, bytes]] = (), block: int = 1 << 24) -> None:
    """A torch.save-like zip: prefix/data.pkl, prefix/data/<key> of records[key] zero bytes
    (written in blocks: a 2 GB record never sits in memory), version files."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(prefix + "/data.pkl", pickle)
        zf.writestr(prefix + "/byteorder", b"little")
        zero = bytes(min(block, max(records.values(), default=0)))
        for key in sorted(records, key=lambda k: (len(k), k)):
            left = records[key]
            with zf.open(prefix + "/data/" + key, "w", force_zip64=left > 1 << 30) as f:
                while left:
                    n = min(left, len(zero))
                    f.write(zero[:n])
                    left -= n
        zf.writestr(prefix + "/version", b"3\n")
        for name, data in extra:
            zf.writestr(name, data)


def records_for(tensors: Iterable[T]) -> Dict[str, int]:
    return {t.key: t.numel * WIDTH[t.kind] for t in tensors}
