"""A bulk download as the organizer has it: the folder, or the zip the browser made of it
(`bulk_submissions.zip`, names in names.py). Every entry is a submission with its platform facts,
or listed with the reason it is not one: nothing is skipped silently.

Bounds: the zip is unpacked by scoring.zips (members, sizes, zip slip); a folder's entries are
listed once (os.scandir), never followed into links; both are linear in the entries.
"""
import os
from typing import Callable, List, NamedTuple, Tuple

from scoring.folders import ignored
from scoring.problems import shown
from scoring.zips import ArchiveProblem, unpack
from . import names
from .problems import PlatformFileProblem

FAILED_LIST = "failed.txt"      # the browser's list of files it could not fetch
# CodaLab's zip of the leaderboard's submissions (download_leaderboard_results) adds these
CODALAB_EXTRAS = {"team_names_and_members.txt": "CodaLab's list of team names and members "
                                                "(free text), not a submission",
                  "detailed_results.html": "CodaLab's detailed results page, not a submission"}


class File(NamedTuple):
    facts: names.Downloaded
    path: str


class Bulk(NamedTuple):
    folder: str
    files: List[File]                 # submissions, sorted by name
    others: List[Tuple[str, str]]     # (name, why it is not a submission)
    cleanup: Callable[[], None]


def is_bulk(folder: str) -> bool:
    """A folder holding at least one file named as a platform names a download."""
    try:
        return any(names.parse(e.name) for e in os.scandir(folder))
    except OSError:
        return False


def open_bulk(path: str) -> Bulk:
    try:
        folder, cleanup = unpack(path)
    except ArchiveProblem as exc:
        raise PlatformFileProblem("the download {} cannot be unpacked: {}".format(
            shown(path), exc)) from None
    try:
        files, others = listing(folder)
    except Exception:
        cleanup()
        raise
    return Bulk(folder, files, others, cleanup)


def listing(folder: str) -> Tuple[List[File], List[Tuple[str, str]]]:
    files, others = [], []
    for e in sorted(os.scandir(folder), key=lambda e: e.name):
        if ignored(e.name):
            continue
        facts = names.parse(e.name)
        if e.name == FAILED_LIST:
            others.append((e.name, "the browser could not fetch the submissions it lists: "
                                   "download them again"))
        elif e.name in CODALAB_EXTRAS:
            others.append((e.name, CODALAB_EXTRAS[e.name]))
        elif facts is None:
            others.append((shown(e.name), "not named as the platform names a downloaded "
                                          "submission (see docs/standings.md)"))
        elif not facts.is_submission:
            others.append((shown(e.name), "CodaLab's {} beside a submission, not a submission"
                                          .format(facts.file_name)))
        elif e.is_symlink():
            others.append((shown(e.name), "a link: links are not followed"))
        else:
            files.append(File(facts, e.path))
    return files, others
