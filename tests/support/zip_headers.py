"""Hand-made damage to a zip file's headers, for the hostile-input tests of score.py and
verify.py (an encrypted flag, a lying size): the field rewritten in place in every header."""


def patch_zip(path, offset_in_header, value_bytes):
    """Set a field in every local and central header of the zip at path (a pathlib.Path):
    offset_in_header is the field's offset in the local header; the central header holds the
    same field 2 bytes further on."""
    data = bytearray(path.read_bytes())
    for sig, shift in ((b"PK\x03\x04", 0), (b"PK\x01\x02", 2)):
        pos = data.find(sig)
        while pos >= 0:
            at = pos + offset_in_header + shift
            data[at:at + len(value_bytes)] = value_bytes
            pos = data.find(sig, pos + 4)
    path.write_bytes(bytes(data))
