"""What reading a broken file raises, and nothing else: a file's fault is one of these, any other
exception is a bug of the scoring program (exit 4), never blamed on a participant or an
organizer.

Pillow reports damaged or foreign image data with OSError (UnidentifiedImageError is one),
SyntaxError ("broken PNG file"), ValueError, EOFError, struct.error or zlib.error, and a
decompression bomb with DecompressionBombError; MemoryError is what an absurd size costs. These
are caught only around Pillow's own calls (pillow_call) and become Undecodable: our code raising
a ValueError of its own is a bug, not a broken file.
"""
import re
import struct
import zlib
from contextlib import contextmanager
from typing import Iterator

from PIL import Image

IMAGE_ERRORS = (OSError, SyntaxError, ValueError, EOFError, struct.error, zlib.error,
                Image.DecompressionBombError, MemoryError)


class Undecodable(Exception):
    """Pillow could not open or decode the data: the file's fault. str(): Pillow's words."""

    def __reduce__(self):
        return (type(self), self.args)


@contextmanager
def pillow_call() -> Iterator[None]:
    """Around a call into Pillow (and only that): what a broken file makes it raise becomes
    Undecodable."""
    try:
        yield
    except IMAGE_ERRORS as exc:
        raise Undecodable(pillow_says(exc)) from None


# Pillow's messages may name a Python object ("<_io.BytesIO object at 0x7f...>"), which changes
# from run to run: messages must not.
_OBJECT_REPR = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>")


def pillow_says(exc: Exception) -> str:
    text = " ".join(_OBJECT_REPR.sub("", str(exc)).split())
    return text or type(exc).__name__
