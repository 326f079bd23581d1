"""Every zip the program unpacks (a submission, a reference, a downloaded submission), refusing
every zip that cannot be unpacked safely, and whose mistake that is.

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
import shutil
import tempfile
import zipfile
import zlib
from typing import Callable, Tuple

from . import regular_file
from .problems import BAD_ZIP, REF_ARCHIVE, BrokenReference, ProblemLog, SubmissionError, \
    UsageError, shown

# Total bytes a zip may unpack to, as its central directory declares them (Python's zipfile never
# writes more than a member's declared size). 19,708 honest 512 x 512 label PNGs take about 1 GB;
# even stored without compression as 16-bit PNGs (2 bytes a pixel) they take 10 GiB, so 16 GiB
# refuses only zip bombs. The dry run (kit/dry_run.py) unpacks by these rules too.
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


# A folder and what removes it when the command is done with it (nothing, for a folder given).
Unpacked = Tuple[str, Callable[[], None]]


def check_given(path: str) -> None:
    """UsageError unless path is a folder or a zip file: a command checks every path it was given
    before it starts any work."""
    if os.path.isdir(path):
        return
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):     # missing, a dangling link, a NUL byte in the name
        raise UsageError("no such file or folder: {}".format(shown(path))) from None
    what = regular_file.kind_of_file(mode)
    if what:  # a FIFO or a device: opening it could block forever or never end
        raise UsageError("{} is {}: neither a folder nor a zip file".format(shown(path), what))
    if not zipfile.is_zipfile(path):
        raise UsageError("{} is neither a folder nor a zip file".format(shown(path)))


def unpack(path: str) -> Unpacked:
    """(folder, cleanup) for a folder or a zip file given on the command line. A zip that cannot
    be unpacked raises ArchiveProblem: the caller knows whose zip it is."""
    check_given(path)
    if os.path.isdir(path):
        return path, lambda: None
    tmp = tempfile.mkdtemp(prefix="submission-")
    try:
        extract(path, tmp)
    except Exception:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp, lambda: shutil.rmtree(tmp, ignore_errors=True)


def unpack_submission(path: str, **words: str) -> Unpacked:
    """unpack(); a zip that cannot be unpacked is the participant's mistake (exit 1), named, with
    the fix in the task's words (SubmissionFormat.words): the same message in score.py and in
    the starting kits' checkers."""
    try:
        return unpack(path)
    except ArchiveProblem as exc:
        log = ProblemLog()
        log.add(BAD_ZIP, os.path.basename(path), str(exc))
        raise SubmissionError(log, **words) from None


def unpack_reference(path: str) -> Unpacked:
    """unpack(); a reference zip that cannot be unpacked is the organizers' (exit 3)."""
    try:
        return unpack(path)
    except ArchiveProblem as exc:
        log = ProblemLog()
        log.add(REF_ARCHIVE, os.path.basename(path), "the zip cannot be unpacked: {}".format(exc))
        raise BrokenReference(log) from None
