"""Reproducible zip files: the same tree gives the same bytes, whoever builds it and when.

Entries are sorted, every timestamp is 1980-01-01 00:00 (the zip format's epoch), every file is
mode 0644 from a Unix host, and no directory entries are written (extractors create parents).
Hidden files, __pycache__, *.pyc and macOS's __MACOSX are never packed: they differ between
machines and a platform may trip on them.
"""
import os
import shutil
import zipfile
from collections import Counter
from typing import Iterable, List, Optional, Tuple

FIXED_DATE = (1980, 1, 1, 0, 0, 0)
FILE_ATTR = (0o100644 & 0xFFFF) << 16   # regular file, rw-r--r--
UNIX = 3                                # ZipInfo.create_system: the host is Unix on every machine
SKIPPED_DIRS = ("__pycache__", "__MACOSX")

# (name inside the zip, path on disk)
Entry = Tuple[str, str]


def skipped(name: str) -> bool:
    """Names never packed: hidden files, caches, compiled Python, macOS metadata."""
    return name.startswith(".") or name in SKIPPED_DIRS or name.endswith((".pyc", ".pyo"))


def collect(root: str, prefix: str = "", exclude_top: Iterable[str] = ()) -> List[Entry]:
    """Files under root as (prefix + posix relative path, path), sorted; exclude_top names
    first-level entries of root to leave out (e.g. the RGB images of a reference)."""
    excluded = set(exclude_top)
    entries: List[Entry] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        at_top = rel_dir == "."
        dirnames[:] = sorted(d for d in dirnames
                             if not skipped(d) and not (at_top and d in excluded))
        for name in filenames:
            if skipped(name) or (at_top and name in excluded):
                continue
            rel = name if at_top else os.path.join(rel_dir, name)
            entries.append((prefix + rel.replace(os.sep, "/"), os.path.join(dirpath, name)))
    return sorted(entries)


def _info(name: str, compress: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, FIXED_DATE)
    info.external_attr = FILE_ATTR
    info.create_system = UNIX
    info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    return info


def _stored(name: str) -> bool:
    # Zips and PNGs are compressed already: deflating them again costs time and saves nothing.
    return name.lower().endswith((".zip", ".png", ".jpg", ".jpeg"))


def write_zip(path: str, files: Iterable[Entry], data: Optional[dict] = None) -> int:
    """Write a reproducible zip from files on disk and in-memory data {name: bytes}.

    Returns the zip's size in bytes. Large members are streamed, never held in memory.
    """
    members: List[Tuple[str, Optional[str], Optional[bytes]]] = [
        (name, src, None) for name, src in files]
    members += [(name, None, blob) for name, blob in (data or {}).items()]
    duplicates = sorted(n for n, count in Counter(m[0] for m in members).items() if count > 1)
    if duplicates:
        raise ValueError("{}: the same name twice: {}".format(path, ", ".join(duplicates)))
    with zipfile.ZipFile(path, "w", allowZip64=True) as zf:
        for name, src, blob in sorted(members, key=lambda m: m[0]):
            info = _info(name, compress=not _stored(name))
            if src is None:
                zf.writestr(info, blob or b"")
                continue
            size = os.path.getsize(src)
            # force_zip64 must be decided before writing; it depends on the size only, so the
            # output stays reproducible.
            with open(src, "rb") as f, zf.open(info, "w", force_zip64=size > 2 ** 31) as out:
                shutil.copyfileobj(f, out, 1 << 20)
    return os.path.getsize(path)
