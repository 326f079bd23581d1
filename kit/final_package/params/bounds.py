"""The bounds of every reader of a participant's file, stated once (docs/verify.md lists them and
how each was chosen), and the package's reading budget.

A final package is hostile by assumption: each reader works in time linear in what it reads,
keeps at most what these bounds allow in memory, and ends any input in a status (counted,
refused, not counted, ignored), never a crash. The budget is counted in work done (opcodes,
bytes, files), not in seconds, so the same package always gets the same verdict.
"""
import struct
import zipfile
from typing import Dict, Optional

from .result import FileRefused

# Files: a package holds at most as many files as a zip may (scoring/zips.py's MAX_MEMBERS),
# nested at most this deep (a real package nests a few folders; os.walk recursed).
MAX_FILES = 200000
MAX_FOLDER_DEPTH = 64
# A zip (the package, a checkpoint, an .npz) declares at most this many entries in its end
# record, read before its central directory is: Python's zipfile keeps ~500 bytes an entry, so
# ten million would take 5 GB.
MAX_ZIP_ENTRIES = 200000

# Pickles (pickle_walk.py). A torch.save state dict takes about 40 opcodes (110 bytes) a tensor:
# 8 million opcodes are 200,000 tensors (a 150M-parameter model has hundreds to a few thousand),
# walked in about 5 s (about 0.5 to 1.3 us an opcode).
MAX_OPCODES_PER_PICKLE = 8000000
# What a pickle's stack machine keeps (stack and memo entries; a dict weighs four): about 80
# bytes each at worst on any Python (an empty dict takes 240 bytes on 3.7), so ~400 MB at most.
MAX_PICKLE_VALUES = 5000000
# Strings and bytes kept whole (a module name, a dict key, a storage key); longer ones (a NumPy
# array's data in a bare pickle) are skipped and stand as their length only. In all, a pickle
# keeps at most MAX_PICKLE_TEXT bytes of them.
MAX_PICKLE_STRING = 1 << 16
MAX_PICKLE_TEXT = 64 << 20
# A protocol 0 argument line (an integer, a global's name) longer than this is skipped.
MAX_PICKLE_LINE = 1 << 16
# The tensors and arrays reached from a pickle's value, counting each path to one (a state dict,
# its EMA copy and its optimizer state refer to each tensor a few times): about 3 us each.
MAX_TENSOR_REFERENCES = 500000
# Containers nest at most this deep on the way to a tensor (a training checkpoint nests under
# ten), and a dict key is a plain value or a flat tuple of plain values (hashing a tuple nested
# a million deep overflows the C stack).
MAX_NESTING = 100
# A tensor has at most this many dimensions (NumPy 2 and torch allow 64), each below 2^63
# (torch's int64 sizes).
MAX_DIMS = 64
MAX_DIM = (1 << 63) - 1
# data.pkl of a torch.save zip is read into memory: at most this much.
MAX_PICKLE_BYTES = 64 << 20

# safetensors: the reference implementation's header limit; the header is read entry by entry
# (never as one JSON value), at most this many tensors (about 3 us each), and its __metadata__
# (text only) at most this many entries.
MAX_SAFETENSORS_HEADER = 100 * 1000 * 1000
MAX_SAFETENSORS_TENSORS = 1000000
MAX_SAFETENSORS_METADATA = 100000

# NumPy: numpy.load's own header limit (max_header_size, NumPy 1.24+).
MAX_NPY_HEADER = 10000

# HDF5 (h5py): datasets listed in a file (a Keras model has a few per layer).
MAX_HDF5_DATASETS = 200000

# ONNX (protobuf.py): fields read in a file (a node takes about ten, a tensor about six;
# 4 million fields are 400,000 nodes; about 1 us each), graph nesting.
MAX_PROTOBUF_FIELDS = 4000000
MAX_PROTOBUF_DEPTH = 64

# Text: a file is told apart from binary data by reading it whole, if it is at most this long.
MAX_TEXT_SCAN = 64 << 20

# The report: the page count is read from at most this much of the PDF, and a /Count of more
# digits is no page count.
MAX_PDF_SCAN = 64 << 20
MAX_PAGE_DIGITS = 7

# Identical files are found by hashing files of the same size: at most this many bytes in all
# (beyond, files are not compared: each is counted, which can only raise the count).
MAX_HASHED_BYTES = 4 << 30

# The package's budget: what all its files may take together, so that the whole count ends in
# about 40 s at worst on one core whatever the package holds (opcodes ~1 us, references ~3 us,
# protobuf fields ~1 us, entries (safetensors tensors and metadata, .npz members, HDF5 datasets)
# ~3 us, bytes read whole (text told from binary data, ONNX padding) ~1 ns).
PACKAGE = {"opcodes": 12000000, "references": 1000000, "fields": 6000000,
           "entries": 2000000, "bytes": 2 << 30}
_UNITS = {"opcodes": "pickle opcodes", "references": "references to tensors",
          "fields": "protobuf fields", "entries": "header entries", "bytes": "bytes read whole"}


def zip_entries(path: str) -> int:
    """The entries a zip's end record declares (0 if it cannot be read: zipfile says why)."""
    try:
        with open(path, "rb") as f:
            end = zipfile._EndRecData(f)        # type: ignore[attr-defined]
        return int(end[zipfile._ECD_ENTRIES_TOTAL]) if end else 0   # type: ignore[attr-defined]
    except (OSError, AttributeError, IndexError, TypeError, ValueError, struct.error):
        return 0


class Budget:
    """The package's reading budget, shared by every file: what is left of each kind of work
    (PACKAGE). A reader takes what it may from it (limit), and gives back what it used
    (take); a file that would exceed it is refused (it cannot be checked), naming the bound."""

    def __init__(self, left: Optional[Dict[str, int]] = None) -> None:
        self.left = dict(PACKAGE if left is None else left)

    def limit(self, kind: str, own: int) -> int:
        """What the next file may take of kind: its own bound, or what the package has left."""
        return max(0, min(own, self.left[kind]))

    def take(self, kind: str, n: int) -> None:
        self.left[kind] -= n

    def binding(self, kind: str, own: int) -> bool:
        """Whether the package's budget, not the file's own bound, limited the file."""
        return self.left[kind] < own

    def exhausted(self, kind: str, what: str) -> FileRefused:
        return FileRefused("not readable: {} holds more {} than the {:,} the package's files "
                           "may take in all (refused: nothing was run)".format(
                               what, _UNITS[kind], PACKAGE[kind]))

    @property
    def opcodes_left(self) -> int:
        return self.left["opcodes"]


def default_budget(budget: Optional[Budget]) -> Budget:
    return budget if budget is not None else Budget()
