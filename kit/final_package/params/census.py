"""Every file of a final package read by its content (detect.py), whatever its name or folder,
and the package's totals.

- Which files are listed: every file in models/, and every file elsewhere that is not ignored
  (text, images, PDF...: plain_files.py), so a checkpoint at code/assets/vocab.dat is counted
  and named. Links are listed, never followed.
- An ONNX model's external data file holds bare tensor bytes, which no counter recognises: its
  tensors are counted with the model, so the file is ignored, but only where the model's tensors
  (or zero padding) fill it; bytes no tensor takes are named (not counted: the jury decides).
- Identical files (same size and SHA-256) are counted once.

Bounds (bounds.py): at most MAX_FILES files, folders at most MAX_FOLDER_DEPTH deep, one Budget
of pickle opcodes for the whole package, at most MAX_HASHED_BYTES hashed.
"""
import hashlib
import os
import posixpath
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple

from scoring.problems import shown
from . import bounds, set_apart
from .detect import UNKNOWN_FORMAT, count_file
from .result import CATEGORIES, COUNTED, IGNORED, NOT_COUNTED, PARAMETERS, REFUSED, FileCount

_MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")


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


class _Found(NamedTuple):
    files: List[Tuple[str, bool]]     # (relative posix path, inside models/)
    problems: List[FileCount]         # what could not be walked
    modules: FrozenSet[str]           # names the package's own code can be imported by


def _walk(root: str, models: Optional[str]) -> _Found:
    """Every file under root (links listed, never followed), iteratively: a deep tree costs no
    recursion."""
    files: List[Tuple[str, bool]] = []
    problems: List[FileCount] = []
    modules: Set[str] = set()
    todo: List[Tuple[str, int]] = [("", 0)]
    while todo:
        rel, depth = todo.pop()
        try:
            entries = sorted(os.scandir(os.path.join(root, rel) if rel else root),
                             key=lambda e: e.name)
        except OSError as exc:
            problems.append(FileCount(rel or ".", "-", NOT_COUNTED, "a folder that cannot be "
                                      "read ({})".format(exc.strerror or type(exc).__name__)))
            continue
        for entry in entries:
            path = posixpath.join(rel, entry.name) if rel else entry.name
            try:
                folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                folder = False
            if folder:
                modules.add(entry.name)
                if depth + 1 >= bounds.MAX_FOLDER_DEPTH:
                    problems.append(FileCount(path, "-", REFUSED, "a folder nested more than {} "
                                              "deep: not read".format(bounds.MAX_FOLDER_DEPTH)))
                else:
                    todo.append((path, depth + 1))
                continue
            if entry.name.endswith(_MODULE_SUFFIXES):
                modules.add(entry.name.split(".", 1)[0])
            files.append((path, models is not None and (path == models or
                                                        path.startswith(models + "/"))))
            if len(files) > bounds.MAX_FILES:
                problems.append(FileCount(".", "-", REFUSED, "the package holds more than {:,} "
                                          "files: the rest were not read".format(
                                              bounds.MAX_FILES)))
                return _Found(sorted(files[:bounds.MAX_FILES]), problems, frozenset(modules))
    return _Found(sorted(files), problems, frozenset(m for m in modules if m.isidentifier()))


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _zeros(path: str, gaps: List[Tuple[int, int]], budget: bounds.Budget) -> bool:
    """Whether the file holds only zero bytes in every gap (read whole: the package's budget
    of bytes read whole takes them; past it, they are not zeros as far as is known)."""
    loose = sum(end - start for start, end in gaps)
    if loose > budget.left["bytes"]:
        return False
    budget.take("bytes", loose)
    with open(path, "rb") as f:
        for start, end in gaps:
            f.seek(start)
            left = end - start
            while left:
                block = f.read(min(left, 1 << 20))
                if not block or block.count(0) != len(block):
                    return False
                left -= len(block)
    return True


def _gaps(size: int, ranges: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    gaps, reach = [], 0
    for start, end in sorted(ranges):
        if start > reach:
            gaps.append((reach, start))
        reach = max(reach, end)
    if reach < size:
        gaps.append((reach, size))
    return gaps


def _claim_data_files(root: str, files: List[FileCount],
                      budget: bounds.Budget) -> List[FileCount]:
    """An ONNX model's external data file (weights.bin beside model.onnx) holds bare tensor
    bytes: its tensors are counted with the model, so the file is IGNORED, not a file that
    leaves the count incomplete; only where the model's tensors, or zero padding, fill it.
    Only a file of no known format is claimed: a checkpoint named as external data stays counted
    (or refused) on its own."""
    owner: Dict[str, str] = {}
    ranges: Dict[str, List[Tuple[int, int]]] = {}
    for f in files:
        if f.status == COUNTED:
            for data, start, end in f.data_files:
                rel = posixpath.normpath(posixpath.join(posixpath.dirname(f.path), data))
                owner.setdefault(rel, f.path)
                ranges.setdefault(rel, []).append((start, end))
    out = []
    for f in files:
        if f.path in owner and f.status == NOT_COUNTED and f.reason.startswith(UNKNOWN_FORMAT):
            path = os.path.join(root, *f.path.split("/"))
            gaps = _gaps(os.path.getsize(path), ranges[f.path])
            if gaps and not _zeros(path, gaps, budget):
                loose = sum(end - start for start, end in gaps)
                f = f._replace(format="ONNX external data", reason="the external data of {}, but "
                               "{:,} of its {:,} bytes are no tensor's (and not zero padding): "
                               "not counted".format(owner[f.path], loose,
                                                    os.path.getsize(path)))
            else:
                f = f._replace(format="ONNX external data", status=IGNORED,
                               reason="the external data of {}, counted with it".format(
                                   owner[f.path]))
        out.append(f)
    return out


def _duplicates(root: str, files: List[FileCount]) -> List[FileCount]:
    """Identical files are counted once: hashed only when another counted file has its size,
    at most MAX_HASHED_BYTES in all."""
    sizes: Dict[int, List[int]] = {}
    for i, f in enumerate(files):
        if f.status == COUNTED:
            sizes.setdefault(os.path.getsize(os.path.join(root, *f.path.split("/"))),
                             []).append(i)
    left = bounds.MAX_HASHED_BYTES
    for size, group in sorted(sizes.items()):
        if len(group) < 2 or size * len(group) > left:
            continue
        left -= size * len(group)
        first: Dict[str, str] = {}
        for i in group:
            digest = _digest(os.path.join(root, *files[i].path.split("/")))
            if digest in first:
                files[i] = files[i]._replace(duplicate_of=first[digest])
            else:
                first[digest] = files[i].path
    return files


class Listing(NamedTuple):
    """What count_package reads: the files (relative posix path, inside models/), what could
    not be walked, and the names the package's own code can be imported by."""
    files: List[Tuple[str, bool]]
    problems: List[FileCount]
    modules: FrozenSet[str]


def listing(root: str, models: Optional[str] = "models") -> Listing:
    found = _walk(root, models)
    return Listing(found.files, found.problems, found.modules)


def count_one(root: str, rel: str, in_models: bool, modules: FrozenSet[str],
              budget: bounds.Budget) -> Optional[FileCount]:
    """One file's count, or None for a file ignored outside models/ (not listed)."""
    f = count_file(os.path.join(root, *rel.split("/")), rel, budget, modules)
    return f if in_models or f.status != IGNORED else None


def finish(root: str, found: Listing, counts: List[FileCount],
           budget: Optional[bounds.Budget] = None) -> Census:
    """The census from each file's count: external data claimed, duplicates found, totals,
    every path shown escaped."""
    claimed = _claim_data_files(root, counts, bounds.default_budget(budget))
    files = _duplicates(root, set_apart.check(claimed))
    totals = {c: 0 for c in CATEGORIES}
    for f in files:
        if f.status == COUNTED and not f.duplicate_of:
            for c in CATEGORIES:
                totals[c] += f.figures.get(c, 0)
    shown_files = [f._replace(path=shown(f.path), duplicate_of=shown(f.duplicate_of))
                   for f in found.problems + files]
    return Census(shown_files, totals)


def count_package(root: str, models: Optional[str] = "models",
                  budget: Optional[bounds.Budget] = None) -> Census:
    """Every file under root, read by its content (models/ is listed file by file), in this
    process (isolated.py: in a child process)."""
    budget = bounds.default_budget(budget)
    found = listing(root, models)
    counts = [count_one(root, rel, in_models, found.modules, budget)
              for rel, in_models in found.files]
    return finish(root, found, [f for f in counts if f is not None], budget)
