"""A minimal protobuf wire-format reader over a file: fields are walked in place and a
length-delimited field is handed over as a span (offset, length), so that a 2 GB ONNX model's
weights are skipped with a seek, never read. Only what the ONNX counter needs.
"""
from typing import IO, Iterator, Tuple

from .result import FileRefused

VARINT, FIXED64, SPAN, FIXED32 = 0, 1, 2, 5
MAX_DEPTH = 64


class Reader:
    def __init__(self, f: IO[bytes], size: int) -> None:
        self.f, self.size = f, size

    def _varint(self, end: int) -> int:
        shift = result = 0
        while True:
            if self.f.tell() >= end:
                raise FileRefused("the protobuf data ends inside a number")
            byte = self.f.read(1)
            if not byte:
                raise FileRefused("the protobuf data ends inside a number")
            b = byte[0]
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise FileRefused("the protobuf data holds a number longer than 10 bytes")

    def fields(self, start: int, end: int) -> Iterator[Tuple[int, int, int, int]]:
        """(field number, wire type, value, length) of each field in [start, end): for SPAN the
        value is the span's offset in the file and length its length; otherwise the value (and
        length 0). The caller may read or walk a span before asking for the next field."""
        pos = start
        while pos < end:
            self.f.seek(pos)
            tag = self._varint(end)
            number, wire = tag >> 3, tag & 7
            if number == 0:
                raise FileRefused("the protobuf data holds a field numbered 0")
            if wire == VARINT:
                value = self._varint(end)
                pos = self.f.tell()
                yield number, wire, value, 0
            elif wire == SPAN:
                length = self._varint(end)
                offset = self.f.tell()
                if offset + length > end:
                    raise FileRefused("a protobuf field runs past its message ({:,} bytes "
                                  "declared)".format(length))
                pos = offset + length
                yield number, wire, offset, length
            elif wire in (FIXED64, FIXED32):
                width = 8 if wire == FIXED64 else 4
                raw = self.f.read(width)
                pos = self.f.tell()
                if len(raw) < width or pos > end:
                    raise FileRefused("the protobuf data ends inside a fixed-width field")
                yield number, wire, int.from_bytes(raw, "little"), 0
            else:
                raise FileRefused("the protobuf data uses the wire type {} (groups are not "
                              "ONNX)".format(wire))

    def read(self, offset: int, length: int, cap: int = 1 << 20) -> bytes:
        if length > cap:
            raise FileRefused("a protobuf string of {:,} bytes where a name is expected".format(
                length))
        self.f.seek(offset)
        return self.f.read(length)

    def varints(self, offset: int, length: int) -> Iterator[int]:
        """A packed repeated varint field."""
        self.f.seek(offset)
        end = offset + length
        while self.f.tell() < end:
            value = self._varint(end)
            here = self.f.tell()
            yield value
            self.f.seek(here)


def signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value
