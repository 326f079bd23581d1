"""JSON files read under one rule for every reader: regular files only, integers of at most
4,300 digits on every Python.

Python 3.11 (and the 3.7-3.10 security releases since September 2022) refuse to convert an
integer of more than 4,300 digits (ValueError inside json.loads); older ones, such as the
worker image's Python 3.7, read it in quadratic time (a results file of 96 MB of digits would
take hours). Here the limit is the same everywhere: LongInteger, before anything slow happens.
Where the interpreter enforces the 4,300-digit limit itself, its own C-level check is used (no
cost); elsewhere a parse_int hook checks every integer (about 0.2 us each).

Files are opened through regular_file (lstat, O_NOFOLLOW unless links are followed,
O_NONBLOCK, S_ISREG on the opened descriptor): a FIFO, a device or /dev/zero is refused, never
read.
"""
import json
import sys
from typing import Any, Optional

from .. import regular_file

MAX_INT_DIGITS = 4300


class LongInteger(Exception):
    """An integer with more than MAX_INT_DIGITS digits; digits is its length (None: unknown)."""

    def __init__(self, digits: Optional[int] = None) -> None:
        super().__init__("an integer of {} digits".format(
            "more than {:,}".format(MAX_INT_DIGITS) if digits is None else "{:,}".format(digits)))
        self.digits = digits

    def __reduce__(self):  # across worker processes (Exception's default passes the message)
        return (type(self), (self.digits,))


def _checked_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS and len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise LongInteger(len(text.lstrip("-")))
    return int(text)


def _interpreter_limits_ints() -> bool:
    get = getattr(sys, "get_int_max_str_digits", None)
    return get is not None and get() == MAX_INT_DIGITS


def loads(text: str) -> Any:
    """json.loads(text), refusing integers of more than MAX_INT_DIGITS digits (LongInteger).
    Other failures as json.loads raises them: json.JSONDecodeError, RecursionError."""
    if not _interpreter_limits_ints():
        return json.loads(text, parse_int=_checked_int)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:     # "Exceeds the limit (4300 digits) for integer string conversion"
        raise LongInteger() from None


def read_bytes(path: str, follow_links: bool = False, max_bytes: Optional[int] = None) -> bytes:
    """The content of a regular file (regular_file.Refused otherwise); max_bytes None: no cap
    (an organizer's file: a regular file is finite)."""
    return regular_file.read_bytes(path, sys.maxsize if max_bytes is None else max_bytes,
                                   follow_links=follow_links)


def decode(raw: bytes) -> str:
    """UTF-8 text (a byte-order mark is tolerated); UnicodeDecodeError otherwise."""
    return raw.decode("utf-8-sig")


def load_file(path: str, follow_links: bool = False) -> Any:
    """The JSON document in a regular file (UTF-8). Raises regular_file.Refused,
    UnicodeDecodeError, json.JSONDecodeError, RecursionError or LongInteger."""
    text = decode(read_bytes(path, follow_links))
    return loads(text)
