"""Read a file only if it is a regular file, without ever blocking on it or reading it forever.

A FIFO opened for reading blocks until a writer comes; /dev/zero never ends; a symbolic link in
a participant's zip may point anywhere on the worker. So: lstat first (a link is refused unless
the caller follows links), open with O_NOFOLLOW (a link swapped in since the lstat fails) and
O_NONBLOCK (opening a FIFO returns at once), check S_ISREG on the opened descriptor (what is
read is what was checked), and read at most a size cap.

Links: a participant's files are never followed (follow_links=False, the default). An
organizer's own files (a configuration, a leaderboard export) may be symbolic links to regular
files (follow_links=True): organizers link downloaded exports into a folder, and what the link
points to is still checked on the opened descriptor, so it must be a regular file too.
"""
import errno
import os
import stat
from typing import Optional

FOLDER, NOT_REGULAR, TOO_LARGE, UNREADABLE = "folder", "not_regular", "too_large", "unreadable"


class Refused(Exception):
    """The file was not read. kind: FOLDER, NOT_REGULAR (what: 'a FIFO (named pipe)', ...),
    TOO_LARGE or UNREADABLE (the OS error's text); str() is the reason, e.g.
    'not a regular file: a FIFO (named pipe)' or 'larger than 1,048,576 bytes (2,000,000 bytes)'."""

    def __init__(self, kind: str, reason: str, what: Optional[str] = None) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.what = what

    def __reduce__(self):  # across worker processes (Exception's default passes reason alone)
        return (type(self), (self.kind, self.reason, self.what))

    def detail(self) -> str:
        """The refusal as the detail of a problem about the file: 'it is a FIFO (named pipe)',
        'it is a folder, not a file', 'it is larger than ...', 'it cannot be read (...)'."""
        if self.kind == NOT_REGULAR:
            return "it is " + (self.what or self.reason)
        return ("it " if self.kind == UNREADABLE else "it is ") + self.reason


def kind_of_file(mode: int) -> Optional[str]:
    """None for a regular file, else what it is ('a folder', 'a FIFO (named pipe)', ...)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_kind(what: str) -> Refused:
    if what == "a folder":
        return Refused(FOLDER, "a folder, not a file", what)
    return Refused(NOT_REGULAR, "not a regular file: {}".format(what), what)


def _unreadable(exc: Exception) -> Refused:
    reason = getattr(exc, "strerror", None) or (
        "a NUL byte in its name" if isinstance(exc, ValueError) else type(exc).__name__)
    return Refused(UNREADABLE, "cannot be read ({})".format(reason))


def open_regular(path: str, follow_links: bool = False) -> int:
    """A read-only descriptor on path, if it is a regular file; raises Refused otherwise."""
    try:
        st = os.stat(path) if follow_links else os.lstat(path)
    except (OSError, ValueError) as exc:     # ValueError: a NUL byte in the path
        raise _unreadable(exc) from None
    what = kind_of_file(st.st_mode)
    if what:
        raise _refuse_kind(what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:   # replaced by a link since lstat
            raise _refuse_kind("a symbolic link") from None
        raise _unreadable(exc) from None
    try:
        what = kind_of_file(os.fstat(fd).st_mode)
    except OSError as exc:
        os.close(fd)
        raise _unreadable(exc) from None
    if what:
        os.close(fd)
        raise _refuse_kind(what)
    return fd


def too_large(max_bytes: int, size: Optional[int] = None) -> Refused:
    return Refused(TOO_LARGE, "larger than {:,} bytes{}".format(
        max_bytes, "" if size is None else " ({:,} bytes)".format(size)))


def read_bytes(path: str, max_bytes: int, follow_links: bool = False) -> bytes:
    """The whole content of a regular file of at most max_bytes; raises Refused otherwise.

    Reads what fstat announced plus one byte, then on to EOF only if more comes (a file that
    grows meanwhile, or reports size 0 as files in /proc do), never past max_bytes + 1: no
    buffer of the cap's size is allocated for a small file."""
    fd = open_regular(path, follow_links)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise too_large(max_bytes, size)
        chunks = []
        total = 0
        want = size + 1
        while True:
            chunk = os.read(fd, min(max(want, 1 << 16), max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise too_large(max_bytes)
            want = 1 << 16
        return b"".join(chunks)
    except OSError as exc:
        raise _unreadable(exc) from None
    finally:
        os.close(fd)
