"""What the organizer chooses for the platforms beyond the definition: the leaderboard rule,
registration, the fact sheet, the contact address and the compute queue.

Defaults come from the competition's source.json ("settings"); bundle.sh's options override
them. Each setting is written into the platform's own keys, as its code reads them
(codalab/codabench at c7dbc756, codalab/codalab-competitions at c7ef5e28; docs/bundle.md,
"What the organizer chooses"):

- leaderboard: best | last | chosen. Codabench: the leaderboard's `submission_rule`
  (Force_Best | Force_Last | Add; src/apps/leaderboards/models.py:7-28, read through
  api/serializers/leaderboards.py:50-60; what each does: src/apps/leaderboards/strategies.py).
  CodaLab v1.5: best = each phase's `force_best_submission_to_leaderboard` (apps/web/tasks.py:
  628-629, apps/web/utils.py:89-123), last = the competition's `force_submission_to_leaderboard`
  (apps/web/tasks.py:624-626), both with `disallow_leaderboard_modifying` (participants cannot
  swap the row by hand, as Codabench's forced rules forbid: api/views/submissions.py:317-319);
  chosen = neither (the participant's "Submit to Leaderboard" button, the default).
- registration: approval | auto. Codabench `registration_auto_approve`
  (competitions/unpackers/v2.py:14, default False); CodaLab `has_registration`.
- fact_sheet (Codabench only): the questions asked at every submission
  (competitions/unpackers/v2.py:25; validated by api/serializers/competitions.py:287-303).
- contact (Codabench only): `contact_email` (competitions/unpackers/v2.py:27; an EmailField,
  competitions/models.py:67).
- queue (Codabench only): `queue`, a queue's vhost (a UUID: queues/models.py:12;
  competitions/unpackers/base_unpacker.py:208-229 refuses one that does not exist or that the
  uploader may not use). A competition on its own queue runs its phases' own time limits,
  uncapped (competitions/tasks.py:204-206).
"""
from typing import Any, Dict, List, NamedTuple, Optional

from platforms import codabench_definition, codalab_definition
from platforms.codabench_definition import (fact_sheet_in_shown_order, fact_sheet_problems,
                                             jsonb_key_order)
from platforms.leaderboard import rule_text

RULES = ("best", "last", "chosen")
# Codabench's submission_rule for each (its model's).
CODABENCH_RULE = codabench_definition.SUBMISSION_RULE
REGISTRATIONS = ("approval", "auto")


class Settings(NamedTuple):
    # None: what the definition's own keys say (resolved: with_definition).
    leaderboard: Optional[str] = None
    registration: Optional[str] = None
    fact_sheet: Optional[Dict[str, Any]] = None
    contact: str = ""
    queue: str = ""
    # Why the source chose its defaults ({"leaderboard": "...", "registration": "..."}): the
    # plan prints it beside the choice.
    why: Dict[str, str] = {}


def check_email(value: str) -> None:
    if not codabench_definition.is_email(value):
        raise ValueError("--contact {!r} is not an email address Codabench accepts "
                         "(name@example.org)".format(value))


def check_queue(value: str) -> None:
    if not codabench_definition.QUEUE_VHOST.match(value):
        raise ValueError("--queue {!r}: give the queue's vhost, a UUID (Codabench: Queue "
                         "Management, the queue's details), not its name".format(value))


def from_source(raw: Any, where: str) -> Settings:
    """The source's defaults (source.json "settings"); ValueError on a bad one."""
    raw = dict(raw or {})
    unknown = sorted(set(raw) - {"leaderboard", "registration", "fact_sheet", "contact",
                                 "queue", "why"})
    if unknown:
        raise ValueError("{}: settings has unknown keys {}".format(where, ", ".join(unknown)))
    why = raw.get("why", {})
    if not isinstance(why, dict) or set(why) - {"leaderboard", "registration"} or \
            not all(isinstance(v, str) and v for v in why.values()):
        raise ValueError("{}: settings.why gives the reason (a sentence) for the leaderboard "
                         "or registration default".format(where))
    if set(why) - set(raw):
        raise ValueError("{}: settings.why explains {}, which settings does not set".format(
            where, ", ".join(sorted(set(why) - set(raw)))))
    settings = Settings(**raw)
    return validated(settings, where)


def with_definition(settings: Settings, v15: Dict[str, Any]) -> Settings:
    """The settings with what neither the source nor an option chose taken from the v1.5
    definition's own keys (its phases' rule, has_registration)."""
    if settings.leaderboard is None:
        phases = codalab_definition.phases(v15)
        settings = settings._replace(leaderboard=codalab_definition.leaderboard_rule(
            v15, phases[0]) if phases else "chosen")
    if settings.registration is None:
        settings = settings._replace(
            registration="approval" if v15.get("has_registration") else "auto")
    return settings


def validated(settings: Settings, where: str) -> Settings:
    if settings.leaderboard is not None and settings.leaderboard not in RULES:
        raise ValueError("{}: leaderboard {!r} is not one of {}".format(
            where, settings.leaderboard, ", ".join(RULES)))
    if settings.registration is not None and settings.registration not in REGISTRATIONS:
        raise ValueError("{}: registration {!r} is not one of {}".format(
            where, settings.registration, ", ".join(REGISTRATIONS)))
    problems = fact_sheet_problems(settings.fact_sheet)
    if problems:
        raise ValueError("{}: {}".format(where, "; ".join(problems)))
    if settings.contact:
        check_email(settings.contact)
    if settings.queue:
        check_queue(settings.queue)
    return settings


def apply_v15(doc: Dict[str, Any], settings: Settings) -> Dict[str, Any]:
    """The v1.5 definition with the rule and registration written in CodaLab's keys (the v2
    form is derived from them: to_codabench.to_v2)."""
    out = dict(doc)
    out["has_registration"] = settings.registration == "approval"
    for key in ("force_submission_to_leaderboard", "disallow_leaderboard_modifying"):
        out.pop(key, None)
    if settings.leaderboard in ("best", "last"):
        out["disallow_leaderboard_modifying"] = True
    if settings.leaderboard == "last":
        out["force_submission_to_leaderboard"] = True
    phases = {}
    for number, phase in doc["phases"].items():
        phase = dict(phase)
        phase.pop("force_best_submission_to_leaderboard", None)
        if settings.leaderboard == "best":
            phase["force_best_submission_to_leaderboard"] = True
        phases[number] = phase
    out["phases"] = phases
    return out


def v2_extras(settings: Settings) -> Dict[str, Any]:
    """The Codabench-only keys (nothing CodaLab's Competition model has)."""
    extras: Dict[str, Any] = {}
    if settings.fact_sheet:
        extras["fact_sheet"] = settings.fact_sheet
    if settings.contact:
        extras["contact_email"] = settings.contact
    if settings.queue:
        extras["queue"] = settings.queue
    return extras


def rule_sentence(rule: str, ranking: str) -> str:
    """What participants are told (pages, plan): the dry run's own words."""
    return rule_text(rule, ranking)


def why_sentence(setting: str, value: str, defaults: Settings) -> str:
    """The source's reason for its default, as the plan says it beside the choice."""
    reason = defaults.why.get(setting)
    if not reason:
        return ""
    if getattr(defaults, setting) == value:
        return " Default because {}.".format(reason)
    return " (The source's default is {}, because {}.)".format(getattr(defaults, setting),
                                                              reason)


def registration_sentence(registration: str) -> str:
    if registration == "approval":
        return ("every participant waits for your approval (Codabench "
                "registration_auto_approve: false, CodaLab has_registration: True); "
                "--registration auto lets anyone in")
    return ("anyone who accepts the terms takes part at once (Codabench "
            "registration_auto_approve: true, CodaLab has_registration: False)")


def fact_sheet_items(sheet: Optional[Dict[str, Any]]) -> List[str]:
    """One line per question, in the order Codabench shows them (its database reorders the
    keys: codabench_definition.jsonb_key_order): its title, and whether it is required and
    shown."""
    items = []
    for _, question in fact_sheet_in_shown_order(sheet):
        notes = ["required" if question.get("is_required") == "true" else "optional"]
        if question.get("is_on_leaderboard") == "true":
            notes.append("on the leaderboard")
        items.append("{} ({})".format(question.get("title", question.get("key")),
                                      ", ".join(notes)))
    return items


def fact_sheet_order_note(sheet: Optional[Dict[str, Any]]) -> str:
    """"" when Codabench shows the questions in the order written, else why not and the fix."""
    written = [str(k) for k in (sheet or {})]
    shown = jsonb_key_order(written)
    if shown == written:
        return ""
    return ("Codabench shows these questions in the order of its database, not yours: its "
            "PostgreSQL jsonb keeps an object's keys shortest first, then bytewise ({}, not "
            "{}); give the keys increasing lengths in the order you want (e.g. method, code_url, "
            "parameters)".format(", ".join(shown), ", ".join(written)))
