"""Files that hold no weights, told by their content, never by their name (6 MB of raw floats
named `notes.txt` is no text): text (UTF-8 or UTF-16, the whole file read, at most
bounds.MAX_TEXT_SCAN bytes), images whose end marker ends the file (PNG, JPEG, GIF: nothing
appended after the image), PDF documents, compiled Python, empty files.

kind(path, head, size) -> the reason the file is ignored, or None: then the file is of a format
no counter reads, and the count is incomplete.
"""
import codecs
from typing import Optional

from . import bounds

_BLOCK = 1 << 20
# Bytes that text does not hold: the C0 controls but tab, newline, form feed, carriage return
# and escape (coloured logs), and DEL.
_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27)) + b"\x7f"
_PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"


def _tail(path: str, size: int, n: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(max(0, size - n))
        return f.read(n)


def _image(path: str, head: bytes, size: int) -> Optional[str]:
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "a PNG image" if _tail(path, size, 12) == _PNG_END else None
    if head.startswith(b"\xff\xd8\xff"):
        return "a JPEG image" if _tail(path, size, 2) == b"\xff\xd9" else None
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "a GIF image" if _tail(path, size, 1) == b";" else None
    return None


def _compiled_python(head: bytes) -> bool:
    # Every version's .pyc magic: two bytes, then \r\n; then flags and a timestamp or hash.
    return len(head) >= 16 and head[2:4] == b"\r\n" and head[0] != 0 and head[4:8] in (
        b"\x00\x00\x00\x00", b"\x01\x00\x00\x00", b"\x03\x00\x00\x00")


def is_text(path: str, head: bytes, size: int, budget: bounds.Budget) -> bool:
    """The whole file (at most MAX_TEXT_SCAN bytes, and what the package's budget of bytes
    read whole has left) decodes as UTF-8 (or UTF-16 with its byte order mark) and holds almost
    no control bytes."""
    if size > min(bounds.MAX_TEXT_SCAN, budget.left["bytes"]):
        return False
    budget.take("bytes", size)
    utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff"))
    decoder = codecs.getincrementaldecoder("utf-16" if utf16 else "utf-8")()
    controls = 0
    with open(path, "rb") as f:
        while True:
            block = f.read(_BLOCK)
            try:
                text = decoder.decode(block, final=not block)
            except UnicodeDecodeError:
                return False
            if not block:
                break
            if utf16:
                controls += sum(1 for ch in text if ch < " " and ch not in "\t\n\f\r\x1b")
            else:
                controls += len(block) - len(block.translate(None, _CONTROL))
    return controls * 100 <= size


def kind(path: str, head: bytes, size: int,
         budget: Optional[bounds.Budget] = None) -> Optional[str]:
    if size == 0:
        return "an empty file"
    image = _image(path, head, size)
    if image:
        return image
    if head.startswith(b"%PDF-"):
        return "a PDF document"
    if _compiled_python(head):
        return "compiled Python"
    if is_text(path, head, size, bounds.default_budget(budget)):
        return "text"
    return None
