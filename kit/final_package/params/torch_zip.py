"""PyTorch zip checkpoints (torch.save since 1.6): `<archive>/data.pkl` walked by opcodes
(pickle_walk.py), never unpickled; the `<archive>/data/<key>` records never read, only their
sizes checked against what the pickle declares.

Checks: the zip itself as score.py checks a submission zip (an entry outside the folder,
encryption, unknown compression, bombs: scoring/zips.py); every storage has its
record and the record holds exactly its elements; every tensor lies inside its storage (a
tensor reading past its storage corrupted memory in torch.load before 2.10, CVE-2026-24747).
Tensors viewing one storage (tied weights) are counted once: the elements of a storage covered
by dense views are the union of their intervals; a view with gaps counts its own elements, once
per distinct (offset, size, stride).
"""
import zipfile
from typing import Dict, List, Set, Tuple

from scoring.problems import shown
from scoring import zips
from . import rule
from .pickle_walk import STORAGE_DTYPES, TORCH_DTYPES, Array, Tensor, leaves, walk
from .result import ZIP_ERRORS, CATEGORIES, FileCount, NotCounted, FileRefused, counted

FORMAT = "PyTorch zip checkpoint"
MAX_PICKLE_BYTES = 256 << 20   # a state dict's data.pkl is kilobytes; 100M parameters ~ 10 MB


def pickle_member(names: List[str]) -> str:
    """The `<archive>/data.pkl` entry; NotCounted for TorchScript, FileRefused if there is none."""
    tops = set(n.split("/", 1)[0] for n in names)
    pickles = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
    if any(n.count("/") >= 1 and (n.split("/")[1] in ("code", "constants.pkl")) for n in names):
        raise NotCounted("a TorchScript archive (torch.jit.save): it holds code, not only "
                         "weights; save the model's state_dict() with torch.save as well")
    if len(pickles) != 1 or len(tops) != 1:
        raise FileRefused("not a torch.save zip: it has {} data.pkl entr{} under {} top-level "
                      "folder{}".format(len(pickles), "y" if len(pickles) == 1 else "ies",
                                        len(tops), "" if len(tops) == 1 else "s"))
    return pickles[0]


def count(path: str, shown_path: str) -> FileCount:
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                zips.check_members(zf, path + ".d")
            except zips.ArchiveProblem as exc:
                raise FileRefused("the checkpoint's zip is unsafe: {}".format(exc)) from None
            infos = {i.filename: i for i in zf.infolist()}
            member = pickle_member(list(infos))
            if infos[member].file_size > MAX_PICKLE_BYTES:
                raise FileRefused("its data.pkl declares {:,} bytes, more than the {:,} a state dict "
                              "needs".format(infos[member].file_size, MAX_PICKLE_BYTES))
            with zf.open(member) as f:
                data = f.read(MAX_PICKLE_BYTES + 1)
            records = {name: info.file_size for name, info in infos.items()}
    except ZIP_ERRORS as exc:
        raise FileRefused("the checkpoint's zip cannot be read ({})".format(
            shown(str(exc)) or type(exc).__name__)) from None
    walked = walk(data, "data.pkl")
    prefix = member[:-len("data.pkl")]
    return tally(shown_path, FORMAT, walked, prefix, records)


def _check_records(walked, prefix: str, records: Dict[str, int]) -> None:
    for key, storage in sorted(walked.storages.items()):
        record = prefix + "data/" + key
        if record not in records:
            raise FileRefused("storage {} has no record {} in the zip".format(shown(key),
                                                                         shown(record)))
        expected = storage.numel * STORAGE_DTYPES[storage.kind][1]
        if records[record] != expected:
            raise FileRefused("storage record {} holds {:,} bytes, but its {} declares {:,} "
                          "elements ({:,} bytes)".format(shown(record), records[record],
                                                         storage.kind, storage.numel, expected))


def _span(t: Tensor) -> Tuple[int, int]:
    """(first element, last element + 1) the tensor reads in its storage (0, 0 if empty)."""
    if any(s == 0 for s in t.shape):
        return t.offset, t.offset
    last = t.offset + sum((s - 1) * st for s, st in zip(t.shape, t.stride))
    return t.offset, last + 1


def _dense(t: Tensor) -> bool:
    """The view covers an interval without gaps: strides are a permutation of contiguous
    strides (a contiguous or transposed tensor)."""
    dims = sorted((st, s) for s, st in zip(t.shape, t.stride) if s != 1)
    expect = 1
    for st, s in dims:
        if st != expect:
            return False
        expect *= s
    return True


def _bytes_per_element(t: Tensor) -> int:
    return TORCH_DTYPES.get(t.dtype, STORAGE_DTYPES.get(t.storage.kind, ("", 1))[1])


def tally(shown_path: str, fmt: str, walked, prefix: str, records: Dict[str, int]) -> FileCount:
    _check_records(walked, prefix, records)
    # Counted twice over: with EMA copies told apart (the rule), and without (what counts when
    # the file holds nothing but an EMA copy: rule.ema_only).
    figures = ({c: 0 for c in CATEGORIES}, {c: 0 for c in CATEGORIES})
    # category -> storage key -> (intervals of dense views, distinct gapped views)
    views: Tuple[Dict[str, Dict[str, Tuple[List[Tuple[int, int]], Set[tuple]]]], ...] = ({}, {})
    tensors = 0
    users: Dict[Tuple[str, str], int] = {}
    for path, leaf, optimizer in leaves(walked.root):
        tensors += 1
        if isinstance(leaf, Array):   # a NumPy array in the checkpoint: counted by the rule too
            n = 1
            for s in leaf.shape:
                n *= s
            for told, counts in zip((True, False), figures):
                counts[rule.category(path, _numpy_kind(leaf.dtype), optimizer, told)] += n
            continue
        t = leaf
        start, end = _span(t)
        # In the storage's own elements (bytes for an untyped storage).
        scale = _bytes_per_element(t) if t.storage.kind == "UntypedStorage" else 1
        if end * scale > t.storage.numel:
            raise FileRefused("tensor {} reads elements {:,} to {:,} of storage {}, which holds "
                          "{:,}: the tensor lies outside its storage".format(
                              shown(".".join(str(p) for p in path)), start, end - 1,
                              shown(t.storage.key), t.storage.numel))
        for told, by_cat in zip((True, False), views):
            cat = rule.category(path, t.dtype, optimizer, told)
            if t.is_parameter and cat == rule.BUFFERS and t.dtype in rule.FLOATING:
                cat = rule.PARAMETERS     # rebuilt as nn.Parameter: a parameter, whatever its name
            intervals, gapped = by_cat.setdefault(cat, {}).setdefault(t.storage.key,
                                                                      ([], set()))
            if _dense(t):
                intervals.append((start, end))
            else:
                gapped.add((t.offset, t.shape, t.stride))
            if told:
                users[(cat, t.storage.key)] = users.get((cat, t.storage.key), 0) + 1
    for by_cat, counts in zip(views, figures):
        for cat, by_storage in by_cat.items():
            for intervals, gapped in by_storage.values():
                counts[cat] += _union(intervals) + sum(_prod(shape) for _, shape, _ in gapped)
    shared = sum(n for n in users.values() if n > 1)
    result, note = rule.ema_only(*figures)
    return counted(shown_path, fmt, result, tensors, shared, note)


def _prod(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _union(intervals: List[Tuple[int, int]]) -> int:
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start >= reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _numpy_kind(descr: str) -> str:
    """'<f4' -> 'float32' for the rule's floating test; anything else as it is."""
    code = descr.lstrip("<>|=")
    return {"f2": "float16", "f4": "float32", "f8": "float64", "c8": "complex64",
            "c16": "complex128"}.get(code, descr)
