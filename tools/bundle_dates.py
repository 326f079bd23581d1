"""When a bundle's phases take submissions, read as each platform reads them.

One reading of the dates for the build (bundle.py: its plan), the check (bundle_check.py) and
the pages' dates, each rule taken from the platform's code:

- CodaLab v1.5 (codalab-competitions, apps/web/models.py, CompetitionPhase.is_active): a phase is
  open from its start_date (start <= now) until phase number + 1 starts; the last one while the
  competition's end_date has not passed (Competition.is_active), always with phase_never_ends;
  the submission view also refuses after the end_date's day.
- Codabench v2 (codabench, api/serializers/competitions.py, PhaseDetailSerializer.get_status,
  which the upload form reads: only a "Current" phase takes an upload): start <= now and, when
  the phase has an end, now <= end.
- Codabench's importer of v1.5 bundles (competitions/unpackers/v1.py,
  V15Unpacker._unpack_phases) ends each phase at the next phase's start minus one day.

"Now" is UTC (both platforms read a date without a zone as UTC). BUNDLE_NOW=DATE in the
environment replaces it for every tool (bundle.sh, bundle_check.py and, with its own copy of
these lines, dry_run.py): tests run at a fixed date, and an organizer can preview a day.
"""
import datetime
import os
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from bundle_yaml import DJANGO_DATETIME, ONE_SECOND, as_datetime

NOW_ENV = "BUNDLE_NOW"
ONE_DAY = datetime.timedelta(days=1)


def utcnow() -> datetime.datetime:
    """Now, as both platforms compare phase dates (naive UTC), or BUNDLE_NOW if set; a
    ValueError if BUNDLE_NOW is not a date."""
    value = os.environ.get(NOW_ENV, "").strip()
    if value:
        when = as_datetime(value)
        if when is None:
            raise ValueError("{}={!r} is not a date: give YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS' "
                             "(UTC)".format(NOW_ENV, value))
        return when
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def shown_date(when: datetime.datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S")


def v15_when(value: Any) -> Optional[datetime.datetime]:
    """A v1.5 date as CodaLab reads it: a YAML date or timestamp; a quoted string only through
    Django's parse_datetime (a date AND a time), else None."""
    if isinstance(value, str):
        return as_datetime(value.strip()[:19].replace("T", " ")) if DJANGO_DATETIME.match(
            value.strip()) else None
    return as_datetime(value) if isinstance(value, datetime.date) else None


def _v15_phases(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    phases = doc.get("phases") if isinstance(doc.get("phases"), dict) else {}
    return sorted((p for p in phases.values() if isinstance(p, dict) and
                   isinstance(p.get("phasenumber"), int)), key=lambda p: p["phasenumber"])


def _v2_phases(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    phases = doc.get("phases") if isinstance(doc.get("phases"), list) else []
    return sorted((p for p in phases if isinstance(p, dict)),
                  key=lambda p: p.get("index", 0) if isinstance(p.get("index"), int) else 0)


def v15_open_phases(doc: Dict[str, Any], now: datetime.datetime) -> List[str]:
    """Labels of the phases CodaLab takes submissions for at `now`: CompetitionPhase.is_active
    (open from its start until phase number + 1 starts; the last one while the competition's
    end_date has not passed; always if phase_never_ends), minus the submission view's refusal
    after the end_date's day unless the phase never ends."""
    by_number = {p["phasenumber"]: p for p in _v15_phases(doc)}
    end = v15_when(doc.get("end_date"))
    found = []
    for number in sorted(by_number):
        phase = by_number[number]
        start = v15_when(phase.get("start_date"))
        if phase.get("phase_never_ends") is True:
            found.append(str(phase.get("label", number)))
            continue
        if start is None:
            continue
        following = by_number.get(number + 1)
        if following is not None:
            next_start = v15_when(following.get("start_date"))
            active = start <= now and next_start is not None and now < next_start
        else:
            active = start <= now and (end is None or end > now)
        if active and end is not None and now.date() > end.date():
            active = False
        if active:
            found.append(str(phase.get("label", number)))
    return found


def v2_open_phases(doc: Dict[str, Any], now: datetime.datetime) -> List[str]:
    """Names of the phases Codabench shows as Current at `now`, the only ones its upload form
    accepts: started (start <= now) and, with an end, not ended (now <= end)
    (PhaseDetailSerializer.get_status)."""
    found = []
    for phase in _v2_phases(doc):
        start = as_datetime(phase.get("start"))
        end = as_datetime(phase.get("end")) if phase.get("end") else None
        if start is not None and start <= now and (end is None or now <= end):
            found.append(str(phase.get("name", phase.get("index"))))
    return found


def open_phases(doc: Dict[str, Any], v2: bool, now: datetime.datetime) -> List[str]:
    return v2_open_phases(doc, now) if v2 else v15_open_phases(doc, now)


class Span(NamedTuple):
    """A phase as participants see it: open from `start` to `last` (its last second), or for
    good when `last` is None."""
    label: str
    start: Optional[datetime.datetime]
    last: Optional[datetime.datetime]


def spans(doc: Dict[str, Any], v2: bool) -> List[Span]:
    """Every phase's span: v2 its start and end; v1.5 its start until the second before the
    next phase starts, the last one until the end_date (none: for good)."""
    if v2:
        return [Span(str(p.get("name", p.get("index"))), as_datetime(p.get("start")),
                     as_datetime(p.get("end")) if p.get("end") else None)
                for p in _v2_phases(doc)]
    phases = _v15_phases(doc)
    out = []
    for i, phase in enumerate(phases):
        if i + 1 < len(phases):
            following = v15_when(phases[i + 1].get("start_date"))
            last = following - ONE_SECOND if following is not None else None
        else:
            last = None if phase.get("phase_never_ends") is True else v15_when(doc.get("end_date"))
        out.append(Span(str(phase.get("label", phase["phasenumber"])),
                        v15_when(phase.get("start_date")), last))
    return out


def opens_later(doc: Dict[str, Any], v2: bool,
                now: datetime.datetime) -> Optional[Tuple[str, datetime.datetime]]:
    """(label, start) of the first phase that takes submissions after `now`, if any."""
    for span in sorted((s for s in spans(doc, v2) if s.start is not None and s.start > now),
                       key=lambda s: s.start):
        if span.label in open_phases(doc, v2, span.start):
            return span.label, span.start
    return None


def shown_span(span: Span) -> str:
    start = shown_date(span.start) if span.start else "?"
    return "{} from {}{}".format(span.label, start, " to " + shown_date(span.last)
                                 if span.last else ", no end")


# --- Codabench's importer of v1.5 bundles ------------------------------------------------

def _codabench_get_datetime(value: Any) -> Optional[datetime.datetime]:
    """competitions/unpackers/utils.py, get_datetime: a YAML date or timestamp becomes midnight
    of its date (a datetime is a date); a string is parsed (dateutil)."""
    if isinstance(value, datetime.date):
        return datetime.datetime.combine(value, datetime.time())
    return as_datetime(value) if isinstance(value, str) else None


class EarlyEnd(NamedTuple):
    label: str
    codalab_last: datetime.datetime     # the phase's last second on CodaLab
    codabench_end: datetime.datetime    # its end once the v1.5 bundle is imported into Codabench


def codabench_early_ends(doc: Dict[str, Any]) -> List[EarlyEnd]:
    """The phases of a v1.5 definition that end earlier once imported into Codabench than on
    CodaLab: V15Unpacker._unpack_phases sets `end = next phase's start - 1 day` (CodaLab keeps
    a phase open until the next one starts)."""
    phases = _v15_phases(doc)
    out = []
    for phase, following in zip(phases, phases[1:]):
        codalab_next = v15_when(following.get("start_date"))
        codabench_next = _codabench_get_datetime(following.get("start_date"))
        if codalab_next is None or codabench_next is None:
            continue
        codabench_end = codabench_next - ONE_DAY
        if codabench_end < codalab_next - ONE_SECOND:
            out.append(EarlyEnd(str(phase.get("label", phase["phasenumber"])),
                                codalab_next - ONE_SECOND, codabench_end))
    return out


def early_end_text(ends: List[EarlyEnd]) -> str:
    return "; ".join("{} would end {} instead of {} UTC".format(
        e.label, shown_date(e.codabench_end), shown_date(e.codalab_last)) for e in ends)


# --- dates written in the pages ------------------------------------------------------------

# A date as pages write it: 2027-03-01, optionally with a time of day (minutes or seconds).
PAGE_DATE = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}:\d{2}(?::\d{2})?))?(?![\d-])")


def stray_dates(text: str, phases: List[Span]) -> List[str]:
    """The dates written in a page that are no phase's start or last second (a bare date: no
    such day; with a time: not that moment, to the precision written), in order, once each."""
    moments = [m for s in phases for m in (s.start, s.last) if m is not None]
    days = {m.date() for m in moments}
    stray = []  # type: List[str]
    for match in PAGE_DATE.finditer(text):
        day, clock = match.group(1), match.group(2)
        when = as_datetime(day + (" " + clock if clock else ""))
        if when is None:
            ok = False
        elif clock is None:
            ok = when.date() in days
        elif clock.count(":") == 1:
            ok = when in {m.replace(second=0) for m in moments}
        else:
            ok = when in moments
        if not ok and match.group(0) not in stray:
            stray.append(match.group(0))
    return stray
