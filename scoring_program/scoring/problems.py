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


# Words a submission format may give (SubmissionFormat.words) and a message reads as empty when it
# does not: zip_hint, how that format's zip is made (", zipping the PNG files themselves...").
OPTIONAL_WORDS = ("zip_hint",)


class _Words(dict):
    """Format mapping that leaves unknown {placeholders} as they are (optional words: empty)."""

    def __missing__(self, key: str) -> str:
        return "" if key in OPTIONAL_WORDS else "{" + key + "}"


def _fill(text: str, words: Dict[str, str]) -> str:
    return text.format_map(_Words(words))


# The order of the shared kinds in a message (Kind.order): finding the files, then each file's own
# problems, then what is only noted, then the organizers'; a task's own kinds come after all.
ORDER_FINDING, ORDER_FILE, ORDER_NOTED, ORDER_REFERENCE, ORDER_TASK = 100, 200, 300, 400, 1000

# Every kind ever defined, by code: a code names one kind only (two tasks defining the same code
# would merge their problems in a log), so a second definition fails at import.
_KINDS: Dict[str, "Kind"] = {}


class Kind:
    """One kind of problem: a stable code, a headline and the fix a participant should apply.

    Headlines and fixes of the kinds shared by every task hold {placeholders} that the task's
    submission format fills in (SubmissionFormat.words), e.g. {files} = "PNG files".

    Kinds are reported by `order`, whatever module defines them and whichever was imported
    first: the shared ones give theirs explicitly (ORDER_* below: structural problems, where are
    the files, before the per-file ones, then the warnings and the organizers' problems); a
    task's own kinds come after them, in the order they are defined.
    """

    def __init__(self, code: str, headline: str, fix: str, fatal: bool = True,
                 order: Optional[int] = None) -> None:
        if code in _KINDS:
            raise ValueError("the problem kind code {!r} is defined twice (\"{}\" and \"{}\"): "
                             "give each kind its own code".format(code, _KINDS[code].headline,
                                                                 headline))
        self.order = ORDER_TASK + len(_KINDS) if order is None else order
        _KINDS[code] = self
        self.code = code
        self.headline: str = headline
        self.fix = fix
        self.fatal = fatal

    def __reduce__(self):
        # By code: the kind unpickled in another process is that process's own object (its
        # task module is imported there too), so logs and `is` comparisons agree.
        return (kind_by_code, (self.code,))


def kind_by_code(code: str) -> "Kind":
    return _KINDS[code]


# Participant-side problems (fatal unless fatal=False: those are warnings, not scored).
BAD_ZIP = Kind(
    "bad_zip", "a submission zip that cannot be unpacked",
    "re-create the zip with a standard tool and no password (Deflate or stored, '/' "
    "separators){zip_hint}.",
    order=ORDER_FINDING + 0)
NO_PREDICTIONS = Kind(
    "no_predictions", "no {files} found in the submission",
    "put the {files} themselves in the submission, at its top or in one folder (to zip them: "
    "`cd predictions && zip ../submission.zip *{ext}`).",
    order=ORDER_FINDING + 1)
AMBIGUOUS_ROOT = Kind(
    "ambiguous_root", "folders that each could be the submission",
    "put all predictions in one folder (or at the root of the zip) and remove the others.",
    order=ORDER_FINDING + 2)
NONE_MATCH = Kind(
    "none_match", "{files} of which none is named after a test {unit}",
    "check that you predicted the test split: each file must be named <{unit} id>{ext} after a "
    "test {unit} (the starting kit's manifest.json lists them).",
    order=ORDER_FINDING + 3)
MISSING = Kind(
    "missing", "reference {units} without a prediction",
    "submit one {file} named <{unit} id>{ext} for every test {unit}.",
    order=ORDER_FINDING + 4)
MISNAMED = Kind(
    "misnamed", "predictions named around a test {unit} id",
    "name each prediction exactly <{unit} id>{ext}, with nothing before or after the id.",
    order=ORDER_FINDING + 5)
DUPLICATE = Kind(
    "duplicate", "files that could be the same prediction",
    "keep exactly one file per {unit} id.",
    order=ORDER_FINDING + 6)
OTHER_IMAGE_FORMAT = Kind(
    "other_image_format", "predictions saved in another image format than PNG",
    "convert them to PNG: save each prediction again from its label array, e.g. "
    "PIL.Image.fromarray(pred.astype(numpy.uint8)).save('<image id>.png'). Converting the files "
    "themselves would keep what a lossy format (JPEG) changed: wrong class ids along every edge.",
    order=ORDER_FINDING + 8)
CANNOT_OPEN = Kind(
    "cannot_open", "files that the operating system refuses to open",
    "make the files readable to the user who runs this command (e.g. `chmod -R a+rX` on the "
    "submission folder, or unzip the submission again), then run it again: their content was "
    "never seen.",
    order=ORDER_FINDING + 7)
EXTRA_PNG = Kind(
    "extra_png", "{files} that match no test {unit} (ignored, not scored)",
    "remove them, or check their names against the test {unit} ids.",
    fatal=False, order=ORDER_NOTED + 0)
EXTRA_FILE = Kind(
    "extra_file", "files that are not {file} predictions (ignored)",
    "nothing to do if they are intended; they are not scored.",
    fatal=False, order=ORDER_NOTED + 1)

# Organizer-side problems shared by every task (a task defines its own reference kinds).
REF_ARCHIVE = Kind(
    "ref_archive", "reference zip that cannot be unpacked",
    "re-create the reference zip with a standard tool (no password, Deflate or stored).",
    order=ORDER_REFERENCE + 0)
REF_CONFIG = Kind(
    "ref_config", "reference configuration (config.yaml) unusable",
    "correct config.yaml in the reference data: a YAML mapping with the keys the task documents "
    "(e.g. `task: <name>`).",
    order=ORDER_REFERENCE + 1)

REF_CANNOT_OPEN = Kind(
    "ref_cannot_open", "reference files that the operating system refuses to open",
    "make the reference files readable to the user who runs this command (e.g. `chmod -R a+rX` on "
    "the reference folder): their content was never seen.",
    order=ORDER_REFERENCE + 2)


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

    def describe(self, kinds: List[Kind], **words: str) -> List[str]:
        """One paragraph per kind: count, headline, first names with details, the fix."""
        out = []
        for kind in kinds:
            n = self._count[kind.code]
            headline = _fill(kind.headline, words)
            lines = ["{}{} ({}):".format(headline[0].upper(), headline[1:], n)]
            for name, detail in self.examples(kind):
                lines.append("  - {}{}".format(name, ": " + detail if detail else ""))
            if n > EXAMPLES:
                lines.append("  ... and {} more".format(n - EXAMPLES))
            lines.append("  Fix: " + _fill(kind.fix, words))
            out.append("\n".join(lines))
        return out

    def summary_lines(self, **words: str) -> List[str]:
        """Short one-line-per-kind text for warnings shown in outputs (non-fatal kinds)."""
        out = []
        for kind in self.kinds(fatal=False):
            names = ", ".join(n + (" ({})".format(d) if d else "") for n, d in self.examples(kind))
            more = self._count[kind.code] - EXAMPLES
            headline = _fill(kind.headline, words)
            # "Headline (n)": a count before a plural headline would read "1 files".
            out.append("{}{} ({:,}): {}{}".format(
                headline[:1].upper(), headline[1:], self._count[kind.code], names,
                " and {:,} more".format(more) if more > 0 else ""))
        return out


class Refusal(Exception):
    """Base of every error that ends a command with its own message and exit status, no
    traceback (commands/frame.py): a broken submission (1), a broken reference or configuration
    of the organizer's (3)."""

    exit_code = 1

    def message(self) -> str:
        raise NotImplementedError


class ScoringError(Refusal):
    """A problem log that ends a run: every fatal problem, with the noted ones after them."""

    exit_code = 1
    preamble = ""

    def __init__(self, log: ProblemLog, **words: str) -> None:
        super().__init__()
        self.log = log
        self.words = words

    def __reduce__(self):
        # Raised in a worker process, it must unpickle in the main one (Exception's default
        # would call ScoringError() without the log).
        return (_rebuild_error, (type(self), self.log, self.words))

    def message(self, preamble: Optional[str] = None) -> str:
        """Every fatal problem, then the noted ones; after the class's preamble, or the one given
        (a starting kit says whose file it is: its own questions.json, not the organizers')."""
        paras = self.log.describe(self.log.kinds(fatal=True), **self.words)
        noted = self.log.summary_lines(**self.words)
        if noted:
            paras.append("Also noted (not errors):\n" + "\n".join("  - " + n for n in noted))
        return (self.preamble if preamble is None else preamble) + "\n\n" + \
            "\n\n".join(paras) + "\n"


class SubmissionError(ScoringError):
    """The participant's submission cannot be scored."""

    exit_code = 1
    preamble = "ERROR: the submission cannot be scored. Nothing was written to the leaderboard."


class BrokenReference(ScoringError):
    """The organizer's reference data is broken: not the participant's fault."""

    exit_code = 3
    preamble = ("ERROR: the REFERENCE data (the organizers' ground truth) is broken; this is not "
                "a problem with the submission. Organizers: fix the reference data and re-run.")


def _rebuild_error(cls, log: ProblemLog, words: Dict[str, str]) -> "ScoringError":
    return cls(log, **words)


class UsageError(Exception):
    """Bad command-line use or unreadable input location."""

    exit_code = 2
