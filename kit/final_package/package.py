"""The final package (a zip or a folder) and the other zips of the command line, unpacked with
the scorer's own safety rules (scoring/zips.py: entries outside the folder, links,
encrypted members, unknown compression, bombs), into a temporary folder inside the output
folder: a hostile zip is refused by name, and nothing is written outside --out. Refused too: two
entries of one name (Python's zipfile extracts the last, unzip the first: what is verified
would not be what the jury unpacks) and entries nested deeper than the counter reads.
"""
import os
import shutil
import tempfile
import zipfile
from typing import Callable, Set, Tuple

from scoring.problems import UsageError, shown
from scoring.regular_file import kind_of_file
from scoring import zips
from .params import bounds


class PackageRefused(Exception):
    """The participant's package cannot be unpacked safely: str() says why (exit 1)."""


def _check_names(path: str) -> None:
    """ArchiveProblem for more entries than a zip may hold (before they are read), two entries
    of one name, or an entry nested too deep; a zip that cannot be read is left to
    zips.extract, which names why."""
    declared = bounds.zip_entries(path)
    if declared > bounds.MAX_ZIP_ENTRIES:
        raise zips.ArchiveProblem("it declares {:,} entries; at most {:,} are accepted".format(
            declared, bounds.MAX_ZIP_ENTRIES))
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError):
        return
    seen: Set[str] = set()
    for name in names:
        if name in seen:
            raise zips.ArchiveProblem("it holds two entries named '{}': zip readers disagree on "
                                      "which one counts (Python's zipfile extracts the last, "
                                      "unzip the first)".format(name))
        seen.add(name)
        if name.count("/") >= bounds.MAX_FOLDER_DEPTH:
            raise zips.ArchiveProblem("the entry '{}' is nested more than {} folders "
                                      "deep".format(name, bounds.MAX_FOLDER_DEPTH))


def open_input(path: str, out: str, what: str) -> Tuple[str, Callable[[], None]]:
    """(folder, cleanup) for a folder or a zip. A zip that cannot be unpacked raises
    PackageRefused (whose input it is, the caller says); neither a folder nor a zip is a
    usage error."""
    if os.path.isdir(path):
        return path, lambda: None
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        raise UsageError("{}: no such file or folder: {}".format(what, shown(path))) from None
    kind = kind_of_file(mode)
    if kind or not zipfile.is_zipfile(path):
        raise UsageError("{}: {} is {}".format(what, shown(path), kind or
                                                "neither a folder nor a zip file"))
    tmp = tempfile.mkdtemp(prefix=".unpacked-", dir=out)
    try:
        _check_names(path)
        zips.extract(path, tmp)
    except zips.ArchiveProblem as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise PackageRefused("{} {} cannot be unpacked safely: {}".format(
            what, shown(os.path.basename(path)), shown(str(exc)))) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp, lambda: shutil.rmtree(tmp, ignore_errors=True)
