"""What both platforms' definition checks share: the report they write into, the bundle's
members they read, and the rules of a field that hold on both (a required key, a mapping, a
page, a logo, a data zip, a count, a length).

Each platform's own rules are in codalab_definition.py and codabench_definition.py; the
organizer's bundle check runs one of them on a competition.yaml, then the checks that cross
the bundle's parts (the program's keys against the leaderboard, the pages' dates).
"""
import datetime
import io
import re
import zipfile
from typing import IO, Any, Dict, List, NamedTuple, Optional, Tuple

# A note is a platform difference to know about, not a problem of the bundle (printed, never
# refused): e.g. a v1.5 bundle's phases end a day early if it is imported into Codabench.
ERROR, WARNING, NOTE = "error", "warning", "note"

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")
SORTS = ("asc", "desc")
# Which data references the cross checks open, by role.
ROLES = {"scoring_program": "programs", "reference_data": "references", "starting_kit": "kits"}


class Problem(NamedTuple):
    severity: str
    where: str
    message: str


class Report:
    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: List[Problem] = []
        self.open_phases: List[str] = []  # labels of the phases open on the check's date
        # (label, start) of the first phase opening after the check's date, when none is open
        self.opens_later: Optional[Tuple[str, datetime.datetime]] = None
        self.doc: Optional[Dict[str, Any]] = None  # the competition.yaml, parsed
        self.platform = ""  # the name of the model whose definition it is (registry.py)

    def error(self, where: str, message: str) -> None:
        self.problems.append(Problem(ERROR, where, message))

    def warn(self, where: str, message: str) -> None:
        self.problems.append(Problem(WARNING, where, message))

    def note(self, where: str, message: str) -> None:
        self.problems.append(Problem(NOTE, where, message))

    @property
    def errors(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == WARNING]

    @property
    def notes(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == NOTE]

    def line(self, p: Problem) -> str:
        return "{}: {} {}: {}".format(self.name, p.severity.upper(), p.where, p.message)

    def lines(self) -> List[str]:
        return [self.line(p) for p in self.errors + self.warnings + self.notes]


class Found(NamedTuple):
    """What a definition's check found for the checks across the bundle: the data zips it
    names, by role ((where, member name) each), its leaderboard's columns and the ranking
    column's key."""
    programs: List[Tuple[str, str]]
    references: List[Tuple[str, str]]
    kits: List[Tuple[str, str]]
    columns: List[Dict[str, Any]]
    primary: Optional[str]


def found() -> Dict[str, Any]:
    """An empty Found, as the mapping a check fills in (found_of makes the Found)."""
    return {"programs": [], "references": [], "kits": [], "columns": [], "primary": None}


def found_of(out: Dict[str, Any]) -> Found:
    return Found(out["programs"], out["references"], out["kits"], out["columns"],
                 out["primary"])


class Bundle:
    """Read access to the outer zip's members."""

    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.names = [i.filename for i in zf.infolist() if not i.filename.endswith("/")]
        self.name_set = set(self.names)

    def has(self, name: str) -> bool:
        return name in self.name_set

    def has_folder(self, name: str) -> bool:
        prefix = name.rstrip("/") + "/"
        return any(n.startswith(prefix) for n in self.names)

    def read(self, name: str) -> bytes:
        return self.zf.read(name)

    def read_zip(self, name: str) -> bytes:
        """A member zip's bytes; a v2 folder is zipped as Codabench does (its files at the
        root)."""
        if self.has(name):
            return self.read(name)
        prefix = name.rstrip("/") + "/"
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as out:
            for n in self.names:
                if n.startswith(prefix):
                    out.writestr(n[len(prefix):], self.read(n))
        return buf.getvalue()

    def open_zip(self, name: str) -> IO[bytes]:
        """A member zip as a seekable file, streamed rather than read into memory (the real
        reference is gigabytes)."""
        return self.zf.open(name) if self.has(name) else io.BytesIO(self.read_zip(name))


# --- the rules of a field, on both platforms ------------------------------------------------

def need(mapping: Any, key: str, where: str, report: Report, why: str = "") -> Any:
    if not isinstance(mapping, dict) or key not in mapping or mapping[key] in (None, ""):
        report.error(where, "missing required key `{}`{}".format(key, why))
        return None
    return mapping[key]


def mapping_of(value: Any, where: str, report: Report) -> Optional[Dict[str, Any]]:
    """value if it is a non-empty mapping; an error if it is something else (v1.5 sections are
    mappings: CodaLab iterates their .items())."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        report.error(where, "must be a non-empty mapping (key: value), not {}".format(
            type(value).__name__ if value else "empty"))
        return None
    return value


def check_page_file(bundle: Bundle, path: Any, where: str, report: Report) -> None:
    if not isinstance(path, str) or not bundle.has(path):
        report.error(where, "file {!r} is not in the bundle".format(path))
        return
    data = bundle.read(path)
    if not data:
        report.error(where, "{} is empty (Codabench refuses an empty page or terms)".format(path))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        report.error(where, "{} is not UTF-8 text".format(path))


def check_image(bundle: Bundle, path: Any, where: str, report: Report) -> None:
    if not isinstance(path, str) or not bundle.has(path):
        report.error(where, "logo {!r} is not in the bundle (Codabench requires one)".format(path))
    elif not bundle.read(path).startswith(IMAGE_MAGIC):
        report.error(where, "logo {} is not a PNG, JPEG or GIF image".format(path))


def check_data_ref(bundle: Bundle, value: Any, where: str, report: Report,
                   folders_ok: bool) -> Optional[str]:
    """A data reference: a zip in the bundle (v2 also: a folder), else a dataset key (UUID).
    Returns the member name when it is a zip in the bundle."""
    if not isinstance(value, str) or not value:
        report.error(where, "must name a zip file in the bundle")
        return None
    if value.endswith(".zip") and bundle.has(value):
        return value
    if folders_ok and bundle.has_folder(value):
        return None
    if UUID.match(value):
        report.warn(where, "{} is taken as the key of a dataset already on the server".format(value))
        return None
    if value.endswith(".zip"):
        report.error(where, "{} is not in the bundle".format(value))
    else:
        report.error(where, "{!r} does not end in .zip: the platform takes it as the key of an "
                            "uploaded dataset and fails to find it".format(value))
    return None


def check_count(mapping: Dict[str, Any], key: str, where: str, report: Report) -> None:
    value = mapping.get(key)
    if key in mapping and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        report.error(where, "{} must be a positive integer, not {!r}".format(key, value))


def check_length(value: Any, limit: int, what: str, where: str, report: Report) -> None:
    if isinstance(value, str) and len(value) > limit:
        report.error(where, "{} is {} characters, the platform stores at most {}".format(
            what, len(value), limit))
