"""The VQA reference: questions.json (public) and annotations.json (hidden), checked.

Everything the metric needs is computed here once per question, so scoring a results file is a
lookup and a count per question:
- the ten answers after the official cleaning (newlines/tabs to spaces, strip);
- whether the ten humans disagree; only then the official normalization applies, to the humans'
  answers and to the result's (so a unanimous "yes" is matched only by "yes", not "Yes");
- whether the ten answer records are surely distinct (distinct answer_id, the usual case): the
  official leave-one-out removes every record EQUAL to the one left out, so duplicated records
  change the counts. Otherwise the groups of records whose other fields are equal are kept.

A broken reference ends the run with exit status 3 (BrokenReference), every problem listed.
"""
import json
import operator
import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ...problems import BrokenReference, ProblemLog
from .kinds import REF_ANSWERS, REF_DISAGREE, REF_DUPLICATE, REF_EMPTY, REF_FILE, REF_FORMAT
from .normalize import Normalizer

QUESTIONS = "questions.json"
ANNOTATIONS = "annotations.json"
ANSWER_TYPES = ("yes/no", "number", "other")
HUMANS = 10

_ANSWER = operator.itemgetter("answer")
_ANSWER_ID = operator.itemgetter("answer_id")


class Question(NamedTuple):
    """One question, ready for scoring (no raw record kept)."""
    qid: int
    unanimous: bool          # compare cleaned forms only
    forms: Tuple[str, ...]   # the ten answers as the official code compares them
    group: int               # index of (answer type, question type) in Truth.groups
    twins: Optional[Tuple[int, ...]]  # None: records surely distinct; else a class per record,
    #                                   equal classes = equal fields other than "answer"


class Truth(NamedTuple):
    questions: List[Question]
    groups: List[Tuple[str, str]]    # (answer type, question type)
    disagreeing: int                 # questions whose humans disagree (normalization applies)
    norm: Normalizer                 # caches filled while reading, reused for the results


def find_root(ref_dir: str) -> str:
    """ref_dir, or its only sub-folder, whichever holds questions.json."""
    if os.path.isfile(os.path.join(ref_dir, QUESTIONS)):
        return ref_dir
    try:
        subs = [e.path for e in os.scandir(ref_dir)
                if e.is_dir() and not e.name.startswith(".") and e.name != "__MACOSX"]
    except OSError:
        subs = []
    if len(subs) == 1 and os.path.isfile(os.path.join(subs[0], QUESTIONS)):
        return subs[0]
    return ref_dir


def _load(root: str, name: str, key: str, log: ProblemLog) -> Optional[list]:
    """The list under `key` of a reference JSON file, or None (problem logged)."""
    path = os.path.join(root, name)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read())
    except OSError as exc:
        log.add(REF_FILE, name, "it cannot be read ({})".format(exc.strerror or exc))
        return None
    except json.JSONDecodeError as exc:
        log.add(REF_FILE, name, "not valid JSON: line {}, column {}: {}".format(
            exc.lineno, exc.colno, exc.msg))
        return None
    except (UnicodeDecodeError, RecursionError) as exc:
        log.add(REF_FILE, name, "not valid JSON ({})".format(type(exc).__name__))
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        log.add(REF_FORMAT, name, "expected an object with a list {!r}".format(key))
        return None
    return doc[key]


def _is_int(value: Any) -> bool:
    return type(value) is int


def read_questions(root: str) -> Dict[int, Any]:
    """Public part: question id -> image id, from questions.json. BrokenReference on problems."""
    log = ProblemLog()
    entries = _load(root, QUESTIONS, "questions", log)
    questions: Dict[int, Any] = {}
    for n, q in enumerate(entries or (), 1):
        if not isinstance(q, dict) or not _is_int(q.get("question_id")) or "image_id" not in q:
            log.add(REF_FORMAT, "{} question {}".format(QUESTIONS, n),
                    "needs an integer question_id and an image_id")
            continue
        qid = q["question_id"]
        if qid in questions:
            log.add(REF_DUPLICATE, "question_id {}".format(qid), "twice in " + QUESTIONS)
        questions[qid] = q["image_id"]
    if entries is not None and not entries:
        log.add(REF_EMPTY, QUESTIONS)
    if log.fatal:
        raise BrokenReference(log)
    return questions


def read_annotations(root: str, questions: Dict[int, Any], norm: Normalizer) -> Truth:
    """The hidden part, checked against questions.json. BrokenReference on problems."""
    log = ProblemLog()
    entries = _load(root, ANNOTATIONS, "annotations", log)
    if entries is None:
        raise BrokenReference(log)
    clean, normalize = norm.clean.__getitem__, norm.normalize.__getitem__
    out: List[Question] = []
    group_index: Dict[Tuple[str, str], int] = {}
    seen = set()
    disagreeing = 0
    for n, ann in enumerate(entries, 1):
        try:
            qid = ann["question_id"]
            key = (ann["answer_type"], ann["question_type"])
            records = ann["answers"]
            raw = list(map(_ANSWER, records))
            forms = tuple(map(clean, raw))  # TypeError if an answer is not a string
        except (KeyError, TypeError, AttributeError):
            _explain(ann, n, log, seen)
            continue
        if not _is_int(qid) or key[0] not in ANSWER_TYPES or type(key[1]) is not str:
            _explain(ann, n, log, seen)
            continue
        if len(forms) != HUMANS:
            log.add(REF_ANSWERS, "question_id {}".format(qid), "{} answers".format(len(forms)))
            continue
        if qid in seen:
            log.add(REF_DUPLICATE, "question_id {}".format(qid), "twice in " + ANNOTATIONS)
            continue
        seen.add(qid)
        image = questions.get(qid, _ABSENT)
        if image is _ABSENT:
            log.add(REF_DISAGREE, "question_id {}".format(qid), "in {} only".format(ANNOTATIONS))
            continue
        if ann.get("image_id", image) != image:
            log.add(REF_DISAGREE, "question_id {}".format(qid), "image_id {!r} in {}, {!r} in {}"
                    .format(ann.get("image_id"), ANNOTATIONS, image, QUESTIONS))
            continue
        unanimous = forms.count(forms[0]) == HUMANS
        if not unanimous:
            disagreeing += 1
            forms = tuple(map(normalize, forms))
        group = group_index.get(key)
        if group is None:
            group = group_index[key] = len(group_index)
        out.append(Question(qid, unanimous, forms, group, _twins(records)))
    for qid in questions.keys() - seen:
        log.add(REF_DISAGREE, "question_id {}".format(qid), "in {} only".format(QUESTIONS))
    if not entries:
        log.add(REF_EMPTY, ANNOTATIONS)
    if log.fatal:
        raise BrokenReference(log)
    groups = sorted(group_index, key=group_index.get)
    return Truth(out, groups, disagreeing, norm)


_ABSENT = object()


def _twins(records: Sequence[dict]) -> Optional[Tuple[int, ...]]:
    """None if the records are surely distinct (distinct answer ids), else a class per record:
    records of one class are equal in every field but "answer" (compared as Python compares
    dicts, as the official code does)."""
    try:
        if len(set(map(_ANSWER_ID, records))) == HUMANS:
            return None
    except (KeyError, TypeError):  # no answer_id, or an unhashable one
        pass
    rests: List[dict] = []
    classes = []
    for r in records:
        rest = {k: v for k, v in r.items() if k != "answer"}
        for i, other in enumerate(rests):
            if other == rest:
                classes.append(i)
                break
        else:
            classes.append(len(rests))
            rests.append(rest)
    return tuple(classes)


def _explain(ann: Any, n: int, log: ProblemLog, seen: set) -> None:
    """The precise problem of an annotation the fast path could not read (its id, if any, is
    marked seen: it is not also reported as missing)."""
    name = "{} annotation {}".format(ANNOTATIONS, n)
    if not isinstance(ann, dict):
        log.add(REF_FORMAT, name, "not an object")
        return
    if not _is_int(ann.get("question_id")):
        log.add(REF_FORMAT, name, "question_id is not an integer")
        return
    seen.add(ann["question_id"])
    name = "question_id {}".format(ann["question_id"])
    if ann.get("answer_type") not in ANSWER_TYPES:
        log.add(REF_FORMAT, name, "answer_type {!r} is none of {}".format(
            ann.get("answer_type"), ", ".join(ANSWER_TYPES)))
    elif type(ann.get("question_type")) is not str:
        log.add(REF_FORMAT, name, "question_type is missing or not a string")
    elif not isinstance(ann.get("answers"), list):
        log.add(REF_ANSWERS, name, "answers is missing or not a list")
    else:
        log.add(REF_ANSWERS, name, "every answer must be an object with a string \"answer\"")
