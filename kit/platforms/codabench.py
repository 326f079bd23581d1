"""Codabench as a model: its worker (codalab/codabench at c7dbc756, compute_worker) and its
site (src/apps), for the v2 bundles it takes. Its definition: codabench_definition.py.

The worker unpacks every bundle with Python's zipfile and keeps it as it is (a zip inside stays
packed); it takes a submission with `metadata.yaml` or `metadata` at its root for code; it
adds res/metadata; it hands the command to Docker (split like a shell word list, no shell),
run in the program's folder; it reads scores.json, else scores.txt as YAML; its default queue
runs nothing longer than 600 s; a phase may run several tasks, one child submission each.
"""
import json
import math
import os
import shlex
from typing import Any, Dict, List, Optional, Tuple

from . import codabench_definition as definition
from . import yaml_text
from .model import Platform
from .worker import RunFolder, SubmissionRefused


class Codabench(Platform):
    name = "codabench"
    title = "Codabench"
    version = definition.VERSION
    missing_cell = "n/a"
    default_time_limit = 600
    metadata_files = ("metadata.yaml", "metadata")   # metadata.yaml first
    added_to_res = ("metadata",)    # prepare_submission: the worker's record of the prediction step
    several_tasks = True
    definition = definition   # its reading of a competition.yaml

    # --- its definition (codabench_definition.py) -------------------------------------------

    def phase_info(self, doc: Dict[str, Any], now) -> Dict[str, Any]:
        phase = self.submission_phase(doc, now)
        tasks = definition.phase_tasks(doc, phase)
        board = definition.first_leaderboard(doc)
        return {"platform": self.name, "title": doc.get("title", ""),
                "ranking": definition.ranking_title(board),
                "phase": phase.get("name", ""),
                "leaderboard_rule": definition.leaderboard_rule(doc),
                # A queue of the organizer's own runs the phase's time limit uncapped.
                "queue": bool(doc.get("queue")),
                # Asked at every upload (competitions/unpackers/v2.py, fact_sheet), in the
                # order its database keeps the keys (jsonb_key_order).
                "fact_sheet": [(str(q.get("title", k)), q.get("is_required") == "true")
                               for k, q in definition.fact_sheet_in_shown_order(
                                   doc.get("fact_sheet"))
                               if isinstance(q, dict)],
                "execution_time_limit": int(phase.get("execution_time_limit") or
                                            self.default_time_limit),
                "enable_detailed_results": bool(doc.get("enable_detailed_results", False)),
                "columns": definition.columns(board),
                "scoring_program": tasks[0].get("scoring_program"),
                "reference_data": tasks[0].get("reference_data"),
                "tasks": [{"name": t.get("name", "task {}".format(t.get("index"))),
                           "scoring_program": t.get("scoring_program"),
                           "reference_data": t.get("reference_data")} for t in tasks]}

    # --- its worker -------------------------------------------------------------------------

    def time_limit(self, given: Optional[float],
                   phase: Optional[Dict[str, Any]]) -> Tuple[float, str]:
        """The default queue caps the phase's limit (not a limit given on the command line,
        nor one on the organizer's own queue)."""
        limit, note = Platform.time_limit(self, given, phase)
        if not given and limit > definition.QUEUE_CAP and not (phase or {}).get("queue"):
            note = ("time limit {:.0f} s capped at {} s: Codabench's default queue runs "
                    "nothing longer".format(limit, definition.QUEUE_CAP))
            limit = float(definition.QUEUE_CAP)
        return limit, note

    def after_unpack(self, dest: str, what: str) -> List[str]:
        inner = sorted(n for n in os.listdir(dest) if n.lower().endswith(".zip"))
        if not inner:
            return []
        return ["Codabench leaves {} inside the {} packed (it does not unpack a zip inside a "
                "zip)".format(", ".join(inner), what)]

    def prepare_submission(self, folder: RunFolder) -> List[str]:
        """A results submission goes through a prediction step: it looks for metadata.yaml,
        then metadata, at the submission's root, and if it finds one takes the submission for
        code: with a `command` it runs that instead of scoring the files; without one it copies
        nothing on, and the scoring step fails. Then res/metadata is added."""
        refuse_code_submission(folder.predictions)
        with open(os.path.join(folder.predictions, "metadata"), "w") as f:
            f.write("elapsedTime: null\nexitCode: null\ningestionElapsedTime: null\n"
                    "ingestionExitCode: null\n")
        return []

    def split_command(self, line: str) -> List[str]:
        # Docker splits it like a shell word list, but runs no shell.
        return shlex.split(line)

    def working_directory(self, folder: RunFolder) -> Tuple[str, str]:
        return folder.program, "the program folder (/app/program on Codabench)"

    def timeout_text(self, limit: float) -> str:
        return "Execution Time Limit exceeded. Limit was {:.0f} seconds\n".format(limit)

    def output_refusal(self, output: str) -> str:
        if os.path.exists(os.path.join(output, "metadata")):
            return ("Error, the output directory already contains a metadata file (Codabench "
                    "writes it itself)")
        return ""

    def read_scores(self, output: str) -> Tuple[Optional[Dict[str, float]], str]:
        """scores.json if present, else scores.txt parsed as YAML."""
        raw, source = _raw_scores(output)
        if raw is None:
            return None, source
        if not isinstance(raw, dict):
            return None, "{} is not a mapping of key -> number".format(source)
        scores = {}
        for key, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not math.isfinite(value):
                return None, "{}: the value of {} is {!r}, not a finite number".format(
                    source, key, value)
            scores[str(key)] = float(value)
        return scores, source


CODABENCH = Codabench()


def _raw_scores(output: str) -> Tuple[Any, str]:
    """(the scores file's content, its name), or (None, why there is none readable)."""
    json_path = os.path.join(output, "scores.json")
    txt_path = os.path.join(output, "scores.txt")
    if os.path.isfile(json_path):
        try:
            with open(json_path, encoding="utf-8") as f:
                return json.load(f), "scores.json"
        except ValueError as exc:
            return None, "Could not decode scores json properly, it contains an error. {}".format(
                exc)
    if not os.path.isfile(txt_path):
        return None, "Could not find scores file, did the scoring program output it?"
    with open(txt_path, encoding="utf-8") as f:
        text = f.read()
    try:
        return (yaml_text.yaml.safe_load(text) if yaml_text.yaml is not None else
                yaml_text.simple_yaml(text)), "scores.txt (as YAML)"
    except Exception as exc:
        return None, "scores.txt is not valid YAML ({})".format(str(exc).splitlines()[0])


def refuse_code_submission(res: str) -> None:
    """SubmissionRefused if the submission has a metadata.yaml or metadata at its root."""
    for name in ("metadata.yaml", "metadata"):
        path = os.path.join(res, name)
        if not os.path.isfile(path):
            continue
        doc = yaml_text.read_mapping(path) or {}
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
