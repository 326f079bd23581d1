"""The VQA reference: questions.json (public) and annotations.json (hidden), checked.

Everything the metric needs is computed here once per question, so scoring a results file is a
lookup and a count per question:
- the ten answers after the official cleaning (newlines/tabs to spaces, strip);
- whether the ten humans disagree; only then the official normalization applies, to the humans'
  answers and to the result's (so a unanimous "yes" is matched only by "yes", not "Yes");
- whether the ten answer records are surely distinct (answer ids 1..10, the usual case): the
  official leave-one-out removes every record EQUAL to the one left out, so duplicated records
  change the counts. Otherwise the groups of records whose other fields are equal are kept.

Two readers give the same Truth: a fast one made of C-level passes over the whole file (map,
itemgetter, set), which gives up at the first irregularity, and a checking one, question by
question, which names every problem. A broken reference ends the run with exit status 3
(BrokenReference), every problem listed.
"""
import json
import operator
import os
from itertools import chain
from typing import (AbstractSet, Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Set,
                    Tuple)

from ... import folders, regular_file
from ...problems import REF_CANNOT_OPEN, BrokenReference, ProblemLog
from ...quoting import brief
from ...readers import bounded_json
from .problems import REF_ANSWERS, REF_DISAGREE, REF_DUPLICATE, REF_EMPTY, REF_FILE, REF_FORMAT
from .normalize import Normalizer

QUESTIONS = "questions.json"
ANNOTATIONS = "annotations.json"
ANSWER_TYPES = ("yes/no", "number", "other")
HUMANS = 10
USUAL_IDS = list(range(1, HUMANS + 1))

_QUESTION_ID = operator.itemgetter("question_id")
_IMAGE_ID = operator.itemgetter("image_id")
_ANSWER_TYPE = operator.itemgetter("answer_type")
_QUESTION_TYPE = operator.itemgetter("question_type")
_ANSWERS = operator.itemgetter("answers")
_ANSWER = operator.itemgetter("answer")
_ANSWER_ID = operator.itemgetter("answer_id")
_FIRST = operator.itemgetter(0)


class Truth(NamedTuple):
    """The hidden reference, one entry per question in parallel lists (annotation order)."""
    qids: List[int]
    forms: List[Tuple[str, ...]]   # the ten answers as the official code compares them
    disagree: List[bool]           # humans disagree: the result's answer is normalized too
    answer_types: List[str]
    question_types: List[str]
    twins: Dict[int, Tuple[int, ...]]  # question index -> a class per record, for the rare
    #                                    questions whose records may repeat (equal class = equal
    #                                    fields other than "answer")
    norm: Normalizer               # caches filled while reading, reused for the results

    @property
    def disagreeing(self) -> int:
        return sum(self.disagree)


def find_root(ref_dir: str) -> str:
    """ref_dir, or its only sub-folder, whichever holds questions.json (whatever it is: a FIFO of
    that name is then refused by name, not reported missing)."""
    return folders.find_root(ref_dir, lambda d: os.path.lexists(os.path.join(d, QUESTIONS))) \
        or ref_dir


def _load(root: str, name: str, key: str, log: ProblemLog) -> Optional[list]:
    """The list under `key` of a reference JSON file, or None (problem logged)."""
    try:
        # A regular file (a link to one is followed: the organizers' own data); a FIFO or a
        # device is refused, never read.
        doc = bounded_json.load_file(os.path.join(root, name), follow_links=True)
    except regular_file.Refused as exc:   # the system's refusal: the folder's fix, not JSON's
        log.add(REF_CANNOT_OPEN if exc.kind == regular_file.UNREADABLE else REF_FILE, name,
                exc.detail())
        return None
    except json.JSONDecodeError as exc:
        log.add(REF_FILE, name, "not valid JSON: line {}, column {}: {}".format(
            exc.lineno, exc.colno, exc.msg))
        return None
    except bounded_json.LongInteger as exc:
        log.add(REF_FILE, name, "it holds {}, more than Python reads ({:,}): question ids are "
                "integers of a few digits".format(exc, bounded_json.MAX_INT_DIGITS))
        return None
    except (UnicodeDecodeError, RecursionError) as exc:
        log.add(REF_FILE, name, "not valid JSON ({})".format(type(exc).__name__))
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        log.add(REF_FORMAT, name, "expected an object with a list {}".format(brief(key)))
        return None
    return doc[key]


def _is_int(value: Any) -> bool:
    return type(value) is int  # JSON true/false are bools, not ids


def read_questions(root: str, name: str = QUESTIONS) -> Dict[int, Any]:
    """Public part: question id -> image id, from questions.json (root/name). BrokenReference
    on problems."""
    log = ProblemLog()
    entries = _load(root, name, "questions", log)
    if entries is None:
        raise BrokenReference(log)
    try:
        ids = list(map(_QUESTION_ID, entries))
        questions = dict(zip(ids, map(_IMAGE_ID, entries)))
        if entries and len(questions) == len(ids) and set(map(type, ids)) == {int}:
            return questions
    except (KeyError, TypeError):
        pass
    questions = {}
    for n, q in enumerate(entries, 1):
        if not isinstance(q, dict) or not _is_int(q.get("question_id")) or "image_id" not in q:
            log.add(REF_FORMAT, "{} question {}".format(name, n),
                    "needs an integer question_id and an image_id")
            continue
        qid = q["question_id"]
        if qid in questions:
            log.add(REF_DUPLICATE, "question_id {}".format(brief(qid)), "twice in " + name)
        questions[qid] = q["image_id"]
    if not entries:
        log.add(REF_EMPTY, name)
    if log.fatal:
        raise BrokenReference(log)
    return questions


def read_annotations(root: str, questions: Dict[int, Any], norm: Normalizer) -> Truth:
    """The hidden part, checked against questions.json. BrokenReference on problems."""
    log = ProblemLog()
    entries = _load(root, ANNOTATIONS, "annotations", log)
    if entries is None:
        raise BrokenReference(log)
    truth = _read_fast(entries, questions, norm)
    if truth is None:
        truth = _read_checking(entries, questions, norm, log)
    return truth


def _read_fast(entries: list, questions: Dict[int, Any], norm: Normalizer) -> Optional[Truth]:
    """The Truth of a regular reference from whole-file C-level passes; None at the first
    irregularity (then the checking reader runs and names the problems)."""
    n = len(entries)
    try:
        qids = list(map(_QUESTION_ID, entries))
        atypes = list(map(_ANSWER_TYPE, entries))
        qtypes = list(map(_QUESTION_TYPE, entries))
        records = list(map(_ANSWERS, entries))
        images = list(map(_IMAGE_ID, entries))
        # (answers that are not a list of ten objects fail below, in _ANSWER)
        if not (n and set(map(type, qids)) == {int} and set(atypes) <= set(ANSWER_TYPES)
                and set(map(type, qtypes)) == {str} and set(map(len, records)) == {HUMANS}
                and len(questions) == n and dict(zip(qids, images)) == questions):
            return None
        # All answer records in one flat sequence (every question has ten): one C-level pass
        # per field instead of one per question. A non-string answer fails in the cache
        # (AttributeError in str.replace, or TypeError if unhashable).
        flat = list(map(norm.clean.__getitem__, map(_ANSWER, chain.from_iterable(records))))
    except (KeyError, TypeError, AttributeError):
        return None
    cleaned = list(zip(*[iter(flat)] * HUMANS))  # back to ten per question
    normalized = list(zip(*[iter(list(map(norm.normalize.__getitem__, flat)))] * HUMANS))
    del flat
    disagree = [c != HUMANS for c in map(tuple.count, cleaned, map(_FIRST, cleaned))]
    forms = [f if d else c for c, f, d in zip(cleaned, normalized, disagree)]
    # Records can only repeat where answer ids do: with ids 1..10 everywhere (the official
    # files), one list comparison settles it for the whole file.
    try:
        regular = list(map(_ANSWER_ID, chain.from_iterable(records))) == USUAL_IDS * n
    except KeyError:
        regular = False
    twins = {}
    if not regular:
        for i, recs in enumerate(records):
            classes = _twins(recs)
            if classes is not None:
                twins[i] = classes
    return Truth(qids, forms, disagree, atypes, qtypes, twins, norm)


def only(truth: Truth, keep: AbstractSet[int]) -> Truth:
    """The truth of the questions in `keep` (a part of the test set), in the same order."""
    index = [i for i, q in enumerate(truth.qids) if q in keep]
    new_of = {i: k for k, i in enumerate(index)}
    return Truth([truth.qids[i] for i in index], [truth.forms[i] for i in index],
                 [truth.disagree[i] for i in index], [truth.answer_types[i] for i in index],
                 [truth.question_types[i] for i in index],
                 {new_of[i]: c for i, c in truth.twins.items() if i in new_of}, truth.norm)


def _read_checking(entries: list, questions: Dict[int, Any], norm: Normalizer,
                   log: ProblemLog) -> Truth:
    """Question by question, every problem logged; the same Truth as _read_fast otherwise."""
    clean, normalize = norm.clean.__getitem__, norm.normalize.__getitem__
    qids: List[int] = []
    forms_all: List[Tuple[str, ...]] = []
    disagree: List[bool] = []
    atypes: List[str] = []
    qtypes: List[str] = []
    twins: Dict[int, Tuple[int, ...]] = {}
    seen: Set[Any] = set()  # question ids as given, any JSON value
    for n, ann in enumerate(entries, 1):
        entry = _entry(ann, n, clean, log, seen)
        if entry is None or not _agrees(entry[0], ann, questions, log, seen):
            continue
        qid, key, records, forms = entry
        differ = forms.count(forms[0]) != HUMANS
        if differ:
            forms = tuple(map(normalize, forms))
        classes = _twins(records)
        if classes is not None:
            twins[len(qids)] = classes
        qids.append(qid)
        forms_all.append(forms)
        disagree.append(differ)
        atypes.append(key[0])
        qtypes.append(key[1])
    for qid in questions.keys() - seen:
        log.add(REF_DISAGREE, "question_id {}".format(brief(qid)), "in {} only".format(QUESTIONS))
    if not entries:
        log.add(REF_EMPTY, ANNOTATIONS)
    if log.fatal:
        raise BrokenReference(log)
    return Truth(qids, forms_all, disagree, atypes, qtypes, twins, norm)


def _entry(ann: Any, n: int, clean: Callable[[str], str], log: ProblemLog, seen: Set[Any]
           ) -> Optional[Tuple[int, Tuple[str, str], list, Tuple[str, ...]]]:
    """An annotation's question id, (answer type, question type), answer records and their
    cleaned answers; None with its problem logged (a field missing or of the wrong type, not
    ten answers)."""
    try:
        qid = ann["question_id"]
        key = (ann["answer_type"], ann["question_type"])
        records = ann["answers"]
        if not isinstance(records, list):
            raise TypeError
        forms = tuple(map(clean, map(_ANSWER, records)))
    except (KeyError, TypeError, AttributeError):
        _explain(ann, n, log, seen)
        return None
    if not _is_int(qid) or key[0] not in ANSWER_TYPES or type(key[1]) is not str:
        _explain(ann, n, log, seen)
        return None
    if len(forms) != HUMANS:
        log.add(REF_ANSWERS, "question_id {}".format(brief(qid)), "{} answers".format(
            len(forms)))
        seen.add(qid)
        return None
    return qid, key, records, forms


def _agrees(qid: int, ann: Any, questions: Dict[int, Any], log: ProblemLog,
            seen: Set[Any]) -> bool:
    """The question annotated once, and in questions.json with the same image; else the
    problem logged."""
    if qid in seen:
        log.add(REF_DUPLICATE, "question_id {}".format(brief(qid)), "twice in " + ANNOTATIONS)
        return False
    seen.add(qid)
    image = questions.get(qid, _ABSENT)
    if image is _ABSENT:
        log.add(REF_DISAGREE, "question_id {}".format(brief(qid)), "in {} only".format(
            ANNOTATIONS))
        return False
    if ann.get("image_id", image) != image:
        log.add(REF_DISAGREE, "question_id {}".format(brief(qid)), "image_id {} in {}, {} in {}"
                .format(brief(ann.get("image_id")), ANNOTATIONS, brief(image), QUESTIONS))
        return False
    return True


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
    """The precise problem of an annotation that could not be read (its id, if any, is marked
    seen: it is not also reported as missing)."""
    name = "{} annotation {}".format(ANNOTATIONS, n)
    if not isinstance(ann, dict):
        log.add(REF_FORMAT, name, "not an object")
        return
    if not _is_int(ann.get("question_id")):
        log.add(REF_FORMAT, name, "question_id is not an integer")
        return
    seen.add(ann["question_id"])
    name = "question_id {}".format(brief(ann["question_id"]))
    if ann.get("answer_type") not in ANSWER_TYPES:
        log.add(REF_FORMAT, name, "answer_type {} is none of {}".format(
            brief(ann.get("answer_type")), ", ".join(ANSWER_TYPES)))
    elif type(ann.get("question_type")) is not str:
        log.add(REF_FORMAT, name, "question_type is missing or not a string")
    elif not isinstance(ann.get("answers"), list):
        log.add(REF_ANSWERS, name, "answers is missing or not a list")
    else:
        log.add(REF_ANSWERS, name, "every answer must be an object with a string \"answer\"")
