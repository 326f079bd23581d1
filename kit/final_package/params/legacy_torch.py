"""PyTorch's legacy format (torch.save before 1.6, or _use_new_zipfile_serialization=False):
five pickles in a row, then the storages' data. torch.load unpickles all five: each is walked
(pickle_walk.py), never unpickled.

    magic number (0x1950a86a20f9469cfc6c), protocol version (1001), sys_info (a dict),
    the data (tensors; persistent ids ('storage', type, key, location, numel, view)),
    the storage keys (a list), then per key: its element count (8 bytes) and its data.

Checks: every storage key has its data, whose element count is the storage's; the data ends
where the file ends; every tensor lies inside its storage. Counted as a torch.save zip is.
"""
import mmap
import struct
from typing import Any

from scoring.problems import shown
from scoring.quoting import brief
from . import bounds
from .pickle_globals import STORAGE_DTYPES
from .pickle_walk import LEGACY, NO_PERSISTENT, NotAPickle, Walked, walk
from .result import FileCount, FileRefused
from .torch_zip import tally

FORMAT = "PyTorch legacy file"
MAGIC_NUMBER = 0x1950a86a20f9469cfc6c
PROTOCOL_VERSION = 1001


def is_magic(walked: Walked) -> bool:
    return type(walked.root) is int and walked.root == MAGIC_NUMBER


def _next(view: Any, after: Walked, what: str, budget: bounds.Budget,
          persistent: str = NO_PERSISTENT) -> Walked:
    try:
        return walk(view, what, budget, start=after.end, persistent=persistent)
    except NotAPickle as exc:
        raise FileRefused("{} is not a readable pickle ({})".format(what, shown(str(exc)))) \
            from None


def _check_data(view: Any, walked: Walked, keys: Walked, size: int) -> None:
    if not isinstance(keys.root, list) or not all(isinstance(k, str) for k in keys.root):
        raise FileRefused("its storage keys are not a list of names ({})".format(
            brief(keys.root)))
    if set(keys.root) != set(walked.storages) or len(keys.root) != len(walked.storages):
        raise FileRefused("its storage keys ({:,}) are not the storages its data pickle "
                          "declares ({:,})".format(len(keys.root), len(walked.storages)))
    at = keys.end
    for key in keys.root:
        storage = walked.storages[key]
        if at + 8 > size:
            raise FileRefused("the file ends before the data of storage {}".format(shown(key)))
        numel = struct.unpack("<q", view[at:at + 8])[0]
        if numel != storage.numel:
            raise FileRefused("storage {} declares {:,} elements, but its data says {:,}".format(
                shown(key), storage.numel, numel))
        at += 8 + numel * STORAGE_DTYPES[storage.kind][1]
    if at != size:
        raise FileRefused("its storages' data ends at byte {:,}, but the file holds {:,} "
                          "bytes".format(at, size))


def count(path: str, shown_path: str, first: Walked, budget: bounds.Budget) -> FileCount:
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as view:
        version = _next(view, first, "its protocol version", budget)
        if version.root != PROTOCOL_VERSION:
            raise FileRefused("a legacy torch.save file of protocol version {}, not {}".format(
                brief(version.root), PROTOCOL_VERSION))
        sys_info = _next(view, version, "its sys_info", budget)
        data = _next(view, sys_info, "its data pickle", budget, LEGACY)
        keys = _next(view, data, "its storage keys", budget)
        _check_data(view, data, keys, len(view))
    return tally(shown_path, FORMAT, data, budget)
