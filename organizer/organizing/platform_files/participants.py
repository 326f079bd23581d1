"""Codabench's organizer `/api/participants/?competition=ID` JSON
(CompetitionParticipantSerializer: `username`, `email`, `status`...), or the participants tab's
"Download all participants" CSV (participant_manager.tag: `ID,Username,Email,Is Bot,Status`):
maps a roster's emails to the accounts' usernames. Bounds: MAX_BYTES."""
import json
from typing import Dict

from scoring import regular_file
from scoring.problems import shown
from .file_text import csv_dicts
from .problems import PlatformFileProblem

MAX_BYTES = 64 << 20


def _from_csv(path: str) -> Dict[str, str]:
    rows = csv_dicts(path, MAX_BYTES, "the participants list")
    if rows and not {"Username", "Email"} <= set(rows[0]):
        raise PlatformFileProblem("the participants list {} has no columns Username and Email "
                                  "(Codabench's \"Download all participants\")".format(
                                      shown(path)))
    return {r["Email"].strip().casefold(): r["Username"] for r in rows if r.get("Email")}


def emails_to_usernames(path: str) -> Dict[str, str]:
    """{email casefolded: username}."""
    if path.lower().endswith(".csv"):
        return _from_csv(path)
    try:
        doc = json.loads(regular_file.read_bytes(path, MAX_BYTES, follow_links=True))
        items: list = doc["results"] if isinstance(doc, dict) else doc
        return {str(i["email"]).strip().casefold(): str(i["username"]) for i in items
                if i.get("email")}
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError,
            regular_file.Refused) as exc:
        raise PlatformFileProblem("the participants list {} is not Codabench's "
                                  "/api/participants/?competition=ID JSON ({})".format(
                                      shown(path), type(exc).__name__)) from None
