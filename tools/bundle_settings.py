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
import re
from typing import Any, Dict, List, NamedTuple, Optional

import os as _os
import sys as _sys
_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))),
                                  "kit"))   # the platforms' models (until the builder is a package)
from platforms.codalab_definition import leaderboard_rule as v15_rule  # noqa: E402
from platforms.leaderboard import rule_text  # noqa: E402

RULES = ("best", "last", "chosen")
CODABENCH_RULE = {"best": "Force_Best", "last": "Force_Last", "chosen": "Add"}
REGISTRATIONS = ("approval", "auto")

# Django's EmailValidator, in short (a user part, "@", a domain with a dot and no spaces): what
# the EmailField contact_email accepts, so the upload is not refused for it.
EMAIL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
                   r"@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$")
EMAIL_MAX = 256     # competitions/models.py:67
UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                  r"[0-9a-fA-F]{12}$")

# A fact-sheet question: exactly these keys (api/serializers/competitions.py:293-297, a
# symmetric difference: one more or one less is refused), a type among these (:294, :300-301).
FACT_SHEET_KEYS = ("key", "type", "title", "selection", "is_required", "is_on_leaderboard")
FACT_SHEET_TYPES = ("checkbox", "text", "select")


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
    if len(value) > EMAIL_MAX or not EMAIL.match(value):
        raise ValueError("--contact {!r} is not an email address Codabench accepts "
                         "(name@example.org)".format(value))


def check_queue(value: str) -> None:
    if not UUID.match(value):
        raise ValueError("--queue {!r}: give the queue's vhost, a UUID (Codabench: Queue "
                         "Management, the queue's details), not its name".format(value))


def fact_sheet_problems(sheet: Any) -> List[str]:
    """Why Codabench would refuse this fact sheet, or mis-read it (empty: fine)."""
    if sheet is None or sheet == {}:
        return []
    if not isinstance(sheet, dict):
        return ["fact_sheet must be a mapping of questions by key (api/serializers/"
                "competitions.py:290)"]
    problems = []
    for key, question in sheet.items():
        where = "fact_sheet.{}".format(key)
        if not isinstance(question, dict):
            problems.append("{}: a question is a mapping of {}".format(where,
                                                                      ", ".join(FACT_SHEET_KEYS)))
            continue
        odd = sorted(set(FACT_SHEET_KEYS) ^ set(question))
        if odd:
            problems.append("{}: a question has exactly the keys {}; {} {} (api/serializers/"
                            "competitions.py:293-297 refuses it)".format(
                                where, ", ".join(FACT_SHEET_KEYS), ", ".join(odd),
                                "is missing or extra" if len(odd) == 1 else
                                "are missing or extra"))
            continue
        if question["key"] != key or re.search(r"\s", str(key)):
            problems.append("{}: its key must be {!r}, without spaces (api/serializers/"
                            "competitions.py:298)".format(where, key))
        if question["type"] not in FACT_SHEET_TYPES:
            problems.append("{}: type {!r} is not one of {}".format(
                where, question["type"], ", ".join(FACT_SHEET_TYPES)))
        for flag in ("is_required", "is_on_leaderboard"):
            if question[flag] not in ("true", "false"):
                # Compared with the string 'true' (api/serializers/submissions.py:148,
                # api/views/competitions.py:778): a YAML true never matches.
                problems.append("{}.{}: write the string \"true\" or \"false\", not {!r}: "
                                "Codabench compares it with the text 'true'".format(
                                    where, flag, question[flag]))
        selection = question["selection"]
        if question["type"] == "text" and selection not in ("", None):
            problems.append("{}: a text question's selection is \"\" (any answer); with {!r} "
                            "only those answers would pass (api/serializers/submissions.py:"
                            "146)".format(where, selection))
        if question["type"] == "select" and not (isinstance(selection, list) and selection):
            problems.append("{}: a select question lists its answers in selection".format(where))
        if question["type"] == "checkbox" and selection != [True, False]:
            problems.append("{}: a checkbox question's selection is [true, false]".format(where))
    return problems


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
        phases = sorted(v15["phases"].values(), key=lambda p: p["phasenumber"])
        settings = settings._replace(leaderboard=v15_rule(v15, phases[0]) if phases
                                     else "chosen")
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
    form is derived from them: bundle_yaml.to_v2)."""
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
    extras = {}  # type: Dict[str, Any]
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
    """One line per question: its title, and whether it is required and shown."""
    items = []
    for question in (sheet or {}).values():
        notes = ["required" if question.get("is_required") == "true" else "optional"]
        if question.get("is_on_leaderboard") == "true":
            notes.append("on the leaderboard")
        items.append("{} ({})".format(question.get("title", question.get("key")),
                                      ", ".join(notes)))
    return items
