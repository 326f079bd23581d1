"""The rules' limits ("2 submissions per day and 20 submissions in total", per team) counted
over all of a team's accounts, as Codabench counts one account's
(src/apps/competitions/models.py, Phase.can_user_make_submissions): top-level submissions only
(`parent__isnull=True`), Failed ones not counted (Cancelled ones are), the day being the UTC date
of `created_when`. A submission whose status the source does not give (a bulk download's names)
is counted, and the count says so.

The submissions beyond the limit are those the platform would have refused had the team been one
account: on a day, the ones after the first `per_day` (in the order of their ids, which is the
order they were made); in total, the ones after the first `total`.
"""
from typing import Callable, Dict, List, NamedTuple, Optional

from ..platform_files.listing import Submitted

NOT_COUNTED = ("Failed",)


class TeamCount(NamedTuple):
    team: str
    accounts: List[str]                 # accounts seen submitting, sorted
    counted: int
    per_day: Dict[str, int]             # UTC day -> submissions counted
    over_days: Dict[str, List[int]]     # day -> the submissions beyond the daily limit
    over_total: List[int]               # the submissions beyond the total limit
    status_unknown: int                 # counted without a status (a download's names)

    @property
    def broken(self) -> bool:
        return bool(self.over_days or self.over_total)


def counted(s: Submitted) -> bool:
    return s.top_level and s.status not in NOT_COUNTED


def count(submitted: List[Submitted], team_of: Callable[[str], str],
          per_day: Optional[int], total: Optional[int]) -> Dict[str, TeamCount]:
    """{team: its count}; team_of maps an account to its team (itself if on no team)."""
    by_team: Dict[str, List[Submitted]] = {}
    for s in submitted:
        if counted(s):
            by_team.setdefault(team_of(s.owner), []).append(s)
    out = {}
    for team, subs in by_team.items():
        subs = sorted(subs, key=lambda s: (s.day, s.submission_id))
        days: Dict[str, List[int]] = {}
        for s in subs:
            days.setdefault(s.day, []).append(s.submission_id)
        over_days = {d: ids[per_day:] for d, ids in days.items()
                     if per_day is not None and len(ids) > per_day}
        ids = [s.submission_id for s in subs]
        out[team] = TeamCount(team, sorted(set(s.owner for s in subs)), len(subs),
                              {d: len(v) for d, v in days.items()}, over_days,
                              ids[total:] if total is not None else [],
                              sum(1 for s in subs if s.status is None))
    return out
