#!/usr/bin/env python3
"""Dry run: score a submission locally the way the CodaLab (v1) or Codabench worker would.

    python3 dry_run.py submission.zip path/to/validation_labels      (in a starting kit)
    python3 dry_run.py submission.zip --bundle dist/agrivision2021-supervised-codalab.zip

It unpacks the submission as the platform does (CodaLab v1 keeps a single top-level folder
unless it holds a file named `metadata`, unpacks every zip at the top into a folder, and takes
a `metadata` file's other values for bundles to fetch, which a notes file survives;
Codabench keeps it as it is, adds `res/metadata`, and takes a submission with `metadata.yaml` or
`metadata` at its root for code), refuses a zip that cannot be unpacked (encrypted, Deflate64,
bad CRC, a name too long, over MAX_UNPACKED_BYTES) as a submission failure, runs the scoring
program's `metadata` command with $program, $input and $output substituted, split on spaces and
without a shell, in each worker's working directory, under the phase's time limit (at most 600 s
on Codabench), then reads scores.txt / scores.json the way that platform reads them and prints
the leaderboard row it would show, or the error text the participant would see (the scorer's
stderr), and whether CodaLab v1's watcher could upload the final detailed results page.
Differences from the worker, on purpose: the command's
`python3` is replaced by the Python running this script (the worker uses its Docker image's), and
a reference given as a folder is linked, not copied.

Labels of your own (a validation split) are given as the dataset distributes them, without the
reference's config.yaml: in a starting kit, the kit's reference_config.yaml (the test reference's
config.yaml: task, label table, options) is theirs, so they are scored as the test set is. A
config.yaml in the folder given is used as it is.

Needs Python 3.7+ only; the scoring program it runs needs numpy, Pillow and PyYAML. PyYAML is
used here when installed (to read Codabench's YAML form of scores.txt exactly, and competition
yaml files).
Exit status: 0 the submission would be scored and every leaderboard column filled; 1 it would
fail; 2 bad command line, a package the scoring program needs is missing (one line says which
and how to install it), or reference data you gave that the scoring program finds broken (the
submission was not judged); 3 it would be scored but some column left empty or a score dropped
(a task of a phase running several that fails: Finished, and first on the leaderboard).
The phase is the one open now, else the next to open; BUNDLE_NOW=DATE stands for now.
"""
import argparse
import datetime
import errno
import glob
import importlib.util
import json
import math
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

try:
    import yaml  # optional: only to read YAML exactly as Codabench does
except ImportError:  # pragma: no cover - the starting kit promises numpy and Pillow only
    yaml = None

HERE = os.path.dirname(os.path.abspath(__file__))
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3
PLATFORMS = ("codalab", "codabench")
TITLES = {"codalab": "CodaLab (v1 worker)", "codabench": "Codabench"}
MISSING_CELL = {"codalab": "-", "codabench": "n/a"}
# Defaults of the platforms when a phase gives no limit.
DEFAULT_TIME_LIMIT = {"codalab": 300, "codabench": 600}
# Codabench's default queue runs nothing longer than this, whatever the phase asks.
CODABENCH_QUEUE_CAP = 600
PHASE_FILE = "phase.json"      # written into the starting kit by tools/bundle.py
# The test reference's config.yaml (task, label table, options; no labels), written into the
# starting kit by tools/bundle.py: a participant's validation labels in the dataset's layout have
# none, and are scored with it, as the worker scores the test set.
REFERENCE_CONFIG = "reference_config.yaml"
# The scorer's exit status and first line for a broken reference (scoring/problems.py).
SCORER_BROKEN_REFERENCE = 3
BROKEN_REFERENCE_PREAMBLE = "ERROR: the REFERENCE data (the organizers' ground truth) is broken"
CONFIG_FILE = "config.yaml"    # where the scorer reads a reference's (scoring/config.py)
INTERPRETERS = ("python3", "python")
# The most a zip may unpack to, all members together (declared sizes; zipfile never returns
# more than a member's declared size). The stated cap shared with the scoring program's own
# unpacking: no legitimate submission comes near it (the 19,708 test predictions as 16-bit PNGs
# stored without compression are 10.3 GB; as usual 8-bit compressed PNGs, well under 1 GB),
# and a zip bomb stops here instead of filling the disk.
MAX_UNPACKED_BYTES = 16 * 1024 ** 3   # 16 GiB
# The v1 worker's detailed-results watcher (entr, restarted every second) is killed when its
# poll (every 1 s) sees the program gone, and a non-empty page is not uploaded again at the
# end: a page last written less than this before the exit may never reach the site.
V1_WATCHER_MARGIN = 2.0   # seconds
V1_WATCHED_PAGE = "detailed_results.html"


class UsageError(Exception):
    pass


class SubmissionRefused(Exception):
    """The platform refuses the submission before the scoring program runs."""


class ZipProblem(Exception):
    """A zip that cannot be unpacked; the message names the file and the fix."""


# --- which submission the leaderboard shows --------------------------------------------------

# Codabench's leaderboard submission_rule (src/apps/leaderboards/models.py:7-22; what each does:
# src/apps/leaderboards/strategies.py:53-120, api/views/submissions.py:317-337), as one of our
# rule names. Add is Codabench's default.
CODABENCH_RULES = {"Force_Best": "best", "Force_Last": "last", "Add": "chosen",
                   "Add_And_Delete": "chosen", "Add_And_Delete_Multiple": "several",
                   "Force_Latest_Multiple": "every"}


def v15_rule(doc: Dict[str, Any], phase: Dict[str, Any]) -> str:
    """The rule of a CodaLab phase: its force_best_submission_to_leaderboard (apps/web/tasks.py
    628), else the competition's force_submission_to_leaderboard or a hide_results phase (the
    last one is added, tasks.py 619-626), else the participant's choice."""
    if phase.get("force_best_submission_to_leaderboard") is True:
        return "best"
    if doc.get("force_submission_to_leaderboard") is True or \
            phase.get("leaderboard_management_mode") == "hide_results":
        return "last"
    return "chosen"


def rule_text(rule: str, ranking: str) -> str:
    """What the leaderboard shows under a rule, as participants are told (pages, plan, dry run);
    ranking: the ranking column's title."""
    return {
        "best": "each participant's best scored submission is on the leaderboard, put there "
                "automatically: a new one takes its place only when its {r} is higher (on an "
                "equal {r} Codabench compares the next columns, then keeps the earlier one; "
                "CodaLab takes the newer)",
        "last": "each participant's latest scored submission is on the leaderboard, put there "
                "automatically, even when it scores lower than the one before",
        "chosen": "a scored submission is not on the leaderboard until its participant puts "
                  "it there from their list of submissions; it then replaces the one put there "
                  "before",
        "several": "a scored submission is on the leaderboard only once its participant adds "
                   "it; they may add several and remove them",
        "every": "every scored submission is added to the leaderboard automatically",
    }.get(rule, "rule {!r}".format(rule)).format(r=ranking)


def row_fate(rule: str, ranking: str) -> str:
    """Which row the leaderboard shows after this submission, under the rule."""
    return {
        "best": "this row is on the leaderboard if its {r} beats the participant's earlier "
                "submissions; else their best one stays",
        "last": "this row replaces the participant's earlier one on the leaderboard",
        "chosen": "this row is not on the leaderboard until the participant puts it there",
        "several": "this row is on the leaderboard only once the participant adds it",
        "every": "this row is added to the leaderboard beside the participant's earlier ones",
    }.get(rule, "rule {!r}".format(rule)).format(r=ranking)


# --- phase information: time limit and leaderboard columns ---------------------------------

def _when(value: Any) -> Optional[datetime.datetime]:
    """A yaml date, timestamp or date string, naive UTC; None if unreadable."""
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, datetime.date):
        return datetime.datetime.combine(value, datetime.time())
    if isinstance(value, str):
        for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"):
            try:
                return datetime.datetime.strptime(value.strip(), fmt)
            except ValueError:
                continue
    return None


NOW_ENV = "BUNDLE_NOW"   # the bundle tools' "now" (tools/bundle_dates.py): tests, previews


def _utcnow() -> datetime.datetime:
    """Now in UTC, or the date in BUNDLE_NOW (as the bundle tools read it)."""
    value = os.environ.get(NOW_ENV, "").strip()
    if not value:
        return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    when = _when(value)
    if when is None:
        raise UsageError("{}={!r} is not a date: give YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS' "
                         "(UTC)".format(NOW_ENV, value))
    return when


def submission_phase(phases: List[Dict[str, Any]], v2: bool, end_date: Any = None,
                     now: Optional[datetime.datetime] = None) -> Dict[str, Any]:
    """The phase a submission made now goes to: the one open now by the platform's rule
    (Codabench: started and its end not passed, PhaseDetailSerializer.get_status; CodaLab:
    started and the next not started, the last one until the competition's end_date), else the
    next one to open (a bundle uploaded before its challenge starts), else the last one
    (phases in order)."""
    now = now or _utcnow()
    later = []  # type: List[Tuple[datetime.datetime, int]]
    for i, phase in enumerate(phases):
        start = _when(phase.get("start" if v2 else "start_date"))
        if start is None:
            continue
        if start > now:
            later.append((start, i))
            continue
        if v2:
            end = _when(phase.get("end")) if phase.get("end") else None
            if end is None or now <= end:
                return phase
            continue
        if i + 1 < len(phases):
            end = _when(phases[i + 1].get("start_date"))
        else:
            end = _when(end_date) if end_date else None
        if end is None or end > now:
            return phase
    return phases[min(later)[1]] if later else phases[-1]


def phase_info_from_yaml(doc: Dict[str, Any]) -> Dict[str, Any]:
    """Time limit, leaderboard columns and data files of the phase a submission goes to now
    (else the last) of a v1.5 or v2 yaml."""
    detailed = bool(doc.get("enable_detailed_results", False))
    if doc.get("version") in (2, "2"):
        phase = submission_phase(sorted(doc["phases"], key=lambda p: p.get("index", 0)), True)
        # A phase running several tasks makes one child submission per task, each scoring the
        # same zip with its task's program and reference (Codabench's _run_submission).
        tasks = [next((t for t in doc.get("tasks", []) if t.get("index") == i), {})
                 for i in (phase.get("tasks") or [0])]
        task = tasks[0]
        board = sorted(doc["leaderboards"], key=lambda b: b.get("index", 0))[0]
        columns = [{"key": c["key"], "label": c.get("title", c["key"]),
                    "precision": int(c.get("precision", 2)), "sort": c.get("sorting", "desc")}
                   for c in sorted(board["columns"], key=lambda c: c.get("index", 0))]
        primary = [c for c in board["columns"] if c.get("index") == board.get("primary_index", 0)]
        return {"platform": "codabench", "title": doc.get("title", ""),
                "ranking": (primary or board["columns"])[0].get("title", ""),
                "phase": phase.get("name", ""),
                "leaderboard_rule": CODABENCH_RULES.get(board.get("submission_rule", "Add"),
                                                        board.get("submission_rule")),
                # A queue of the organizer's own runs the phase's time limit uncapped.
                "queue": bool(doc.get("queue")),
                # Asked at every upload (competitions/unpackers/v2.py, fact_sheet).
                "fact_sheet": [(str(q.get("title", k)), q.get("is_required") == "true")
                               for k, q in (doc.get("fact_sheet") or {}).items()
                               if isinstance(q, dict)],
                "execution_time_limit": int(phase.get("execution_time_limit") or
                                            DEFAULT_TIME_LIMIT["codabench"]),
                "enable_detailed_results": detailed,
                "columns": columns, "scoring_program": task.get("scoring_program"),
                "reference_data": task.get("reference_data"),
                "tasks": [{"name": t.get("name", "task {}".format(t.get("index"))),
                           "scoring_program": t.get("scoring_program"),
                           "reference_data": t.get("reference_data")} for t in tasks]}
    phase = submission_phase(sorted(doc["phases"].values(), key=lambda p: p["phasenumber"]),
                             False, doc.get("end_date"))
    order = list(doc["leaderboard"]["columns"])
    cols = sorted(doc["leaderboard"]["columns"].items(),
                  key=lambda kv: (kv[1].get("rank", 1), order.index(kv[0])))
    columns = [{"key": k, "label": c.get("label", k), "precision": int(c.get("numeric_format", 2)),
                "sort": c.get("sort", "desc")} for k, c in cols]
    return {"platform": "codalab", "title": doc.get("title", ""),
            "phase": phase.get("label", ""), "leaderboard_rule": v15_rule(doc, phase),
            # The default score, compared by force_best: the lowest-ranked column's
            # (apps/web/models.py, get_default_score_def).
            "ranking": columns[0]["label"] if columns else "",
            "execution_time_limit": int(phase.get("execution_time_limit") or
                                        DEFAULT_TIME_LIMIT["codalab"]),
            "enable_detailed_results": detailed,
            "columns": columns, "scoring_program": phase.get("scoring_program"),
            "reference_data": phase.get("reference_data")}


def _parse_yaml_doc(text: str, what: str) -> Dict[str, Any]:
    if yaml is None:
        raise UsageError("reading {} needs PyYAML (pip install pyyaml)".format(what))
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict):
        raise UsageError("{} is not a YAML mapping".format(what))
    return doc


def find_phase_info() -> Tuple[Optional[Dict[str, Any]], str]:
    """phase.json beside this script (starting kit), else the flagship competition.yaml of the
    repository (competitions/agriculture-vision/)."""
    path = os.path.join(HERE, PHASE_FILE)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f), path
    repo_yaml = os.path.join(os.path.dirname(HERE), "competitions", "agriculture-vision",
                             "competition.yaml")
    if os.path.isfile(repo_yaml) and yaml is not None:
        with open(repo_yaml, encoding="utf-8") as f:
            return phase_info_from_yaml(_parse_yaml_doc(f.read(), repo_yaml)), repo_yaml
    return None, "no phase.json or competition.yaml found"


PROGRAM_CANDIDATES = (os.path.join(HERE, "scoring_program"),
                      os.path.join(os.path.dirname(HERE), "scoring_program"))


def find_program() -> str:
    """The scoring program folder: inside the starting kit, or beside tools/ in the repository."""
    for candidate in PROGRAM_CANDIDATES:
        if os.path.isfile(os.path.join(candidate, "metadata")):
            return candidate
    raise UsageError("no scoring program found next to this script; give --program")


class MissingPackage(Exception):
    """A package the scoring program needs is not installed for this Python: one line (the
    program's own message, scoring/deps.py) and the install command; nothing was judged."""


def program_module(program: str, name: str) -> Any:
    """One of the scoring program's standard-library-only modules (scoring/<name>.py: deps,
    console), loaded from its file; None if the program has none (another program)."""
    path = os.path.join(program, "scoring", name + ".py")
    if not os.path.isfile(path):
        return None
    spec = importlib.util.spec_from_file_location("dry_run_scoring_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_packages(program: str) -> None:
    """MissingPackage if a package the program declares (scoring/deps.py REQUIRED) cannot be
    imported by this Python, which runs it: the scorer would fail, and its failure would read as
    a broken reference or a failed submission."""
    deps = program_module(program, "deps")
    for name in (deps.REQUIRED if deps else ()):
        if importlib.util.find_spec(name) is None:
            raise MissingPackage(deps.missing_message(ModuleNotFoundError(
                "No module named {!r}".format(name), name=name)))


def guarded_stdout() -> Any:
    """sys.stdout guarded against a reader that goes away (`dry_run.py ... | head`): the
    scoring program's console.guard, from the program beside this script (as is without one)."""
    for candidate in PROGRAM_CANDIDATES:
        console = program_module(candidate, "console")
        if console is not None:
            return console, console.guard(sys.stdout)
    return None, sys.stdout


# --- unpacking as the platforms do ---------------------------------------------------------

def _human(size: int) -> str:
    return "{:.1f} GiB".format(size / 1024.0 ** 3) if size >= 1024 ** 3 else \
        "{:.1f} MiB".format(size / 1024.0 ** 2)


def safe_extract(zip_path: str, dest: str, cap: Optional[int] = None) -> None:
    """Unpack a zip into dest, or raise ZipProblem with a message naming the member and the fix.

    Everything that makes Python's zipfile (which both platforms use) fail is caught, and
    checked before anything is written where possible: an entry outside the archive, an
    encrypted member, a compression method zipfile cannot read (Deflate64, made by Windows'
    Explorer for big files...), a total size above `cap`; then, while writing, a bad CRC (a
    damaged zip) and a name the file system refuses (too long...). Symbolic-link entries are
    written as regular files holding the link's text, as zipfile does: no link is ever created.
    """
    name = os.path.basename(zip_path)
    cap = MAX_UNPACKED_BYTES if cap is None else cap
    dest_real = os.path.realpath(dest)
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise ZipProblem("{} is not a readable zip file ({}). Make it again with a standard "
                         "zip tool (or make_submission.py)".format(name, exc)) from None
    with zf:
        infos = zf.infolist()
        total = 0
        for info in infos:
            target = os.path.realpath(os.path.join(dest, info.filename))
            if not (target == dest_real or target.startswith(dest_real + os.sep)) or \
                    os.path.isabs(info.filename):
                raise ZipProblem("{}: the entry {!r} points outside the archive. Zip the files "
                                 "with paths relative to the zip's root".format(
                                     name, info.filename))
            if info.flag_bits & 0x1:
                raise ZipProblem("{}: {} is encrypted (password-protected); the platform cannot "
                                 "unpack it. Zip the files without a password".format(
                                     name, info.filename))
            if info.compress_type not in _SUPPORTED_COMPRESSION:
                raise ZipProblem("{}: {} is compressed with method {} ({}), which Python's "
                                 "zipfile, and so the platform, cannot unpack. Zip the files "
                                 "with the usual Deflate method (e.g. make_submission.py, or "
                                 "`zip -r`)".format(name, info.filename, info.compress_type,
                                                    _METHOD_NAMES.get(info.compress_type,
                                                                      "unknown")))
            total += info.file_size
        if total > cap:
            raise ZipProblem("{} would unpack to {} ({} entries), more than the {} a "
                             "submission may take: it is not a submission of predictions (a "
                             "zip bomb, or other files). Zip only the prediction files".format(
                                 name, _human(total), len(infos), _human(cap)))
        for info in infos:
            target = os.path.join(dest, info.filename)
            try:
                if info.filename.endswith("/"):
                    os.makedirs(target, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(target) or dest, exist_ok=True)
                # open() + copy, never os.symlink: a symlink entry becomes a plain file.
                with zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            except zipfile.BadZipFile as exc:
                raise ZipProblem("{}: {} is damaged ({}). Make the zip again".format(
                    name, info.filename, exc)) from None
            except (NotImplementedError, RuntimeError) as exc:
                raise ZipProblem("{}: {} cannot be unpacked ({}). Zip the files again with "
                                 "the usual Deflate method and no password".format(
                                     name, info.filename, exc)) from None
            except OSError as exc:
                why = ("its name is too long for the file system"
                       if exc.errno == errno.ENAMETOOLONG else
                       "the file system refuses it: {}".format(exc.strerror or exc))
                raise ZipProblem("{}: the entry {!r} cannot be written ({}). Rename it to "
                                 "<image id>.png".format(name, info.filename[:80] + (
                                     "..." if len(info.filename) > 80 else ""), why)) from None


_SUPPORTED_COMPRESSION = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2,
                          zipfile.ZIP_LZMA}
_METHOD_NAMES = {9: "Deflate64", 6: "Implode", 1: "Shrink", 98: "PPMd", 93: "Zstandard",
                 95: "XZ", 97: "WavPack", 99: "AES encryption"}


def is_symlink_entry(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def v1_unpack_inner_zips(path: str) -> List[str]:
    """CodaLab v1's get_bundle, after unpacking a bundle: every `*.zip` at its top level
    (glob: not hidden ones) is unpacked into a folder of its name without `.zip`, beside it."""
    found = sorted(glob.glob(os.path.join(path, "*.zip")))
    for inner in found:
        safe_extract(inner, os.path.splitext(inner)[0])
    return [os.path.basename(z) for z in found]


def v1_flatten(path: str) -> Optional[str]:
    """CodaLab v1's _find_only_folder_with_metadata: a sub-folder holding `metadata` replaces
    the bundle, unless the bundle itself has more than two entries and a `metadata`. Listing
    order is the file system's on the worker; sorted here so a dry run is repeatable."""
    entries = sorted(os.listdir(path))
    if len(entries) > 2 and "metadata" in entries:
        return None
    for name in entries:
        folder = os.path.join(path, name)
        if os.path.isdir(folder) and "metadata" in os.listdir(folder):
            tmp = path.rstrip(os.sep) + "_tmp"
            shutil.copytree(folder, tmp)
            shutil.rmtree(path)
            shutil.move(tmp, path)
            return name
    return None


def _copy_regular(src: str, dst: str) -> str:
    """shutil.copy2 for a regular file (or a link to one); ZipProblem for anything else."""
    try:
        mode = os.stat(src).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise ZipProblem("{} is not a regular file ({}), which no zip can hold: remove it".format(
            src, "a FIFO" if stat.S_ISFIFO(mode) else "a device or a socket"))
    return shutil.copy2(src, dst)


def unpack(source: str, dest: str, platform: str, what: str) -> List[str]:
    """Put a zip's content (or a folder's) into dest as the platform's worker would; ZipProblem
    if it cannot be unpacked. Returns notes on what happened."""
    notes = []
    if os.path.isdir(source):
        # A submission folder's links are copied as links, never followed: the scorer then
        # names them (make_submission.py refuses them too). A FIFO or a device is refused,
        # never read: no zip can hold one, and a copy of /dev/zero would fill the disk.
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                        symlinks=what == "submission", copy_function=_copy_regular)
        return notes
    if not zipfile.is_zipfile(source):
        raise ZipProblem("{} is neither a folder nor a zip file: upload a .zip".format(
            os.path.basename(source)))
    os.makedirs(dest)
    safe_extract(source, dest)
    with zipfile.ZipFile(source) as zf:
        links = [i.filename for i in zf.infolist() if is_symlink_entry(i)]
    if links:
        notes.append("{} symbolic link(s) in the {} unpacked as plain files holding the link's "
                     "text, as the platforms' zipfile does: {}".format(
                         len(links), what, ", ".join(links[:3])))
    if platform == "codalab":
        moved = v1_flatten(dest)
        if moved:
            notes.append("CodaLab moved the folder {}/ of the {} up: it holds a "
                         "`metadata` file".format(moved, what))
        for inner in v1_unpack_inner_zips(dest):
            notes.append("CodaLab unpacked {} inside the {} into the folder {}/ (its worker "
                         "unpacks every zip at the top of a zip)".format(
                             inner, what, os.path.splitext(inner)[0]))
    else:
        inner = sorted(n for n in os.listdir(dest) if n.lower().endswith(".zip"))
        if inner:
            notes.append("Codabench leaves {} inside the {} packed (it does not unpack a zip "
                         "inside a zip)".format(", ".join(inner), what))
    return notes


class GivenReference(NamedTuple):
    """Reference data given on the command line (a participant's validation labels), not a
    bundle's: the scorer's "reference broken" is then about these files, not the organizers'."""
    path: str
    config: Optional[bytes] = None   # config.yaml for one without it: the kit's reference_config


def kit_reference_config() -> Optional[bytes]:
    """The test reference's config.yaml as the kit ships it (reference_config.yaml beside this
    script), or None (the repository's tools/, or a kit whose test reference has none)."""
    path = os.path.join(HERE, REFERENCE_CONFIG)
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def config_task(config: bytes) -> str:
    """The `task:` a config.yaml names (the scorer's default without one), for messages."""
    match = re.search(rb"^task:[ \t]*[\"']?([A-Za-z0-9_.-]+)", config, re.M)
    return match.group(1).decode("ascii") if match else "agriculture-vision"


def _real_subfolders(folder: str) -> List[str]:
    """Sub-folders the scorer may look into: not links, not hidden, not __MACOSX (as
    scoring/folders.py's sole_subfolder)."""
    try:
        return [e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False) and
                not e.name.startswith(".") and e.name != "__MACOSX"]
    except OSError:
        return []


def has_config(folder: str) -> bool:
    """A config.yaml where the scorer reads one: in the folder or its only sub-folder."""
    if os.path.isfile(os.path.join(folder, CONFIG_FILE)):
        return True
    subs = _real_subfolders(folder)
    return len(subs) == 1 and os.path.isfile(os.path.join(folder, subs[0], CONFIG_FILE))


def mirror(source: str, dest: str, top: bool = True) -> None:
    """dest shows source's entries without copying the labels: folders are linked, files
    hard-linked or copied. The scorer follows no link when it looks into the only sub-folder,
    so that one is a real folder here too (its entries linked in turn)."""
    os.makedirs(dest)
    subs = _real_subfolders(source) if top else []
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        target = os.path.join(dest, entry.name)
        if subs == [entry.name]:
            mirror(entry.path, target, top=False)
        elif entry.is_dir():
            os.symlink(os.path.abspath(entry.path), target, target_is_directory=True)
        elif entry.is_file():
            try:
                os.link(entry.path, target)
            except OSError:   # another file system
                shutil.copyfile(entry.path, target)
        # anything else (a FIFO, a socket) is not reference data: left out


def stage_reference(source: str, dest: str, platform: str,
                    given: Optional[GivenReference] = None) -> List[str]:
    """input/ref: a folder linked (or, to add a config.yaml, mirrored), a zip unpacked; a given
    reference without config.yaml gets the kit's. Returns notes on what was done."""
    config = given.config if given else None
    add = config is not None and os.path.isdir(source) and not has_config(source)
    if os.path.isdir(source):
        try:
            if add:
                mirror(source, dest)
            else:
                os.symlink(os.path.abspath(source), dest, target_is_directory=True)
            source = ""
        except (OSError, NotImplementedError):  # e.g. Windows without the privilege
            shutil.rmtree(dest, ignore_errors=True)
    if source:
        try:
            unpack(source, dest, platform, "reference data")
        except ZipProblem as exc:
            raise UsageError("the reference data: {}".format(exc)) from None
    if config is None:
        return []
    if has_config(dest):
        return ["input/ref: {} has a config.yaml of its own, used as it is (the kit's {} is "
                "for reference data without one)".format(given.path, REFERENCE_CONFIG)]
    with open(os.path.join(dest, CONFIG_FILE), "wb") as f:
        f.write(config)
    return ["input/ref: {} has no config.yaml; the kit's {} (the test reference's own: task "
            "{}) is its config.yaml here, so it is scored as the test set is".format(
                given.path, REFERENCE_CONFIG, config_task(config))]


def describe_res(res: str) -> str:
    entries = sorted(os.listdir(res))
    files = [e for e in entries if os.path.isfile(os.path.join(res, e))]
    folders = [e + "/" for e in entries if os.path.isdir(os.path.join(res, e))]
    shown = ", ".join((folders + files)[:3]) + (", ..." if len(entries) > 3 else "")
    return "{} and {} at the top: {}".format(counted(len(files), "file"),
                                            counted(len(folders), "folder"), shown or "-")


def counted(n: int, noun: str) -> str:
    """'1 file', '2 files', '0 files'."""
    return "{} {}{}".format(n, noun, "" if n == 1 else "s")


# --- running the command --------------------------------------------------------------------

def read_metadata(program: str, platform: str) -> Tuple[Optional[str], str]:
    """(command or None, the metadata file read). Codabench prefers metadata.yaml."""
    names = ("metadata.yaml", "metadata") if platform == "codabench" else ("metadata",)
    for name in names:
        path = os.path.join(program, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if yaml is not None:
                meta = yaml.safe_load(text)
                command = meta.get("command") if isinstance(meta, dict) else None
            else:
                match = re.search(r"^command:[ \t]*(.+?)[ \t]*$", text, re.M)
                command = match.group(1) if match else None
            return (command if isinstance(command, str) else None), name
    return None, ""


def build_argv(command: str, paths: Dict[str, str], platform: str) -> Tuple[List[str], List[str]]:
    """The argument list the worker would run, and notes on local substitutions."""
    notes = []
    line = command.strip()
    for placeholder in ("program", "input", "output", "tmp", "shared", "predictions"):
        line = line.replace("$" + placeholder, paths[placeholder])
    # v1 splits on single spaces; Codabench hands the string to Docker, which splits it like a
    # shell word list but runs no shell.
    argv = line.split(" ") if platform == "codalab" else shlex.split(line)
    if argv and argv[0] in INTERPRETERS:
        notes.append("`{}` runs as {} here (the worker uses its Docker image's)".format(
            argv[0], sys.executable))
        argv[0] = sys.executable
    return argv, notes


def _pump(stream, sink: List[str], echo: bool) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace")
        sink.append(line)
        if echo:
            sys.stdout.write("  | " + line)
            sys.stdout.flush()
    stream.close()


def v1_detailed_page_fate(output: str, exited: float) -> str:
    """Whether CodaLab v1 shows the detailed results page, from the worker's timing.

    Its watcher (`entr -d`, restarted 1 s after it exits on a new file in output/) uploads the
    page when it changes; the worker kills it when its 1-second poll finds the program gone,
    and at the end uploads only an EMPTY detailed_results.html's stand-in (the first *.html).
    So the final page must be written, and any new output file created, early enough for an
    upload (python start-up + an HTTP PUT) to finish before the exit."""
    page = os.path.join(output, V1_WATCHED_PAGE)
    if not os.path.isfile(page) or os.path.getsize(page) == 0:
        for root, _dirs, files in os.walk(output):
            for name in sorted(files):
                if name.lower().endswith(".html") and os.path.getsize(os.path.join(root, name)):
                    return ("Detailed results on CodaLab v1: {} is empty, so the worker uploads "
                            "{} at the end".format(V1_WATCHED_PAGE, name))
        return "Detailed results on CodaLab v1: none (no non-empty .html in output/)"
    others = [os.path.getmtime(os.path.join(output, n)) for n in os.listdir(output)
              if n != V1_WATCHED_PAGE]
    # entr -d exits on a new file in the folder; the loop restarts it (and so uploads) 1 s later.
    upload = max([os.path.getmtime(page)] + [t + 1.0 for t in others])
    ahead = exited - upload
    if ahead >= V1_WATCHER_MARGIN:
        return ("Detailed results on CodaLab v1: reached (the last upload could start {:.1f} s "
                "before the program exited)".format(ahead))
    return ("Detailed results on CodaLab v1: AT RISK: the last upload of {} could start only "
            "{:.1f} s {} the program exited; the worker stops its upload watcher about 1 s "
            "after the exit and does not upload a non-empty page again, so the site may show "
            "an older or empty page. The scoring program should write its scores files first, "
            "the page last, then wait {:.0f} s before exiting".format(
                V1_WATCHED_PAGE, abs(ahead), "before" if ahead >= 0 else "after",
                V1_WATCHER_MARGIN + 1))


def run_command(argv: List[str], cwd: str, limit: float, echo: bool) -> Tuple[Optional[int], bool,
                                                                                float, str, str]:
    """(exit code, timed out, seconds, stdout, stderr); the whole process group is killed at the
    limit, as the worker kills the container."""
    out, err = [], []  # type: List[str], List[str]
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=(os.name == "posix"))
    except OSError as exc:
        return 127, False, 0.0, "", "cannot start {}: {}\n".format(argv[0], exc)
    threads = [threading.Thread(target=_pump, args=(proc.stdout, out, echo)),
               threading.Thread(target=_pump, args=(proc.stderr, err, False))]
    for t in threads:
        t.daemon = True
        t.start()
    timed_out = False
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait()
    seconds = time.monotonic() - started   # the exit, not the end of the output pumps
    for t in threads:
        t.join(5)
    return proc.returncode, timed_out, seconds, "".join(out), "".join(err)


# --- reading the scores as each platform does -----------------------------------------------

# PyYAML's (YAML 1.1) int and float forms, for when PyYAML is not installed: `1e-3` and `nan`
# are strings there, which is exactly why the scorer writes plain decimals.
_YAML_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$")
_YAML_FLOAT = re.compile(r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?"
                         r"|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")


def _simple_yaml(text: str) -> Dict[str, Any]:
    out = {}  # type: Dict[str, Any]
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if ": " not in line + " ":
            raise ValueError("line {!r} is not `key: value`".format(line))
        key, value = line.split(":", 1)
        value = value.strip()
        if _YAML_INT.match(value):
            out[key.strip()] = int(value.replace("_", ""))
        elif _YAML_FLOAT.match(value):
            low = value.lower()
            out[key.strip()] = (float("nan") if low.endswith("nan") else
                                float(low.replace(".inf", "inf").replace("_", "")))
        else:
            out[key.strip()] = value
    return out


def read_scores_codalab(output: str) -> Tuple[Optional[Dict[str, float]], str]:
    """v1: each non-empty line of scores.txt is `label, value = line.split(":")`, float(value)."""
    path = os.path.join(output, "scores.txt")
    if not os.path.isfile(path):
        return None, "no scores.txt at the root of the output (CodaLab fails the submission)"
    scores = {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for n, line in enumerate(text.split("\n"), 1):
        if len(line) > 0:
            try:
                label, value = line.split(":")
                number = float(value)
            except ValueError:
                return None, ("scores.txt line {}: {!r} is not `key: number` with exactly one "
                              "colon (CodaLab fails the submission)".format(n, line))
            if not math.isfinite(number):
                return None, "scores.txt line {}: {} breaks CodaLab's leaderboard".format(n, value)
            scores[label.strip()] = number
    return scores, "scores.txt"


def read_scores_codabench(output: str) -> Tuple[Optional[Dict[str, float]], str]:
    """Codabench: scores.json if present, else scores.txt parsed as YAML."""
    json_path = os.path.join(output, "scores.json")
    txt_path = os.path.join(output, "scores.txt")
    if os.path.isfile(json_path):
        source = "scores.json"
        try:
            with open(json_path, encoding="utf-8") as f:
                raw = json.load(f)
        except ValueError as exc:
            return None, "Could not decode scores json properly, it contains an error. {}".format(exc)
    elif os.path.isfile(txt_path):
        source = "scores.txt (as YAML)"
        with open(txt_path, encoding="utf-8") as f:
            text = f.read()
        try:
            raw = yaml.safe_load(text) if yaml is not None else _simple_yaml(text)
        except Exception as exc:
            return None, "scores.txt is not valid YAML ({})".format(str(exc).splitlines()[0])
    else:
        return None, "Could not find scores file, did the scoring program output it?"
    if not isinstance(raw, dict):
        return None, "{} is not a mapping of key -> number".format(source)
    scores = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None, "{}: the value of {} is {!r}, not a finite number".format(source, key, value)
        scores[str(key)] = float(value)
    return scores, source


# --- one platform, end to end ---------------------------------------------------------------


class Outcome(NamedTuple):
    platform: str
    finished: bool                      # the platform would mark the submission Finished
    complete: bool                      # ... and fill every leaderboard column
    scores: Optional[Dict[str, float]]
    result: str = ""                    # what the site would show, when more than a row
    unusable_reference: bool = False    # the reference given was broken: nothing was judged


def format_row(columns: List[Dict[str, Any]], scores: Dict[str, float], platform: str,
               width: int = 96) -> List[str]:
    """The leaderboard row as the platform formats it, wrapped to the terminal's width."""
    lines, head, vals = [], [], []  # type: List[str], List[str], List[str]
    used = 0
    for c in columns:
        value = scores.get(c["key"])
        # CodaLab clamps the decimals to 1..10; Codabench uses the precision as given.
        precision = min(10, max(1, c["precision"])) if platform == "codalab" else c["precision"]
        shown = MISSING_CELL[platform] if value is None else "{:.{}f}".format(value, precision)
        w = max(len(c["label"]), len(shown))
        if head and used + w + 2 > width:
            lines += ["  " + "  ".join(head), "  " + "  ".join(vals), ""]
            head, vals, used = [], [], 0
        head.append(c["label"].rjust(w))
        vals.append(shown.rjust(w))
        used += w + 2
    return lines + ["  " + "  ".join(head), "  " + "  ".join(vals)]


def _unusable_reference(platform: str, say, given: GivenReference, err: str) -> Outcome:
    """The scorer's exit 3 (broken reference) when the reference is the user's own: a problem of
    those files, not of the submission and not of the organizers' data."""
    say("Status: not scored: the scoring program found the reference data you gave broken (exit "
        "status 3). Here the reference is yours, {}, not the organizers'; its message:".format(
            given.path))
    for line in (err.strip() or "(empty)").splitlines():
        if line.startswith(BROKEN_REFERENCE_PREAMBLE):
            line = "ERROR: the reference data {} is broken.".format(given.path)
        say("  | " + line)
    return Outcome(platform, False, False, None, unusable_reference=True)


def _failed(platform: str, say, *why: str) -> Outcome:
    say("Status: Failed")
    for line in why:
        say("  " + line)
    return Outcome(platform, False, False, None)


def stage(platform: str, submission: str, reference: str, program: str, paths: Dict[str, str],
          say, given: Optional[GivenReference] = None) -> None:
    """Lay out program/, input/ref, input/res as the platform's worker does."""
    for d in ("input", "output", "tmp", "shared"):
        os.makedirs(paths[d])
    try:
        notes = unpack(program, paths["program"], platform, "scoring program")
    except ZipProblem as exc:
        raise UsageError("the scoring program: {}".format(exc)) from None
    for note in notes:
        say(note)
    for note in stage_reference(reference, os.path.join(paths["input"], "ref"), platform, given):
        say(note)
    res = paths["predictions"]
    try:
        notes = unpack(submission, res, platform, "submission")
    except ZipProblem as exc:
        raise SubmissionRefused("the submission cannot be unpacked: {}".format(exc)) from None
    for note in notes:
        say(note)
    if platform == "codabench":
        # Codabench runs a results submission through a prediction step: it looks for
        # metadata.yaml, then metadata, at the submission's root, and if it finds one takes the
        # submission for code: with a `command` it runs that instead of scoring the files;
        # without one it copies nothing on, and the scoring step fails.
        code_submission_refusal(res)
        with open(os.path.join(res, "metadata"), "w") as f:
            f.write("elapsedTime: null\nexitCode: null\ningestionElapsedTime: null\n"
                    "ingestionExitCode: null\n")
    else:
        for note in v1_fetch_metadata(res):
            say(note)
        with open(os.path.join(paths["input"], "metadata"), "w") as f:
            f.write("competition-phase: 1\nsubmitted-at: {}\nsubmitted-by: dry-run\n".format(
                time.strftime("%Y-%m-%d %H:%M:%S")))
    say("input/res: " + describe_res(res))


def _read_yaml_mapping(path: str) -> Optional[Dict[str, Any]]:
    """A small YAML file as the workers read it, if it is a mapping (None otherwise)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    if yaml is not None:
        try:
            doc = yaml.safe_load(text)
        except Exception:  # a YAML error: the workers see no mapping either
            return None
        return doc if isinstance(doc, dict) else None
    found = {}  # type: Dict[str, Any]
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found or None


def code_submission_refusal(res: str) -> None:
    for name in ("metadata.yaml", "metadata"):
        path = os.path.join(res, name)
        if not os.path.isfile(path):
            continue
        doc = _read_yaml_mapping(path) or {}
        command = doc.get("command")
        if command:
            raise SubmissionRefused(
                "the submission has a file `{}` at its root with a command ({!r}): Codabench "
                "takes it for a code submission and runs that command instead of scoring the "
                "predictions. Remove {} from the zip".format(name, str(command), name))
        raise SubmissionRefused(
            "the submission has a file `{}` at its root: Codabench takes it for a code "
            "submission, finds no command in it, copies nothing to the scoring step, and the "
            "run fails (\"Metadata file not found\"). Remove {} from the zip".format(name, name))


# Keys of a bundle's `metadata` that the v1 worker does not fetch as further bundles.
V1_METADATA_KEYS = ("description", "command", "exitCode", "elapsedTime", "stdout", "stderr",
                    "submitted-by", "submitted-at")
# A value the worker can really fetch: a URL (urllib.urlretrieve) or, on its Python 2, a path
# of the worker's own file system.
_FETCHABLE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|/)")


def _v1_metadata(path: str) -> Any:
    """The submission's `metadata` as the v1 worker reads it (yaml.load); SubmissionRefused if
    that raises, which ends the run."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionRefused(
            "the submission has a file `metadata` at its root that is not UTF-8 text: CodaLab's "
            "worker reads it as YAML, fails, and the run fails. Remove metadata from the "
            "zip") from None
    if yaml is None:
        return _read_yaml_mapping(path)
    try:
        return yaml.safe_load(text)
    except Exception as exc:  # any YAML error: the worker's yaml.load raises the same
        raise SubmissionRefused(
            "the submission has a file `metadata` at its root that is not valid YAML ({}): "
            "CodaLab's worker reads it as YAML and the run fails. Remove metadata from the "
            "zip".format(str(exc).splitlines()[0])) from None


def v1_fetch_metadata(res: str) -> List[str]:
    """What CodaLab v1 does with a `metadata` file at the root of the unpacked submission, by
    its worker's code (competitions-v1-compute-worker, worker.py, get_bundle: the image runs it
    on Python 2.7 with PyYAML 3.10). It reads the file as YAML; every key other than the known
    ones whose value is a string (an ASCII one: PyYAML gives Python 2 `unicode` otherwise,
    which the isinstance(v, str) test skips) is taken for a further bundle:
    get_bundle(res, key, value) makes an empty temporary file in res (tmp..., with the value's
    extension), tries 3 times to download the value into it, swallowing every failure, then
    unzips that file if the value ends in .zip, else makes the folder res/<key> and copies the
    file there as `metadata`, which it reads as YAML (empty: nothing more). Scoring goes on.

    So a notes file (team: ACME) is scored, with those files added to res; the run fails when
    the file is not YAML, a key is not a string, a value ends in .zip (an empty zip) or res
    already has an entry of the key's name (mkdir). A URL or an absolute path is really
    fetched: what it brings cannot be known here, so that counts as a failure. Returns notes
    on what the worker did; SubmissionRefused where its run fails."""
    path = os.path.join(res, "metadata")
    if not os.path.isfile(path):
        return []
    doc = _v1_metadata(path)
    if not isinstance(doc, dict):
        return []
    fetched = [(k, v) for k, v in doc.items() if k not in V1_METADATA_KEYS and
               isinstance(v, str) and all(ord(c) < 128 for c in v)]
    notes = []
    for key, value in sorted(fetched, key=lambda kv: str(kv[0])):
        where = "the submission's `metadata` has `{}: {}`".format(key, value)
        if not isinstance(key, str):
            raise SubmissionRefused(
                "{}: CodaLab's worker takes the value for a bundle to fetch into a folder named "
                "by the key, which is not text, and the run fails. Remove metadata from the "
                "zip".format(where))
        if _FETCHABLE.match(value):
            raise SubmissionRefused(
                "{}: CodaLab's worker fetches that URL or path into input/res/{}/metadata and "
                "reads it as YAML (a zip if it ends in .zip); what it brings cannot be known "
                "here, and a web page fails the run. Remove metadata from the zip".format(
                    where, key))
        name = value.split("?")[0].split("/")[-1]
        extension = os.path.splitext(name)[1]
        handle, temp = tempfile.mkstemp(prefix="tmp", suffix=extension, dir=res)
        os.close(handle)   # the worker's download target, left empty: its download fails
        if extension == ".zip":
            raise SubmissionRefused(
                "{}: CodaLab's worker takes it for a zip to fetch, its download fails, it "
                "unzips the empty file and the run fails. Remove metadata from the zip".format(
                    where))
        folder = os.path.join(res, key)
        inside = os.path.realpath(folder).startswith(os.path.realpath(res) + os.sep)
        if os.path.isabs(key) or not (inside or os.path.exists(folder)):
            raise SubmissionRefused(
                "{}: CodaLab's worker would make a folder outside the submission's; remove "
                "metadata from the zip".format(where))
        try:
            os.mkdir(folder)
        except OSError as exc:
            raise SubmissionRefused(
                "{}: CodaLab's worker takes it for a bundle to fetch into the folder {}/, which "
                "it cannot make ({}), and the run fails. Remove metadata from the zip".format(
                    where, key, exc.strerror or exc)) from None
        open(os.path.join(folder, "metadata"), "w").close()
        notes.append("CodaLab: {}; its worker took `{}` for a further bundle to fetch, the "
                     "download failed (the worker swallows that), and it left an empty {}/"
                     "metadata and an empty {} in input/res; scoring goes on (worker.py, "
                     "get_bundle)".format(where, key, key, os.path.basename(temp)))
    return notes


def run_platform(platform: str, submission: str, reference: str, program: str,
                 phase: Optional[Dict[str, Any]], limit: float, keep: Optional[str],
                 echo: bool, say, child: str = "",
                 given: Optional[GivenReference] = None) -> Outcome:
    """One run of the scoring program as the platform's worker makes it; child names the task
    of one child submission of a multi-task phase (its scores are the row's, not all of it);
    given: the reference is the user's own (validation labels), not a bundle's."""
    root = tempfile.mkdtemp(prefix="dry-run-{}-".format(platform))
    try:
        run = os.path.join(root, "run")
        paths = {"program": os.path.join(run, "program"), "input": os.path.join(run, "input"),
                 "output": os.path.join(run, "output"), "tmp": os.path.join(run, "temp"),
                 "shared": os.path.join(root, "shared")}
        paths["predictions"] = os.path.join(paths["input"], "res")
        try:
            stage(platform, submission, reference, program, paths, say, given)
        except SubmissionRefused as exc:
            return _failed(platform, say, str(exc))
        check_packages(paths["program"])

        command, meta_name = read_metadata(paths["program"], platform)
        if command is None:
            return _failed(platform, say, "the scoring program has no {}".format(
                "command in " + meta_name if meta_name else "metadata file at its root"))
        argv, notes = build_argv(command, paths, platform)
        for note in notes:
            say(note)
        say("running: " + " ".join(argv))
        # v1 runs the command in the run folder (docker -w), Codabench in /app/program.
        cwd = run if platform == "codalab" else paths["program"]
        say("working directory: {} ({})".format(
            "the run folder (program/, input/, output/ ...)" if platform == "codalab" else
            "the program folder (/app/program on Codabench)", cwd))
        watched = platform == "codalab" and (phase or {}).get("enable_detailed_results", True)
        if watched:
            # The v1 worker creates an empty page before the run and watches it.
            open(os.path.join(paths["output"], V1_WATCHED_PAGE), "a").close()
        started = time.time()
        code, timed_out, seconds, _out, err = run_command(argv, cwd, limit, echo)
        exited = started + seconds
        say("exit status {} after {:.1f} s (time limit {:.0f} s)".format(
            "- (killed)" if timed_out else code, seconds, limit))
        if not keep:
            # The program names files in its output folder: they go with the run folder.
            say("(the run folder {}, output included, is deleted when the dry run ends: "
                "--keep DIR keeps a copy)".format(root))
        if timed_out:
            err += ("Execution time limit exceeded!\n" if platform == "codalab" else
                    "Execution Time Limit exceeded. Limit was {:.0f} seconds\n".format(limit))
        if given is not None and code == SCORER_BROKEN_REFERENCE and not timed_out:
            return _unusable_reference(platform, say, given, err)
        if timed_out or code != 0:
            return _failed(platform, say, "The error text the participant sees (the scoring "
                                          "program's stderr):",
                           *["  " + ln for ln in (err.strip() or "(empty)").splitlines()])
        if platform == "codabench" and os.path.exists(os.path.join(paths["output"], "metadata")):
            return _failed(platform, say, "Error, the output directory already contains a "
                                          "metadata file (Codabench writes it itself)")
        reader = read_scores_codalab if platform == "codalab" else read_scores_codabench
        scores, source = reader(paths["output"])
        if scores is None:
            return _failed(platform, say, source)
        htmls = sorted(n for n in os.listdir(paths["output"]) if n.lower().endswith(".html"))
        say("Status: Finished (scores read from {}{})".format(
            source, "; detailed results: " + htmls[0] if htmls else ""))
        if watched:
            say(v1_detailed_page_fate(paths["output"], exited))
        if child:
            say("Scores of task {}: {}".format(child, ", ".join(
                "{} {}".format(k, v) for k, v in scores.items())))
            return Outcome(platform, True, True, scores)
        if not (phase and phase.get("columns")):
            say("Scores (no leaderboard columns known):")
            for key, value in scores.items():
                say("  {}: {}".format(key, value))
            return Outcome(platform, True, True, scores)
        keys = [c["key"] for c in phase["columns"]]
        say("Leaderboard row:")
        for line in format_row(phase["columns"], scores, platform):
            say(line)
        say_rule(phase, say)
        return Outcome(platform, True, row_is_complete(keys, scores, say), scores)
    finally:
        if keep:
            target = os.path.join(keep, platform)
            if os.path.exists(target):
                shutil.rmtree(target)
            shutil.copytree(root, target, symlinks=True)
        shutil.rmtree(root, ignore_errors=True)


def say_rule(phase: Dict[str, Any], say) -> None:
    """Which submission the leaderboard row shows, by the phase's leaderboard rule."""
    rule = phase.get("leaderboard_rule")
    if rule:
        say("On the leaderboard (rule: {}): {}.".format(rule, row_fate(
            rule, phase.get("ranking") or "ranking score")))
    if phase.get("fact_sheet"):
        say("At the upload, Codabench asks (fact sheet): {}.".format("; ".join(
            "{} ({})".format(title, "required" if required else "optional")
            for title, required in phase["fact_sheet"])))


# The scoring program's confidence-interval keys (<key>_ci_low, <key>_ci_high): leaderboard
# columns only when the bundle asks for them (bundle.py --confidence-columns), so a run that writes
# them without columns is complete.
INTERVAL_SUFFIXES = ("_ci_low", "_ci_high")


def row_is_complete(keys: List[str], scores: Dict[str, float], say) -> bool:
    empty = [k for k in keys if k not in scores]
    dropped = sorted(k for k in scores if k not in keys and not k.endswith(INTERVAL_SUFFIXES))
    optional = sorted(k for k in scores if k not in keys and k.endswith(INTERVAL_SUFFIXES))
    if empty:
        say("Columns left empty (no such key in the scores): " + ", ".join(empty))
    if dropped:
        say("Scores dropped (no such leaderboard column): " + ", ".join(dropped))
    if optional:
        say("Not on the leaderboard (confidence intervals; bundle.py --confidence-columns adds "
            "columns for them): " + ", ".join(optional))
    return not (empty or dropped)


def run_tasks(platform: str, submission: str, tasks: List[Dict[str, str]],
              phase: Dict[str, Any], limit: float, keep: Optional[str], echo: bool,
              say) -> Outcome:
    """A phase running several tasks (Codabench): one child run per task on the same zip, each
    under the phase's time limit; the parent's row holds every child's scores. A failed child
    leaves its columns empty, Codabench still finishes the parent, and its row tops the
    leaderboard: said so, and the run is incomplete (exit 3), not a plain failure."""
    scores = {}  # type: Dict[str, float]
    failed = []
    for i, task in enumerate(tasks):
        say("--- child submission {} of {}: task {} ---".format(i + 1, len(tasks), task["name"]))
        outcome = run_platform(platform, submission, task["reference_data"],
                               task["scoring_program"], phase, limit,
                               os.path.join(keep, "task{}".format(i)) if keep else None, echo,
                               say, child=task["name"])
        if not outcome.finished:
            failed.append(task["name"])
            continue
        scores.update(outcome.scores or {})
    if failed:
        # What the site shows (codabench, src/apps): the parent is Finished once every child
        # is done, failed ones included (competitions/models.py,
        # Submission.check_child_submission_statuses); the leaderboard's rows are the children,
        # ordered by the ranking column descending, then the others
        # (api/serializers/leaderboards.py, LeaderboardPhaseSerializer.get_submissions), and
        # PostgreSQL puts an empty (NULL) score first in a descending order: a failed child, with
        # no score at all, comes before every scored one, and the submission's row with it
        # (api/views/competitions.py, get_leaderboard, groups the children at the first).
        whole = len(failed) == len(tasks)
        say("Task(s) {} failed. Status on Codabench: Finished (the parent submission finishes "
            "once every task is done, failed ones included).".format(", ".join(failed)))
        say("Leaderboard row (all tasks), once on the leaderboard: ranked FIRST, above every "
            "fully scored submission, {} (an empty score sorts first):".format(
                "with no scores" if whole else "with the columns of {} empty".format(
                    ", ".join(failed))))
        for line in format_row(phase["columns"], scores, platform):
            say(line)
        return Outcome(platform, True, False, scores, "Codabench would mark it Finished with "
                       "task(s) {} failed, and on the leaderboard rank it FIRST, above every "
                       "fully scored submission, {}. Fix the failed task(s): see their errors "
                       "above".format(", ".join(failed), "with no scores" if whole else
                                      "with their columns empty (n/a)"))
    say("Leaderboard row (all tasks):")
    for line in format_row(phase["columns"], scores, platform):
        say(line)
    say_rule(phase, say)
    return Outcome(platform, True, row_is_complete([c["key"] for c in phase["columns"]],
                                                   scores, say), scores)


# --- command line ---------------------------------------------------------------------------

def _from_bundle(bundle: str, workdir: str) -> Tuple[Dict[str, Any], str, str]:
    """Phase info, scoring program zip and reference zip extracted from a competition bundle
    (for a phase of several tasks, each task's, in phase["tasks"])."""
    if not os.path.exists(bundle):
        raise UsageError("--bundle {}: no such file".format(bundle))
    if os.path.isdir(bundle):
        raise UsageError("--bundle {}: a folder; give the bundle's zip as built "
                         "(bundle.sh writes dist/*-codabench.zip, dist/*-codalab.zip)".format(
                             bundle))
    try:
        zf = zipfile.ZipFile(bundle)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UsageError("--bundle {}: not a zip file ({})".format(bundle, exc)) from None
    with zf:
        if "competition.yaml" not in zf.namelist():
            raise UsageError("--bundle {}: not a competition bundle (no competition.yaml at its "
                             "root; a submission or scoring_program.zip is not one)".format(
                                 bundle))
        try:
            text = zf.read("competition.yaml").decode("utf-8")
            phase = phase_info_from_yaml(_parse_yaml_doc(text, bundle + ":competition.yaml"))
        except (UnicodeDecodeError, KeyError, TypeError, AttributeError, ValueError,
                IndexError) as exc:
            raise UsageError("--bundle {}: its competition.yaml is not a bundle definition "
                             "({}: {})".format(bundle, type(exc).__name__, exc)) from None
        except Exception as exc:  # PyYAML's own errors, when PyYAML is there
            if yaml is None or not isinstance(exc, yaml.YAMLError):
                raise
            raise UsageError("--bundle {}: its competition.yaml is not valid YAML ({})".format(
                bundle, str(exc).splitlines()[0])) from None
        extracted = {}  # type: Dict[str, str]
        for task in phase.get("tasks") or [phase]:
            for key in ("scoring_program", "reference_data"):
                name = task.get(key)
                if not name or name not in zf.namelist():
                    raise UsageError("{}: {} {!r} is not in the bundle".format(bundle, key, name))
                if name not in extracted:
                    extracted[name] = os.path.join(workdir, "{}-{}".format(len(extracted), name))
                    with zf.open(name) as src, open(extracted[name], "wb") as dst:
                        shutil.copyfileobj(src, dst)
                task[key] = extracted[name]
    first = (phase.get("tasks") or [phase])[0]
    return phase, first["scoring_program"], first["reference_data"]


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("{!r} is not a number of seconds".format(text)) \
            from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError("{} is no time limit: give a positive number of "
                                         "seconds".format(text))
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dry_run.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Score a submission locally as the CodaLab or Codabench worker would, and "
                    "show the leaderboard row or the error the participant would see.",
        epilog="examples:\n"
               "  dry_run.py submission.zip ~/agriculture-vision/val        (participants)\n"
               "  dry_run.py sample_submission --bundle dist/X-codalab.zip  (organizers)\n")
    p.add_argument("submission", help="the submission: a zip (as uploaded) or a folder")
    p.add_argument("reference", nargs="?",
                   help="reference labels, e.g. your validation split: a folder or a zip in "
                        "the dataset's layout; without a config.yaml of its own, the kit's "
                        "reference_config.yaml is its config (default with --bundle: the "
                        "bundle's reference_data.zip)")
    p.add_argument("--bundle", metavar="ZIP",
                   help="a competition bundle: use its scoring program, reference data, time "
                        "limit and leaderboard (needs PyYAML)")
    p.add_argument("--platform", choices=PLATFORMS + ("both",),
                   help="whose worker to emulate (default: the bundle's, else both)")
    p.add_argument("--program", metavar="DIR_OR_ZIP",
                   help="scoring program (default: the one beside this script)")
    p.add_argument("--time-limit", type=positive_seconds, metavar="SECONDS",
                   help="execution time limit (default: the phase's)")
    p.add_argument("--keep", metavar="DIR", help="keep each platform's run folder under DIR")
    p.add_argument("--quiet", action="store_true", help="do not echo the scoring program's output")
    return p


def main(argv: Optional[List[str]] = None, outcomes: Optional[List[Outcome]] = None) -> int:
    """The command; `outcomes`, if given, receives each platform's Outcome (for bundle.py)."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line)
        sys.stdout.flush()

    workdir = tempfile.mkdtemp(prefix="dry-run-")
    # A reader that goes away (`| head`) silences the output; the runs go on to their result.
    unguarded = sys.stdout
    console, sys.stdout = guarded_stdout()
    try:
        if not os.path.exists(args.submission):
            raise UsageError("no such file or folder: {}".format(args.submission))
        if args.bundle:
            phase, program, bundled_ref = _from_bundle(args.bundle, workdir)
            source = args.bundle
            reference = args.reference or bundled_ref
            program = args.program or program
        else:
            if not args.reference:
                raise UsageError("give the reference labels (a folder or zip), or --bundle")
            phase, source = find_phase_info()
            reference = args.reference
            program = args.program or find_program()
        if not os.path.exists(reference):
            raise UsageError("no such file or folder: {}".format(reference))
        if os.path.isdir(program):   # a zipped one is checked once unpacked
            check_packages(program)
        # Labels of the user's own (a validation set) are scored with the kit's copy of the test
        # reference's config.yaml when they have none: the dataset's layout has no config.yaml.
        given = GivenReference(args.reference, None if args.bundle else
                               kit_reference_config()) if args.reference else None
        choice = args.platform or (phase["platform"] if args.bundle else "both")
        platforms = PLATFORMS if choice == "both" else (choice,)
        if args.bundle and len((phase or {}).get("tasks") or []) > 1 and "codalab" in platforms:
            # A phase of several tasks exists only on Codabench; CodaLab runs one program per
            # phase (its bundles are one competition per task).
            if choice == "codalab":
                raise UsageError("{} runs {} tasks in one phase, which only Codabench does: "
                                 "dry-run a CodaLab bundle of each task instead".format(
                                     args.bundle, len(phase["tasks"])))
            platforms = ("codabench",)
        say("Dry run of {} ({})".format(args.submission, "phase settings from {}{}".format(
            source, ", phase " + phase["phase"] if phase.get("phase") else "")
            if phase else source))
        outcomes = [] if outcomes is None else outcomes
        for platform in platforms:
            limit = args.time_limit or (phase or {}).get("execution_time_limit") or \
                DEFAULT_TIME_LIMIT[platform]
            say("\n=== {} ===".format(TITLES[platform]))
            if platform == "codabench" and not args.time_limit and limit > CODABENCH_QUEUE_CAP \
                    and not (phase or {}).get("queue"):
                say("time limit {:.0f} s capped at {} s: Codabench's default queue runs nothing "
                    "longer".format(limit, CODABENCH_QUEUE_CAP))
                limit = CODABENCH_QUEUE_CAP
            tasks = (phase or {}).get("tasks") or []
            if args.bundle and len(tasks) > 1 and platform == "codabench":
                if args.reference or args.program:
                    raise UsageError("this phase runs {} tasks, each with the bundle's own "
                                     "program and reference: drop the reference and "
                                     "--program".format(len(tasks)))
                outcomes.append(run_tasks(platform, args.submission, tasks, phase,
                                          float(limit), args.keep, not args.quiet, say))
                continue
            outcomes.append(run_platform(platform, args.submission, reference, program, phase,
                                         float(limit), args.keep, not args.quiet, say,
                                         given=given))
        print()
        if any(o.unusable_reference for o in outcomes):
            print("RESULT: the reference data you gave, {}, cannot be scored against: the "
                  "scoring program found it broken (above). The submission was not judged: "
                  "give labels in the task's layout (the starting kit's README says which) and "
                  "run again.".format(args.reference))
            return EXIT_USAGE
        if not all(o.finished for o in outcomes):
            print("RESULT: the submission would FAIL on " + ", ".join(
                TITLES[o.platform] for o in outcomes if not o.finished) + ".")
            return EXIT_FAILED
        if not all(o.complete for o in outcomes):
            told = [o.result for o in outcomes if o.result]
            print("RESULT: " + (" ".join(told) + "." if told else
                                "scored, but the leaderboard row would be incomplete (see "
                                "above)."))
            return EXIT_INCOMPLETE
        print("RESULT: the submission would be scored on " + " and ".join(
            TITLES[o.platform] for o in outcomes) + ".")
        return EXIT_OK
    except UsageError as exc:
        sys.stderr.write("dry_run.py: error: {}\n".format(exc))
        return EXIT_USAGE
    except MissingPackage as exc:
        sys.stderr.write("{}\n".format(exc))
        return EXIT_USAGE
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if console is not None:
            console.finish(sys.stdout)
        sys.stdout = unguarded


if __name__ == "__main__":
    sys.exit(main())
