"""Read a VQA results file and check it against the test question ids: every problem collected.

The official code asserts that the set of ids is right (a bare AssertionError) and silently keeps
the last of two answers to one question. Here every problem of the file is reported at once, with
counts and the first few ids or entry numbers, and a duplicated id is refused. Only question ids
and the participant's own entries are named; nothing about the reference answers.
"""
import json
import operator
import os
from typing import AbstractSet, Any, Dict, Optional

from ... import regular_file
from ...problems import CANNOT_OPEN, ProblemLog
from ...quoting import brief
from ...readers import bounded_json
from ...task_api import PredictionProblem
from .problems import (BAD_ANSWER, BAD_QUESTION_ID, DUPLICATED_IDS, MISSING_IDS, NO_ANSWER,
                       NO_QUESTION_ID, NOT_JSON, NOT_LIST, NOT_OBJECT, NOT_REGULAR, TOO_LARGE,
                       UNKNOWN_IDS)

# Size limit: generous for any real answer (VQA answers are a few words; a pretty-printed entry
# is about 80 bytes), small enough that json.loads of a file at the limit stays within the
# worker's time and memory: 1 MiB + 1,000 bytes per test question (100,000 questions: 96 MiB).
CAP_BASE = 1 << 20
CAP_PER_QUESTION = 1000

_QUESTION_ID = operator.itemgetter("question_id")
_ANSWER = operator.itemgetter("answer")


def size_cap(questions: int) -> int:
    return CAP_BASE + CAP_PER_QUESTION * questions


class ResultsProblems(PredictionProblem):
    """The results file cannot be scored; log holds every problem found (all fatal)."""

    def __init__(self, log: ProblemLog) -> None:
        first = log.kinds(fatal=True)[0]
        super().__init__(first, "{} problems".format(len(log.kinds(fatal=True))))
        self.log = log

    def __reduce__(self):  # picklable across worker processes
        return (ResultsProblems, (self.log,))


def _size_of(path: str) -> str:
    try:
        return "{:,} bytes".format(os.stat(path).st_size)
    except OSError:
        return "larger"


def describe(value: Any) -> str:
    """A short phrase for a JSON value of the wrong type (the participant's own data)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "a string ({})".format(json.dumps(value if len(value) <= 30 else value[:30] + "..."))
    if isinstance(value, float):
        return "a number with a fraction or exponent ({})".format(json.dumps(value)[:30])
    if isinstance(value, int):
        if value.bit_length() > 96:  # str() of a 4,300-digit int raises on Python 3.11+
            return "a number of about {:,} digits".format(int(value.bit_length() * 0.30103) + 1)
        return "a number ({})".format(str(value)[:30])
    if isinstance(value, list):
        return "a list"
    return "an object"


def meant_id(qid: Any) -> Optional[int]:
    """The integer a question id of the wrong type stands for ("1000" or 1000.0), if any."""
    if isinstance(qid, str) and 0 < len(qid) < 30 and qid.strip().isdigit():
        return int(qid)
    if isinstance(qid, float) and qid.is_integer() and abs(qid) < 1e18:
        return int(qid)
    return None


def _as_number(qid: Any, expected_ids: AbstractSet[int]) -> str:
    """A hint when the id is a test question's id written as text or with a fraction."""
    meant = meant_id(qid)
    if meant is not None and meant in expected_ids:
        return ": write it as an integer ({}), as questions.json does".format(meant)
    return ""


def parse(text: str, shown: str, log: ProblemLog) -> Optional[Any]:
    """The JSON document, or None with the failure logged as a problem (line and column)."""
    try:
        return bounded_json.loads(text)
    except json.JSONDecodeError as exc:
        log.add(NOT_JSON, shown, "line {}, column {}: {}{}".format(
            exc.lineno, exc.colno, exc.msg, _json_lines_hint(text, exc)))
    except RecursionError:
        log.add(NOT_JSON, shown, "it is nested too deeply")
    except bounded_json.LongInteger as exc:
        log.add(NOT_JSON, shown, "it holds {}, more than Python reads ({:,}): question ids are "
                "integers of a few digits".format(exc, bounded_json.MAX_INT_DIGITS))
    return None


def _json_lines_hint(text: str, exc: json.JSONDecodeError) -> str:
    """The JSON Lines mistake (one object per line): json stops at the second line's object."""
    if exc.msg == "Extra data" and exc.colno == 1 and text.lstrip().startswith("{"):
        return (" - it looks like JSON Lines (one object per line): write one JSON list, "
                "[{\"question_id\": ..., \"answer\": ...}, ...] (json.dump(results, f))")
    return ""


def read_results(path: str, shown: str, expected_ids: AbstractSet[int],
                 follow_links: bool = False) -> Dict[int, str]:
    """{question_id: answer} for exactly the expected ids; raises ResultsProblems otherwise.

    shown is the file's name as the participant knows it (its path inside the submission).
    follow_links: a file named on the command line (a participant's own check) may be a link
    to a regular file; a file of a submission never is."""
    log = ProblemLog()
    cap = size_cap(len(expected_ids))
    try:
        # A regular file only, never a link (regular_file.py): a FIFO would block forever and
        # a link to /dev/zero would be read until memory runs out.
        raw = bounded_json.read_bytes(path, follow_links=follow_links, max_bytes=cap)
    except regular_file.Refused as exc:
        if exc.kind == regular_file.TOO_LARGE:
            log.add(TOO_LARGE, shown, "{}; the limit for {:,} questions is {:,} bytes (1 MiB + "
                    "1,000 bytes a question)".format(_size_of(path), len(expected_ids), cap))
        else:
            log.add({regular_file.NOT_REGULAR: NOT_REGULAR,
                     regular_file.UNREADABLE: CANNOT_OPEN}.get(exc.kind, NOT_JSON), shown,
                    exc.detail())
        raise ResultsProblems(log) from None
    try:
        # UTF-8, as the official code reads it; a byte-order mark is tolerated. Text, not
        # bytes, goes to the parser (json.loads(bytes) would hold the file twice).
        text = bounded_json.decode(raw)
    except UnicodeDecodeError as exc:
        log.add(NOT_JSON, shown, "it is not UTF-8 text (byte {} is {!r})".format(
            exc.start, exc.object[exc.start:exc.start + 1]))
        raise ResultsProblems(log) from None
    del raw
    entries = parse(text, shown, log)
    del text
    if log.fatal:
        raise ResultsProblems(log)
    if not isinstance(entries, list):
        log.add(NOT_LIST, shown, "it is {}".format(describe(entries)))
        raise ResultsProblems(log)

    # Fast path, C-level only: a well-formed file is checked without a Python loop per entry.
    try:
        ids = list(map(_QUESTION_ID, entries))
        answers = list(map(_ANSWER, entries))
    except (KeyError, TypeError):
        pass
    else:
        # type(True) is bool, so a boolean id fails here and the slow path reports it.
        if set(map(type, ids)) <= {int} and set(map(type, answers)) <= {str}:
            prediction = dict(zip(ids, answers))
            if len(prediction) == len(entries) and prediction.keys() == expected_ids:
                return prediction
    check_entries(entries, expected_ids, log)
    raise ResultsProblems(log)


def check_entries(entries: list, expected_ids: AbstractSet[int], log: ProblemLog) -> None:
    """Every problem of a list of entries, into log. Entries are numbered from 1, zero-padded
    so that the log's sorted examples are the first entries."""
    width = len(str(len(entries)))
    times: Dict[int, int] = {}
    for number, entry in enumerate(entries, 1):
        name = "entry {:0{}d}".format(number, width)
        if not isinstance(entry, dict):
            log.add(NOT_OBJECT, name, "it is {}".format(describe(entry)))
            continue
        qid = entry.get("question_id")
        if "question_id" not in entry:
            log.add(NO_QUESTION_ID, name, "its keys: {}".format(", ".join(sorted(entry))[:80]))
            qid = None
        elif type(qid) is not int:
            log.add(BAD_QUESTION_ID, name, "question_id is {}{}".format(
                describe(qid), _as_number(qid, expected_ids)))
            # A test question given with an id of the wrong type is not also "missing".
            meant = meant_id(qid)
            if meant is not None:
                times.setdefault(meant, 0)
            qid = None
        else:
            times[qid] = times.get(qid, 0) + 1
        about = name if qid is None else "{} (question_id {})".format(name, brief(qid))
        if "answer" not in entry:
            log.add(NO_ANSWER, about, "its keys: {}".format(", ".join(sorted(entry))[:80]))
        elif type(entry["answer"]) is not str:
            log.add(BAD_ANSWER, about, "answer is {}".format(describe(entry["answer"])))
    for qid, n in times.items():
        if n == 0:  # only seen with an id of the wrong type (reported above)
            continue
        if n > 1:
            log.add(DUPLICATED_IDS, "question_id {}".format(brief(qid)),
                    "answered {} times".format(n))
        if qid not in expected_ids:
            log.add(UNKNOWN_IDS, "question_id {}".format(brief(qid)))
    for qid in expected_ids:
        if qid not in times:
            log.add(MISSING_IDS, "question_id {}".format(brief(qid)))
