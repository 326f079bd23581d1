"""The organizer's dates applied to a v1.5 definition: the phases moved (--start), the deadline
(--end), the open-ended post-challenge phase added after it, the Development phase before the
first (--dev-reference). The Codabench v2 form of the dates is derived from these
(to_codabench.py); how each platform reads them is its model's (kit/platforms/).
"""
import copy
import datetime
import re
from typing import Any, Dict, NamedTuple, Optional

from platforms import codalab_definition
from platforms.dates import ONE_SECOND, as_datetime


def parse_date(text: str, end_of_day: bool = False) -> datetime.datetime:
    """An organizer's date option: YYYY-MM-DD or 'YYYY-MM-DD HH:MM[:SS]', UTC. With
    end_of_day, a bare date means its last second (a deadline "2030-03-31" is the end of it)."""
    when = as_datetime(text)
    if when is None:
        raise ValueError("{!r} is not a date: give YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS' "
                         "(UTC)".format(text))
    if end_of_day and re.match(r"^\s*\d{4}-\d{2}-\d{2}\s*$", text):
        when += datetime.timedelta(days=1) - ONE_SECOND
    return when


def yaml_date(when: datetime.datetime) -> Any:
    """A date every importer reads exactly: a bare date at midnight, else a quoted
    'YYYY-MM-DD HH:MM:SS' string (CodaLab parses it with Django's parse_datetime, Codabench with
    dateutil; Codabench truncates an UNquoted timestamp to midnight, in v1.5 and v2 alike)."""
    if when.time() == datetime.time():
        return when.date()
    return when.strftime("%Y-%m-%d %H:%M:%S")


class Schedule(NamedTuple):
    """The organizer's dates. None keeps the definition's own."""
    start: Optional[datetime.datetime] = None   # the first phase starts then; the others and
                                                # the deadline move by the same amount (their
                                                # lengths are kept)
    end: Optional[datetime.datetime] = None     # the deadline: the competition's end_date
    post_challenge: bool = True                 # add an open-ended phase after the deadline


def _shift(v15: Dict[str, Any], schedule: Schedule) -> Optional[datetime.timedelta]:
    """How far --start moves the definition's phases (None: not moved)."""
    phases = codalab_definition.phases(v15)
    if schedule.start is None or not phases:
        return None
    first = as_datetime(phases[0].get("start_date"))
    if first is None:
        raise ValueError("the first phase has no readable start_date to move")
    return schedule.start - first


def schedule_deadline(v15: Dict[str, Any], schedule: Schedule) -> Optional[datetime.datetime]:
    """The deadline: --end, else the definition's end_date, moved like the phases by --start
    (the challenge keeps its length)."""
    if schedule.end is not None:
        return schedule.end
    when = as_datetime(v15.get("end_date")) if v15.get("end_date") is not None else None
    shift = _shift(v15, schedule)
    return when + shift if when is not None and shift else when


def apply_schedule(v15: Dict[str, Any], schedule: Schedule,
                   post_template: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The v1.5 definition with the organizer's dates, and (by default) a post-challenge phase.

    The post-challenge phase starts one second after the deadline and is the last phase. The
    competition's end_date is dropped: CodaLab keeps its last phase open from its start for as
    long as the competition has no end_date (CompetitionPhase.is_active), and the challenge phase
    still ends when the next phase starts, at the deadline. Not `phase_never_ends`: CodaLab
    would take submissions for such a phase at any time, before its start too, i.e. during the
    challenge, against the same hidden labels. The challenge phases keep their dates: the
    leaderboard's history. Codabench's v2 form gives the last challenge phase the deadline as
    its end and the post-challenge phase no end (to_v2).
    """
    doc = copy.deepcopy(v15)
    phases = codalab_definition.phases(doc)
    shift = _shift(v15, schedule)
    if shift:
        for phase in phases:
            when = as_datetime(phase.get("start_date"))
            if when is not None:
                phase["start_date"] = yaml_date(when + shift)
    deadline = schedule_deadline(v15, schedule)
    if deadline is not None:
        doc["end_date"] = yaml_date(deadline)  # quoted if it has a time of day: see yaml_date
    for phase in phases:
        when = as_datetime(phase.get("start_date"))
        if when is not None:
            phase["start_date"] = yaml_date(when)
    if not schedule.post_challenge or not phases:
        return doc
    deadline = as_datetime(doc.get("end_date"))
    if deadline is None:
        raise ValueError("a post-challenge phase starts after the deadline, and there is none: "
                         "give the deadline (--end DATE, or end_date: in the definition), or "
                         "build without a post-challenge phase (--no-post-challenge)")
    last = phases[-1]
    last_start = as_datetime(last.get("start_date"))
    if last_start is not None and last_start >= deadline:
        raise ValueError("the last phase starts {}, not before the deadline {}".format(
            last["start_date"], deadline))
    template = dict(post_template or {})
    post = {"phasenumber": last["phasenumber"] + 1,
            "label": template.pop("label", "Post-challenge"),
            "description": template.pop(
                "description", "After the challenge: scored like the challenge phase, for "
                               "reference; the challenge ranking is final."),
            "start_date": yaml_date(deadline + ONE_SECOND)}
    if "color" in template:
        post["color"] = template.pop("color")
    # Same data, program, limits and kit as the last challenge phase, unless the template says.
    for key, value in last.items():
        if key not in post and key != "color":
            post[key] = copy.deepcopy(value)
    post.update(template)
    number = max((k for k in doc["phases"] if isinstance(k, int)), default=0) + 1
    doc["phases"][number] = post
    doc.pop("end_date", None)
    return doc


DEV_REFERENCE_ZIP = "dev_reference_data.zip"
DEV_DAYS = 28   # the Development phase's default length, before the first challenge phase
DEV_LABEL = "Development"


class Development(NamedTuple):
    """bundle.sh --dev-reference: a phase before the challenge, scored against validation
    labels, with its own limits (Codabench's defaults when a phase gives none:
    competitions/unpackers/v2.py:197-198)."""
    start: Optional[datetime.datetime] = None   # None: DEV_DAYS before the first phase
    max_submissions: int = 100
    max_submissions_per_day: int = 5


def with_development(v15: Dict[str, Any], dev: Development) -> Dict[str, Any]:
    """The definition with a Development phase first: from dev.start to the second before the
    first phase starts (both platforms run phases one after the other: CodaLab until the next
    phase starts, Codabench refuses overlapping ones), the same program, kit and time limit,
    reference DEV_REFERENCE_ZIP. The other phases are renumbered after it."""
    doc = copy.deepcopy(v15)
    phases = codalab_definition.phases(doc)
    first = as_datetime(phases[0].get("start_date")) if phases else None
    if first is None:
        raise ValueError("--dev-reference: the first phase has no readable start_date")
    start = dev.start if dev.start is not None else first - datetime.timedelta(days=DEV_DAYS)
    if start >= first:
        raise ValueError("--dev-start {}: the Development phase must start before the {} phase "
                         "({})".format(start, phases[0].get("label", "first"), first))
    dev_phase = {"phasenumber": 1, "label": DEV_LABEL,
                 "description": "Predictions for the validation images, scored against their "
                                "labels, not the test set: try the whole upload path without "
                                "spending Test submissions. Its leaderboard is not the "
                                "challenge's ranking.",
                 "start_date": yaml_date(start), "color": "blue",
                 "max_submissions": dev.max_submissions,
                 "max_submissions_per_day": dev.max_submissions_per_day}
    for key in ("execution_time_limit", "is_scoring_only", "scoring_program", "starting_kit",
                "force_best_submission_to_leaderboard"):
        if key in phases[0]:
            dev_phase[key] = phases[0][key]
    dev_phase["reference_data"] = DEV_REFERENCE_ZIP
    renumbered = {1: dev_phase}
    for i, phase in enumerate(phases, start=2):
        phase["phasenumber"] = i
        renumbered[i] = phase
    doc["phases"] = renumbered
    return doc
