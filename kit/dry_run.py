#!/usr/bin/env python3
"""Dry run: score a submission locally the way the CodaLab (v1) or Codabench worker would.

    python3 dry_run.py submission.zip path/to/validation_labels      (in a starting kit)
    python3 dry_run.py submission.zip --bundle dist/agrivision2021-supervised-codalab.zip

It unpacks the submission as the platform does (CodaLab v1 keeps a single top-level folder
unless it holds a file named `metadata`, unpacks every zip at the top into a folder, and takes
a `metadata` file's other values for bundles to fetch, which a notes file survives;
Codabench keeps it as it is, adds `res/metadata`, and takes a submission with `metadata.yaml` or
`metadata` at its root for code), refuses a zip that cannot be unpacked (encrypted, Deflate64,
bad CRC, a name too long, a zip bomb: the scoring program's own rules, scoring/zips.py) as a
submission failure, runs the scoring program's `metadata` command with $program, $input and
$output substituted, split on spaces and without a shell, in each worker's working directory,
under the phase's time limit (at most 600 s on Codabench), then reads scores.txt / scores.json
the way that platform reads them and prints the leaderboard row it would show, or the error
text the participant would see (the scorer's stderr), and whether CodaLab v1's watcher could
upload the final detailed results page. What each platform does is its model's, in platforms/
beside this script (the organizers' bundle check uses the same models).
Differences from the worker, on purpose: the command's
`python3` is replaced by the Python running this script (the worker uses its Docker image's), and
a reference given as a folder is linked, not copied.

Labels of your own (a validation split) are given as the dataset distributes them, without the
reference's config.yaml: in a starting kit, the kit's reference_config.yaml (the test reference's
config.yaml: task, label table, options) is theirs, so they are scored as the test set is. A
config.yaml in the folder given is used as it is, unless --task NAME: one folder read by several
tasks (the Planetscapes pixel tasks' labels/, instances/ and label table) is then staged with
`task: NAME` in its config.yaml (the folder itself is never changed).

Needs Python 3.7+, platforms/ and the scoring program (scoring_program/) beside it, as the
starting kit ships them; the scoring program it runs needs numpy, Pillow and PyYAML. PyYAML is
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
import importlib.util
import json
import math
import os
import re
import shutil
import sys
import tempfile
import zipfile
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
# The scoring program: inside the starting kit, or beside kit/ in the repository.
PROGRAM_CANDIDATES = (os.path.join(HERE, "scoring_program"),
                      os.path.join(os.path.dirname(HERE), "scoring_program"))
MISSING_PROGRAM = ("dry_run.py needs the scoring program beside it (scoring_program/, with its "
                   "`metadata` file) and the platforms/ folder: the starting kit ships both. "
                   "Unpack the whole starting kit and run dry_run.py from it")


def _program_beside() -> Optional[str]:
    for candidate in PROGRAM_CANDIDATES:
        if os.path.isfile(os.path.join(candidate, "metadata")):
            return candidate
    return None


# The scoring program's own rules (its zips, config.yaml's name, its intervals' keys, its
# default task, its usage error) and the platforms' models, both shipped beside this script.
_BESIDE = _program_beside()
for _folder in (HERE, _BESIDE):
    if _folder and _folder not in sys.path:
        sys.path.insert(0, _folder)
try:
    from platforms import registry, worker, yaml_text
    from platforms.dates import utcnow
    from platforms.leaderboard import row_fate
    from platforms.model import Platform, Run
    from platforms.worker import RunFolder, SubmissionRefused, ZipProblem
    from scoring import console
    from scoring.confidence import SUFFIXES as INTERVAL_SUFFIXES
    from scoring.config import CONFIG_FILE, config_path
    from scoring.folders import sole_subfolder
    from scoring.problems import UsageError
    from scoring.registry import DEFAULT as DEFAULT_TASK
except ImportError as _exc:  # a dry_run.py copied out of its kit
    if __name__ == "__main__":
        sys.stderr.write("dry_run.py: error: {} ({})\n".format(MISSING_PROGRAM, _exc))
        sys.exit(2)
    raise

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3
PHASE_FILE = "phase.json"      # written into the starting kit by the bundle builder
# The test reference's config.yaml (task, label table, options; no labels), written into the
# starting kit by the bundle builder: a participant's validation labels in the dataset's layout
# have none, and are scored with it, as the worker scores the test set.
REFERENCE_CONFIG = "reference_config.yaml"
# The scorer's exit status and first line for a broken reference (scoring/problems.py).
SCORER_BROKEN_REFERENCE = 3
BROKEN_REFERENCE_PREAMBLE = "ERROR: the REFERENCE data (the organizers' ground truth) is broken"

Say = Callable[[str], None]


class MissingPackage(Exception):
    """A package the scoring program needs is not installed for this Python: one line (the
    program's own message, scoring/deps.py) and the install command; nothing was judged."""


# --- the phase: time limit, leaderboard columns and rule --------------------------------------

def _now() -> datetime.datetime:
    try:
        return utcnow()
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def phase_info_from_yaml(doc: Dict[str, Any]) -> Dict[str, Any]:
    """Time limit, leaderboard columns and data files of the phase a submission goes to now
    (else the next to open, else the last) of a v1.5 or v2 yaml, by its platform's model."""
    return registry.of_definition(doc).phase_info(doc, _now())


def _parse_yaml_doc(text: str, what: str) -> Dict[str, Any]:
    if yaml_text.yaml is None:
        raise UsageError("reading {} needs PyYAML (pip install pyyaml)".format(what))
    doc = yaml_text.yaml.safe_load(text)
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
    if os.path.isfile(repo_yaml) and yaml_text.yaml is not None:
        with open(repo_yaml, encoding="utf-8") as f:
            return phase_info_from_yaml(_parse_yaml_doc(f.read(), repo_yaml)), repo_yaml
    return None, "no phase.json or competition.yaml found"


def find_program() -> str:
    """The scoring program folder: inside the starting kit, or beside kit/ in the repository."""
    found = _program_beside()
    if found is None:
        raise UsageError("no scoring program found next to this script; give --program")
    return found


# --- the scoring program's packages -----------------------------------------------------------

def program_module(program: str, name: str) -> Any:
    """One of a scoring program's standard-library-only modules (scoring/<name>.py: deps),
    loaded from its file; None if the program has none (another program)."""
    path = os.path.join(program, "scoring", name + ".py")
    if not os.path.isfile(path):
        return None
    spec = importlib.util.spec_from_file_location("dry_run_scoring_" + name, path)
    if spec is None or spec.loader is None:
        return None
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


# --- the reference: a bundle's, or labels of the user's own -----------------------------------

class GivenReference(NamedTuple):
    """Reference data given on the command line (a participant's validation labels), not a
    bundle's: the scorer's "reference broken" is then about these files, not the organizers'."""
    path: str
    config: Optional[bytes] = None   # config.yaml for one without it: the kit's reference_config
    task: str = ""                   # --task: the task that scores it ("" = its config.yaml's)


def kit_reference_config() -> Optional[bytes]:
    """The test reference's config.yaml as the kit ships it (reference_config.yaml beside this
    script), or None (the repository's kit/, or a kit whose test reference has none)."""
    path = os.path.join(HERE, REFERENCE_CONFIG)
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def config_task(config: bytes) -> str:
    """The `task:` a config.yaml names (the scorer's default without one), for messages."""
    match = re.search(rb"^task:[ \t]*[\"']?([A-Za-z0-9_.-]+)", config, re.M)
    return match.group(1).decode("ascii") if match else DEFAULT_TASK


TASK_LINE = re.compile(rb"^task[ \t]*:.*$", re.M)


def with_task(config: bytes, task: str) -> bytes:
    """config.yaml with its `task:` line naming task (added at the top without one): one
    reference folder read by several tasks (the Planetscapes pixel tasks) scored by another
    than its config.yaml names."""
    line = "task: {}   # dry_run.py --task".format(task).encode("ascii")
    if len(TASK_LINE.findall(config)) == 1:
        return TASK_LINE.sub(lambda _: line, config)
    return line + b"\n" + config


def retask(dest: str, task: str, default: Optional[bytes]) -> None:
    """input/ref's config.yaml (else default, the kit's reference_config.yaml) naming task. The
    staged file is replaced, never written through: a mirrored folder's files are hard links
    to the user's own."""
    path = config_path(dest) or os.path.join(dest, CONFIG_FILE)
    text = default or b""
    if os.path.lexists(path):
        with open(path, "rb") as f:
            text = f.read()
        os.unlink(path)
    with open(path, "wb") as f:
        f.write(with_task(text, task))


def mirror(source: str, dest: str, top: bool = True) -> None:
    """dest shows source's entries without copying the labels: folders are linked, files
    hard-linked or copied. The scorer follows no link when it looks into the only sub-folder,
    so that one is a real folder here too (its entries linked in turn)."""
    os.makedirs(dest)
    sub = sole_subfolder(source) if top else None
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        target = os.path.join(dest, entry.name)
        if sub is not None and os.path.basename(sub) == entry.name:
            mirror(entry.path, target, top=False)
        elif entry.is_dir():
            os.symlink(os.path.abspath(entry.path), target, target_is_directory=True)
        elif entry.is_file():
            try:
                os.link(entry.path, target)
            except OSError:   # another file system
                shutil.copyfile(entry.path, target)
        # anything else (a FIFO, a socket) is not reference data: left out


def stage_reference(source: str, dest: str, model: Platform,
                    given: Optional[GivenReference] = None) -> List[str]:
    """input/ref: a folder linked (or, to add a config.yaml, mirrored), a zip unpacked; a given
    reference without config.yaml (where the scorer reads one) gets the kit's. Returns notes on
    what was done."""
    config = given.config if given else None
    task = given.task if given else ""
    add = (config is not None and not config_path(source) or bool(task)) and \
        os.path.isdir(source)
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
            model.unpack(source, dest, "reference data")
        except ZipProblem as exc:
            raise UsageError("the reference data: {}".format(exc)) from None
    if task and given is not None:
        retask(dest, task, config)
        return ["input/ref: {} scored by task {} (--task): staged with `task: {}` in its "
                "config.yaml (the folder itself unchanged)".format(given.path, task, task)]
    if config is None or given is None:
        return []
    if config_path(dest):
        return ["input/ref: {} has a config.yaml of its own, used as it is (the kit's {} is "
                "for reference data without one)".format(given.path, REFERENCE_CONFIG)]
    with open(os.path.join(dest, CONFIG_FILE), "wb") as f:
        f.write(config)
    return ["input/ref: {} has no config.yaml; the kit's {} (the test reference's own: task "
            "{}) is its config.yaml here, so it is scored as the test set is".format(
                given.path, REFERENCE_CONFIG, config_task(config))]


# --- one platform, end to end ---------------------------------------------------------------

class Outcome(NamedTuple):
    platform: str                       # the model's name
    finished: bool                      # the platform would mark the submission Finished
    complete: bool                      # ... and fill every leaderboard column
    scores: Optional[Dict[str, float]]
    result: str = ""                    # what the site would show, when more than a row
    unusable_reference: bool = False    # the reference given was broken: nothing was judged


def stage(model: Platform, submission: str, reference: str, program: str, folder: RunFolder,
          say: Say, given: Optional[GivenReference] = None) -> None:
    """Lay out program/, input/ref, input/res as the platform's worker does."""
    for d in (folder.input, folder.output, folder.tmp, folder.shared):
        os.makedirs(d)
    try:
        notes = model.unpack(program, folder.program, "scoring program")
    except ZipProblem as exc:
        raise UsageError("the scoring program: {}".format(exc)) from None
    for note in notes:
        say(note)
    for note in stage_reference(reference, os.path.join(folder.input, "ref"), model, given):
        say(note)
    try:
        notes = model.unpack(submission, folder.predictions, "submission")
    except ZipProblem as exc:
        raise SubmissionRefused("the submission cannot be unpacked: {}".format(exc)) from None
    for note in notes:
        say(note)
    for note in model.prepare_submission(folder):
        say(note)
    say("input/res: " + worker.describe_res(folder.predictions, model.added_to_res,
                                            model.title))


def run_platform(model: Platform, submission: str, reference: str, program: str,
                 phase: Optional[Dict[str, Any]], limit: float, keep: Optional[str],
                 echo: bool, say: Say, child: str = "",
                 given: Optional[GivenReference] = None) -> Outcome:
    """One run of the scoring program as the platform's worker makes it; child names the task
    of one child submission of a multi-task phase (its scores are the row's, not all of it);
    given: the reference is the user's own (validation labels), not a bundle's."""
    root = tempfile.mkdtemp(prefix="dry-run-{}-".format(model.name))
    try:
        folder = worker.run_folder(root)
        try:
            stage(model, submission, reference, program, folder, say, given)
        except SubmissionRefused as exc:
            return _failed(model, say, str(exc))
        check_packages(folder.program)
        command, meta_name = worker.read_metadata(folder.program, model.metadata_files)
        if command is None:
            return _failed(model, say, "the scoring program has no {}".format(
                "command in " + meta_name if meta_name else "metadata file at its root"))
        run = model.run_program(command, folder, phase, limit, echo, say)
        if not keep:
            # The program names files in its output folder: they go with the run folder.
            say("(the run folder {}, output included, is deleted when the dry run ends: "
                "--keep DIR keeps a copy)".format(root))
        return judge(model, run, folder, phase, say, child, given)
    finally:
        if keep:
            target = os.path.join(keep, model.name)
            if os.path.exists(target):
                shutil.rmtree(target)
            shutil.copytree(root, target, symlinks=True)
        shutil.rmtree(root, ignore_errors=True)


def judge(model: Platform, run: Run, folder: RunFolder, phase: Optional[Dict[str, Any]],
          say: Say, child: str = "", given: Optional[GivenReference] = None) -> Outcome:
    """What the platform makes of the run: Failed with the error text the participant reads,
    or Finished with the scores it read, and the leaderboard row."""
    if given is not None and run.code == SCORER_BROKEN_REFERENCE and not run.timed_out:
        return _unusable_reference(model, say, given, run.err)
    if run.timed_out or run.code != 0:
        return _failed(model, say, "The error text the participant sees (the scoring "
                                   "program's stderr):",
                       *["  " + ln for ln in (run.err.strip() or "(empty)").splitlines()])
    refusal = model.output_refusal(folder.output)
    if refusal:
        return _failed(model, say, refusal)
    scores, source = model.read_scores(folder.output)
    if scores is None:
        return _failed(model, say, source)
    htmls = sorted(n for n in os.listdir(folder.output) if n.lower().endswith(".html"))
    say("Status: Finished (scores read from {}{})".format(
        source, "; detailed results: " + htmls[0] if htmls else ""))
    fate = model.page_fate(folder.output, run.exited, phase)
    if fate:
        say(fate)
    if child:
        say("Scores of task {}: {}".format(child, ", ".join(
            "{} {}".format(k, v) for k, v in scores.items())))
        return Outcome(model.name, True, True, scores)
    if not (phase and phase.get("columns")):
        say("Scores (no leaderboard columns known):")
        for key, value in scores.items():
            say("  {}: {}".format(key, value))
        return Outcome(model.name, True, True, scores)
    say("Leaderboard row:")
    for line in model.format_row(phase["columns"], scores):
        say(line)
    say_rule(phase, say)
    keys = [c["key"] for c in phase["columns"]]
    return Outcome(model.name, True, row_is_complete(keys, scores, say), scores)


def _unusable_reference(model: Platform, say: Say, given: GivenReference,
                        err: str) -> Outcome:
    """The scorer's exit 3 (broken reference) when the reference is the user's own: a problem of
    those files, not of the submission and not of the organizers' data."""
    say("Status: not scored: the scoring program found the reference data you gave broken (exit "
        "status 3). Here the reference is yours, {}, not the organizers'; its message:".format(
            given.path))
    for line in (err.strip() or "(empty)").splitlines():
        if line.startswith(BROKEN_REFERENCE_PREAMBLE):
            line = "ERROR: the reference data {} is broken.".format(given.path)
        say("  | " + line)
    return Outcome(model.name, False, False, None, unusable_reference=True)


def _failed(model: Platform, say: Say, *why: str) -> Outcome:
    say("Status: Failed")
    for line in why:
        say("  " + line)
    return Outcome(model.name, False, False, None)


def say_rule(phase: Dict[str, Any], say: Say) -> None:
    """Which submission the leaderboard row shows, by the phase's leaderboard rule."""
    rule = phase.get("leaderboard_rule")
    if rule:
        say("On the leaderboard (rule: {}): {}.".format(rule, row_fate(
            rule, phase.get("ranking") or "ranking score")))
    if phase.get("fact_sheet"):
        say("At the upload, Codabench asks (fact sheet): {}.".format("; ".join(
            "{} ({})".format(title, "required" if required else "optional")
            for title, required in phase["fact_sheet"])))


def row_is_complete(keys: List[str], scores: Dict[str, float], say: Say) -> bool:
    """Every column filled and no score dropped; the scorer's confidence-interval keys
    (<key>_ci_low, <key>_ci_high) are leaderboard columns only when the bundle asks for them
    (bundle.sh --confidence-columns), so a run that writes them without columns is complete."""
    empty = [k for k in keys if k not in scores]
    dropped = sorted(k for k in scores if k not in keys and not k.endswith(INTERVAL_SUFFIXES))
    optional = sorted(k for k in scores if k not in keys and k.endswith(INTERVAL_SUFFIXES))
    if empty:
        say("Columns left empty (no such key in the scores): " + ", ".join(empty))
    if dropped:
        say("Scores dropped (no such leaderboard column): " + ", ".join(dropped))
    if optional:
        say("Also scored, not shown on this leaderboard: {} (the 95% confidence interval of "
            "the score, on the detailed results page)".format(", ".join(optional)))
    return not (empty or dropped)


def run_tasks(model: Platform, submission: str, tasks: List[Dict[str, str]],
              phase: Dict[str, Any], limit: float, keep: Optional[str], echo: bool,
              say: Say) -> Outcome:
    """A phase running several tasks (Codabench): one child run per task on the same zip, each
    under the phase's time limit; the parent's row holds every child's scores. A failed child
    leaves its columns empty, Codabench still finishes the parent, and its row tops the
    leaderboard: said so, and the run is incomplete (exit 3), not a plain failure."""
    scores: Dict[str, float] = {}
    failed = []
    for i, task in enumerate(tasks):
        say("--- child submission {} of {}: task {} ---".format(i + 1, len(tasks), task["name"]))
        outcome = run_platform(model, submission, task["reference_data"],
                               task["scoring_program"], phase, limit,
                               os.path.join(keep, "task{}".format(i)) if keep else None, echo,
                               say, child=task["name"])
        if not outcome.finished:
            failed.append(task["name"])
            continue
        scores.update(outcome.scores or {})
    if failed:
        return _failed_child(model, tasks, failed, scores, phase, say)
    say("Leaderboard row (all tasks):")
    for line in model.format_row(phase["columns"], scores):
        say(line)
    say_rule(phase, say)
    return Outcome(model.name, True, row_is_complete([c["key"] for c in phase["columns"]],
                                                scores, say), scores)


def _failed_child(model: Platform, tasks: List[Dict[str, str]], failed: List[str],
                  scores: Dict[str, float], phase: Dict[str, Any], say: Say) -> Outcome:
    """What the site shows (codabench, src/apps): the parent is Finished once every child is
    done, failed ones included (competitions/models.py, Submission.check_child_submission_
    statuses); the leaderboard's rows are the children, ordered by the ranking column
    descending, then the others (api/serializers/leaderboards.py, LeaderboardPhaseSerializer.
    get_submissions), and PostgreSQL puts an empty (NULL) score first in a descending order: a
    failed child, with no score at all, comes before every scored one, and the submission's row
    with it (api/views/competitions.py, get_leaderboard, groups the children at the first)."""
    whole = len(failed) == len(tasks)
    say("Task(s) {} failed. Status on Codabench: Finished (the parent submission finishes "
        "once every task is done, failed ones included).".format(", ".join(failed)))
    say("Leaderboard row (all tasks), once on the leaderboard: ranked FIRST, above every "
        "fully scored submission, {} (an empty score sorts first):".format(
            "with no scores" if whole else "with the columns of {} empty".format(
                ", ".join(failed))))
    for line in model.format_row(phase["columns"], scores):
        say(line)
    return Outcome(model.name, True, False, scores, "Codabench would mark it Finished with "
                   "task(s) {} failed, and on the leaderboard rank it FIRST, above every "
                   "fully scored submission, {}. Fix the failed task(s): see their errors "
                   "above".format(", ".join(failed), "with no scores" if whole else
                                  "with their columns empty (n/a)"))


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
        phase = _bundle_phase(zf, bundle)
        extracted: Dict[str, str] = {}
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


def _bundle_phase(zf: zipfile.ZipFile, bundle: str) -> Dict[str, Any]:
    """The phase info of the bundle's competition.yaml; UsageError if it is none."""
    if "competition.yaml" not in zf.namelist():
        raise UsageError("--bundle {}: not a competition bundle (no competition.yaml at its "
                         "root; a submission or scoring_program.zip is not one)".format(bundle))
    now = _now()
    try:
        text = zf.read("competition.yaml").decode("utf-8")
        doc = _parse_yaml_doc(text, bundle + ":competition.yaml")
        return registry.of_definition(doc).phase_info(doc, now)
    except (UnicodeDecodeError, KeyError, TypeError, AttributeError, ValueError,
            IndexError) as exc:
        raise UsageError("--bundle {}: its competition.yaml is not a bundle definition "
                         "({}: {})".format(bundle, type(exc).__name__, exc)) from None
    except Exception as exc:  # PyYAML's own errors, when PyYAML is there
        if yaml_text.yaml is None or not isinstance(exc, yaml_text.yaml.YAMLError):
            raise
        raise UsageError("--bundle {}: its competition.yaml is not valid YAML ({})".format(
            bundle, str(exc).splitlines()[0])) from None


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
    p.add_argument("--platform", choices=registry.NAMES + ("both",),
                   help="whose worker to emulate (default: the bundle's, else both)")
    p.add_argument("--program", metavar="DIR_OR_ZIP",
                   help="scoring program (default: the one beside this script)")
    p.add_argument("--time-limit", type=positive_seconds, metavar="SECONDS",
                   help="execution time limit (default: the phase's)")
    p.add_argument("--task", metavar="NAME",
                   help="score the reference given with this task instead of the one its "
                        "config.yaml names: one folder read by several tasks, e.g. the "
                        "Planetscapes labels/ and instances/ with --task planetscapes-instance "
                        "or planetscapes-panoptic (its config.yaml, never changed, is staged "
                        "with `task: NAME`)")
    p.add_argument("--keep", metavar="DIR", help="keep each platform's run folder under DIR")
    p.add_argument("--quiet", action="store_true", help="do not echo the scoring program's output")
    return p


class Setup(NamedTuple):
    """What the command line asks: the phase (None: unknown) and where it comes from, the
    program, the reference (given: the user's own) and the platforms to emulate."""
    phase: Optional[Dict[str, Any]]
    source: str
    program: str
    reference: str
    given: Optional[GivenReference]
    models: List[Platform]


def setup(args: argparse.Namespace, workdir: str) -> Setup:
    if not os.path.exists(args.submission):
        raise UsageError("no such file or folder: {}".format(args.submission))
    phase: Optional[Dict[str, Any]]
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
    if args.task and not args.reference:
        raise UsageError("--task {}: give the reference labels it scores (a bundle's reference "
                         "already names its task)".format(args.task))
    if args.task and not re.match(r"^[a-z0-9][a-z0-9-]*$", args.task):
        raise UsageError("--task {!r} is no task name (e.g. planetscapes-instance)".format(
            args.task))
    given = GivenReference(args.reference, None if args.bundle else kit_reference_config(),
                           args.task or "") if args.reference else None
    return Setup(phase, source, program, reference, given, platforms_to_run(args, phase))


def platforms_to_run(args: argparse.Namespace,
                     phase: Optional[Dict[str, Any]]) -> List[Platform]:
    """The platforms asked (default: the bundle's, else both), less those that cannot run the
    bundle's phase: one of several tasks runs on Codabench only (CodaLab runs one program per
    phase: its bundles are one competition per task)."""
    choice = args.platform or ((phase or {}).get("platform", "both") if args.bundle else "both")
    models = list(registry.MODELS.values()) if choice == "both" else [registry.MODELS[choice]]
    tasks = (phase or {}).get("tasks") or []
    if args.bundle and len(tasks) > 1:
        if choice != "both" and not models[0].several_tasks:
            raise UsageError("{} runs {} tasks in one phase, which only Codabench does: "
                             "dry-run a CodaLab bundle of each task instead".format(
                                 args.bundle, len(tasks)))
        models = [m for m in models if m.several_tasks]
    return models


def run_one(model: Platform, args: argparse.Namespace, run: Setup, say: Say) -> Outcome:
    """The dry run on one platform: its time limit, then its worker's run (or runs: a phase of
    several tasks)."""
    limit, note = model.time_limit(args.time_limit, run.phase)
    say("\n=== {} ===".format(model.title))
    if note:
        say(note)
    tasks = (run.phase or {}).get("tasks") or []
    if args.bundle and len(tasks) > 1:
        if args.reference or args.program:
            raise UsageError("this phase runs {} tasks, each with the bundle's own "
                             "program and reference: drop the reference and "
                             "--program".format(len(tasks)))
        return run_tasks(model, args.submission, tasks, run.phase or {}, limit, args.keep,
                         not args.quiet, say)
    return run_platform(model, args.submission, run.reference, run.program, run.phase, limit,
                        args.keep, not args.quiet, say, given=run.given)


def verdict(outcomes: List[Outcome], reference: Optional[str]) -> int:
    """The RESULT line, and the exit status."""
    print()
    if any(o.unusable_reference for o in outcomes):
        print("RESULT: the reference data you gave, {}, cannot be scored against: the "
              "scoring program found it broken (above). The submission was not judged: "
              "give labels in the task's layout (the starting kit's README says which) and "
              "run again.".format(reference))
        return EXIT_USAGE
    if not all(o.finished for o in outcomes):
        print("RESULT: the submission would FAIL on " + ", ".join(
            registry.MODELS[o.platform].title for o in outcomes if not o.finished) + ".")
        return EXIT_FAILED
    if not all(o.complete for o in outcomes):
        told = [o.result for o in outcomes if o.result]
        print("RESULT: " + (" ".join(told) + "." if told else
                            "scored, but the leaderboard row would be incomplete (see "
                            "above)."))
        return EXIT_INCOMPLETE
    print("RESULT: the submission would be scored on " + " and ".join(
        registry.MODELS[o.platform].title for o in outcomes) + ".")
    return EXIT_OK


def say_line(line: str) -> None:
    print(line)
    sys.stdout.flush()


def main(argv: Optional[List[str]] = None, outcomes: Optional[List[Outcome]] = None) -> int:
    """The command; `outcomes`, if given, receives each platform's Outcome (for bundle.sh)."""
    args = build_parser().parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="dry-run-")
    # A reader that goes away (`| head`) silences the output; the runs go on to their result.
    unguarded = sys.stdout
    sys.stdout = console.guard(sys.stdout)
    try:
        run = setup(args, workdir)
        phase = run.phase
        say_line("Dry run of {} ({})".format(args.submission, "phase settings from {}{}".format(
            run.source, ", phase " + phase["phase"] if phase.get("phase") else "")
            if phase else run.source))
        outcomes = [] if outcomes is None else outcomes
        for model in run.models:
            outcomes.append(run_one(model, args, run, say_line))
        return verdict(outcomes, args.reference)
    except UsageError as exc:
        sys.stderr.write("dry_run.py: error: {}\n".format(exc))
        return EXIT_USAGE
    except MissingPackage as exc:
        sys.stderr.write("{}\n".format(exc))
        return EXIT_USAGE
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        console.finish(sys.stdout)  # type: ignore
        sys.stdout = unguarded


if __name__ == "__main__":
    sys.exit(main())
