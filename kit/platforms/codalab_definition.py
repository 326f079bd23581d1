"""A CodaLab v1.5 competition.yaml as CodaLab reads it (codalab/codalab-competitions at
c7ef5e28, apps/web): which phase takes submissions and when, which submission the leaderboard
keeps, and what its unpacker refuses or silently gets wrong (check).

Phases: a phase is open from its start_date (start <= now) until phase number + 1 starts, the
last one while the competition's end_date has not passed, always with phase_never_ends
(CompetitionPhase.is_active); the submission view also refuses after the end_date's day. A
quoted date is read by Django's parse_datetime, which needs a date AND a time.
"""
import datetime
import re
from typing import Any, Dict, List, Optional, Tuple

from . import definition as rules
from .dates import ONE_SECOND, Span, as_datetime, shown_date
from .definition import Bundle, Found, Report

VERSION = None   # a v1.5 definition has no `version:`

# CodaLab v1.5 (apps/web/models.py, CompetitionDefBundle.unpack) removes html, phases,
# leaderboard and admin_names and passes every other top-level key to Competition(**keys): a key
# that is not a field of the Competition model crashes the upload, and so does a value for a
# relation (queue, admins, teams: a string where a model instance is needed). These are its
# plain fields.
TOP_KEYS = {
    "title", "description", "image", "has_registration", "end_date", "html", "phases",
    "leaderboard", "admin_names", "competition_docker_image", "force_submission_to_leaderboard",
    "disallow_leaderboard_modifying", "enable_medical_image_viewer", "enable_detailed_results",
    "show_datasets_from_yaml", "reward", "allow_teams", "enable_per_submission_metadata",
    "allow_public_submissions", "enable_forum", "anonymous_leaderboard", "enable_teams",
    "require_team_approval", "hide_top_three", "hide_chart", "allow_organizer_teams",
    "url_redirect", "image_url_base", "start_date", "published", "last_phase_migration",
    "is_migrating", "is_migrating_delayed", "secret_key", "upper_bound_max_submission_size",
    "deleted", "last_modified", "original_yaml_file",
}
RELATION_KEYS = {"queue", "admins", "teams", "creator", "modified_by"}
# ... and every phase key (datasets aside, which it takes out) to
# CompetitionPhase.objects.get_or_create(**keys): the plain fields of CompetitionPhase. Keys of
# other versions (hide_output, ingestion_program_only_during_scoring, is_parallel_parent,
# parent_phasenumber...) are not among them and crash the upload.
PHASE_KEYS = {
    "phasenumber", "label", "description", "start_date", "max_submissions",
    "max_submissions_per_day", "is_scoring_only", "scoring_program", "reference_data",
    "input_data", "ingestion_program", "starting_kit", "public_data", "datasets",
    "leaderboard_management_mode", "force_best_submission_to_leaderboard", "auto_migration",
    "is_migrated", "execution_time_limit", "color", "phase_never_ends",
    "scoring_program_docker_image", "default_docker_image", "disable_custom_docker_image",
    "ingestion_program_docker_image", "max_submission_size", "participant_max_storage_use",
    "delete_submissions_except_best_and_last",
}
HTML_REQUIRED = ("overview", "evaluation", "terms", "data")   # the unpacker reads all four
PHASE_REQUIRED = ("phasenumber", "label", "start_date", "scoring_program", "reference_data")
COLUMN_KEYS = {"leaderboard", "label", "rank", "numeric_format", "sort", "selection_default",
               "hidden", "column_group", "computed"}
DATA_KEYS = ("scoring_program", "reference_data", "input_data", "ingestion_program",
             "starting_kit", "public_data")
COLORS = ("white", "orange", "yellow", "green", "blue", "purple")
MAX_LENGTH = {"title": 100, "phase label": 50, "phase description": 1000,
              "leaderboard label": 50, "column key": 50, "column label": 50}

# Django's parse_datetime, which CodaLab applies to a quoted date: a date AND a time are needed
# (a quoted bare date gives None and the upload fails).
DJANGO_DATETIME = re.compile(
    r"^\d{4}-\d{1,2}-\d{1,2}[T ]\d{1,2}:\d{1,2}(?::\d{1,2}(?:[.,]\d{1,6}\d{0,6})?)?"
    r"\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?$")


# --- the phases and their dates ---------------------------------------------------------------

def when(value: Any) -> Optional[datetime.datetime]:
    """A v1.5 date as CodaLab reads it: a YAML date or timestamp; a quoted string only through
    Django's parse_datetime (a date AND a time), else None."""
    if isinstance(value, str):
        return as_datetime(value.strip()[:19].replace("T", " ")) if DJANGO_DATETIME.match(
            value.strip()) else None
    return as_datetime(value) if isinstance(value, datetime.date) else None


def phases(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The phases, by phasenumber (those without an integer one are no phase to CodaLab)."""
    found = doc.get("phases")
    if not isinstance(found, dict):
        return []
    return sorted((p for p in found.values() if isinstance(p, dict) and
                   isinstance(p.get("phasenumber"), int)), key=lambda p: p["phasenumber"])


def label(phase: Dict[str, Any]) -> str:
    return str(phase.get("label", phase.get("phasenumber")))


def open_phases(doc: Dict[str, Any], now: datetime.datetime) -> List[Dict[str, Any]]:
    """The phases CodaLab takes submissions for at `now`: CompetitionPhase.is_active (open from
    its start until phase number + 1 starts; the last one while the competition's end_date has
    not passed; always if phase_never_ends), minus the submission view's refusal after the
    end_date's day unless the phase never ends."""
    by_number = {p["phasenumber"]: p for p in phases(doc)}
    end = when(doc.get("end_date"))
    found = []
    for number in sorted(by_number):
        phase = by_number[number]
        if phase.get("phase_never_ends") is True:
            found.append(phase)
        elif _active(phase, by_number.get(number + 1), end, now):
            found.append(phase)
    return found


def _active(phase: Dict[str, Any], following: Optional[Dict[str, Any]],
            end: Optional[datetime.datetime], now: datetime.datetime) -> bool:
    start = when(phase.get("start_date"))
    if start is None:
        return False
    if following is not None:
        next_start = when(following.get("start_date"))
        active = start <= now and next_start is not None and now < next_start
    else:
        active = start <= now and (end is None or end > now)
    return active and not (end is not None and now.date() > end.date())


def spans(doc: Dict[str, Any]) -> List[Span]:
    """Every phase's span: its start until the second before the next phase starts, the last
    one until the end_date (none: for good)."""
    ordered = phases(doc)
    out = []
    for i, phase in enumerate(ordered):
        if i + 1 < len(ordered):
            following = when(ordered[i + 1].get("start_date"))
            last = following - ONE_SECOND if following is not None else None
        else:
            last = None if phase.get("phase_never_ends") is True else when(doc.get("end_date"))
        out.append(Span(label(phase), when(phase.get("start_date")), last))
    return out


# --- the leaderboard --------------------------------------------------------------------------

def leaderboard_rule(doc: Dict[str, Any], phase: Dict[str, Any]) -> str:
    """The rule of a CodaLab phase: its force_best_submission_to_leaderboard (apps/web/tasks.py
    628), else the competition's force_submission_to_leaderboard or a hide_results phase (the
    last one is added, tasks.py 619-626), else the participant's choice."""
    if phase.get("force_best_submission_to_leaderboard") is True:
        return "best"
    if doc.get("force_submission_to_leaderboard") is True or \
            phase.get("leaderboard_management_mode") == "hide_results":
        return "last"
    return "chosen"


def columns(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The leaderboard's columns as CodaLab orders them (by rank, then yaml order), each
    {key, label, precision, sort}."""
    order = list(doc["leaderboard"]["columns"])
    cols = sorted(doc["leaderboard"]["columns"].items(),
                  key=lambda kv: (kv[1].get("rank", 1), order.index(kv[0])))
    return [{"key": k, "label": c.get("label", k), "precision": int(c.get("numeric_format", 2)),
             "sort": c.get("sort", "desc")} for k, c in cols]


# --- what a submission runs through, what the pages are ----------------------------------------

def scoring_runs(doc: Dict[str, Any]) -> List[List[Tuple[Any, Any]]]:
    """Per phase, the (scoring program, reference) a submission runs through: one."""
    found = doc.get("phases")
    ordered = sorted((p for p in (found.values() if isinstance(found, dict) else [])
                      if isinstance(p, dict)),
                     key=lambda p: p["phasenumber"] if isinstance(p.get("phasenumber"), int)
                     else 0)
    return [[(p.get("scoring_program"), p.get("reference_data"))] for p in ordered]


def pages(doc: Dict[str, Any]) -> List[Tuple[str, Any]]:
    """(where, path) of every page the definition names."""
    html = doc.get("html")
    return [("html." + k, v) for k, v in html.items()] if isinstance(html, dict) else []


# --- what the unpacker refuses or gets wrong ---------------------------------------------------

def date_of(value: Any, where: str, report: Report) -> Optional[datetime.datetime]:
    """CodaLab's localize_datetime: a YAML date or timestamp as it is; a quoted string through
    Django's parse_datetime, which reads 'YYYY-MM-DD HH:MM[:SS]' but returns None for a bare
    date, and the upload then fails."""
    if isinstance(value, str):
        if not DJANGO_DATETIME.match(value.strip()):
            report.error(where, "{!r} is not a date CodaLab reads: an unquoted date (2021-04-15) "
                                "or a date and time, quoted or not ('2021-06-05 23:59:59'); "
                                "Django's parse_datetime refuses a quoted date without a time"
                         .format(value))
            return None
        return as_datetime(value.strip()[:19].replace("T", " "))
    found = as_datetime(value) if isinstance(value, datetime.date) else None
    if found is None:
        report.error(where, "{!r} is not a date CodaLab reads (2021-04-15, or "
                            "'2021-06-05 23:59:59')".format(value))
    elif isinstance(value, datetime.datetime) and value.time() != datetime.time():
        report.warn(where, "{}: CodaLab keeps this time of day, but Codabench's v1.5 importer "
                           "keeps only the date of an unquoted timestamp: quote it ('{}')".format(
                               value, shown_date(found)))
    return found


def check(doc: Dict[str, Any], bundle: Bundle, report: Report) -> Found:
    """Every rule of CodaLab's unpacker on the definition; returns what the checks across the
    bundle need: data zips, columns and the ranking column."""
    out = rules.found()
    _check_top_keys(doc, report)
    _check_texts_and_pages(doc, bundle, report)
    end = date_of(doc["end_date"], "end_date", report) if doc.get("end_date") is not None \
        else None
    _check_phases(doc, bundle, report, end, out)
    _check_leaderboard(doc, report, out)
    return rules.found_of(out)


def _check_top_keys(doc: Dict[str, Any], report: Report) -> None:
    for key in sorted(k for k in doc if k not in TOP_KEYS):
        if key in RELATION_KEYS:
            report.error("competition.yaml", "top-level key `{}`: CodaLab passes it to "
                                             "Competition(), where it is a relation, and the "
                                             "upload crashes (set it on the site)".format(key))
            continue
        hint = {"version": " (a v2 bundle needs `version: 2`)",
                "docker_image": " (v1.5 reads competition_docker_image)"}.get(key, "")
        report.error("competition.yaml", "unknown top-level key `{}`: CodaLab passes it to "
                                         "Competition() and crashes{}".format(key, hint))


def _check_texts_and_pages(doc: Dict[str, Any], bundle: Bundle, report: Report) -> None:
    rules.check_length(rules.need(doc, "title", "competition.yaml", report),
                       MAX_LENGTH["title"], "title", "competition.yaml", report)
    if doc.get("image"):
        rules.check_image(bundle, doc["image"], "image", report)
    else:
        # CodaLab's unpacker reads the logo only if named; Codabench's v1.5 importer requires it.
        report.warn("competition.yaml", "no `image` (logo): CodaLab accepts it, but Codabench's "
                                        "v1.5 importer refuses a bundle without one")
    html = rules.mapping_of(rules.need(doc, "html", "competition.yaml", report), "html", report)
    if html:
        for page in HTML_REQUIRED:
            if rules.need(html, page, "html", report, " (the unpacker reads overview, "
                                                      "evaluation, terms and data)") is not None:
                rules.check_page_file(bundle, html[page], "html." + page, report)
        for page in sorted(set(html) - set(HTML_REQUIRED)):
            rules.check_page_file(bundle, html[page], "html." + page, report)
    for key in ("has_registration", "enable_detailed_results"):
        if key in doc and not isinstance(doc[key], bool):
            report.error(key, "must be True or False, not {!r}".format(doc[key]))


def _check_phases(doc: Dict[str, Any], bundle: Bundle, report: Report,
                  end: Optional[datetime.datetime], out: Dict[str, Any]) -> None:
    found = rules.mapping_of(rules.need(doc, "phases", "competition.yaml", report), "phases",
                             report)
    if not found:
        return
    numbers: List[int] = []
    starts: List[Tuple[int, datetime.datetime]] = []
    for pkey, phase in found.items():
        where = "phases.{}".format(pkey)
        if not isinstance(phase, dict):
            report.error(where, "must be a mapping")
            continue
        number = _check_phase(phase, where, report)
        if number is not None:
            numbers.append(number)
        if "start_date" in phase:
            start = date_of(phase["start_date"], where + ".start_date", report)
            if start is not None and number is not None:
                starts.append((number, start))
        _check_phase_settings(phase, where, len(found) > 1, bundle, report, out)
    _check_phase_order(numbers, starts, end, report)


def _check_phase(phase: Dict[str, Any], where: str, report: Report) -> Optional[int]:
    """A phase's keys, number and texts; returns its phasenumber when it is one."""
    for key in sorted(k for k in phase if k not in PHASE_KEYS):
        hint = " (v1.5 reads `sort` only for columns)" if key == "sorting" else ""
        report.error(where, "unknown phase key `{}`: CodaLab passes it to "
                            "CompetitionPhase() and crashes{}".format(key, hint))
    for key in PHASE_REQUIRED:
        rules.need(phase, key, where, report)
    number = phase.get("phasenumber")
    if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
        report.error(where, "phasenumber must be an integer, not {!r}".format(number))
        number = None
    rules.check_length(phase.get("label"), MAX_LENGTH["phase label"], "label", where, report)
    rules.check_length(phase.get("description"), MAX_LENGTH["phase description"],
                       "description", where, report)
    return number


def _check_phase_settings(phase: Dict[str, Any], where: str, several: bool, bundle: Bundle,
                          report: Report, out: Dict[str, Any]) -> None:
    """A phase's schedule flag, colour, limits and data zips."""
    if phase.get("phase_never_ends") is True and several:
        report.warn(where, "phase_never_ends: CodaLab takes submissions for this phase "
                           "at any time, before its start_date too, alongside the other "
                           "phases; an open-ended last phase needs no end_date instead")
    if "color" in phase and phase["color"] not in COLORS:
        report.error(where + ".color", "{!r} is not a CodaLab phase color ({})".format(
            phase["color"], ", ".join(COLORS)))
    for key in ("max_submissions", "max_submissions_per_day", "execution_time_limit"):
        rules.check_count(phase, key, where, report)
    if "max_submissions_per_day" not in phase:
        # The pages cannot state one limit for both: the platforms' defaults differ.
        report.warn(where, "no max_submissions_per_day: CodaLab then allows 999 a day "
                           "(apps/web/models.py:888), Codabench 5 (competitions/"
                           "unpackers/v2.py:197); write the limit")
    for key in DATA_KEYS:
        if key in phase:
            name = rules.check_data_ref(bundle, phase[key], where + "." + key, report, False)
            if name and key in rules.ROLES:
                out[rules.ROLES[key]].append((where, name))


def _check_phase_order(numbers: List[int], starts: List[Tuple[int, datetime.datetime]],
                       end: Optional[datetime.datetime], report: Report) -> None:
    """A phase is active until phase number + 1 starts: numbers must run 1, 2, 3..., each
    phase start after the one before, the end_date after the last start."""
    if sorted(numbers) != list(range(1, len(numbers) + 1)):
        report.error("phases", "phasenumbers {} must be 1, 2, 3...: CodaLab finds the next "
                               "phase by phasenumber + 1".format(sorted(numbers)))
    starts.sort()
    for (n1, s1), (n2, s2) in zip(starts, starts[1:]):
        if s2 <= s1:
            report.error("phases", "phase {} starts {}, not after phase {} ({})".format(
                n2, s2, n1, s1))
    if end is not None and starts and end <= starts[-1][1]:
        report.error("end_date", "{} is not after the last phase's start {}".format(
            end, starts[-1][1]))


def _check_leaderboard(doc: Dict[str, Any], report: Report, out: Dict[str, Any]) -> None:
    board = rules.mapping_of(rules.need(doc, "leaderboard", "competition.yaml", report),
                             "leaderboard", report)
    boards = rules.mapping_of(rules.need(board, "leaderboards", "leaderboard", report)
                              if board else None, "leaderboard.leaderboards", report)
    found = rules.mapping_of(rules.need(board, "columns", "leaderboard", report)
                             if board else None, "leaderboard.columns", report)
    labels = _check_boards(boards, report) if boards else {}
    if not found:
        return
    for index, (ckey, col) in enumerate(found.items()):
        where = "leaderboard.columns.{}".format(ckey)
        if not isinstance(col, dict):
            report.error(where, "must be a mapping")
            continue
        _check_column(ckey, col, labels, where, report)
        out["columns"].append({"key": ckey, "sort": col.get("sort", "desc"),
                               "rank": col.get("rank", 1), "order": index,
                               "selection": col.get("selection_default", 0)})
    out["primary"] = _ranking_column(out["columns"], report)


def _check_boards(boards: Dict[str, Any], report: Report) -> Dict[str, Any]:
    """The leaderboards' labels (what a column's `leaderboard:` names), each checked."""
    labels = {}
    for bkey, board in boards.items():
        where = "leaderboard.leaderboards.{}".format(bkey)
        if rules.need(board, "label", where, report) is not None:
            labels[str(board["label"]).strip()] = bkey
            rules.check_length(board["label"], MAX_LENGTH["leaderboard label"], "label", where,
                               report)
        rules.need(board, "rank", where, report)
    return labels


def _check_column(ckey: Any, col: Dict[str, Any], labels: Dict[str, Any], where: str,
                  report: Report) -> None:
    if ":" in str(ckey):
        report.error(where, "column key {!r} holds a colon: CodaLab's worker splits each "
                            "scores.txt line on ':', so no score can reach it".format(ckey))
    rules.check_length(ckey, MAX_LENGTH["column key"], "the key", where, report)
    for key in sorted(k for k in col if k not in COLUMN_KEYS):
        hint = (": v1.5 reads `sort`, and ignores `sorting` (the column would sort desc "
                "by default)") if key == "sorting" else ""
        report.error(where, "unknown column key `{}`{}".format(key, hint))
    board = rules.need(col, "leaderboard", where, report, " (an alias like *RESULTS)")
    if board is not None:
        named = str(board.get("label", "")).strip() if isinstance(board, dict) else None
        if named not in labels:
            report.error(where + ".leaderboard", "names no declared leaderboard (use the "
                                                 "alias of one, e.g. *RESULTS): CodaLab "
                                                 "fails with KeyError")
    rules.need(col, "label", where, report)
    rules.check_length(col.get("label"), MAX_LENGTH["column label"], "label", where, report)
    rules.need(col, "rank", where, report)
    if "sort" in col and col["sort"] not in rules.SORTS:
        report.error(where + ".sort", "{!r} is not asc or desc".format(col["sort"]))
    fmt = col.get("numeric_format", 2)
    if not isinstance(fmt, int) or isinstance(fmt, bool) or not 1 <= fmt <= 10:
        report.error(where + ".numeric_format", "{!r}: CodaLab shows 1 to 10 decimals"
                     .format(fmt))


def _ranking_column(cols: List[Dict[str, Any]], report: Report) -> Optional[str]:
    """The column both platforms rank by: CodaLab by the highest selection_default (the first
    column on ties), Codabench's importer by the lowest rank; an error when they differ."""
    if not cols:
        return None
    by_selection = max(cols, key=lambda c: (c["selection"], -c["order"]))["key"]
    by_rank = min(cols, key=lambda c: (c["rank"], c["order"]))["key"]
    if by_selection != by_rank:
        report.error("leaderboard.columns", "CodaLab would rank by {} (selection_default) "
                                            "and Codabench by {} (rank 1)".format(
                                                by_selection, by_rank))
    return by_rank
