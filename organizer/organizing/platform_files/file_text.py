"""A platform's file (export, listing, participants list) read whole under a size bound, as
text: a byte-order mark dropped, undecodable bytes replaced; every failure a
PlatformFileProblem naming the file."""
import csv
import io
from typing import Dict, List

from scoring import regular_file
from scoring.problems import shown
from .problems import PlatformFileProblem


def read_text(path: str, max_bytes: int, what: str) -> str:
    """The file's text; what: the file's name in a message ("the leaderboard export")."""
    try:
        raw = regular_file.read_bytes(path, max_bytes, follow_links=True)
    except regular_file.Refused as exc:
        raise PlatformFileProblem("{} {} cannot be read: {}".format(
            what, shown(path), exc.reason)) from None
    return raw.decode("utf-8-sig", "replace")


def csv_dicts(path: str, max_bytes: int, what: str) -> List[Dict[str, str]]:
    """The CSV file's rows keyed by its header row."""
    text = read_text(path, max_bytes, what)
    try:
        return list(csv.DictReader(io.StringIO(text)))
    except csv.Error as exc:
        raise PlatformFileProblem("{} {} is not a CSV file: {}".format(
            what, shown(path), exc)) from None
