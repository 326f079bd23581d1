"""The platform's listing of a phase's submissions, for the limits: Codabench's organizer
`/api/submissions/?phase=ID` JSON (SubmissionSerializer: `id`, `owner` = the username,
`created_when` ISO 8601, `status`, `parent`; a list, or a page `{"results": [...]}`), the same
as CSV (the submissions tab's "Download as CSV": `?format=csv`, rest_framework_csv's flattened
columns, an empty cell for no parent), or the names of a bulk download (owner, UTC date, no
status: names.py).

Bounds: at most MAX_BYTES of JSON, MAX_SUBMISSIONS entries.
"""
import datetime
import json
import os
from typing import List, NamedTuple, Optional

from scoring import regular_file
from scoring.problems import shown
from scoring.quoting import brief
from . import downloads
from .file_text import csv_dicts
from .problems import PlatformFileProblem

MAX_BYTES = 256 << 20
MAX_SUBMISSIONS = 10 ** 6


class Submitted(NamedTuple):
    submission_id: int
    owner: str
    day: str                  # UTC date, YYYY-MM-DD
    status: Optional[str]     # None: not known (a bulk download's names say none)
    top_level: bool           # parent is null (a multi-task child is not counted)
    source: str               # "listing" or "download"


def _utc_day(text: str, path: str, sid) -> str:
    when = _fromiso(text)
    if when is None:
        raise PlatformFileProblem("the submissions listing {}: submission {} has the date {}, "
                                  "not ISO 8601 with a time zone".format(
                                      shown(path), brief(str(sid)), brief(text)))
    return when.astimezone(datetime.timezone.utc).date().isoformat()


def _fromiso(text) -> Optional[datetime.datetime]:
    try:   # 2027-05-10T14:05:07.123456+02:00 (Python 3.7 has fromisoformat)
        when = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def read_json(path: str) -> List[Submitted]:
    try:
        doc = json.loads(regular_file.read_bytes(path, MAX_BYTES, follow_links=True))
    except (ValueError, RecursionError, regular_file.Refused) as exc:
        raise PlatformFileProblem("the submissions listing {} is not JSON: {}".format(
            shown(path), getattr(exc, "reason", exc))) from None
    items = doc.get("results") if isinstance(doc, dict) else doc
    if not isinstance(items, list) or len(items) > MAX_SUBMISSIONS:
        raise PlatformFileProblem("the submissions listing {} is not Codabench's "
                                  "/api/submissions/?phase=ID list".format(shown(path)))
    return _entries(items, path)


def _entries(items: list, path: str) -> List[Submitted]:
    out = []
    for item in items:
        try:
            sid, owner, when = int(item["id"]), str(item["owner"]), str(item["created_when"])
            status, parent = item.get("status"), item.get("parent")
        except (KeyError, TypeError, ValueError):
            raise PlatformFileProblem(
                "the submissions listing {}: an entry lacks id, owner or created_when: {}"
                .format(shown(path), brief(str(item)[:200]))) from None
        out.append(Submitted(sid, owner, _utc_day(when, path, sid),
                             None if status is None else str(status), parent is None,
                             "listing"))
    return out


def read_csv(path: str) -> List[Submitted]:
    rows = csv_dicts(path, MAX_BYTES, "the submissions listing")
    items = [{"id": r.get("id"), "owner": r.get("owner"), "created_when": r.get("created_when"),
              "status": r.get("status"), "parent": r.get("parent") or None} for r in rows]
    if len(items) > MAX_SUBMISSIONS or any(None in (i["id"], i["owner"], i["created_when"])
                                           for i in items):
        raise PlatformFileProblem("the submissions listing {} is not Codabench's submissions "
                                  "CSV (columns id, owner, created_when, status, parent)"
                                  .format(shown(path)))
    return _entries(items, path)


def from_download(files: List[downloads.File]) -> List[Submitted]:
    return [Submitted(f.facts.submission_id or 0, f.facts.owner, f.facts.date, None, True,
                      "download") for f in files if f.facts.platform == "codabench"]


def read(path: str) -> List[Submitted]:
    """A JSON or CSV listing, or a bulk download (folder or zip)."""
    if os.path.isfile(path) and path.lower().endswith(".json"):
        return read_json(path)
    if os.path.isfile(path) and path.lower().endswith(".csv"):
        return read_csv(path)
    bulk = downloads.open_bulk(path)
    try:
        return from_download(bulk.files)
    finally:
        bulk.cleanup()
