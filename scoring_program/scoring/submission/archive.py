"""Unpack a zip given on the command line, refusing every zip that cannot be unpacked safely.

The platforms unpack the participant's zip themselves; locally (score.py --res x.zip, the starting
kit's checker) we do, and a zip that cannot be unpacked must end as a message, not a traceback:
encrypted members, compression methods Python cannot read (Deflate64, which Windows' "Send to >
Compressed folder" writes for large files), corrupt data (bad CRC), member names the file system
refuses (too long), entries that would land outside the folder (zip slip), and zip bombs (declared
sizes above MAX_UNPACKED_BYTES in total, more than MAX_MEMBERS entries). Everything that can be
checked from the central directory is checked before a single byte is written.
"""
import errno
import os
import zipfile
import zlib

# Total bytes a zip may unpack to, as its central directory declares them (Python's zipfile never
# writes more than a member's declared size). 19,708 honest 512 x 512 label PNGs take about 1 GB;
# even stored without compression as 16-bit PNGs (2 bytes a pixel) they take 10 GiB, so 16 GiB
# refuses only zip bombs. The same cap as tools/dry_run.py's.
MAX_UNPACKED_BYTES = 16 * 1024 ** 3
# Entries a zip may hold: 10 times the largest test set.
MAX_MEMBERS = 200000

_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "Deflate",
            zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "LZMA"}
_UNKNOWN_METHODS = {9: "Deflate64", 6: "Implode", 1: "Shrink", 93: "Zstandard", 95: "xz",
                    98: "PPMd", 99: "AES encryption"}


class ArchiveProblem(Exception):
    """The zip cannot be unpacked; the message says why and names the entry (already safe to
    print: see problems.shown, applied by whoever reports it)."""


def _name(info: zipfile.ZipInfo) -> str:
    return info.filename


def check_members(zf: zipfile.ZipFile, dest: str) -> None:
    """Every check that needs no extraction; raises ArchiveProblem."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ArchiveProblem("it holds {:,} entries; at most {:,} are accepted".format(
            len(infos), MAX_MEMBERS))
    dest_real = os.path.realpath(dest)
    total = 0
    for info in infos:
        target = os.path.realpath(os.path.join(dest, info.filename))
        if not (target == dest_real or target.startswith(dest_real + os.sep)):
            raise ArchiveProblem("the entry '{}' points outside the archive (an absolute path or "
                                 "'..')".format(_name(info)))
        if info.flag_bits & 0x1:
            raise ArchiveProblem("the entry '{}' is encrypted (password-protected)".format(
                _name(info)))
        if info.compress_type not in _METHODS:
            method = _UNKNOWN_METHODS.get(info.compress_type, "method {}".format(
                info.compress_type))
            raise ArchiveProblem("the entry '{}' is compressed with {}, which Python's zipfile "
                                 "(what the platforms unpack with) cannot read".format(_name(info), method))
        total += info.file_size
        if total > MAX_UNPACKED_BYTES:
            raise ArchiveProblem("it unpacks to more than {:,} bytes ({} GiB), the limit".format(
                MAX_UNPACKED_BYTES, MAX_UNPACKED_BYTES // 1024 ** 3))


def extract(path: str, dest: str) -> None:
    """Unpack the zip at path into the existing folder dest; ArchiveProblem if it cannot be."""
    try:
        with zipfile.ZipFile(path) as zf:
            check_members(zf, dest)
            for info in zf.infolist():
                try:
                    zf.extract(info, dest)
                except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                    raise ArchiveProblem("the entry '{}' is corrupt ({})".format(
                        _name(info), _reason(exc))) from None
                except OSError as exc:
                    if exc.errno == errno.ENOSPC:
                        raise  # our disk, not the participant's zip
                    raise ArchiveProblem("the entry '{}' cannot be written ({})".format(
                        _name(info), exc.strerror or type(exc).__name__)) from None
    except ArchiveProblem:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError,
            RuntimeError, OverflowError) as exc:
        raise ArchiveProblem("it is not a readable zip ({})".format(_reason(exc))) from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise
        raise ArchiveProblem("it cannot be read ({})".format(
            exc.strerror or type(exc).__name__)) from None


def _reason(exc: Exception) -> str:
    text = str(exc).strip()
    if "CRC" in text:
        return "bad CRC-32: the data does not match its checksum"
    # zipfile's messages name only entries and offsets, never a Python object.
    return text or type(exc).__name__
