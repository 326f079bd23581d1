"""The zips a bundle carries: its scoring program (the `metadata` command as both workers run
it), its reference (the task and config.yaml it names) and its starting kit; and the score keys
the bundled program writes, asked from that program itself, never from a copy.
"""
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from typing import Any, Dict, List, Optional, Tuple

import yaml

from platforms.definition import Report
from platforms.worker import INTERPRETERS, OTHER_PLACEHOLDERS, PLACEHOLDERS

SHELL_CHARS = set("|&;<>()`\"'\\*?[]{}~!#")
METADATA_KEYS = ("command", "description")


def top_folder(names: List[str]) -> Optional[str]:
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


def load_yaml(data: bytes, where: str, report: Report) -> Any:
    try:
        return yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        report.error(where, "not valid UTF-8 YAML ({})".format(str(exc).splitlines()[0]))
        return None


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
            top = top_folder(names)
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
        meta = load_yaml(zf.read(meta_names[-1]), where + "/" + meta_names[-1], report)
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


_KEYS_CACHE: Dict[Tuple[str, str, str], Tuple[Optional[List[str]], str]] = {}

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
        top = top_folder(names)
        config = next((n for n in ("config.yaml", "{}/config.yaml".format(top)) if n in names), None)
        if not config:
            return "", ""
        raw = zf.read(config)
        doc = load_yaml(raw, where + "/" + config, report)
    return (str(doc.get("task", "")) if isinstance(doc, dict) else "",
            raw.decode("utf-8", "replace"))


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


