"""A team's limits counted as Codabench counts one account's: the platform's own
Phase.can_user_make_submissions (run from the committed extract) is the oracle. A team of
several accounts is over its limits exactly where the platform would have refused the
submission, had all of them been made by one account."""
import datetime

from hypothesis import given, strategies as st

import codabench_source
from organizing.platform_files.listing import Submitted
from organizing.teams import limits

EXTRACT = codabench_source.committed()
UTC = datetime.timezone.utc
START = datetime.datetime(2027, 5, 9, 22, 0, tzinfo=UTC)

one = st.tuples(st.integers(0, 4 * 24 * 60),          # minutes after START
                st.sampled_from(["alpha", "alpha2", "alpha3"]),
                st.sampled_from(["Finished", "Finished", "Failed", "Cancelled", "Running"]),
                st.booleans())                          # top-level (else a child)


def platform_refusals(subs, per_day, total):
    """The ids the platform refuses when one account makes them all, in time order."""
    made, refused = [], set()
    for sid, when, status, top in subs:
        as_one = [dict(owner="team", parent=None if t else 1, status=st_,
                       created_when=w) for _, w, st_, t in made]
        allowed, _ = codabench_source.can_user_make_submissions(EXTRACT, as_one, "team", when,
                                                                per_day, total)
        if top and status != "Failed" and not allowed:
            refused.add(sid)
        made.append((sid, when, status, top))
    return refused


@given(st.lists(one, max_size=25), st.integers(1, 3), st.integers(1, 8))
def test_over_the_limits_where_the_platform_would_refuse(drawn, per_day, total):
    drawn = sorted(drawn, key=lambda d: d[0])
    subs = [(k + 1, START + datetime.timedelta(minutes=m), status, top)
            for k, (m, _, status, top) in enumerate(drawn)]
    owners = {k + 1: owner for k, (_, owner, _, _) in enumerate(drawn)}
    listed = [Submitted(sid, owners[sid], when.date().isoformat(), status, top, "listing")
              for sid, when, status, top in subs]
    counts = limits.count(listed, lambda owner: "Alpha", per_day, total)
    ours = set()
    for c in counts.values():
        ours |= set(c.over_total) | set(x for v in c.over_days.values() for x in v)
    assert ours == platform_refusals(subs, per_day, total)


def test_a_team_of_two_accounts_by_hand():
    # 2 a day, 20 in total: each account stays within the platform's limits, the team does not
    day = "2027-05-10"
    listed = [Submitted(1, "d1", day, "Finished", True, "listing"),
              Submitted(2, "d1", day, "Finished", True, "listing"),
              Submitted(3, "d2", day, "Finished", True, "listing"),
              Submitted(4, "d2", day, "Failed", True, "listing"),     # not counted
              Submitted(5, "d2", "2027-05-11", "Finished", True, "listing")]
    counts = limits.count(listed, lambda owner: "Delta", 2, 20)["Delta"]
    assert counts.counted == 4
    assert counts.per_day == {day: 3, "2027-05-11": 1}
    assert counts.over_days == {day: [3]} and counts.over_total == []
    assert counts.accounts == ["d1", "d2"] and counts.broken
