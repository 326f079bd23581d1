"""Codabench's organizer `/api/participants/?competition=ID` JSON
(CompetitionParticipantSerializer: `username`, `email`, `status`...): maps a roster's emails to
the accounts' usernames. Bounds: MAX_BYTES."""
import json
from typing import Dict

from scoring import regular_file
from scoring.problems import shown
from .problems import PlatformFileProblem

MAX_BYTES = 64 << 20


def emails_to_usernames(path: str) -> Dict[str, str]:
    """{email casefolded: username}."""
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
