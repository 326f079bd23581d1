#!/usr/bin/env python3
"""Dry run: score a submission locally the way the CodaLab (v1) or Codabench worker would.

    python3 dry_run.py submission.zip path/to/validation_labels
    python3 dry_run.py submission.zip --bundle dist/agrivision2021-supervised-codalab.zip

It unpacks the submission as the platform does (CodaLab v1 keeps a single top-level folder
unless it holds a file named `metadata`; Codabench keeps it and adds `res/metadata`), runs the
scoring program's `metadata` command with $program, $input and $output substituted, split on
spaces and without a shell, under the phase's time limit, then reads scores.txt / scores.json the
way that platform reads them and prints the leaderboard row it would show, or the error text the
participant would see (the scorer's stderr). Differences from the worker, on purpose: the command's
`python3` is replaced by the Python running this script (the worker uses its Docker image's), and
a reference given as a folder is linked, not copied.

Needs Python 3.7+ only (the scoring program itself needs numpy and Pillow). PyYAML is used when
installed (to read Codabench's YAML form of scores.txt exactly, and competition yaml files).
Exit status: 0 the submission would be scored and every leaderboard column filled; 1 it would
fail; 2 bad command line; 3 it would be scored but some column left empty or a score dropped.
"""
import argparse
import json
import math
import os
import re
import shlex
import shutil
import signal
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
PHASE_FILE = "phase.json"      # written into the starting kit by tools/bundle.py
INTERPRETERS = ("python3", "python")


class UsageError(Exception):
    pass


class SubmissionRefused(Exception):
    """The platform refuses the submission before the scoring program runs."""


# --- phase information: time limit and leaderboard columns ---------------------------------

def phase_info_from_yaml(doc: Dict[str, Any]) -> Dict[str, Any]:
    """Time limit, leaderboard columns and data files of the first phase of a v1.5 or v2 yaml."""
    if doc.get("version") in (2, "2"):
        phase = sorted(doc["phases"], key=lambda p: p.get("index", 0))[0]
        task_index = (phase.get("tasks") or [0])[0]
        task = next((t for t in doc.get("tasks", []) if t.get("index") == task_index), {})
        board = sorted(doc["leaderboards"], key=lambda b: b.get("index", 0))[0]
        columns = [{"key": c["key"], "label": c.get("title", c["key"]),
                    "precision": int(c.get("precision", 2)), "sort": c.get("sorting", "desc")}
                   for c in sorted(board["columns"], key=lambda c: c.get("index", 0))]
        return {"platform": "codabench", "title": doc.get("title", ""),
                "execution_time_limit": int(phase.get("execution_time_limit") or
                                            DEFAULT_TIME_LIMIT["codabench"]),
                "columns": columns, "scoring_program": task.get("scoring_program"),
                "reference_data": task.get("reference_data")}
    phase = sorted(doc["phases"].values(), key=lambda p: p["phasenumber"])[0]
    order = list(doc["leaderboard"]["columns"])
    cols = sorted(doc["leaderboard"]["columns"].items(),
                  key=lambda kv: (kv[1].get("rank", 1), order.index(kv[0])))
    columns = [{"key": k, "label": c.get("label", k), "precision": int(c.get("numeric_format", 2)),
                "sort": c.get("sort", "desc")} for k, c in cols]
    return {"platform": "codalab", "title": doc.get("title", ""),
            "execution_time_limit": int(phase.get("execution_time_limit") or
                                        DEFAULT_TIME_LIMIT["codalab"]),
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
    """phase.json beside this script (starting kit), else the repository's competition.yaml."""
    path = os.path.join(HERE, PHASE_FILE)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f), path
    repo_yaml = os.path.join(os.path.dirname(HERE), "competition.yaml")
    if os.path.isfile(repo_yaml) and yaml is not None:
        with open(repo_yaml, encoding="utf-8") as f:
            return phase_info_from_yaml(_parse_yaml_doc(f.read(), repo_yaml)), repo_yaml
    return None, "no phase.json or competition.yaml found"


def find_program() -> str:
    """The scoring program folder: inside the starting kit, or beside tools/ in the repository."""
    for candidate in (os.path.join(HERE, "scoring_program"),
                      os.path.join(os.path.dirname(HERE), "scoring_program")):
        if os.path.isfile(os.path.join(candidate, "metadata")):
            return candidate
    raise UsageError("no scoring program found next to this script; give --program")


# --- unpacking as the platforms do ---------------------------------------------------------

def safe_extract(zip_path: str, dest: str) -> None:
    dest_real = os.path.realpath(dest)
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            target = os.path.realpath(os.path.join(dest, info.filename))
            if not (target == dest_real or target.startswith(dest_real + os.sep)):
                raise UsageError("{}: entry {!r} points outside the archive".format(
                    zip_path, info.filename))
        zf.extractall(dest)


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


def unpack(source: str, dest: str, platform: str, what: str) -> List[str]:
    """Put a zip's content (or a folder's) into dest as the platform's worker would.
    Returns notes on what happened."""
    notes = []
    if os.path.isdir(source):
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    elif zipfile.is_zipfile(source):
        os.makedirs(dest)
        safe_extract(source, dest)
        if platform == "codalab":
            moved = v1_flatten(dest)
            if moved:
                notes.append("CodaLab moved the folder {}/ of the {} up: it holds a "
                             "`metadata` file".format(moved, what))
    else:
        raise UsageError("{} is neither a folder nor a zip file".format(source))
    return notes


def stage_reference(source: str, dest: str, platform: str) -> None:
    if os.path.isdir(source):
        try:
            os.symlink(os.path.abspath(source), dest, target_is_directory=True)
            return
        except (OSError, NotImplementedError):  # e.g. Windows without the privilege
            pass
    unpack(source, dest, platform, "reference data")


def describe_res(res: str) -> str:
    entries = sorted(os.listdir(res))
    files = [e for e in entries if os.path.isfile(os.path.join(res, e))]
    folders = [e + "/" for e in entries if os.path.isdir(os.path.join(res, e))]
    shown = ", ".join((folders + files)[:3]) + (", ..." if len(entries) > 3 else "")
    return "{} files and {} folders at the top: {}".format(len(files), len(folders), shown or "-")


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
    for t in threads:
        t.join(5)
    return proc.returncode, timed_out, time.monotonic() - started, "".join(out), "".join(err)


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


def _failed(platform: str, say, *why: str) -> Outcome:
    say("Status: Failed")
    for line in why:
        say("  " + line)
    return Outcome(platform, False, False, None)


def stage(platform: str, submission: str, reference: str, program: str, paths: Dict[str, str],
          say) -> None:
    """Lay out program/, input/ref, input/res as the platform's worker does."""
    for d in ("input", "output", "tmp", "shared"):
        os.makedirs(paths[d])
    for note in unpack(program, paths["program"], platform, "scoring program"):
        say(note)
    stage_reference(reference, os.path.join(paths["input"], "ref"), platform)
    res = paths["predictions"]
    for note in unpack(submission, res, platform, "submission"):
        say(note)
    if platform == "codabench":
        # The prediction step of a results submission copies it to its output, adds this
        # file, and the output becomes the scoring step's input/res. It refuses to overwrite one.
        if os.path.exists(os.path.join(res, "metadata")):
            raise SubmissionRefused("Error, the output directory already contains a metadata "
                                    "file (a file named `metadata` at the root of the "
                                    "submission: remove it)")
        with open(os.path.join(res, "metadata"), "w") as f:
            f.write("elapsedTime: null\nexitCode: null\ningestionElapsedTime: null\n"
                    "ingestionExitCode: null\n")
    else:
        with open(os.path.join(paths["input"], "metadata"), "w") as f:
            f.write("competition-phase: 1\nsubmitted-at: {}\nsubmitted-by: dry-run\n".format(
                time.strftime("%Y-%m-%d %H:%M:%S")))
    say("input/res: " + describe_res(res))


def run_platform(platform: str, submission: str, reference: str, program: str,
                 phase: Optional[Dict[str, Any]], limit: float, keep: Optional[str],
                 echo: bool, say) -> Outcome:
    root = tempfile.mkdtemp(prefix="dry-run-{}-".format(platform))
    try:
        run = os.path.join(root, "run")
        paths = {"program": os.path.join(run, "program"), "input": os.path.join(run, "input"),
                 "output": os.path.join(run, "output"), "tmp": os.path.join(run, "temp"),
                 "shared": os.path.join(root, "shared")}
        paths["predictions"] = os.path.join(paths["input"], "res")
        try:
            stage(platform, submission, reference, program, paths, say)
        except SubmissionRefused as exc:
            return _failed(platform, say, str(exc))

        command, meta_name = read_metadata(paths["program"], platform)
        if command is None:
            return _failed(platform, say, "the scoring program has no {}".format(
                "command in " + meta_name if meta_name else "metadata file at its root"))
        argv, notes = build_argv(command, paths, platform)
        for note in notes:
            say(note)
        say("running: " + " ".join(argv))
        cwd = run if platform == "codalab" else paths["program"]
        code, timed_out, seconds, _out, err = run_command(argv, cwd, limit, echo)
        say("exit status {} after {:.1f} s (time limit {:.0f} s)".format(
            "- (killed)" if timed_out else code, seconds, limit))
        if timed_out:
            err += ("Execution time limit exceeded!\n" if platform == "codalab" else
                    "Execution Time Limit exceeded. Limit was {:.0f} seconds\n".format(limit))
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
        if not (phase and phase.get("columns")):
            say("Scores (no leaderboard columns known):")
            for key, value in scores.items():
                say("  {}: {}".format(key, value))
            return Outcome(platform, True, True, scores)
        keys = [c["key"] for c in phase["columns"]]
        say("Leaderboard row:")
        for line in format_row(phase["columns"], scores, platform):
            say(line)
        empty = [k for k in keys if k not in scores]
        dropped = sorted(k for k in scores if k not in keys)
        if empty:
            say("Columns left empty (no such key in the scores): " + ", ".join(empty))
        if dropped:
            say("Scores dropped (no such leaderboard column): " + ", ".join(dropped))
        return Outcome(platform, True, not (empty or dropped), scores)
    finally:
        if keep:
            target = os.path.join(keep, platform)
            if os.path.exists(target):
                shutil.rmtree(target)
            shutil.copytree(root, target, symlinks=True)
        shutil.rmtree(root, ignore_errors=True)


# --- command line ---------------------------------------------------------------------------

def _from_bundle(bundle: str, workdir: str) -> Tuple[Dict[str, Any], str, str]:
    """Phase info, scoring program zip and reference zip extracted from a competition bundle."""
    with zipfile.ZipFile(bundle) as zf:
        text = zf.read("competition.yaml").decode("utf-8")
        phase = phase_info_from_yaml(_parse_yaml_doc(text, bundle + ":competition.yaml"))
        paths = []
        for key in ("scoring_program", "reference_data"):
            name = phase.get(key)
            if not name or name not in zf.namelist():
                raise UsageError("{}: {} {!r} is not in the bundle".format(bundle, key, name))
            target = os.path.join(workdir, key + ".zip")
            with zf.open(name) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            paths.append(target)
    return phase, paths[0], paths[1]


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
                   help="reference labels: a folder or a zip in the raw dataset layout "
                        "(default with --bundle: the bundle's reference_data.zip)")
    p.add_argument("--bundle", metavar="ZIP",
                   help="a competition bundle: use its scoring program, reference data, time "
                        "limit and leaderboard (needs PyYAML)")
    p.add_argument("--platform", choices=PLATFORMS + ("both",),
                   help="whose worker to emulate (default: the bundle's, else both)")
    p.add_argument("--program", metavar="DIR_OR_ZIP",
                   help="scoring program (default: the one beside this script)")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="execution time limit (default: the phase's)")
    p.add_argument("--keep", metavar="DIR", help="keep each platform's run folder under DIR")
    p.add_argument("--quiet", action="store_true", help="do not echo the scoring program's output")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line)
        sys.stdout.flush()

    workdir = tempfile.mkdtemp(prefix="dry-run-")
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
        choice = args.platform or (phase["platform"] if args.bundle else "both")
        platforms = PLATFORMS if choice == "both" else (choice,)
        say("Dry run of {} ({})".format(args.submission, "phase settings from " + source
                                        if phase else source))
        outcomes = []
        for platform in platforms:
            limit = args.time_limit or (phase or {}).get("execution_time_limit") or \
                DEFAULT_TIME_LIMIT[platform]
            say("\n=== {} ===".format(TITLES[platform]))
            outcomes.append(run_platform(platform, args.submission, reference, program, phase,
                                         float(limit), args.keep, not args.quiet, say))
        print()
        if not all(o.finished for o in outcomes):
            print("RESULT: the submission would FAIL on " + ", ".join(
                TITLES[o.platform] for o in outcomes if not o.finished) + ".")
            return EXIT_FAILED
        if not all(o.complete for o in outcomes):
            print("RESULT: scored, but the leaderboard row would be incomplete (see above).")
            return EXIT_INCOMPLETE
        print("RESULT: the submission would be scored on " + " and ".join(
            TITLES[o.platform] for o in outcomes) + ".")
        return EXIT_OK
    except UsageError as exc:
        sys.stderr.write("dry_run.py: error: {}\n".format(exc))
        return EXIT_USAGE
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
