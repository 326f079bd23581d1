"""An image reference's files (the organizers' labels), read under the program's one rule for
files (regular_file.py): a regular file, or a link to one (organizers may link their own data
in), never a FIFO, a device or a link to one. Opening a FIFO blocks until a writer comes and
/dev/zero never ends: either would hang the run or exhaust its memory on the organizers' first
submission. A refusal is a ReferenceProblem naming the file: the organizers' error (exit 3)."""
import os
import sys
from typing import Optional

from .. import regular_file
from ..problems import REF_CANNOT_OPEN, Kind
from ..task_api import ReferenceProblem


def read(path: str, name: str, kind: Kind, missing: Optional[Kind] = None) -> bytes:
    """The whole file at path; ReferenceProblem(kind, name, why) if it is not a regular file or
    cannot be read, or (missing, name) if there is nothing at path and missing is given."""
    try:
        return regular_file.read_bytes(path, sys.maxsize, follow_links=True)
    except regular_file.Refused as exc:
        if missing is not None and not os.path.lexists(path):
            raise ReferenceProblem(missing, name, "no such file") from None
        # An operating-system refusal (permissions, I/O) says nothing of the file's content: its
        # fix is the folder's, not a re-export.
        raise ReferenceProblem(REF_CANNOT_OPEN if exc.kind == regular_file.UNREADABLE else kind,
                               name, exc.detail()) from None
