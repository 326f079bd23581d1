"""Dates as both platforms read them, and "now".

Both read a date without a zone as UTC: every date here is a naive UTC datetime. "Now" is the
environment's BUNDLE_NOW when it is set (the tests run at a fixed date with it, and an organizer
previews another day: bundle.sh, its check and the dry run alike).
"""
import datetime
import os
from typing import Any, NamedTuple, Optional

NOW_ENV = "BUNDLE_NOW"
ONE_SECOND = datetime.timedelta(seconds=1)
ONE_DAY = datetime.timedelta(days=1)
FORMATS = ("%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
           "%Y-%m-%dT%H:%M:%S")


def as_datetime(value: Any) -> Optional[datetime.datetime]:
    """A YAML date, timestamp or date string as a naive UTC datetime; None if it is none of
    these."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc)
        return value.replace(tzinfo=None)
    if isinstance(value, datetime.date):
        return datetime.datetime.combine(value, datetime.time())
    if isinstance(value, str):
        for fmt in FORMATS:
            try:
                return datetime.datetime.strptime(value.strip(), fmt)
            except ValueError:
                continue
    return None


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


class Span(NamedTuple):
    """A phase as participants see it: open from `start` to `last` (its last second), or for
    good when `last` is None."""
    label: str
    start: Optional[datetime.datetime]
    last: Optional[datetime.datetime]


def shown_span(span: Span) -> str:
    start = shown_date(span.start) if span.start else "?"
    return "{} from {}{}".format(span.label, start, " to " + shown_date(span.last)
                                 if span.last else ", no end")
