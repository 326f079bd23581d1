"""What the counter says about one file: its format, its status and its figures.

Statuses: COUNTED (every tensor read from the header or the pickle's opcodes), REFUSED (the file
would run code when loaded, or its header contradicts its data: the count cannot be trusted),
NOT_COUNTED (a format this counter does not read, or an optional package missing: the total is
incomplete) and IGNORED (not a model file: text, configuration, source code).
"""
import struct
import zipfile
import zlib
from typing import Any, Dict, NamedTuple

COUNTED, REFUSED, NOT_COUNTED, IGNORED = "counted", "refused", "not counted", "ignored"

# The categories of the counting rule (rule.py), in the order they are reported.
PARAMETERS, BUFFERS, OPTIMIZER, EMA = "parameters", "buffers", "optimizer_state", "ema"
CATEGORIES = (PARAMETERS, BUFFERS, OPTIMIZER, EMA)


# What opening or reading a damaged zip can raise (zipfile's own checks, zlib, a truncated
# member): each is the file's problem, never a crash.
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
              NotImplementedError, RuntimeError, OverflowError, zlib.error, struct.error)


class FileRefused(Exception):
    """The file is refused: str() says why, naming what was found (already safe to print once
    passed through problems.shown). Not a problems.Refusal: it never ends a command, it is
    the file's status."""


class NotCounted(Exception):
    """The file is not counted: str() says why and what would let it be counted."""


class Record(NamedTuple):
    """One distinct tensor of a counted file, for the checks of what the rule sets apart
    (set_apart.py): its category, name, shape, elements, whether it is floating point, and how
    many names refer to it (a tied weight: two)."""
    category: str
    name: str
    shape: tuple
    numel: int
    floating: bool
    refs: int = 1


class FileCount(NamedTuple):
    path: str                # as shown: relative to the package's submission/ folder
    format: str
    status: str
    reason: str = ""
    figures: Dict[str, int] = {}   # category -> elements, for COUNTED files
    tensors: int = 0
    shared: int = 0          # tensors that view a storage another tensor of theirs also views
    duplicate_of: str = ""   # the same bytes as this earlier file: counted once
    data_files: tuple = ()   # (file, first byte, end) of the bytes it reads its tensors from
                             # (ONNX external data), posix paths relative to its folder
    records: tuple = ()      # Record of each distinct tensor (not in verdict.json)

    def as_json(self) -> Dict[str, Any]:
        doc: Dict[str, Any] = {"path": self.path, "format": self.format, "status": self.status,
                               "reason": self.reason}
        for c in CATEGORIES:
            doc[c] = self.figures.get(c, 0) if self.status == COUNTED else None
        doc["tensors"] = self.tensors
        doc["shared_tensors"] = self.shared
        doc["duplicate_of"] = self.duplicate_of or None
        return doc


def counted(path: str, fmt: str, figures: Dict[str, int], tensors: int,
            shared: int = 0, note: str = "", records: tuple = ()) -> FileCount:
    """A counted file; note: how it was counted, when that needs saying (rule.EMA_ONLY)."""
    return FileCount(path, fmt, COUNTED, note, dict(figures), tensors, shared,
                     records=records)

