"""A minimal protobuf wire-format reader over a buffer (an mmap of the file): fields are walked
in place and a length-delimited field is handed over as a span (offset, length), so that a 2 GB
ONNX model's weights are skipped, never read. Only what the ONNX counter needs.

Bounded: at most bounds.MAX_PROTOBUF_FIELDS fields (packed numbers included) in a file, each
number at most 10 bytes; time linear in the fields read.
"""
from typing import Any, Iterator, Tuple

from . import bounds
from .result import FileRefused

VARINT, FIXED64, SPAN, FIXED32 = 0, 1, 2, 5
MAX_DEPTH = bounds.MAX_PROTOBUF_DEPTH


class Reader:
    def __init__(self, buf: Any, size: int, budget: bounds.Budget) -> None:
        self.buf, self.size, self.budget = buf, size, budget
        self.limit = budget.limit("fields", bounds.MAX_PROTOBUF_FIELDS)
        self.fields_left = self.limit
        self.bytes_left = budget.left["bytes"]       # strings read (names, locations)

    def done(self) -> None:
        """What the file took, given back to the package's budget."""
        self.budget.take("fields", self.limit - max(self.fields_left, 0))
        self.budget.take("bytes", self.budget.left["bytes"] - max(self.bytes_left, 0))

    def _varint(self, pos: int, end: int) -> Tuple[int, int]:
        """(the number at pos, the position after it)."""
        buf = self.buf
        shift = result = 0
        while True:
            if pos >= end:
                raise FileRefused("the protobuf data ends inside a number")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result, pos
            shift += 7
            if shift > 63:
                raise FileRefused("the protobuf data holds a number longer than 10 bytes")

    def _count(self) -> None:
        self.fields_left -= 1
        if self.fields_left < 0:
            if self.budget.binding("fields", bounds.MAX_PROTOBUF_FIELDS):
                raise self.budget.exhausted("fields", "it")
            raise FileRefused("not readable: it holds more than {:,} protobuf fields (an ONNX "
                              "model of 400,000 nodes holds fewer)".format(
                                  bounds.MAX_PROTOBUF_FIELDS))

    def fields(self, start: int, end: int) -> Iterator[Tuple[int, int, int, int]]:
        """(field number, wire type, value, length) of each field in [start, end): for SPAN the
        value is the span's offset in the file and length its length; otherwise the value (and
        length 0). The caller may read or walk a span before asking for the next field."""
        pos = start
        while pos < end:
            self._count()
            tag, pos = self._varint(pos, end)
            number, wire = tag >> 3, tag & 7
            if number == 0:
                raise FileRefused("the protobuf data holds a field numbered 0")
            if wire == VARINT:
                value, pos = self._varint(pos, end)
                yield number, wire, value, 0
            elif wire == SPAN:
                length, offset = self._varint(pos, end)
                if offset + length > end:
                    raise FileRefused("a protobuf field runs past its message ({:,} bytes "
                                      "declared)".format(length))
                pos = offset + length
                yield number, wire, offset, length
            elif wire in (FIXED64, FIXED32):
                width = 8 if wire == FIXED64 else 4
                if pos + width > end:
                    raise FileRefused("the protobuf data ends inside a fixed-width field")
                value = int.from_bytes(self.buf[pos:pos + width], "little")
                pos += width
                yield number, wire, value, 0
            else:
                raise FileRefused("the protobuf data uses the wire type {} (groups are not "
                                  "ONNX)".format(wire))

    def read(self, offset: int, length: int, cap: int = 1 << 16) -> bytes:
        if length > cap:
            raise FileRefused("a protobuf string of {:,} bytes where a name is expected".format(
                length))
        self.bytes_left -= length
        if self.bytes_left < 0:
            raise self.budget.exhausted("bytes", "it")
        return bytes(self.buf[offset:offset + length])

    def varints(self, offset: int, length: int) -> Iterator[int]:
        """A packed repeated varint field."""
        pos, end = offset, offset + length
        while pos < end:
            self._count()
            value, pos = self._varint(pos, end)
            yield value


def signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value
