"""The final package (a zip or a folder) and the other zips of the command line, unpacked with
the scorer's own safety rules (scoring/zips.py: entries outside the folder, links,
encrypted members, unknown compression, bombs), into a temporary folder inside the output
folder: a hostile zip is refused by name, and nothing is written outside --out.
"""
import os
import shutil
import tempfile
import zipfile
from typing import Callable, Tuple

from scoring.problems import UsageError, shown
from scoring.regular_file import kind_of_file
from scoring import zips


class PackageRefused(Exception):
    """The participant's package cannot be unpacked safely: str() says why (exit 1)."""


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
        zips.extract(path, tmp)
    except zips.ArchiveProblem as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise PackageRefused("{} {} cannot be unpacked safely: {}".format(
            what, shown(os.path.basename(path)), shown(str(exc)))) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp, lambda: shutil.rmtree(tmp, ignore_errors=True)
