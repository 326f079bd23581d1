"""Printing that survives a reader who goes away: `command | head -1` must not lose the results.

When the reader of a pipe closes it, the next write (or the flush of a buffered one) raises
BrokenPipeError (EPIPE; Python ignores SIGPIPE). Unhandled, it ends the command as an internal
error before its outputs are written, and even a handled one comes back at interpreter exit
("Exception ignored ... BrokenPipeError") when the final flush of sys.stdout finds the buffered
text still there. So: wrap the stream with guard(); the first EPIPE makes it silent and points
its file descriptor at /dev/null, so that nothing, not even that final flush, can fail on it
again; the command goes on (writes its files) and exits as usual. Call finish() at the end to
flush what is buffered under the same rule.
"""
import os
from typing import Any, TextIO


class Guarded:
    """A text stream that turns the first BrokenPipeError into silence (see the module doc)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.gone = False            # the reader has gone: nothing more is written

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        self.gone = True
        silence(self.stream)

    def __getattr__(self, name: str) -> Any:     # encoding, isatty, fileno...
        return getattr(self.stream, name)


def silence(stream: TextIO) -> None:
    """Point the stream's file descriptor at /dev/null: later flushes (the interpreter's at exit
    included) then succeed and write nothing. Streams without a descriptor are left alone."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def guard(stream: TextIO) -> Guarded:
    """stream wrapped (once: guarding a guarded stream returns it)."""
    return stream if isinstance(stream, Guarded) else Guarded(stream)


def finish(stream: TextIO) -> None:
    """Flush at the end of a command; a reader gone by then costs nothing either."""
    if isinstance(stream, Guarded):
        stream.flush()
        return
    try:
        stream.flush()
    except BrokenPipeError:
        silence(stream)
