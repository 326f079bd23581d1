"""The build's last words: which zip to upload where, what participants meet (each choice, with
the reason for its default), when each phase takes submissions (UTC) and what a platform would
do differently (a -codalab.zip imported into Codabench)."""
import datetime
from typing import Any, Callable, Dict, List, cast

from platforms import codabench_definition
from platforms.codalab import CODALAB
from platforms.dates import Span, shown_date, utcnow
from platforms.definition import Report

from . import settings as organizer_settings
from .build import BuildResult
from .to_codabench import to_v2

Say = Callable[[str], None]


def plan(result: BuildResult, reports: List[Report], now: datetime.datetime, mergeable: bool,
         say: Say) -> None:
    """What to upload where, and when each phase takes submissions (all UTC)."""
    say("Plan (times UTC; now {}):".format(shown_date(now)))
    if mergeable:
        codabench_by_purpose(result, say)
    else:
        say("  Codabench (Benchmarks > Upload), one competition per track:")
        for b in result.built:
            if b.platform == "codabench":
                say("    {:<44} {} track".format(b.name, b.tracks[0]))
    say("  CodaLab v1.5, for a self-hosted CodaLab server only (Create competition), one "
        "competition per track:")
    for b in result.built:
        if b.platform == "codalab":
            say("    {:<44} {} track".format(b.name, b.tracks[0]))
    plan_settings(result, say)
    phase_tables(result, now, say)
    no_final_phase(result, say)
    # The check's notes on the v1.5 bundles (their phases are the same in every track's).
    early = next((codabench_definition.v15_import_early_ends(r.doc) for r in reports
                  if r.platform == CODALAB.name and r.notes and r.doc is not None), [])
    if early:
        say("  Do not upload a -codalab.zip to Codabench: its importer of v1.5 bundles ends each "
            "phase one day early ({}).".format(codabench_definition.early_end_text(early)))


def codabench_by_purpose(result: BuildResult, say: Say) -> None:
    """A competition whose tracks are tasks: each task's own bundle, and the merged one."""
    say("  Codabench (Benchmarks > Upload), by purpose:")
    parts = {p.track.name: p for p in result.parts}
    merged = [b for b in result.built if len(b.tracks) > 1]
    for b in result.built:
        if b.platform == "codabench" and len(b.tracks) == 1:
            part = parts[b.tracks[0]]
            board = to_v2(part.track.v15)["leaderboards"][0]
            say("    {:<44} {} alone, ranked by {}: with the other task's zip, a ranking per "
                "task, as on CodaLab".format(b.name, part.test_set[2],
                                             board["columns"][board["primary_index"]]["title"]))
    say("    {:<44} {}: one competition scoring every task on each upload (a benchmark "
        "suite); a submission with a failed task ranks first; participants add their "
        "submissions to its leaderboard (Add, whatever --leaderboard)".format(
            merged[0].name if merged else "{}-codabench.zip".format(result.prefix),
            "built" if merged else "not built (--merged)"))


def phase_tables(result: BuildResult, now: datetime.datetime, say: Say) -> None:
    """Each phase's dates, state at `now` and limits: once when every track has the same."""
    tables = [(p.track.name, list(zip(CODALAB.spans(p.track.v15),
                                      phase_limits(p.track.v15)))) for p in result.parts]
    same = all(rows == tables[0][1] for _, rows in tables)
    for track, rows in tables[:1] if same else tables:
        say("  Phases (every bundle):" if same and len(tables) > 1 else
            "  Phases ({} track):".format(track))
        for span, limits in rows:
            say("    {:<16} {} {:<25} {:<18} {}".format(
                span.label, shown_date(span.start) if span.start else "?",
                "to " + shown_date(span.last) if span.last else "(no end)",
                phase_state(span, now), limits))


def no_final_phase(result: BuildResult, say: Say) -> None:
    """What Codabench does with the last phase: its unpacker marks it final
    (base_unpacker.py:91), but `is_final_phase` is a read-only method field of its
    PhaseSerializer (api/serializers/competitions.py:27, 54-60), so the mark is dropped and,
    with several phases, every phase is stored with is_final_phase false. Its page then selects
    the current phase, else (no final one) the last phase (detail/_tabs.tag:347-359)."""
    spans = CODALAB.spans(result.parts[0].track.v15)
    if len(spans) > 1:
        say("  On Codabench no phase is marked final (is_final_phase is read-only in its "
            "PhaseSerializer): while no phase is open (before {} opens), the competition's "
            "page shows the last phase, {}.".format(spans[0].label, spans[-1].label))


def phase_state(span: Span, now: datetime.datetime) -> str:
    if span.start is not None and span.start > now:
        days = (span.start - now).days
        return "opens in {} day{}".format(days, "" if days == 1 else "s") if days else \
            "opens in less than a day"
    if span.last is None or now <= span.last:
        return "open now"
    return "closed"


def phase_limits(doc: Dict[str, Any]) -> List[str]:
    """Each phase's submission limits (phasenumber order, as its spans), as the plan shows
    them: a Development phase has its own (--dev-max-submissions, --dev-max-per-day)."""
    out = []
    for phase in CODALAB.phases(doc):
        per_day, total = phase.get("max_submissions_per_day"), phase.get("max_submissions")
        counts = [c for c in ("{} a day".format(per_day) if per_day else "",
                              "{} in all".format(total) if total else "") if c]
        # A limit left out is each platform's default (Codabench 5 and 100: v2.py:197-198).
        out.append("at most " + ", ".join(counts) if counts else "the platforms' default limits")
    return out


def plan_settings(result: BuildResult, say: Say) -> None:
    """What participants meet: the leaderboard rule, registration, the fact sheet, the contact
    and the queue (settings.py; the pages say the same)."""
    chosen = result.settings
    # Both resolved from the definition when neither the source nor an option chose them
    # (settings.with_definition).
    leaderboard, registration = cast(str, chosen.leaderboard), cast(str, chosen.registration)
    rankings = [(p.track.name, CODALAB.phase_info(p.track.v15, utcnow())["ranking"])
                for p in result.parts]
    same = len(set(r for _, r in rankings)) == 1
    for track, ranking in rankings[:1] if same else rankings:
        say("  Leaderboard (--leaderboard {}, Codabench {}){}: {}.{}".format(
            leaderboard, organizer_settings.CODABENCH_RULE[leaderboard],
            "" if same else ", {} track".format(track),
            organizer_settings.rule_sentence(leaderboard, ranking),
            organizer_settings.why_sentence("leaderboard", leaderboard,
                                            result.defaults)))
    say("  Registration (--registration {}): {}.{}".format(
        registration, organizer_settings.registration_sentence(registration),
        organizer_settings.why_sentence("registration", registration, result.defaults)))
    items = organizer_settings.fact_sheet_items(chosen.fact_sheet)
    say("  Fact sheet (Codabench's upload form asks it at every submission, in this order): "
        "{}.".format("; ".join(items) if items else "none"))
    if items:
        # api/serializers/submissions.py:138 checks the answers only when some are sent.
        say("    Only the upload form requires the required answers: a submission made through "
            "Codabench's API with no answers is accepted (check them before awarding).")
        note = organizer_settings.fact_sheet_order_note(chosen.fact_sheet)
        if note:
            say("    WARNING: " + note + ".")
    say("  Contact (--contact, Codabench): {}.".format(chosen.contact or "none"))
    say("  Queue (--queue, Codabench): {}.".format(
        "{}: your workers, each phase's own time limit".format(chosen.queue)
        if chosen.queue else "the default queue, at most {} s a submission".format(
            codabench_definition.QUEUE_CAP)))
