"""Count a model's parameters without importing torch, TensorFlow or Keras and without
executing anything from the files: headers and pickle opcodes are read, tensor data never.

    census = count_package(folder)     # every model file of a final submission
    one = count_file(path, "models/final.pth")

The counting rule is rule.RULE (docs/verify.md). Standard library, plus numpy for .npy/.npz
headers and h5py (optional) for HDF5.
"""
import hashlib
import os
import posixpath
from typing import Dict, List, NamedTuple, Optional

from .detect import UNKNOWN_FORMAT, count_file, might_hold_weights
from .result import (BUFFERS, CATEGORIES, COUNTED, EMA, IGNORED, NOT_COUNTED, OPTIMIZER,
                     PARAMETERS, REFUSED, FileCount)
from .rule import RULE

__all__ = ["Census", "count_file", "count_package", "RULE", "COUNTED", "REFUSED",
           "NOT_COUNTED", "IGNORED", "PARAMETERS", "BUFFERS", "OPTIMIZER", "EMA", "CATEGORIES",
           "FileCount"]


class Census(NamedTuple):
    files: List[FileCount]
    totals: Dict[str, int]      # category -> elements, over the counted files (duplicates once)

    @property
    def counted(self) -> int:
        return self.totals[PARAMETERS]

    @property
    def complete(self) -> bool:
        return not any(f.status in (REFUSED, NOT_COUNTED) for f in self.files)

    def with_status(self, status: str) -> List[FileCount]:
        return [f for f in self.files if f.status == status]


def _walk(root: str, models: Optional[str]) -> List[str]:
    """Relative (posix) paths of the files to count: every file under models, and the files
    elsewhere whose names say they may hold weights. Links are listed, never followed."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel_folder = os.path.relpath(folder, root)
        in_models = models is not None and (rel_folder == models or
                                            rel_folder.startswith(models + os.sep))
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            if in_models or might_hold_weights(name):
                rel = os.path.normpath(os.path.join(rel_folder, name))
                found.append(rel.replace(os.sep, "/"))
    return sorted(found)


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _claim_data_files(files: List[FileCount]) -> List[FileCount]:
    """An ONNX model's external data file (weights.bin beside model.onnx) holds bare tensor
    bytes, which no counter recognises: its tensors are counted with the model, so the file is
    IGNORED, not a file that leaves the count incomplete. Only a file of no known format is
    claimed: a checkpoint named as external data stays counted (or refused) on its own."""
    owner: Dict[str, str] = {}
    for f in files:
        if f.status == COUNTED:
            for data in f.data_files:
                owner.setdefault(posixpath.normpath(posixpath.join(
                    posixpath.dirname(f.path), data)), f.path)
    return [f._replace(format="ONNX external data", status=IGNORED,
                       reason="the external data of {}, counted with it".format(owner[f.path]))
            if f.path in owner and f.status == NOT_COUNTED and f.reason == UNKNOWN_FORMAT
            else f for f in files]


def count_package(root: str, models: Optional[str] = "models") -> Census:
    """Every model file under root (models/ file by file, checkpoints anywhere by name)."""
    rels = _walk(root, models)
    files = [count_file(os.path.join(root, *rel.split("/")), rel) for rel in rels]
    files = _claim_data_files(files)
    # Identical files are counted once: hashed only when another counted file has its size.
    sizes: Dict[int, List[int]] = {}
    for i, f in enumerate(files):
        if f.status == COUNTED:
            sizes.setdefault(os.path.getsize(os.path.join(root, *f.path.split("/"))), []).append(i)
    for group in sizes.values():
        if len(group) < 2:
            continue
        first: Dict[str, str] = {}
        for i in group:
            digest = _digest(os.path.join(root, *files[i].path.split("/")))
            if digest in first:
                files[i] = files[i]._replace(duplicate_of=first[digest])
            else:
                first[digest] = files[i].path
    totals = {c: 0 for c in CATEGORIES}
    for f in files:
        if f.status == COUNTED and not f.duplicate_of:
            for c in CATEGORIES:
                totals[c] += f.figures.get(c, 0)
    return Census(files, totals)
