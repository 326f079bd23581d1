"""Folders as the platforms hand them over, for the submission and the reference alike.

An unpacked zip may hold its files in one top-level folder; hidden entries and macOS's
`__MACOSX/` are the operating system's, never the participant's or the organizer's. Links are
never followed.
"""
import os
from typing import Callable, Optional, Set

IGNORED_DIRS = ("__MACOSX",)


def ignored(name: str) -> bool:
    """Hidden entries (.DS_Store, ._x) and __MACOSX/: added by the system, never scored."""
    return name.startswith(".") or name in IGNORED_DIRS


def is_real_dir(entry: "os.DirEntry") -> bool:
    """A folder, not a link to one (never followed)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def sole_subfolder(folder: str) -> Optional[str]:
    """The only sub-folder of an unpacked zip (ignored entries aside), or None."""
    if not os.path.isdir(folder):
        return None
    try:
        subs = [e.path for e in os.scandir(folder) if is_real_dir(e) and not ignored(e.name)]
    except OSError:
        return None
    return subs[0] if len(subs) == 1 else None


def find_root(folder: str, is_root: Callable[[str], bool]) -> Optional[str]:
    """folder itself if is_root(folder), else its sole sub-folder if is_root holds there (a zip
    of a folder); None if neither."""
    if is_root(folder):
        return folder
    sub = sole_subfolder(folder)
    return sub if sub is not None and is_root(sub) else None


def png_stems(folder: str) -> Optional[Set[str]]:
    """The names of the .png files in folder without the extension (hidden ones aside); None if
    there is no such folder."""
    if not os.path.isdir(folder):
        return None
    return {n[:-4] for n in os.listdir(folder) if n.endswith(".png") and not n.startswith(".")}
