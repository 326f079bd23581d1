#!/usr/bin/env python3
"""Check a competition bundle zip before upload: what CodaLab's and Codabench's unpackers refuse,
and what they accept but silently get wrong.

    python3 tools/bundle_check.py dist/*.zip             # a phase open now or later
    python3 tools/bundle_check.py --open-on 2027-03-01 dist/*.zip    # open at that moment
    python3 tools/bundle_check.py --allow-closed dist/*.zip          # an archive on purpose

Each rule cites the platform behaviour it guards against (see /shared/spec/codalab.md and the
platforms' unpackers). Errors make the exit status 1; warnings and notes (platform differences)
are printed only. The leaderboard is checked against the keys the bundled scoring program
writes, asked from that program itself (scoring.tasks.TASKS[task].score_keys, task from the
reference's config.yaml), never from a copy. The dates' rules are tools/bundle_dates.py's.
"""
import datetime
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bundle_dates  # noqa: E402
import bundle_settings  # noqa: E402
from bundle_dates import shown_date, utcnow, v15_open_phases, v2_open_phases  # noqa: E402,F401
from bundle_yaml import DJANGO_DATETIME, as_datetime  # noqa: E402

# A note is a platform difference to know about, not a problem of the bundle (printed, never
# refused): e.g. a v1.5 bundle's phases end a day early if it is imported into Codabench.
ERROR, WARNING, NOTE = "error", "warning", "note"


class Problem(NamedTuple):
    severity: str
    where: str
    message: str


# --- platform facts -----------------------------------------------------------------------

# CodaLab v1.5 (apps/web/models.py, CompetitionDefBundle.unpack) removes html, phases,
# leaderboard and admin_names and passes every other top-level key to Competition(**keys): a key
# that is not a field of the Competition model crashes the upload, and so does a value for a
# relation (queue, admins, teams: a string where a model instance is needed). These are its
# plain fields.
V15_TOP_KEYS = {
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
V15_RELATION_KEYS = {"queue", "admins", "teams", "creator", "modified_by"}
# ... and every phase key (datasets aside, which it takes out) to
# CompetitionPhase.objects.get_or_create(**keys): the plain fields of CompetitionPhase. Keys of
# other versions (hide_output, ingestion_program_only_during_scoring, is_parallel_parent,
# parent_phasenumber...) are not among them and crash the upload.
V15_PHASE_KEYS = {
    "phasenumber", "label", "description", "start_date", "max_submissions",
    "max_submissions_per_day", "is_scoring_only", "scoring_program", "reference_data",
    "input_data", "ingestion_program", "starting_kit", "public_data", "datasets",
    "leaderboard_management_mode", "force_best_submission_to_leaderboard", "auto_migration",
    "is_migrated", "execution_time_limit", "color", "phase_never_ends",
    "scoring_program_docker_image", "default_docker_image", "disable_custom_docker_image",
    "ingestion_program_docker_image", "max_submission_size", "participant_max_storage_use",
    "delete_submissions_except_best_and_last",
}
V15_HTML_REQUIRED = ("overview", "evaluation", "terms", "data")   # the unpacker reads all four
V15_PHASE_REQUIRED = ("phasenumber", "label", "start_date", "scoring_program", "reference_data")
V15_COLUMN_KEYS = {"leaderboard", "label", "rank", "numeric_format", "sort", "selection_default",
                   "hidden", "column_group", "computed"}
V15_DATA_KEYS = ("scoring_program", "reference_data", "input_data", "ingestion_program",
                 "starting_kit", "public_data")
COLORS = ("white", "orange", "yellow", "green", "blue", "purple")
SORTS = ("asc", "desc")
V15_MAX = {"title": 100, "phase label": 50, "phase description": 1000, "leaderboard label": 50,
           "column key": 50, "column label": 50}

V2_REQUIRED = ("title", "terms", "pages", "tasks", "phases", "leaderboards", "image")
# Every key the v2 unpacker reads (codabench c7dbc756): anything else is dropped without a
# word, so a bundle holding it says something the platform never does (e.g.
# accepts_only_result_submissions, documented in Yaml-Structure.md:93, read nowhere).
V2_READ = {
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
V2_SUBMISSION_RULES = ("Add", "Add_And_Delete", "Add_And_Delete_Multiple", "Force_Last",
                       "Force_Latest_Multiple", "Force_Best")
# Leaderboard.AUTO_SUBMISSION_RULES (models.py:22): put on the leaderboard by the platform.
V2_AUTO_RULES = ("Force_Last", "Force_Best", "Force_Latest_Multiple")
V2_DATA_KEYS = ("scoring_program", "reference_data", "input_data", "ingestion_program")
V2_MAX = {"column key": 36, "column title": 36, "leaderboard key": 36, "leaderboard title": 64}
CODABENCH_QUEUE_CAP = 600  # seconds, Codabench's default queue

# The worker substitutes these in the metadata command (v1: str.replace, then split(" ")).
PLACEHOLDERS = ("$program", "$input", "$output")
OTHER_PLACEHOLDERS = ("$tmp", "$shared", "$predictions")
SHELL_CHARS = set("|&;<>()`\"'\\*?[]{}~!#")
METADATA_KEYS = ("command", "description")
INTERPRETERS = ("python3", "python")
# Which data references the cross checks open, by role.
ROLES = {"scoring_program": "programs", "reference_data": "references", "starting_kit": "kits"}

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


class Report:
    def __init__(self, name: str) -> None:
        self.name = name
        self.problems = []  # type: List[Problem]
        self.open_phases = []  # type: List[str]  # labels of the phases open on the check's date
        # (label, start) of the first phase opening after the check's date, when none is open
        self.opens_later = None  # type: Optional[Tuple[str, datetime.datetime]]
        self.doc = None  # type: Optional[Dict[str, Any]]  # the competition.yaml, parsed
        self.v2 = False

    def error(self, where: str, message: str) -> None:
        self.problems.append(Problem(ERROR, where, message))

    def warn(self, where: str, message: str) -> None:
        self.problems.append(Problem(WARNING, where, message))

    def note(self, where: str, message: str) -> None:
        self.problems.append(Problem(NOTE, where, message))

    @property
    def errors(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == WARNING]

    @property
    def notes(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == NOTE]

    def line(self, p: Problem) -> str:
        return "{}: {} {}: {}".format(self.name, p.severity.upper(), p.where, p.message)

    def lines(self) -> List[str]:
        return [self.line(p) for p in self.errors + self.warnings + self.notes]


# --- the zip and its members --------------------------------------------------------------

class Bundle:
    """Read access to the outer zip's members."""

    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.names = [i.filename for i in zf.infolist() if not i.filename.endswith("/")]
        self.name_set = set(self.names)

    def has(self, name: str) -> bool:
        return name in self.name_set

    def has_folder(self, name: str) -> bool:
        prefix = name.rstrip("/") + "/"
        return any(n.startswith(prefix) for n in self.names)

    def read(self, name: str) -> bytes:
        return self.zf.read(name)

    def read_zip(self, name: str) -> bytes:
        """A member zip's bytes; a v2 folder is zipped as Codabench does (its files at the
        root)."""
        if self.has(name):
            return self.read(name)
        prefix = name.rstrip("/") + "/"
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as out:
            for n in self.names:
                if n.startswith(prefix):
                    out.writestr(n[len(prefix):], self.read(n))
        return buf.getvalue()

    def open_zip(self, name: str):
        """A member zip as a seekable file, streamed rather than read into memory (the real
        reference is gigabytes)."""
        return self.zf.open(name) if self.has(name) else io.BytesIO(self.read_zip(name))


def _top_folder(names: List[str]) -> Optional[str]:
    """The single folder every entry sits in, if there is one."""
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1 and all("/" in n for n in names):
        return tops.pop()
    return None


def check_hygiene(names: List[str], where: str, report: Report) -> None:
    for n in names:
        parts = n.split("/")
        if n.startswith("/") or ".." in parts:
            report.error(where, "entry {!r} points outside the archive".format(n))
        elif any(p == "__MACOSX" or p == ".DS_Store" for p in parts):
            report.error(where, "entry {!r} is macOS metadata: build the zip with bundle.sh, not "
                                "Finder".format(n))
        elif any(p == "__pycache__" for p in parts) or n.endswith((".pyc", ".pyo")):
            report.error(where, "entry {!r} is compiled Python: bundle.sh excludes __pycache__ "
                                "and *.pyc".format(n))


def _load_yaml(data: bytes, where: str, report: Report) -> Any:
    try:
        return yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        report.error(where, "not valid UTF-8 YAML ({})".format(str(exc).splitlines()[0]))
        return None


# --- scoring program ----------------------------------------------------------------------

def check_command(command: Any, program_files: List[str], where: str, report: Report) -> None:
    """The metadata command as the v1 worker runs it: placeholders replaced, split on single
    spaces, no shell. So quotes, pipes, && and redirections would reach the program literally."""
    if not isinstance(command, str) or not command.strip():
        report.error(where, "metadata has no `command:` (both platforms then run nothing, and "
                            "no score ever appears)")
        return
    if "\n" in command.strip():
        report.error(where, "the command spans several lines; give one line")
        return
    shell = sorted(SHELL_CHARS & set(command))
    if shell or "$(" in command:
        report.error(where, "the command {!r} uses shell syntax ({}): the worker runs it without "
                            "a shell, split on spaces".format(command, " ".join(shell) or "$("))
    tokens = command.strip().split(" ")
    if "" in tokens:
        report.error(where, "the command {!r} has two spaces in a row: the v1 worker splits on "
                            "single spaces and passes an empty argument".format(command))
    for token in tokens:
        for ref in re.findall(r"\$[A-Za-z_]+", token):
            if ref in OTHER_PLACEHOLDERS:
                report.warn(where, "{} is not substituted by every platform version".format(ref))
            elif ref not in PLACEHOLDERS:
                report.error(where, "{} is not a placeholder the worker substitutes (known: "
                                    "{})".format(ref, ", ".join(PLACEHOLDERS + OTHER_PLACEHOLDERS)))
    for needed in PLACEHOLDERS:
        if not any(t == needed or t.startswith(needed + "/") for t in tokens):
            report.error(where, "the command {!r} does not use {}".format(command, needed))
    scripts = [t[len("$program/"):] for t in tokens if t.startswith("$program/")]
    for script in scripts:
        if script not in program_files:
            report.error(where, "the command runs $program/{} but the scoring program has no "
                                "{}".format(script, script))
    if tokens and tokens[0] not in INTERPRETERS and not tokens[0].startswith("$program/"):
        report.warn(where, "the command starts with {!r}; the worker images have python3 and "
                           "python".format(tokens[0]))


def check_program_zip(data: bytes, where: str, report: Report) -> List[str]:
    """The scoring program zip: metadata at its root, a runnable command. Returns its names."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        report.error(where, "not a zip file")
        return []
    with zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        check_hygiene(names, where, report)
        meta_names = [n for n in ("metadata.yaml", "metadata") if n in names]
        if not meta_names:
            top = _top_folder(names)
            if top and top + "/metadata" in names:
                report.error(where, "its files are inside the folder {}/: Codabench does not "
                                    "flatten it and fails with 'missing metadata'. Zip the files, "
                                    "not the folder".format(top))
            else:
                report.error(where, "no `metadata` file at its root: the worker has no command to "
                                    "run")
            return names
        # Codabench reads metadata.yaml first, CodaLab v1 only metadata.
        if len(meta_names) == 2 and zf.read("metadata.yaml") != zf.read("metadata"):
            report.error(where, "metadata.yaml and metadata differ: Codabench runs the first, "
                                "CodaLab the second")
        if "metadata" not in names:
            report.error(where, "only metadata.yaml: CodaLab v1 reads `metadata`")
        meta = _load_yaml(zf.read(meta_names[-1]), where + "/" + meta_names[-1], report)
    if not isinstance(meta, dict):
        report.error(where + "/metadata", "metadata must be a YAML mapping with `command:`")
        return names
    extra = sorted(k for k in meta if k not in METADATA_KEYS)
    if extra:
        report.error(where + "/metadata", "keys {} besides command and description: the v1 worker "
                                          "fetches every other string value as a bundle URL"
                     .format(", ".join(extra)))
    check_command(meta.get("command"), names, where + "/metadata", report)
    return names


_KEYS_CACHE = {}  # type: Dict[Tuple[str, str, str], Tuple[Optional[List[str]], str]]

# A task whose keys follow the reference (Planetscapes' label table) lists them with
# keys(configure({}, ref_config)), ref_config being the reference's config.yaml (no options).
_KEYS_SNIPPET = """
import json, sys
sys.path.insert(0, sys.argv[1])
from scoring.registry import TASKS, DEFAULT
name = sys.argv[2] or DEFAULT
if name not in TASKS:
    print(json.dumps({"error": "unknown task %r (the program knows %s)" % (name, sorted(TASKS))}))
else:
    task = TASKS[name]
    keys = list(task.score_keys)
    if hasattr(task, "keys"):
        import yaml
        from scoring.problems import ScoringError
        try:
            keys = list(task.keys(task.configure({}, yaml.safe_load(sys.argv[3]) or {})))
        except ScoringError as exc:
            print(json.dumps({"error": "the reference's config.yaml: " +
                              exc.message().strip().splitlines()[0]}))
            raise SystemExit(0)
    print(json.dumps({"task": name, "keys": keys}))
"""


def scorer_keys(program_zip: bytes, task: str,
                config: str = "") -> Tuple[Optional[List[str]], str]:
    """(score keys, task or error) asked from the bundled scoring program in a fresh process,
    so the answer is the shipped code's, not whatever `scoring` this process imported; config
    is the text of the reference's config.yaml."""
    cache_key = (hashlib.sha256(program_zip).hexdigest(), task, config)
    if cache_key in _KEYS_CACHE:
        return _KEYS_CACHE[cache_key]
    with tempfile.TemporaryDirectory(prefix="bundle-check-") as tmp:
        with zipfile.ZipFile(io.BytesIO(program_zip)) as zf:
            zf.extractall(tmp)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.run([sys.executable, "-c", _KEYS_SNIPPET, tmp, task, config],
                              capture_output=True, text=True, cwd=tmp, env=env, timeout=120)
    try:
        answer = json.loads(proc.stdout.strip().splitlines()[-1])
        result = (answer["keys"], answer["task"]) if "keys" in answer else (None, answer["error"])
    except (IndexError, ValueError, KeyError):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        result = (None, "cannot import the scoring program ({})".format(tail))
    _KEYS_CACHE[cache_key] = result
    return result


def reference_task(member, where: str, report: Report) -> Tuple[str, str]:
    """(the task named by the reference's config.yaml ('' = the program's default), the text
    of that config.yaml); member is the reference zip as a seekable file."""
    try:
        zf = zipfile.ZipFile(member)
    except zipfile.BadZipFile:
        report.error(where, "not a zip file")
        return "", ""
    with zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        if not names:
            report.error(where, "the reference data zip is empty")
            return "", ""
        check_hygiene(names, where, report)
        top = _top_folder(names)
        config = next((n for n in ("config.yaml", "{}/config.yaml".format(top)) if n in names), None)
        if not config:
            return "", ""
        raw = zf.read(config)
        doc = _load_yaml(raw, where + "/" + config, report)
    return (str(doc.get("task", "")) if isinstance(doc, dict) else "",
            raw.decode("utf-8", "replace"))


def scoring_runs(doc: Dict[str, Any], v2: bool) -> List[List[Tuple[Any, Any]]]:
    """Per phase, the (scoring program, reference) pairs a submission runs through: one on
    CodaLab, one per listed task on Codabench (a child submission each)."""
    if not v2:
        found = doc.get("phases")
        phases = sorted((p for p in (found.values() if isinstance(found, dict) else [])
                         if isinstance(p, dict)),
                        key=lambda p: p["phasenumber"] if isinstance(p.get("phasenumber"), int)
                        else 0)
        return [[(p.get("scoring_program"), p.get("reference_data"))] for p in phases]
    tasks = {t.get("index"): t for t in doc.get("tasks") or [] if isinstance(t, dict)}
    runs = []
    for phase in doc.get("phases") or []:
        if isinstance(phase, dict):
            runs.append([(tasks[i].get("scoring_program"), tasks[i].get("reference_data"))
                         for i in phase.get("tasks") or [] if i in tasks])
    return runs


def check_kit_zip(data: bytes, where: str, report: Report) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
    except zipfile.BadZipFile:
        report.error(where, "not a zip file")
        return
    if not names:
        report.error(where, "the starting kit zip is empty")
    check_hygiene(names, where, report)


# --- dates ---------------------------------------------------------------------------------

def v15_date(value: Any, where: str, report: Report) -> Optional[datetime.datetime]:
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
    when = as_datetime(value) if isinstance(value, datetime.date) else None
    if when is None:
        report.error(where, "{!r} is not a date CodaLab reads (2021-04-15, or "
                            "'2021-06-05 23:59:59')".format(value))
    elif isinstance(value, datetime.datetime) and value.time() != datetime.time():
        report.warn(where, "{}: CodaLab keeps this time of day, but Codabench's v1.5 importer "
                           "keeps only the date of an unquoted timestamp: quote it ('{}')".format(
                               value, shown_date(when)))
    return when


def v2_date(value: Any, where: str, report: Report) -> Optional[datetime.datetime]:
    """Codabench turns a YAML date or timestamp into midnight of its date (a datetime is a
    date, combined with time 0): a time of day survives only as a quoted string."""
    if isinstance(value, datetime.datetime):
        if value.time() != datetime.time():
            report.error(where, "{}: Codabench keeps only the date of an unquoted YAML timestamp "
                                "(the phase would change at midnight); quote it: '{}'".format(
                                    value, value.strftime("%Y-%m-%d %H:%M:%S")))
        return as_datetime(value)
    when = as_datetime(value) if isinstance(value, (datetime.date, str)) else None
    if when is not None:
        return when
    report.error(where, "{!r} is not a date Codabench can read (YYYY-MM-DD, optionally "
                        "' HH:MM:SS' in quotes)".format(value))
    return None


def check_open(doc: Dict[str, Any], v2: bool, now: datetime.datetime, allow_closed: bool,
               report: Report, open_on: Optional[datetime.datetime] = None) -> None:
    """A bundle must take submissions now or later: one whose phases have all ended accepts
    nothing after upload. A bundle uploaded before its challenge starts is the usual case: it
    passes, and the report says when it opens. With open_on, a phase must be open at that
    moment instead (a phase opening at its start second counts, on both platforms)."""
    at = open_on or now
    report.open_phases = bundle_dates.open_phases(doc, v2, at)
    report.opens_later = None if report.open_phases else bundle_dates.opens_later(doc, v2, at)
    if report.open_phases or allow_closed:
        return
    rule = "Codabench marks no phase Current" if v2 else "CodaLab finds no active phase"
    if open_on is not None:
        later = report.opens_later
        report.error("phases", "no phase accepts submissions on {} UTC ({}; --open-on){}. Give "
                               "a date inside a phase, or other dates (bundle.sh --start/--end)"
                     .format(shown_date(open_on), rule, ": {} opens on {}".format(
                         later[0], shown_date(later[1])) if later else ""))
    elif report.opens_later is None:
        report.error("phases", "no phase accepts submissions on {} UTC or later ({}): every "
                               "phase has ended, so every upload would be refused. Give the "
                               "dates (bundle.sh --start/--end), keep the post-challenge phase "
                               "(no --no-post-challenge), or say it is intended "
                               "(--allow-closed)".format(shown_date(now), rule))


def check_dates_of_codabench_import(doc: Dict[str, Any], report: Report) -> None:
    """A v1.5 bundle imported into Codabench: its importer ends each phase a day before the
    next one starts (unpackers/v1.py, V15Unpacker._unpack_phases), CodaLab the second before."""
    early = bundle_dates.codabench_early_ends(doc)
    if early:
        report.note("phases", "imported into Codabench, this CodaLab v1.5 bundle ends each phase "
                              "one day early (Codabench's v1.5 importer ends a phase at the "
                              "next phase's start minus one day): {}. Upload the Codabench v2 "
                              "bundle to Codabench".format(bundle_dates.early_end_text(early)))


# A token of the page template (bundle_pages.py) that was never filled in.
TEMPLATE_TOKEN = re.compile(r"\{\{\s*[A-Za-z_]+\s*\}\}")


def check_page_dates(bundle: Bundle, doc: Dict[str, Any], v2: bool, report: Report) -> None:
    """Pages must give the phases' dates: a date written in a page that is no phase's start or
    end tells participants a wrong timeline (e.g. a page written for other dates)."""
    phases = bundle_dates.spans(doc, v2)
    if v2:
        pages = [("terms", doc.get("terms"))] + [
            ("pages[{}]".format(i), p.get("file")) for i, p in enumerate(
                doc.get("pages") if isinstance(doc.get("pages"), list) else [])
            if isinstance(p, dict)]
    else:
        html = doc.get("html") if isinstance(doc.get("html"), dict) else {}
        pages = [("html." + k, v) for k, v in html.items()]
    seen = set()
    for where, path in pages:
        if not (isinstance(path, str) and bundle.has(path)) or path in seen:
            continue  # a missing page is reported with the pages
        seen.add(path)
        text = bundle.read(path).decode("utf-8", "replace")
        tokens = sorted(set(TEMPLATE_TOKEN.findall(text)))
        if tokens:
            report.error(where, "{} holds the template tokens {}, never filled in: build the "
                                "bundle with bundle.sh".format(path, ", ".join(tokens)))
        stray = bundle_dates.stray_dates(text, phases)
        if stray:
            report.error(where, "{} gives the dates {}, which are no phase's start or end "
                                "(phases: {}): participants would read a wrong timeline. "
                                "Correct the page (bundle.sh writes the phases' dates into "
                                "{{{{timeline}}}} and {{{{challenge_period}}}})".format(
                                    path, ", ".join(stray),
                                    "; ".join(bundle_dates.shown_span(s) for s in phases)))


# --- shared pieces -------------------------------------------------------------------------

def _need(mapping: Any, key: str, where: str, report: Report, why: str = "") -> Any:
    if not isinstance(mapping, dict) or key not in mapping or mapping[key] in (None, ""):
        report.error(where, "missing required key `{}`{}".format(key, why))
        return None
    return mapping[key]


def _mapping(value: Any, where: str, report: Report) -> Optional[Dict[str, Any]]:
    """value if it is a non-empty mapping; an error if it is something else (v1.5 sections are
    mappings: CodaLab iterates their .items())."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        report.error(where, "must be a non-empty mapping (key: value), not {}".format(
            type(value).__name__ if value else "empty"))
        return None
    return value


def check_page_file(bundle: Bundle, path: Any, where: str, report: Report) -> None:
    if not isinstance(path, str) or not bundle.has(path):
        report.error(where, "file {!r} is not in the bundle".format(path))
        return
    data = bundle.read(path)
    if not data:
        report.error(where, "{} is empty (Codabench refuses an empty page or terms)".format(path))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        report.error(where, "{} is not UTF-8 text".format(path))


def check_image(bundle: Bundle, path: Any, where: str, report: Report) -> None:
    if not isinstance(path, str) or not bundle.has(path):
        report.error(where, "logo {!r} is not in the bundle (Codabench requires one)".format(path))
    elif not bundle.read(path).startswith(IMAGE_MAGIC):
        report.error(where, "logo {} is not a PNG, JPEG or GIF image".format(path))


def check_data_ref(bundle: Bundle, value: Any, where: str, report: Report,
                   folders_ok: bool) -> Optional[str]:
    """A data reference: a zip in the bundle (v2 also: a folder), else a dataset key (UUID).
    Returns the member name when it is a zip in the bundle."""
    if not isinstance(value, str) or not value:
        report.error(where, "must name a zip file in the bundle")
        return None
    if value.endswith(".zip") and bundle.has(value):
        return value
    if folders_ok and bundle.has_folder(value):
        return None
    if UUID.match(value):
        report.warn(where, "{} is taken as the key of a dataset already on the server".format(value))
        return None
    if value.endswith(".zip"):
        report.error(where, "{} is not in the bundle".format(value))
    else:
        report.error(where, "{!r} does not end in .zip: the platform takes it as the key of an "
                            "uploaded dataset and fails to find it".format(value))
    return None


INTERVAL_SUFFIXES = ("_ci_low", "_ci_high")


def check_columns(columns: List[Dict[str, Any]], primary: Optional[str],
                  expected: Optional[List[str]], scorer: str, where: str,
                  report: Report) -> None:
    """Leaderboard columns against the keys the scoring program writes. A score key without a
    column is dropped silently; a column without a score key shows n/a forever."""
    keys = [c["key"] for c in columns]
    if expected is None:
        report.error(where, "cannot compare the leaderboard with the scoring program: " + scorer)
        return
    missing = [k for k in expected if k not in keys]
    # The scorer also writes its ranking score's confidence interval (<key>_ci_low/_ci_high):
    # columns for them are optional (bundle.py --confidence-columns).
    unknown = [k for k in keys if k not in expected and not (
        k.endswith(INTERVAL_SUFFIXES) and k.rsplit("_ci_", 1)[0] in expected)]
    if missing:
        report.error(where, "no column for the score keys {} that the scoring program writes "
                            "(they would be dropped silently)".format(", ".join(missing)))
    if unknown:
        report.error(where, "columns {} are not keys the scoring program writes ({}); they would "
                            "show n/a forever".format(", ".join(unknown), ", ".join(expected)))
    if expected and primary != expected[0]:
        report.error(where, "the leaderboard is ranked by {!r}, not by the scoring program's "
                            "first key {!r}".format(primary, expected[0]))
    for c in columns:
        if c["key"] not in unknown and c.get("sort") != "desc":
            report.error(where, "column {} sorts {!r}: the scores (IoU, accuracy) are better "
                                "when higher, sort desc".format(c["key"], c.get("sort")))


def _count(mapping: Dict[str, Any], key: str, where: str, report: Report) -> None:
    value = mapping.get(key)
    if key in mapping and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        report.error(where, "{} must be a positive integer, not {!r}".format(key, value))


def _longer(value: Any, limit: int, what: str, where: str, report: Report) -> None:
    if isinstance(value, str) and len(value) > limit:
        report.error(where, "{} is {} characters, the platform stores at most {}".format(
            what, len(value), limit))


# --- v1.5 ----------------------------------------------------------------------------------

def check_v15(doc: Dict[str, Any], bundle: Bundle, report: Report) -> Dict[str, Any]:
    """Returns what the cross checks need: data zips, columns and the ranking column."""
    out = {"programs": [], "references": [], "kits": [], "columns": [], "primary": None}
    for key in sorted(k for k in doc if k not in V15_TOP_KEYS):
        if key in V15_RELATION_KEYS:
            report.error("competition.yaml", "top-level key `{}`: CodaLab passes it to "
                                             "Competition(), where it is a relation, and the "
                                             "upload crashes (set it on the site)".format(key))
            continue
        hint = {"version": " (a v2 bundle needs `version: 2`)",
                "docker_image": " (v1.5 reads competition_docker_image)"}.get(key, "")
        report.error("competition.yaml", "unknown top-level key `{}`: CodaLab passes it to "
                                         "Competition() and crashes{}".format(key, hint))
    _longer(_need(doc, "title", "competition.yaml", report), V15_MAX["title"], "title",
            "competition.yaml", report)
    if doc.get("image"):
        check_image(bundle, doc["image"], "image", report)
    else:
        # CodaLab's unpacker reads the logo only if named; Codabench's v1.5 importer requires it.
        report.warn("competition.yaml", "no `image` (logo): CodaLab accepts it, but Codabench's "
                                        "v1.5 importer refuses a bundle without one")
    html = _mapping(_need(doc, "html", "competition.yaml", report), "html", report)
    if html:
        for page in V15_HTML_REQUIRED:
            if _need(html, page, "html", report, " (the unpacker reads overview, evaluation, "
                                                 "terms and data)") is not None:
                check_page_file(bundle, html[page], "html." + page, report)
        for page in sorted(set(html) - set(V15_HTML_REQUIRED)):
            check_page_file(bundle, html[page], "html." + page, report)
    for key in ("has_registration", "enable_detailed_results"):
        if key in doc and not isinstance(doc[key], bool):
            report.error(key, "must be True or False, not {!r}".format(doc[key]))
    end = v15_date(doc["end_date"], "end_date", report) if doc.get("end_date") is not None else None

    phases = _mapping(_need(doc, "phases", "competition.yaml", report), "phases", report)
    if phases:
        numbers, starts = [], []
        for pkey, phase in phases.items():
            where = "phases.{}".format(pkey)
            if not isinstance(phase, dict):
                report.error(where, "must be a mapping")
                continue
            for key in sorted(k for k in phase if k not in V15_PHASE_KEYS):
                hint = " (v1.5 reads `sort` only for columns)" if key == "sorting" else ""
                report.error(where, "unknown phase key `{}`: CodaLab passes it to "
                                    "CompetitionPhase() and crashes{}".format(key, hint))
            for key in V15_PHASE_REQUIRED:
                _need(phase, key, where, report)
            number = phase.get("phasenumber")
            if number is not None and (not isinstance(number, int) or isinstance(number, bool)):
                report.error(where, "phasenumber must be an integer, not {!r}".format(number))
            elif number is not None:
                numbers.append(number)
            _longer(phase.get("label"), V15_MAX["phase label"], "label", where, report)
            _longer(phase.get("description"), V15_MAX["phase description"], "description",
                    where, report)
            if "start_date" in phase:
                start = v15_date(phase["start_date"], where + ".start_date", report)
                if start is not None and isinstance(number, int):
                    starts.append((number, start))
            if phase.get("phase_never_ends") is True and len(phases) > 1:
                report.warn(where, "phase_never_ends: CodaLab takes submissions for this phase "
                                   "at any time, before its start_date too, alongside the other "
                                   "phases; an open-ended last phase needs no end_date instead")
            if "color" in phase and phase["color"] not in COLORS:
                report.error(where + ".color", "{!r} is not a CodaLab phase color ({})".format(
                    phase["color"], ", ".join(COLORS)))
            for key in ("max_submissions", "max_submissions_per_day", "execution_time_limit"):
                _count(phase, key, where, report)
            if "max_submissions_per_day" not in phase:
                # The pages cannot state one limit for both: the platforms' defaults differ.
                report.warn(where, "no max_submissions_per_day: CodaLab then allows 999 a day "
                                   "(apps/web/models.py:888), Codabench 5 (competitions/"
                                   "unpackers/v2.py:197); write the limit")
            for key in V15_DATA_KEYS:
                if key in phase:
                    name = check_data_ref(bundle, phase[key], where + "." + key, report, False)
                    if name and key in ROLES:
                        out[ROLES[key]].append((where, name))
        # A phase is active until phase number + 1 starts: numbers must run 1, 2, 3...
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

    lb = _mapping(_need(doc, "leaderboard", "competition.yaml", report), "leaderboard", report)
    boards = _mapping(_need(lb, "leaderboards", "leaderboard", report) if lb else None,
                      "leaderboard.leaderboards", report)
    columns = _mapping(_need(lb, "columns", "leaderboard", report) if lb else None,
                       "leaderboard.columns", report)
    labels = {}
    if boards:
        for bkey, board in boards.items():
            where = "leaderboard.leaderboards.{}".format(bkey)
            if _need(board, "label", where, report) is not None:
                labels[str(board["label"]).strip()] = bkey
                _longer(board["label"], V15_MAX["leaderboard label"], "label", where, report)
            _need(board, "rank", where, report)
    if columns:
        for index, (ckey, col) in enumerate(columns.items()):
            where = "leaderboard.columns.{}".format(ckey)
            if not isinstance(col, dict):
                report.error(where, "must be a mapping")
                continue
            if ":" in str(ckey):
                report.error(where, "column key {!r} holds a colon: CodaLab's worker splits each "
                                    "scores.txt line on ':', so no score can reach it".format(ckey))
            _longer(ckey, V15_MAX["column key"], "the key", where, report)
            for key in sorted(k for k in col if k not in V15_COLUMN_KEYS):
                hint = (": v1.5 reads `sort`, and ignores `sorting` (the column would sort desc "
                        "by default)") if key == "sorting" else ""
                report.error(where, "unknown column key `{}`{}".format(key, hint))
            board = _need(col, "leaderboard", where, report, " (an alias like *RESULTS)")
            if board is not None:
                label = str(board.get("label", "")).strip() if isinstance(board, dict) else None
                if label not in labels:
                    report.error(where + ".leaderboard", "names no declared leaderboard (use the "
                                                         "alias of one, e.g. *RESULTS): CodaLab "
                                                         "fails with KeyError")
            _need(col, "label", where, report)
            _longer(col.get("label"), V15_MAX["column label"], "label", where, report)
            _need(col, "rank", where, report)
            if "sort" in col and col["sort"] not in SORTS:
                report.error(where + ".sort", "{!r} is not asc or desc".format(col["sort"]))
            fmt = col.get("numeric_format", 2)
            if not isinstance(fmt, int) or isinstance(fmt, bool) or not 1 <= fmt <= 10:
                report.error(where + ".numeric_format", "{!r}: CodaLab shows 1 to 10 decimals"
                             .format(fmt))
            out["columns"].append({"key": ckey, "sort": col.get("sort", "desc"),
                                   "rank": col.get("rank", 1), "order": index,
                                   "selection": col.get("selection_default", 0)})
        cols = out["columns"]
        if cols:
            # CodaLab ranks by the highest selection_default (the first column on ties);
            # Codabench's importer by the lowest rank. Both must be the same column.
            by_selection = max(cols, key=lambda c: (c["selection"], -c["order"]))["key"]
            by_rank = min(cols, key=lambda c: (c["rank"], c["order"]))["key"]
            if by_selection != by_rank:
                report.error("leaderboard.columns", "CodaLab would rank by {} (selection_default) "
                                                    "and Codabench by {} (rank 1)".format(
                                                        by_selection, by_rank))
            out["primary"] = by_rank
    return out


# --- v2 ------------------------------------------------------------------------------------

def check_v2_keys(doc: Dict[str, Any], report: Report) -> None:
    """Refuse every key the v2 unpacker does not read (V2_READ): it would be dropped."""
    def unread(mapping: Any, kind: str, where: str) -> None:
        if not isinstance(mapping, dict):
            return
        for key in sorted(set(mapping) - V2_READ[kind], key=str):
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


def check_v2_settings(doc: Dict[str, Any], report: Report) -> None:
    """The organizer's settings, as Codabench validates them (bundle_settings)."""
    for problem in bundle_settings.fact_sheet_problems(doc.get("fact_sheet")):
        report.error("fact_sheet", problem)
    contact = doc.get("contact_email")
    if contact is not None:
        try:
            bundle_settings.check_email(str(contact))
        except ValueError:
            report.error("contact_email", "{!r} is not an email address: Codabench's "
                                          "EmailField refuses it (competitions/models.py:67)"
                         .format(contact))
    queue = doc.get("queue")
    if queue is not None and not bundle_settings.UUID.match(str(queue)):
        report.error("queue", "{!r} is not a queue's vhost (a UUID, queues/models.py:12): the "
                              "upload fails with \"The specified Queue does not exist!\" "
                              "(base_unpacker.py:228-229)".format(queue))


def check_v2(doc: Dict[str, Any], bundle: Bundle, report: Report) -> Dict[str, Any]:
    out = {"programs": [], "references": [], "kits": [], "columns": [], "primary": None}
    for key in V2_REQUIRED:
        _need(doc, key, "competition.yaml", report)
    check_v2_keys(doc, report)
    check_v2_settings(doc, report)
    if "competition_docker_image" in doc:
        report.error("competition.yaml", "v2 reads `docker_image`; competition_docker_image is "
                                         "ignored (the default image would run)")
    if doc.get("terms"):
        check_page_file(bundle, doc["terms"], "terms", report)
    if doc.get("image"):
        check_image(bundle, doc["image"], "image", report)
    pages = doc.get("pages")
    if pages is not None and not isinstance(pages, list):
        report.error("pages", "must be a list of {title, file}")
    for i, page in enumerate(pages if isinstance(pages, list) else []):
        where = "pages[{}]".format(i)
        if _need(page, "file", where, report) is not None:
            check_page_file(bundle, page["file"], where, report)
        _need(page, "title", where, report)

    task_indexes = set()
    for i, task in enumerate(doc.get("tasks") or []):
        where = "tasks[{}]".format(i)
        index = _need(task, "index", where, report)
        if index in task_indexes:
            report.error(where, "duplicate task index {}".format(index))
        task_indexes.add(index)
        if isinstance(task, dict) and "key" in task:
            continue
        for key in V2_DATA_KEYS:
            if key == "scoring_program" and _need(task, key, where, report) is None:
                continue
            if not (isinstance(task, dict) and key in task):
                continue
            name = check_data_ref(bundle, task[key], where + "." + key, report, True)
            if name is None and bundle.has_folder(task[key]):
                name = task[key]  # a folder: Codabench zips it
            if name and key in ROLES:
                out[ROLES[key]].append((where, name))

    spans = []
    for i, phase in enumerate(doc.get("phases") or []):
        where = "phases[{}]".format(i)
        _need(phase, "index", where, report)
        if not isinstance(phase, dict):
            continue
        start = v2_date(phase["start"], where + ".start", report) if _need(
            phase, "start", where, report) is not None else None
        end = v2_date(phase["end"], where + ".end", report) if phase.get("end") else None
        if start and end and end <= start:
            report.error(where, "ends ({}) before it starts ({})".format(end, start))
        spans.append((phase.get("index", i), start, end, where))
        tasks = _need(phase, "tasks", where, report, " (phases must list at least one task)")
        for t in tasks or []:
            if t not in task_indexes:
                report.error(where + ".tasks", "task index {!r} is not declared in tasks".format(t))
        for key in ("max_submissions", "max_submissions_per_day", "execution_time_limit"):
            _count(phase, key, where, report)
        limit = phase.get("execution_time_limit")
        if isinstance(limit, int) and limit > CODABENCH_QUEUE_CAP and not doc.get("queue"):
            report.warn(where + ".execution_time_limit",
                        "{} s exceeds the {} s cap of Codabench's default queue".format(
                            limit, CODABENCH_QUEUE_CAP))
        if "execution_time_limit_ms" in phase:
            report.warn(where, "execution_time_limit_ms is read only by old Codabench versions; "
                               "give execution_time_limit in seconds")
        for key in ("starting_kit", "public_data"):
            if key in phase:
                name = check_data_ref(bundle, phase[key], where + "." + key, report, True)
                if name and key == "starting_kit":
                    out["kits"].append((where, name))
    spans.sort(key=lambda s: s[0] if isinstance(s[0], int) else 0)
    for (_, _s1, e1, w1), (_, s2, _e2, w2) in zip(spans, spans[1:]):
        if e1 is None:
            report.error(w1, "needs an end: another phase follows it")
        elif s2 is not None and s2 <= e1:
            report.error(w2, "starts before {} ends (Codabench refuses overlapping or touching "
                             "phases)".format(w1))

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
            _need(board, key, where, report)
        if not isinstance(board, dict):
            continue
        rule = board.get("submission_rule", "Add")
        if rule not in V2_SUBMISSION_RULES:
            report.error(where + ".submission_rule", "{!r} is not one of {} (the leaderboard "
                                                     "serializer refuses it: leaderboards/"
                                                     "models.py:13-28)".format(
                                                         rule, ", ".join(V2_SUBMISSION_RULES)))
        several = [p.get("name", j) for j, p in enumerate(doc.get("phases") or [])
                   if isinstance(p, dict) and len(p.get("tasks") or []) > 1]
        if i == 0 and rule in V2_AUTO_RULES and several:
            report.error(where + ".submission_rule", "{} in a phase of several tasks ({}): "
                         "Codabench applies it to each task's child submission as its scores "
                         "arrive and puts that child alone on the leaderboard, a row of one "
                         "task's scores (api/views/submissions.py:594, leaderboards/"
                         "strategies.py:20-27, 53-103): use Add".format(
                             rule, ", ".join(str(n) for n in several)))
        _longer(board.get("title"), V2_MAX["leaderboard title"], "title", where, report)
        _longer(board.get("key"), V2_MAX["leaderboard key"], "key", where, report)
        columns = board.get("columns") or []
        indexes = []
        for j, col in enumerate(columns):
            cwhere = "{}.columns[{}]".format(where, j)
            for key in ("title", "key", "index"):
                _need(col, key, cwhere, report)
            if not isinstance(col, dict):
                continue
            if "sort" in col:
                report.error(cwhere, "`sort` is the v1.5 key: v2 reads `sorting` and ignores "
                                     "`sort` (the column would sort desc by default)")
            if "sorting" in col and col["sorting"] not in SORTS:
                report.error(cwhere + ".sorting", "{!r} is not asc or desc".format(col["sorting"]))
            _longer(col.get("key"), V2_MAX["column key"], "key", cwhere, report)
            _longer(col.get("title"), V2_MAX["column title"], "title", cwhere, report)
            if "precision" in col and (not isinstance(col["precision"], int) or col["precision"] < 0):
                report.error(cwhere, "precision must be a non-negative integer")
            indexes.append(col.get("index"))
            if col.get("key") is not None:
                out["columns"].append({"key": col["key"], "sort": col.get("sorting", "desc"),
                                       "index": col.get("index")})
        if len(set(indexes)) != len(indexes):
            report.error(where, "duplicate column indexes {}".format(indexes))
        primary_index = board.get("primary_index", 0)
        ranked = [c for c in columns if isinstance(c, dict) and c.get("index") == primary_index]
        if not ranked:
            report.error(where + ".primary_index", "{!r} is the index of no column (indexes {}): "
                                                   "Codabench cannot rank the leaderboard".format(
                                                       primary_index, indexes))
        if i == 0:
            out["primary"] = ranked[0].get("key") if ranked else None
    return out


# --- whole bundle --------------------------------------------------------------------------

def check_bundle(path: str, now: Optional[datetime.datetime] = None,
                 allow_closed: bool = False,
                 open_on: Optional[datetime.datetime] = None) -> Report:
    """Every rule on one bundle zip. Unless allow_closed, a phase must take submissions at
    `now` (UTC, default bundle_dates.utcnow()) or later, or, given open_on, at that moment."""
    report = Report(os.path.basename(path))
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        report.error("bundle", "not a readable zip file ({})".format(exc))
        return report
    with zf:
        bundle = Bundle(zf)
        check_hygiene(bundle.names, "bundle", report)
        # CodaLab takes the first entry of namelist() with ".yaml" in its name, folders included.
        yamls = [n for n in zf.namelist() if ".yaml" in n]
        if "competition.yaml" not in bundle.name_set:
            report.error("bundle", "no competition.yaml at the root of the bundle")
            return report
        if yamls[0] != "competition.yaml" or len(yamls) > 1:
            report.error("bundle", "other entries with '.yaml' in their name ({}): CodaLab reads "
                                   "the first such entry as the competition definition".format(
                                       ", ".join(n for n in yamls if n != "competition.yaml")))
        doc = _load_yaml(bundle.read("competition.yaml"), "competition.yaml", report)
        if not isinstance(doc, dict):
            report.error("competition.yaml", "must be a YAML mapping")
            return report
        version = doc.get("version")
        report.doc, report.v2 = doc, version in (2, "2")
        if report.v2:
            found = check_v2(doc, bundle, report)
        else:
            if version is not None:
                report.error("competition.yaml", "version {!r}: write `version: 2` for Codabench "
                                                 "v2, or no version for v1.5".format(version))
            found = check_v15(doc, bundle, report)
            check_dates_of_codabench_import(doc, report)
        check_open(doc, report.v2, now or utcnow(), allow_closed, report, open_on)
        check_page_dates(bundle, doc, report.v2, report)

        programs = sorted(set(name for _, name in found["programs"]))
        references = sorted(set(name for _, name in found["references"]))
        for name in programs:
            check_program_zip(bundle.read_zip(name), name, report)
        tasks = {}
        for name in references:
            with bundle.open_zip(name) as member:
                tasks[name] = reference_task(member, name, report)
        for name in sorted(set(n for _, n in found["kits"])):
            check_kit_zip(bundle.read(name), name, report)
        if found["columns"] or programs:
            keys, scorer = expected_keys(bundle, scoring_runs(doc, version in (2, "2")),
                                         programs, tasks, report)
            check_columns(found["columns"], found["primary"], keys, scorer, "leaderboard", report)
    return report


def expected_keys(bundle: Bundle, runs: List[List[Tuple[Any, Any]]], programs: List[str],
                  tasks: Dict[str, Tuple[str, str]],
                  report: Report) -> Tuple[Optional[List[str]], str]:
    """Every key the bundle's scoring runs write, in order (the first run's ranking key
    first), asked from each bundled program with its reference's task and config; an error if
    two tasks of one phase write the same key (one column cannot hold both)."""
    if not programs:
        return None, "no scoring program zip in the bundle"
    keys = []  # type: List[str]
    scorers = []  # type: List[str]
    for run in runs:
        in_phase = []  # type: List[str]
        for program, reference in run:
            if program not in programs:
                continue  # reported with the phase or task that names it
            task, config = tasks.get(reference, ("", ""))
            found, scorer = scorer_keys(bundle.read_zip(program), task, config)
            if found is None:
                return None, scorer
            shared = [k for k in found if k in in_phase]
            if shared:
                report.error("leaderboard", "two tasks of one phase write the keys {}: a "
                                            "leaderboard column holds one of them".format(
                                                ", ".join(shared)))
            in_phase += found
            keys += [k for k in found if k not in keys]
            if scorer not in scorers:
                scorers.append(scorer)
    return keys, ", ".join(scorers)


def open_state(report: Report) -> str:
    """What the report says of submissions: the phases open on the check's date, or the first
    to open later."""
    if report.open_phases:
        return "open for submissions: " + ", ".join(report.open_phases)
    if report.opens_later:
        return "no phase open yet: {} opens on {} UTC".format(
            report.opens_later[0], shown_date(report.opens_later[1]))
    return ""


def main(argv: Optional[List[str]] = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="Check competition bundle zips (CodaLab v1.5, "
                                                 "Codabench v2) before upload.",
                                     epilog="Dates are UTC; BUNDLE_NOW=DATE in the environment "
                                            "stands for now.")
    parser.add_argument("bundles", nargs="+", metavar="BUNDLE.zip")
    parser.add_argument("--open-on", metavar="DATE",
                        help="require a phase open on this date, UTC (default: a phase open now "
                             "or later)")
    parser.add_argument("--allow-closed", action="store_true",
                        help="do not require a phase open for submissions")
    args = parser.parse_args(argv)
    open_on = None
    if args.open_on:
        open_on = as_datetime(args.open_on)
        if open_on is None:
            parser.error("--open-on {!r}: give YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS'".format(
                args.open_on))
    try:
        now = utcnow()
    except ValueError as exc:
        parser.error(str(exc))
    failed = 0
    for path in args.bundles:
        report = check_bundle(path, now=now, allow_closed=args.allow_closed, open_on=open_on)
        for line in report.lines():
            print(line)
        if report.errors:
            failed += 1
        else:
            state = open_state(report)
            print("{}: OK ({} warning{}){}".format(
                report.name, len(report.warnings), "" if len(report.warnings) == 1 else "s",
                "; " + state if state else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
