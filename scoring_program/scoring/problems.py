"""Problems found in a submission or a reference, collected rather than raised one at a time.

A participant who uploads 19,708 files with one systematic mistake wants one message that says
so, not 19,708 lines nor only the first one. So problems are grouped by kind; per kind we keep a
count and the first few file names. The log is additive (merge two logs = add counts, keep the
first names in sorted order), so worker processes can each keep one and the result does not
depend on the worker count or file order.
"""
import unicodedata
from typing import Dict, List, Optional, Tuple

# How many example names to show per kind of problem.
EXAMPLES = 5


class Kind:
    """One kind of problem: a stable code, a headline and the fix a participant should apply.

    Kinds are reported in the order they are defined here: the structural problems (where are the
    files?) before the per-file ones.
    """

    _defined = 0

    def __init__(self, code: str, headline: str, fix: str, fatal: bool = True) -> None:
        Kind._defined += 1
        self.order = Kind._defined
        self.code = code
        self.headline = headline
        self.fix = fix
        self.fatal = fatal


# Participant-side problems (fatal unless fatal=False: those are warnings, not scored).
BAD_ZIP = Kind(
    "bad_zip", "a submission zip that cannot be unpacked",
    "re-create the zip with a standard tool and no password, zipping the PNG files themselves "
    "(make_submission.py in the starting kit does it: Deflate or stored, '/' separators).")
NO_PREDICTIONS = Kind(
    "no_predictions", "no PNG files found in the submission",
    "zip the PNG files themselves (e.g. `cd predictions && zip ../submission.zip *.png`).")
AMBIGUOUS_ROOT = Kind(
    "ambiguous_root", "folders that each could be the submission",
    "put all predictions in one folder (or at the root of the zip) and remove the others.")
MISSING = Kind(
    "missing", "reference images without a prediction",
    "submit one PNG named <image id>.png for every test image.")
DUPLICATE = Kind(
    "duplicate", "files that could be the same prediction",
    "keep exactly one file per image id.")
NOT_PNG = Kind(
    "not_png", "files that are not readable PNG images",
    "save each prediction with a PNG encoder, e.g. "
    "PIL.Image.fromarray(pred.astype(numpy.uint8)).save('<image id>.png').")
NOT_REGULAR = Kind(
    "not_regular", "predictions that are links or special files, not regular files",
    "put the PNG files themselves in the submission: links, FIFOs and device files are never "
    "followed or read.")
TOO_LARGE = Kind(
    "too_large", "prediction files larger than any label PNG of their size",
    "save plain PNGs (a 512 x 512 label PNG is tens of KB): no padding or extra chunks.")
WRONG_SIZE = Kind(
    "wrong_size", "predictions whose width or height differs from the test image",
    "predict at the test image's full resolution (do not resize or crop).")
NOT_SINGLE_CHANNEL = Kind(
    "not_single_channel", "predictions that are not single-channel images",
    "write an 8-bit grayscale ('L') or palette ('P') PNG whose pixel values are the class ids, "
    "not a colour visualisation.")
BAD_VALUES = Kind(
    "bad_values", "predictions with pixel values outside the class ids",
    "every pixel must hold a class id from 0 to {max_id}.")
EXTRA_PNG = Kind(
    "extra_png", "PNG files that match no test image (ignored, not scored)",
    "remove them, or check their names against the test image ids.", fatal=False)
EXTRA_FILE = Kind(
    "extra_file", "files that are not PNG predictions (ignored)",
    "nothing to do if they are intended; they are not scored.", fatal=False)

# Organizer-side problems: the reference data itself is broken.
REF_MISSING = Kind(
    "ref_missing", "reference files missing",
    "the reference data is incomplete: every image id in boundaries/ needs its mask and its "
    "label files.")
REF_UNREADABLE = Kind(
    "ref_unreadable", "reference files that are not readable 8-bit PNG images",
    "re-export the reference files as single-channel PNGs.")
REF_WRONG_SIZE = Kind(
    "ref_wrong_size", "reference files whose size differs from the image's boundary file",
    "every layer of one image must have the same width and height.")
REF_EMPTY = Kind(
    "ref_empty", "reference without a single valid pixel in the images scored",
    "every boundary or mask is empty: check that the reference holds the test labels.")
REF_LAYOUT = Kind(
    "ref_layout", "reference data layout not recognised",
    "the reference folder must hold boundaries/, masks/ and labels/<class>/ "
    "(or a packed reference).")


def shown(text: str) -> str:
    """text made safe to print on one line of a log or a page: control and format characters
    (newline, ESC of ANSI sequences, bidi overrides, line separators) become \\n, \\x1b,
    \\u202e...; bytes of a file name that are not UTF-8 (surrogate escapes) become \\xNN. No name
    can then forge a log line or fail to encode."""
    if text.isascii() and text.isprintable():  # the usual case: nothing to escape
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:         # a byte of a non-UTF-8 name (surrogateescape)
            out.append("\\x{:02x}".format(o - 0xDC00))
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            out.append("\\x{:02x}".format(o) if o < 0x100 else "\\u{:04x}".format(o)
                       if o < 0x10000 else "\\U{:08x}".format(o))
        else:
            out.append(ch)
    return "".join(out)


class ProblemLog:
    """Additive, bounded record of problems: per kind a count and the first names (sorted)."""

    def __init__(self) -> None:
        self._count: Dict[str, int] = {}
        self._examples: Dict[str, List[Tuple[str, str]]] = {}
        self._kinds: Dict[str, Kind] = {}

    def add(self, kind: Kind, name: str, detail: str = "") -> None:
        name, detail = shown(name), shown(detail)
        self._kinds[kind.code] = kind
        self._count[kind.code] = self._count.get(kind.code, 0) + 1
        ex = self._examples.setdefault(kind.code, [])
        ex.append((name, detail))
        if len(ex) > 4 * EXAMPLES:
            self._trim(kind.code)

    def _trim(self, code: str) -> None:
        self._examples[code] = sorted(self._examples[code])[:EXAMPLES]

    def merge(self, other: "ProblemLog") -> None:
        for code, n in other._count.items():
            self._kinds[code] = other._kinds[code]
            self._count[code] = self._count.get(code, 0) + n
            self._examples.setdefault(code, []).extend(other._examples[code])
            self._trim(code)

    def count(self, kind: Kind) -> int:
        return self._count.get(kind.code, 0)

    def examples(self, kind: Kind) -> List[Tuple[str, str]]:
        return sorted(self._examples.get(kind.code, []))[:EXAMPLES]

    def kinds(self, fatal: Optional[bool] = None) -> List[Kind]:
        kinds = sorted(self._kinds.values(), key=lambda k: k.order)
        if fatal is not None:
            kinds = [k for k in kinds if k.fatal == fatal]
        return kinds

    @property
    def fatal(self) -> bool:
        return bool(self.kinds(fatal=True))

    def describe(self, kinds: List[Kind], **fmt: str) -> List[str]:
        """One paragraph per kind: count, headline, first names with details, the fix."""
        out = []
        for kind in kinds:
            n = self._count[kind.code]
            lines = ["{}{} ({}):".format(kind.headline[0].upper(), kind.headline[1:], n)]
            for name, detail in self.examples(kind):
                lines.append("  - {}{}".format(name, ": " + detail if detail else ""))
            if n > EXAMPLES:
                lines.append("  ... and {} more".format(n - EXAMPLES))
            lines.append("  Fix: " + kind.fix.format(**fmt))
            out.append("\n".join(lines))
        return out

    def summary_lines(self) -> List[str]:
        """Short one-line-per-kind text for warnings shown in outputs (non-fatal kinds)."""
        out = []
        for kind in self.kinds(fatal=False):
            names = ", ".join(n + (" ({})".format(d) if d else "") for n, d in self.examples(kind))
            more = self._count[kind.code] - EXAMPLES
            out.append("{} {}: {}{}".format(
                self._count[kind.code], kind.headline, names,
                " and {} more".format(more) if more > 0 else ""))
        return out


class ScoringError(Exception):
    """Base of the errors that end a run with a clear message and no traceback."""

    exit_code = 1
    preamble = ""

    def __init__(self, log: ProblemLog, **fmt: str) -> None:
        super().__init__()
        self.log = log
        self.fmt = fmt

    def message(self) -> str:
        paras = self.log.describe(self.log.kinds(fatal=True), **self.fmt)
        noted = self.log.summary_lines()
        if noted:
            paras.append("Also noted (not errors):\n" + "\n".join("  - " + n for n in noted))
        return self.preamble + "\n\n" + "\n\n".join(paras) + "\n"


class SubmissionError(ScoringError):
    """The participant's submission cannot be scored."""

    exit_code = 1
    preamble = "ERROR: the submission cannot be scored. Nothing was written to the leaderboard."


class BrokenReference(ScoringError):
    """The organizer's reference data is broken: not the participant's fault."""

    exit_code = 3
    preamble = ("ERROR: the REFERENCE data (the organizers' ground truth) is broken; this is not "
                "a problem with the submission. Organizers: fix the reference data and re-run.")


class UsageError(Exception):
    """Bad command-line use or unreadable input location."""

    exit_code = 2
