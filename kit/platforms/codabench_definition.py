"""A Codabench v2 competition.yaml as Codabench reads it (codalab/codabench at c7dbc756,
src/apps): which phase takes submissions and when, which submission the leaderboard keeps, what
the organizer's settings must be, and what its unpacker refuses or silently drops (check); and
a v1.5 bundle as Codabench's importer of them reads it (its phases' ends).

Phases: Current, the only status the upload form accepts, from `start` to `end`, both
included (api/serializers/competitions.py, PhaseDetailSerializer.get_status). A YAML date or
timestamp becomes midnight of its date: a time of day survives only in a quoted string.
"""
import datetime
import re
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple

from . import codalab_definition as v15
from . import definition as rules
from .dates import ONE_DAY, ONE_SECOND, Span, as_datetime, shown_date
from .definition import Bundle, Found, Report

VERSION = 2

REQUIRED = ("title", "terms", "pages", "tasks", "phases", "leaderboards", "image")
# Every key the v2 unpacker reads (codabench c7dbc756): anything else is dropped without a
# word, so a bundle holding it says something the platform never does (e.g.
# accepts_only_result_submissions, documented in Yaml-Structure.md:93, read nowhere).
READ = {
    # competitions/tasks.py:382 (version); competitions/unpackers/v2.py:12-28 (the
    # competition's fields), :50 pages, :70 tasks, :113 solutions, :164 terms, :186 phases,
    # :245 leaderboards; base_unpacker.py:202 image, :210 queue.
    "": {"version", "title", "registration_auto_approve", "docker_image",
         "enable_detailed_results", "show_detailed_results_in_submission_panel",
         "show_detailed_results_in_leaderboard", "auto_run_submissions",
         "can_participants_make_submissions_public", "make_programs_available",
         "make_input_data_available", "description", "competition_type", "fact_sheet",
         "reward", "contact_email", "forum_enabled", "pages", "tasks", "solutions", "terms",
         "image", "queue", "phases", "leaderboards"},
    "pages": {"file", "title"},                                             # v2.py:52, :61
    "tasks": {"index", "key", "name", "description", "ingestion_only_during_scoring",
              "ingestion_program", "input_data", "scoring_program", "reference_data"},
    # v2.py:76-97
    "solutions": {"index", "tasks", "key", "path", "name", "description"},  # v2.py:119-154
    "phases": {"index", "name", "description", "start", "end", "max_submissions_per_day",
               "max_submissions", "auto_migrate_to_this_phase", "hide_output",
               "hide_prediction_output", "hide_score_output", "tasks", "execution_time_limit",
               "public_data", "starting_kit"},                               # v2.py:186-235
    # A leaderboard goes whole to LeaderboardSerializer, a column to ColumnSerializer: their
    # fields (api/serializers/leaderboards.py:19-29, :50-60).
    "leaderboards": {"id", "primary_index", "title", "key", "columns", "hidden",
                     "submission_rule"},
    "columns": {"id", "computation", "computation_indexes", "title", "key", "sorting", "index",
                "hidden", "precision"},
}
# Leaderboard.SUBMISSION_RULES (src/apps/leaderboards/models.py:7-20): the serializer refuses
# any other value.
SUBMISSION_RULES = ("Add", "Add_And_Delete", "Add_And_Delete_Multiple", "Force_Last",
                    "Force_Latest_Multiple", "Force_Best")
# Leaderboard.AUTO_SUBMISSION_RULES (models.py:22): put on the leaderboard by the platform.
AUTO_RULES = ("Force_Last", "Force_Best", "Force_Latest_Multiple")
# Each submission_rule as one of our rule names (leaderboard.py; what each does:
# src/apps/leaderboards/strategies.py:53-120, api/views/submissions.py:317-337). Add is
# Codabench's default.
RULE_NAMES = {"Force_Best": "best", "Force_Last": "last", "Add": "chosen",
              "Add_And_Delete": "chosen", "Add_And_Delete_Multiple": "several",
              "Force_Latest_Multiple": "every"}
# ... and the submission_rule a bundle writes for each rule an organizer chooses.
SUBMISSION_RULE = {"best": "Force_Best", "last": "Force_Last", "chosen": "Add"}
# A phase of several tasks: each child's scores run a forced rule on that child alone.
SEVERAL_TASKS_RULE = "Add"
DATA_KEYS = ("scoring_program", "reference_data", "input_data", "ingestion_program")
MAX_LENGTH = {"column key": 36, "column title": 36, "leaderboard key": 36,
              "leaderboard title": 64}
# Codabench's default queue runs no submission longer (competitions/tasks.py:117, 126); a
# competition on its own queue runs its phases' own limits (competitions/tasks.py:204-206).
QUEUE_CAP = 600

# --- the organizer's settings, as Codabench validates them ------------------------------------

# Django's EmailValidator, in short (a user part, "@", a domain with a dot and no spaces): what
# the EmailField contact_email accepts, so the upload is not refused for it.
EMAIL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
                   r"@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$")
EMAIL_MAX = 256     # competitions/models.py:67
# A queue's vhost (queues/models.py:12): a UUID.
QUEUE_VHOST = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                         r"[0-9a-fA-F]{12}$")
# A fact-sheet question: exactly these keys (api/serializers/competitions.py:293-297, a
# symmetric difference: one more or one less is refused), a type among these (:294, :300-301).
FACT_SHEET_KEYS = ("key", "type", "title", "selection", "is_required", "is_on_leaderboard")
FACT_SHEET_TYPES = ("checkbox", "text", "select")


def is_email(value: str) -> bool:
    return len(value) <= EMAIL_MAX and bool(EMAIL.match(value))


def jsonb_key_order(keys: Iterable[str]) -> List[str]:
    """The keys of a JSON object in the order Codabench gives them back, and so shows them: it
    stores the fact sheet in a JSONField (competitions/models.py:65), a PostgreSQL jsonb, which
    keeps an object's keys sorted shorter first (in UTF-8 bytes), then bytewise
    (lengthCompareJsonbString, src/backend/utils/adt/jsonb_util.c), not as written. The
    upload form (submission_upload.tag:11) and the leaderboard's columns
    (api/views/competitions.py:777) follow that order."""
    return sorted(keys, key=_jsonb_rank)


def _jsonb_rank(key: str) -> Tuple[int, bytes]:
    raw = key.encode("utf-8", "surrogatepass")
    return len(raw), raw


def fact_sheet_in_shown_order(sheet: Any) -> List[Tuple[str, Any]]:
    """(key, question) of a fact sheet in the order Codabench shows them (jsonb_key_order)."""
    if not isinstance(sheet, dict):
        return []
    return sorted(sheet.items(), key=lambda item: _jsonb_rank(str(item[0])))


def fact_sheet_problems(sheet: Any) -> List[str]:
    """Why Codabench would refuse this fact sheet, or mis-read it (empty: fine)."""
    if sheet is None or sheet == {}:
        return []
    if not isinstance(sheet, dict):
        return ["fact_sheet must be a mapping of questions by key (api/serializers/"
                "competitions.py:290)"]
    problems: List[str] = []
    for key, question in sheet.items():
        problems += _question_problems("fact_sheet.{}".format(key), key, question)
    return problems


def _question_problems(where: str, key: Any, question: Any) -> List[str]:
    if not isinstance(question, dict):
        return ["{}: a question is a mapping of {}".format(where, ", ".join(FACT_SHEET_KEYS))]
    odd = sorted(set(FACT_SHEET_KEYS) ^ set(question))
    if odd:
        return ["{}: a question has exactly the keys {}; {} {} (api/serializers/"
                "competitions.py:293-297 refuses it)".format(
                    where, ", ".join(FACT_SHEET_KEYS), ", ".join(odd),
                    "is missing or extra" if len(odd) == 1 else "are missing or extra")]
    problems = []
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


# --- the phases and their dates ---------------------------------------------------------------

def phases(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The phases, by index."""
    found = doc.get("phases")
    if not isinstance(found, list):
        return []
    return sorted((p for p in found if isinstance(p, dict)),
                  key=lambda p: p.get("index", 0) if isinstance(p.get("index"), int) else 0)


def label(phase: Dict[str, Any]) -> str:
    return str(phase.get("name", phase.get("index")))


def open_phases(doc: Dict[str, Any], now: datetime.datetime) -> List[Dict[str, Any]]:
    """The phases Codabench shows as Current at `now`, the only ones its upload form
    accepts: started (start <= now) and, with an end, not ended (now <= end)
    (PhaseDetailSerializer.get_status)."""
    found = []
    for phase in phases(doc):
        start = as_datetime(phase.get("start"))
        end = as_datetime(phase.get("end")) if phase.get("end") else None
        if start is not None and start <= now and (end is None or now <= end):
            found.append(phase)
    return found


def spans(doc: Dict[str, Any]) -> List[Span]:
    """Every phase's span: its start and end."""
    return [Span(label(p), as_datetime(p.get("start")),
                 as_datetime(p.get("end")) if p.get("end") else None) for p in phases(doc)]


class EarlyEnd(NamedTuple):
    label: str
    codalab_last: datetime.datetime     # the phase's last second on CodaLab
    codabench_end: datetime.datetime    # its end once the v1.5 bundle is imported into Codabench


def _importer_datetime(value: Any) -> Optional[datetime.datetime]:
    """competitions/unpackers/utils.py, get_datetime: a YAML date or timestamp becomes midnight
    of its date (a datetime is a date); a string is parsed (dateutil)."""
    if isinstance(value, datetime.date):
        return datetime.datetime.combine(value, datetime.time())
    return as_datetime(value) if isinstance(value, str) else None


def v15_import_early_ends(doc: Dict[str, Any]) -> List[EarlyEnd]:
    """The phases of a v1.5 definition that end earlier once imported into Codabench than on
    CodaLab: its importer (competitions/unpackers/v1.py, V15Unpacker._unpack_phases) sets
    `end = next phase's start - 1 day` (CodaLab keeps a phase open until the next one
    starts)."""
    ordered = v15.phases(doc)
    out = []
    for phase, following in zip(ordered, ordered[1:]):
        codalab_next = v15.when(following.get("start_date"))
        codabench_next = _importer_datetime(following.get("start_date"))
        if codalab_next is None or codabench_next is None:
            continue
        codabench_end = codabench_next - ONE_DAY
        if codabench_end < codalab_next - ONE_SECOND:
            out.append(EarlyEnd(v15.label(phase), codalab_next - ONE_SECOND, codabench_end))
    return out


def early_end_text(ends: List[EarlyEnd]) -> str:
    return "; ".join("{} would end {} instead of {} UTC".format(
        e.label, shown_date(e.codabench_end), shown_date(e.codalab_last)) for e in ends)


# --- the leaderboard, the tasks, the pages ----------------------------------------------------

def first_leaderboard(doc: Dict[str, Any]) -> Dict[str, Any]:
    """The leaderboard every phase shows (Codabench attaches every phase to the first one)."""
    return sorted(doc["leaderboards"], key=lambda b: b.get("index", 0))[0]


def leaderboard_rule(doc: Dict[str, Any]) -> str:
    """The first leaderboard's submission_rule as one of our rule names (Add by default)."""
    rule = first_leaderboard(doc).get("submission_rule", "Add")
    return RULE_NAMES.get(rule, rule)


def columns(board: Dict[str, Any]) -> List[Dict[str, Any]]:
    """A leaderboard's columns in index order, each {key, label, precision, sort}."""
    return [{"key": c["key"], "label": c.get("title", c["key"]),
             "precision": int(c.get("precision", 2)), "sort": c.get("sorting", "desc")}
            for c in sorted(board["columns"], key=lambda c: c.get("index", 0))]


def ranking_title(board: Dict[str, Any]) -> str:
    primary = [c for c in board["columns"] if c.get("index") == board.get("primary_index", 0)]
    return (primary or board["columns"])[0].get("title", "")


def phase_tasks(doc: Dict[str, Any], phase: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The tasks a phase runs, in its order (a phase of several tasks makes one child
    submission per task, each scoring the same zip: Codabench's _run_submission)."""
    return [next((t for t in doc.get("tasks", []) if t.get("index") == i), {})
            for i in (phase.get("tasks") or [0])]


def scoring_runs(doc: Dict[str, Any]) -> List[List[Tuple[Any, Any]]]:
    """Per phase, the (scoring program, reference) pairs a submission runs through: one per
    listed task (a child submission each)."""
    tasks = {t.get("index"): t for t in doc.get("tasks") or [] if isinstance(t, dict)}
    runs = []
    for phase in doc.get("phases") or []:
        if isinstance(phase, dict):
            runs.append([(tasks[i].get("scoring_program"), tasks[i].get("reference_data"))
                         for i in phase.get("tasks") or [] if i in tasks])
    return runs


def pages(doc: Dict[str, Any]) -> List[Tuple[str, Any]]:
    """(where, path) of every page the definition names: the terms, then the pages."""
    found = doc.get("pages")
    return [("terms", doc.get("terms"))] + [
        ("pages[{}]".format(i), p.get("file"))
        for i, p in enumerate(found if isinstance(found, list) else []) if isinstance(p, dict)]


# --- what the unpacker refuses, drops or gets wrong --------------------------------------------

def date_of(value: Any, where: str, report: Report) -> Optional[datetime.datetime]:
    """Codabench turns a YAML date or timestamp into midnight of its date (a datetime is a
    date, combined with time 0): a time of day survives only as a quoted string."""
    if isinstance(value, datetime.datetime):
        if value.time() != datetime.time():
            report.error(where, "{}: Codabench keeps only the date of an unquoted YAML timestamp "
                                "(the phase would change at midnight); quote it: '{}'".format(
                                    value, value.strftime("%Y-%m-%d %H:%M:%S")))
        return as_datetime(value)
    found = as_datetime(value) if isinstance(value, (datetime.date, str)) else None
    if found is not None:
        return found
    report.error(where, "{!r} is not a date Codabench can read (YYYY-MM-DD, optionally "
                        "' HH:MM:SS' in quotes)".format(value))
    return None


def check(doc: Dict[str, Any], bundle: Bundle, report: Report) -> Found:
    """Every rule of Codabench's v2 unpacker on the definition; returns what the checks across
    the bundle need: data zips, columns and the ranking column."""
    out = rules.found()
    for key in REQUIRED:
        rules.need(doc, key, "competition.yaml", report)
    _check_unread_keys(doc, report)
    _check_settings(doc, report)
    if "competition_docker_image" in doc:
        report.error("competition.yaml", "v2 reads `docker_image`; competition_docker_image is "
                                         "ignored (the default image would run)")
    _check_pages(doc, bundle, report)
    task_indexes = _check_tasks(doc, bundle, report, out)
    _check_phases(doc, bundle, report, task_indexes, out)
    _check_leaderboards(doc, report, out)
    return rules.found_of(out)


def _check_unread_keys(doc: Dict[str, Any], report: Report) -> None:
    """Refuse every key the v2 unpacker does not read (READ): it would be dropped."""
    def unread(mapping: Any, kind: str, where: str) -> None:
        if not isinstance(mapping, dict):
            return
        for key in sorted(set(mapping) - READ[kind], key=str):
            report.error("{}.{}".format(where, key) if where else str(key),
                         "Codabench's v2 unpacker never reads this key: it would be dropped "
                         "(competitions/unpackers/v2.py)")

    unread(doc, "", "")
    for kind in ("pages", "tasks", "solutions", "phases", "leaderboards"):
        items = doc.get(kind)
        for i, item in enumerate(items if isinstance(items, list) else []):
            unread(item, kind, "{}[{}]".format(kind, i))
            if kind == "leaderboards" and isinstance(item, dict):
                for j, col in enumerate(item.get("columns") or []):
                    unread(col, "columns", "leaderboards[{}].columns[{}]".format(i, j))


def _check_settings(doc: Dict[str, Any], report: Report) -> None:
    """The organizer's settings, as Codabench validates them."""
    for problem in fact_sheet_problems(doc.get("fact_sheet")):
        report.error("fact_sheet", problem)
    contact = doc.get("contact_email")
    if contact is not None and not is_email(str(contact)):
        report.error("contact_email", "{!r} is not an email address: Codabench's "
                                      "EmailField refuses it (competitions/models.py:67)"
                     .format(contact))
    queue = doc.get("queue")
    if queue is not None and not QUEUE_VHOST.match(str(queue)):
        report.error("queue", "{!r} is not a queue's vhost (a UUID, queues/models.py:12): the "
                              "upload fails with \"The specified Queue does not exist!\" "
                              "(base_unpacker.py:228-229)".format(queue))


def _check_pages(doc: Dict[str, Any], bundle: Bundle, report: Report) -> None:
    if doc.get("terms"):
        rules.check_page_file(bundle, doc["terms"], "terms", report)
    if doc.get("image"):
        rules.check_image(bundle, doc["image"], "image", report)
    found = doc.get("pages")
    if found is not None and not isinstance(found, list):
        report.error("pages", "must be a list of {title, file}")
    for i, page in enumerate(found if isinstance(found, list) else []):
        where = "pages[{}]".format(i)
        if rules.need(page, "file", where, report) is not None:
            rules.check_page_file(bundle, page["file"], where, report)
        rules.need(page, "title", where, report)


def _check_tasks(doc: Dict[str, Any], bundle: Bundle, report: Report,
                 out: Dict[str, Any]) -> set:
    """Each task's index and data; returns the indexes declared."""
    task_indexes = set()
    for i, task in enumerate(doc.get("tasks") or []):
        where = "tasks[{}]".format(i)
        index = rules.need(task, "index", where, report)
        if index in task_indexes:
            report.error(where, "duplicate task index {}".format(index))
        task_indexes.add(index)
        if isinstance(task, dict) and "key" in task:
            continue
        for key in DATA_KEYS:
            if key == "scoring_program" and rules.need(task, key, where, report) is None:
                continue
            if not (isinstance(task, dict) and key in task):
                continue
            name = rules.check_data_ref(bundle, task[key], where + "." + key, report, True)
            if name is None and bundle.has_folder(task[key]):
                name = task[key]  # a folder: Codabench zips it
            if name and key in rules.ROLES:
                out[rules.ROLES[key]].append((where, name))
    return task_indexes


def _check_phases(doc: Dict[str, Any], bundle: Bundle, report: Report, task_indexes: set,
                  out: Dict[str, Any]) -> None:
    spans_found = []
    for i, phase in enumerate(doc.get("phases") or []):
        where = "phases[{}]".format(i)
        rules.need(phase, "index", where, report)
        if not isinstance(phase, dict):
            continue
        start = date_of(phase["start"], where + ".start", report) if rules.need(
            phase, "start", where, report) is not None else None
        end = date_of(phase["end"], where + ".end", report) if phase.get("end") else None
        if start and end and end <= start:
            report.error(where, "ends ({}) before it starts ({})".format(end, start))
        spans_found.append((phase.get("index", i), start, end, where))
        _check_phase_settings(doc, phase, where, bundle, report, task_indexes, out)
    spans_found.sort(key=lambda s: s[0] if isinstance(s[0], int) else 0)
    for (_, _s1, e1, w1), (_, s2, _e2, w2) in zip(spans_found, spans_found[1:]):
        if e1 is None:
            report.error(w1, "needs an end: another phase follows it")
        elif s2 is not None and s2 <= e1:
            report.error(w2, "starts before {} ends (Codabench refuses overlapping or touching "
                             "phases)".format(w1))


def _check_phase_settings(doc: Dict[str, Any], phase: Dict[str, Any], where: str,
                          bundle: Bundle, report: Report, task_indexes: set,
                          out: Dict[str, Any]) -> None:
    """A phase's tasks, limits and data."""
    tasks = rules.need(phase, "tasks", where, report, " (phases must list at least one task)")
    for t in tasks or []:
        if t not in task_indexes:
            report.error(where + ".tasks", "task index {!r} is not declared in tasks".format(t))
    for key in ("max_submissions", "max_submissions_per_day", "execution_time_limit"):
        rules.check_count(phase, key, where, report)
    limit = phase.get("execution_time_limit")
    if isinstance(limit, int) and limit > QUEUE_CAP and not doc.get("queue"):
        report.warn(where + ".execution_time_limit",
                    "{} s exceeds the {} s cap of Codabench's default queue".format(
                        limit, QUEUE_CAP))
    if "execution_time_limit_ms" in phase:
        report.warn(where, "execution_time_limit_ms is read only by old Codabench versions; "
                           "give execution_time_limit in seconds")
    for key in ("starting_kit", "public_data"):
        if key in phase:
            name = rules.check_data_ref(bundle, phase[key], where + "." + key, report, True)
            if name and key == "starting_kit":
                out["kits"].append((where, name))


def _check_leaderboards(doc: Dict[str, Any], report: Report, out: Dict[str, Any]) -> None:
    boards = doc.get("leaderboards")
    if boards is not None and not isinstance(boards, list):
        report.error("leaderboards", "must be a list (`leaderboards:`, plural, in v2)")
        boards = []
    if "leaderboard" in doc:
        report.error("competition.yaml", "`leaderboard:` is the v1.5 form; v2 reads "
                                         "`leaderboards:` (a list)")
    for i, board in enumerate(boards or []):
        where = "leaderboards[{}]".format(i)
        for key in ("title", "key", "columns"):
            rules.need(board, key, where, report)
        if not isinstance(board, dict):
            continue
        _check_rule(doc, board, i, where, report)
        rules.check_length(board.get("title"), MAX_LENGTH["leaderboard title"], "title", where,
                           report)
        rules.check_length(board.get("key"), MAX_LENGTH["leaderboard key"], "key", where,
                           report)
        primary = _check_columns(board, where, report, out)
        if i == 0:
            out["primary"] = primary


def _check_rule(doc: Dict[str, Any], board: Dict[str, Any], i: int, where: str,
                report: Report) -> None:
    rule = board.get("submission_rule", "Add")
    if rule not in SUBMISSION_RULES:
        report.error(where + ".submission_rule", "{!r} is not one of {} (the leaderboard "
                                                 "serializer refuses it: leaderboards/"
                                                 "models.py:13-28)".format(
                                                     rule, ", ".join(SUBMISSION_RULES)))
    several = [p.get("name", j) for j, p in enumerate(doc.get("phases") or [])
               if isinstance(p, dict) and len(p.get("tasks") or []) > 1]
    if i == 0 and rule in AUTO_RULES and several:
        report.error(where + ".submission_rule", "{} in a phase of several tasks ({}): "
                     "Codabench applies it to each task's child submission as its scores "
                     "arrive and puts that child alone on the leaderboard, a row of one "
                     "task's scores (api/views/submissions.py:594, leaderboards/"
                     "strategies.py:20-27, 53-103): use Add".format(
                         rule, ", ".join(str(n) for n in several)))


def _check_columns(board: Dict[str, Any], where: str, report: Report,
                   out: Dict[str, Any]) -> Optional[str]:
    """The board's columns; returns the ranking column's key (None: no column has the
    primary_index)."""
    found = board.get("columns") or []
    indexes = []
    for j, col in enumerate(found):
        cwhere = "{}.columns[{}]".format(where, j)
        for key in ("title", "key", "index"):
            rules.need(col, key, cwhere, report)
        if not isinstance(col, dict):
            continue
        if "sort" in col:
            report.error(cwhere, "`sort` is the v1.5 key: v2 reads `sorting` and ignores "
                                 "`sort` (the column would sort desc by default)")
        if "sorting" in col and col["sorting"] not in rules.SORTS:
            report.error(cwhere + ".sorting", "{!r} is not asc or desc".format(col["sorting"]))
        rules.check_length(col.get("key"), MAX_LENGTH["column key"], "key", cwhere, report)
        rules.check_length(col.get("title"), MAX_LENGTH["column title"], "title", cwhere,
                           report)
        if "precision" in col and (not isinstance(col["precision"], int) or
                                   col["precision"] < 0):
            report.error(cwhere, "precision must be a non-negative integer")
        indexes.append(col.get("index"))
        if col.get("key") is not None:
            out["columns"].append({"key": col["key"], "sort": col.get("sorting", "desc"),
                                   "index": col.get("index")})
    if len(set(indexes)) != len(indexes):
        report.error(where, "duplicate column indexes {}".format(indexes))
    primary_index = board.get("primary_index", 0)
    ranked = [c for c in found if isinstance(c, dict) and c.get("index") == primary_index]
    if not ranked:
        report.error(where + ".primary_index", "{!r} is the index of no column (indexes {}): "
                                               "Codabench cannot rank the leaderboard".format(
                                                   primary_index, indexes))
    return ranked[0].get("key") if ranked else None
