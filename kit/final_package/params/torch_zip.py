"""PyTorch zip checkpoints (torch.save since 1.6): `<archive>/data.pkl` walked by opcodes
(pickle_walk.py), never unpickled; the `<archive>/data/<key>` records never read, only their
sizes checked against what the pickle declares.

Checks: the zip itself as score.py checks a submission zip (an entry outside the folder,
encryption, unknown compression, bombs: scoring/zips.py) and no two entries of one name (zip
readers disagree on which one counts); every storage has its record and the record holds
exactly its elements; every tensor lies inside its storage (a tensor reading past its storage
corrupted memory in torch.load before 2.10, CVE-2026-24747).

TorchScript: torch.load takes a zip for TorchScript only when it holds `constants.pkl`; any
other zip with a data.pkl is a checkpoint whose every tensor torch.load loads, whatever else it
holds (a `code/` entry too).

Tensors viewing one storage: counted as torch's parameters would count them once loaded into a
model (load_state_dict copies each): each distinct view (offset, size, stride) counts its own
elements; identical views (tied weights) count once.
"""
import zipfile
from typing import Any, Dict, List, Optional, Set, Tuple

from scoring.problems import shown
from scoring import zips
from . import bounds, rule
from .pickle_globals import STORAGE_DTYPES, TORCH_DTYPES, Array, Tensor, numel_of
from .pickle_walk import NotAPickle, Walked, walk
from .result import ZIP_ERRORS, CATEGORIES, FileCount, NotCounted, FileRefused, Record, counted
from .tensor_refs import Leaf, leaves, numpy_kind, path_of

FORMAT = "PyTorch zip checkpoint"


def duplicate_name(names: List[str]) -> Optional[str]:
    """A name two entries of the zip share, if any: Python's zipfile reads the last of them,
    `unzip` and other readers the first, so what is checked may not be what is loaded."""
    seen: Set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def refuse_duplicates(names: List[str], what: str) -> None:
    twice = duplicate_name(names)
    if twice is not None:
        raise FileRefused("{} holds two entries named {}: zip readers disagree on which one "
                          "counts (Python's zipfile reads the last, unzip the first)".format(
                              what, shown(repr(twice))))


def pickle_member(names: List[str]) -> str:
    """The `<archive>/data.pkl` entry; NotCounted for TorchScript, FileRefused if there is none."""
    tops = set(n.split("/", 1)[0] for n in names)
    pickles = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
    if any(n.count("/") == 1 and n.endswith("/constants.pkl") for n in names):
        raise NotCounted("a TorchScript archive (torch.jit.save): it holds code, not only "
                         "weights; save the model's state_dict() with torch.save as well")
    if len(pickles) != 1 or len(tops) != 1:
        raise FileRefused("not a torch.save zip: it has {} data.pkl entr{} under {} top-level "
                          "folder{}".format(len(pickles), "y" if len(pickles) == 1 else "ies",
                                            len(tops), "" if len(tops) == 1 else "s"))
    return pickles[0]


def _read_pickle(path: str) -> Tuple[bytes, str, Dict[str, int]]:
    """(data.pkl's bytes, its entry's name, every entry's size)."""
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                zips.check_members(zf, path + ".d")
            except zips.ArchiveProblem as exc:
                raise FileRefused("the checkpoint's zip is unsafe: {}".format(
                    shown(str(exc)))) from None
            infos = zf.infolist()
            refuse_duplicates([i.filename for i in infos], "the checkpoint's zip")
            by_name = {i.filename: i for i in infos}
            member = pickle_member(list(by_name))
            if by_name[member].file_size > bounds.MAX_PICKLE_BYTES:
                raise FileRefused("its data.pkl declares {:,} bytes, more than the {:,} a state "
                                  "dict needs".format(by_name[member].file_size,
                                                      bounds.MAX_PICKLE_BYTES))
            with zf.open(member) as f:
                data = f.read(bounds.MAX_PICKLE_BYTES + 1)
            return data, member, {name: info.file_size for name, info in by_name.items()}
    except ZIP_ERRORS as exc:
        raise FileRefused("the checkpoint's zip cannot be read ({})".format(
            shown(str(exc)) or type(exc).__name__)) from None


def count(path: str, shown_path: str, budget: Optional[bounds.Budget] = None) -> FileCount:
    data, member, records = _read_pickle(path)
    try:
        walked = walk(data, "data.pkl", budget)
    except NotAPickle as exc:
        raise FileRefused("data.pkl is not a readable pickle ({})".format(shown(str(exc)))) \
            from None
    _records_check(walked, member[:-len("data.pkl")], records)
    return tally(shown_path, FORMAT, walked, budget)


def _records_check(walked: Walked, prefix: str, records: Dict[str, int]) -> None:
    for key, storage in sorted(walked.storages.items()):
        record = prefix + "data/" + key
        if record not in records:
            raise FileRefused("storage {} has no record {} in the zip".format(shown(key),
                                                                             shown(record)))
        expected = storage.numel * STORAGE_DTYPES[storage.kind][1]
        if records[record] != expected:
            raise FileRefused("storage record {} holds {:,} bytes, but its {} declares {:,} "
                              "elements ({:,} bytes)".format(shown(record), records[record],
                                                             storage.kind, storage.numel,
                                                             expected))


def _span(t: Tensor) -> Tuple[int, int]:
    """(first element, last element + 1) the tensor reads in its storage (0, 0 if empty)."""
    if any(s == 0 for s in t.shape):
        return t.offset, t.offset
    last = t.offset + sum((s - 1) * st for s, st in zip(t.shape, t.stride))
    return t.offset, last + 1


def _bytes_per_element(t: Tensor) -> int:
    return TORCH_DTYPES.get(t.dtype, STORAGE_DTYPES.get(t.storage.kind, ("", 1))[1])


def _inside(leaf: Leaf) -> None:
    t = leaf.value
    start, end = _span(t)
    # In the storage's own elements (bytes for an untyped storage).
    scale = _bytes_per_element(t) if t.storage.kind == "UntypedStorage" else 1
    if end * scale > t.storage.numel:
        raise FileRefused("tensor {} reads elements {:,} to {:,} of storage {}, which holds "
                          "{:,}: the tensor lies outside its storage".format(
                              shown(".".join(str(p) for p in path_of(leaf.node))), start,
                              end - 1, shown(t.storage.key), t.storage.numel))


class Tally:
    """The elements per category of a walked pickle, counted once per distinct view (a tensor)
    or array, twice over: with EMA copies told apart (the rule), and without (what counts when
    the file holds nothing but an EMA copy: rule.ema_only). Work per reference is constant: a
    tensor referred to a million times is checked once."""

    def __init__(self) -> None:
        self.figures = ({c: 0 for c in CATEGORIES}, {c: 0 for c in CATEGORIES})
        self.seen: Tuple[Set[tuple], Set[tuple]] = (set(), set())
        self.tensors = 0
        self.users: Dict[Tuple[str, str], int] = {}
        self.inside: Set[int] = set()                  # tensors checked inside their storage
        self.records: Dict[tuple, List[Any]] = {}      # (category, view) -> its Record's fields
        # A reference seen before (the same tensor, categories and name): what it added
        self.again: Dict[tuple, Tuple[Optional[tuple], List[Any]]] = {}

    def _record(self, key: tuple, cat: str, leaf: Leaf, dtype: str) -> None:
        found = self.records.get(key)
        if found is None:
            self.records[key] = [cat, leaf.name, tuple(leaf.value.shape),
                                 numel_of(leaf.value.shape), dtype in rule.FLOATING, 1]
        else:
            found[5] += 1

    def add(self, leaf: Leaf) -> None:
        self.tensors += 1
        value = leaf.value
        again = self.again.get((id(value), leaf.told, leaf.as_model, leaf.name))
        if again is not None:         # its elements are counted: only its references grow
            users, record = again
            if users is not None:
                self.users[users] += 1
            record[5] += 1
            return
        if isinstance(value, Array):   # a NumPy array in the checkpoint: counted by the rule
            for told, cat, seen, counts in zip((True, False), (leaf.told, leaf.as_model),
                                               self.seen, self.figures):
                if (cat, id(value)) not in seen:
                    seen.add((cat, id(value)))
                    counts[cat] += numel_of(value.shape)
                if told:
                    self._record((cat, id(value)), cat, leaf, numpy_kind(value.dtype))
                    self.again[(id(value), leaf.told, leaf.as_model, leaf.name)] = \
                        (None, self.records[(cat, id(value))])
            return
        if id(value) not in self.inside:
            _inside(leaf)
            self.inside.add(id(value))
        view = (value.storage.key, value.offset, value.shape, value.stride)
        for told, cat, seen, counts in zip((True, False), (leaf.told, leaf.as_model),
                                           self.seen, self.figures):
            if value.is_parameter and cat == rule.BUFFERS and value.dtype in rule.FLOATING:
                cat = rule.PARAMETERS     # rebuilt as nn.Parameter: a parameter, whatever its name
            if (cat,) + view not in seen:
                seen.add((cat,) + view)
                counts[cat] += numel_of(value.shape)
            if told:
                self.users[(cat, value.storage.key)] = \
                    self.users.get((cat, value.storage.key), 0) + 1
                self._record((cat,) + view, cat, leaf, value.dtype)
                self.again[(id(value), leaf.told, leaf.as_model, leaf.name)] = \
                    ((cat, value.storage.key), self.records[(cat,) + view])

    def result(self) -> Tuple[Dict[str, int], str, tuple]:
        figures, note = rule.ema_only(*self.figures)
        return figures, note, tuple(Record(*fields) for fields in self.records.values())


def tally(shown_path: str, fmt: str, walked: Walked,
          budget: Optional[bounds.Budget] = None) -> FileCount:
    t = Tally()
    for leaf in leaves(walked.root, budget):
        t.add(leaf)
    shared = sum(n for n in t.users.values() if n > 1)
    result, note, records = t.result()
    return counted(shown_path, fmt, result, t.tensors, shared, note, records)
