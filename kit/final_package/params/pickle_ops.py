"""A pickle's opcodes, decoded one by one from a buffer (bytes, or an mmap of a file of any size)
without unpickling anything: each opcode's argument is decoded as Python's unpickler decodes it,
and the reader stops where Python's unpickler would stop (an unknown opcode, data that ends
inside an argument, an argument it cannot parse): `Ended`.

Bounded: a string or bytes argument longer than bounds.MAX_PICKLE_STRING (a NumPy array's data
in a bare pickle) is skipped, never read: it stands as a Blob of its length; so is an argument
line longer than bounds.MAX_PICKLE_LINE, and an integer of more than 4,300 digits (which Python
3.11+ refuses to parse); in all, at most bounds.MAX_PICKLE_TEXT bytes of strings are kept.
"""
import codecs
import struct
import sys
from typing import Any, Callable, Dict, Tuple

from . import bounds


class Ended(Exception):
    """The data cannot be read on from here: Python's unpickler stops here too. str() says
    why."""


class Blob:
    """A string, bytes or number argument too long to keep: only its kind and length."""
    __slots__ = ("kind", "length")

    def __init__(self, kind: str, length: int) -> None:
        self.kind, self.length = kind, length

    def __repr__(self) -> str:
        return "<{} of {:,} bytes>".format(self.kind, self.length)


# Opcode -> (name, argument kind).
NONE, U1, U2, I4, U4, U8, F8, LINE, TWO_LINES, STRING_LINE, UNICODE_LINE, INT_LINE, \
    LONG_LINE, FLOAT_LINE, INDEX_LINE, BYTES1, BYTES4, BYTES8, TEXT1, TEXT4, TEXT8, STR_I4, \
    STR1, LONG1, LONG4, PROTO = range(26)
OPCODES: Dict[int, Tuple[str, int]] = {
    ord("("): ("MARK", NONE), ord("."): ("STOP", NONE), ord("0"): ("POP", NONE),
    ord("1"): ("POP_MARK", NONE), ord("2"): ("DUP", NONE), ord("F"): ("FLOAT", FLOAT_LINE),
    ord("I"): ("INT", INT_LINE), ord("J"): ("BININT", I4), ord("K"): ("BININT1", U1),
    ord("L"): ("LONG", LONG_LINE), ord("M"): ("BININT2", U2), ord("N"): ("NONE", NONE),
    ord("P"): ("PERSID", LINE), ord("Q"): ("BINPERSID", NONE), ord("R"): ("REDUCE", NONE),
    ord("S"): ("STRING", STRING_LINE), ord("T"): ("BINSTRING", STR_I4),
    ord("U"): ("SHORT_BINSTRING", STR1), ord("V"): ("UNICODE", UNICODE_LINE),
    ord("X"): ("BINUNICODE", TEXT4), ord("a"): ("APPEND", NONE), ord("b"): ("BUILD", NONE),
    ord("c"): ("GLOBAL", TWO_LINES), ord("d"): ("DICT", NONE), ord("}"): ("EMPTY_DICT", NONE),
    ord("e"): ("APPENDS", NONE), ord("g"): ("GET", INDEX_LINE), ord("h"): ("BINGET", U1),
    ord("i"): ("INST", TWO_LINES), ord("j"): ("LONG_BINGET", U4), ord("l"): ("LIST", NONE),
    ord("]"): ("EMPTY_LIST", NONE), ord("o"): ("OBJ", NONE), ord("p"): ("PUT", INDEX_LINE),
    ord("q"): ("BINPUT", U1), ord("r"): ("LONG_BINPUT", U4), ord("s"): ("SETITEM", NONE),
    ord("t"): ("TUPLE", NONE), ord(")"): ("EMPTY_TUPLE", NONE), ord("u"): ("SETITEMS", NONE),
    ord("G"): ("BINFLOAT", F8), ord("B"): ("BINBYTES", BYTES4),
    ord("C"): ("SHORT_BINBYTES", BYTES1), 0x80: ("PROTO", PROTO), 0x81: ("NEWOBJ", NONE),
    0x82: ("EXT1", U1), 0x83: ("EXT2", U2), 0x84: ("EXT4", I4), 0x85: ("TUPLE1", NONE),
    0x86: ("TUPLE2", NONE), 0x87: ("TUPLE3", NONE), 0x88: ("NEWTRUE", NONE),
    0x89: ("NEWFALSE", NONE), 0x8a: ("LONG1", LONG1), 0x8b: ("LONG4", LONG4),
    0x8c: ("SHORT_BINUNICODE", TEXT1), 0x8d: ("BINUNICODE8", TEXT8),
    0x8e: ("BINBYTES8", BYTES8), 0x8f: ("EMPTY_SET", NONE), 0x90: ("ADDITEMS", NONE),
    0x91: ("FROZENSET", NONE), 0x92: ("NEWOBJ_EX", NONE), 0x93: ("STACK_GLOBAL", NONE),
    0x94: ("MEMOIZE", NONE), 0x95: ("FRAME", U8), 0x96: ("BYTEARRAY8", BYTES8),
    0x97: ("NEXT_BUFFER", NONE), 0x98: ("READONLY_BUFFER", NONE),
}
HIGHEST_PROTOCOL = 5
_INT_DIGITS = 4300     # Python 3.11+ refuses to parse longer integers (int_max_str_digits)
_LONG_BYTES = 1024     # a binary integer kept as a number: 8,192 bits at most


class OpReader:
    """Opcodes of the pickle in buf[start:end]: next() -> (opcode, argument); Ended at the end
    of the data or where Python's unpickler stops."""

    def __init__(self, buf: Any, start: int = 0, end: int = -1) -> None:
        self.buf, self.pos = buf, start
        self.end = len(buf) if end < 0 else end
        self.text_left = bounds.MAX_PICKLE_TEXT
        self._read: Dict[int, Callable[[], Any]] = {
            NONE: lambda: None, U1: self._u1, U2: lambda: self._unpack("<H", 2),
            I4: lambda: self._unpack("<i", 4), U4: lambda: self._unpack("<I", 4),
            U8: lambda: self._unpack("<Q", 8), F8: lambda: self._unpack(">d", 8),
            LINE: self._line, TWO_LINES: self._two_lines, STRING_LINE: self._string_line,
            UNICODE_LINE: self._unicode_line, INT_LINE: self._int_line,
            LONG_LINE: self._long_line, FLOAT_LINE: self._float_line,
            INDEX_LINE: self._index_line, BYTES1: lambda: self._bytes(self._u1(), "bytes"),
            BYTES4: lambda: self._bytes(self._unpack("<I", 4), "bytes"),
            BYTES8: lambda: self._bytes(self._size8(), "bytes"),
            TEXT1: lambda: self._text(self._u1()), TEXT4: lambda: self._text(self._unpack("<I", 4)),
            TEXT8: lambda: self._text(self._size8()), STR_I4: self._binstring,
            STR1: lambda: self._string(self._bytes(self._u1(), "string")),
            LONG1: lambda: self._long(self._u1()), LONG4: self._long4, PROTO: self._proto,
        }

    def next(self) -> Tuple[int, Any]:
        if self.pos >= self.end:
            raise Ended("the data ends without STOP")
        code = self.buf[self.pos]
        spec = OPCODES.get(code)
        if spec is None:
            raise Ended("byte {:#04x} at offset {:,} is no pickle opcode".format(code, self.pos))
        self.pos += 1
        return code, self._read[spec[1]]()

    # The argument readers, as Python's unpickler reads each argument.
    def _take(self, n: int) -> int:
        """The offset of the next n bytes, which the data must hold."""
        at = self.pos
        if n < 0 or at + n > self.end:
            raise Ended("the data ends inside an argument (offset {:,})".format(at))
        self.pos = at + n
        return at

    def _u1(self) -> int:
        return self.buf[self._take(1)]

    def _unpack(self, fmt: str, n: int) -> Any:
        at = self._take(n)
        return struct.unpack(fmt, self.buf[at:at + n])[0]

    def _size8(self) -> int:
        n = self._unpack("<Q", 8)
        if n > sys.maxsize:
            raise Ended("an argument of {:,} bytes (more than Python can hold)".format(n))
        return n

    def _bytes(self, n: int, kind: str) -> Any:
        at = self._take(n)
        if n > bounds.MAX_PICKLE_STRING or n > self.text_left:
            return Blob(kind, n)
        self.text_left -= n
        return bytes(self.buf[at:at + n])

    def _text(self, n: int) -> Any:
        raw = self._bytes(n, "text")
        if isinstance(raw, Blob):
            return raw
        try:
            return raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise Ended("a string that is not UTF-8") from None

    def _string(self, raw: Any) -> Any:
        """A protocol 0-2 byte string: torch.load decodes it as UTF-8 (its encoding='utf-8')."""
        if isinstance(raw, Blob):
            return raw
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Ended("a string that is not UTF-8") from None

    def _binstring(self) -> Any:
        n = self._unpack("<i", 4)
        if n < 0:
            raise Ended("BINSTRING with a negative length")
        return self._string(self._bytes(n, "string"))

    def _line(self) -> Any:
        """Bytes up to the next newline (excluded); a Blob when longer than MAX_PICKLE_LINE."""
        stop = self.buf.find(b"\n", self.pos, min(self.end, self.pos + bounds.MAX_PICKLE_LINE))
        if stop < 0:
            stop = self.buf.find(b"\n", self.pos, self.end)   # skipped, never read
            if stop < 0:
                raise Ended("the data ends inside an argument line")
            length, self.pos = stop - self.pos, stop + 1
            return Blob("line", length)
        line = bytes(self.buf[self.pos:stop])
        self.pos = stop + 1
        return line

    def _two_lines(self) -> Tuple[Any, Any]:
        return self._line(), self._line()

    def _string_line(self) -> Any:
        line = self._line()
        if isinstance(line, Blob):
            return line
        if len(line) < 2 or line[:1] != line[-1:] or line[:1] not in (b"'", b'"'):
            raise Ended("the STRING opcode argument must be quoted")
        try:
            return self._string(codecs.escape_decode(line[1:-1])[0])
        except ValueError:
            raise Ended("a STRING argument with a malformed escape") from None

    def _unicode_line(self) -> Any:
        line = self._line()
        if isinstance(line, Blob):
            return line
        try:
            return line.decode("raw-unicode-escape")
        except UnicodeDecodeError:
            raise Ended("a UNICODE argument with a malformed escape") from None

    def _int_line(self) -> Any:
        line = self._line()
        if line == b"00":
            return False
        if line == b"01":
            return True
        return self._parse(line, lambda s: int(s, 0))

    def _long_line(self) -> Any:
        line = self._line()
        if isinstance(line, bytes) and line.endswith(b"L"):
            line = line[:-1]
        return self._parse(line, lambda s: int(s, 0))

    def _float_line(self) -> Any:
        return self._parse(self._line(), float)

    def _index_line(self) -> int:
        line = self._line()
        value = self._parse(line, int)
        if not isinstance(value, int) or value < 0:
            raise Ended("a memo index that is not a non-negative integer")
        return value

    @staticmethod
    def _parse(line: Any, parse: Callable[[str], Any]) -> Any:
        if isinstance(line, Blob) or len(line) > _INT_DIGITS:
            return Blob("number", len(line) if isinstance(line, bytes) else line.length)
        try:
            return parse(line.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            raise Ended("a number argument that is not a number") from None

    def _long(self, n: int) -> Any:
        at = self._take(n)
        if n > _LONG_BYTES:      # no integer a checkpoint holds is this long
            return Blob("number", n)
        return int.from_bytes(self.buf[at:at + n], "little", signed=True)

    def _long4(self) -> Any:
        n = self._unpack("<i", 4)
        if n < 0:
            raise Ended("LONG4 with a negative byte count")
        return self._long(n)

    def _proto(self) -> int:
        version = self._u1()
        if version > HIGHEST_PROTOCOL:
            raise Ended("pickle protocol {} does not exist".format(version))
        return version
