"""A submission given as a folder or a zip: unpacked, or refused as a participant's problem.

The one place that says so for score.py (scoring/cli.py) and the starting kit's checkers
(check_submission.py, check_results.py): a zip that cannot be unpacked (an entry outside the
folder, encrypted, an unknown compression, a bomb...) is the participant's mistake, exit 1, with
the same message everywhere, never a traceback. Standard library only (the VQA kit's checker
runs without numpy and Pillow).
"""
import os

from ..problems import BAD_ZIP, ProblemLog, SubmissionError
from .archive import ArchiveProblem
from .discovery import unpack_if_zip


def unpack_submission(path: str) -> "tuple":
    """(folder, cleanup) as unpack_if_zip; SubmissionError naming the zip if it cannot be
    unpacked."""
    try:
        return unpack_if_zip(path)
    except ArchiveProblem as exc:
        log = ProblemLog()
        log.add(BAD_ZIP, os.path.basename(path), str(exc))
        raise SubmissionError(log) from None
