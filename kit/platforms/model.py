"""What every platform model answers (Platform), with what both platforms do alike as the
default: codalab.py and codabench.py each say what theirs does differently.

Two sides: its competition bundle's definition (the phases, which one takes a submission now,
the leaderboard, the check of what its unpacker refuses), read from a parsed competition.yaml;
and its worker (unpacking, the run folder, the command, the time limit, the scores and the
leaderboard row), emulated in a run folder on this machine.
"""
import datetime
import os
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from . import worker
from .dates import Span
from .definition import Bundle, Found, Report
from .worker import RunFolder

Say = Callable[[str], None]


class Platform:
    name = ""                   # "codalab", "codabench"
    title = ""                  # as the dry run names it
    version: Any = None              # the competition.yaml's `version:` it reads
    missing_cell = ""           # what the leaderboard shows in a column without a score
    default_time_limit = 0      # seconds, when a phase gives none
    metadata_files: Tuple[str, ...] = ("metadata",)   # the command file(s), in the order read
    added_to_res: Tuple[str, ...] = ()   # files the platform itself adds to input/res
    several_tasks = False       # a phase may run several tasks (one child submission each)
    # Its definition's reading (codalab_definition.py, codabench_definition.py): the model
    # answers the definition's questions through it.
    definition: Any = None

    # --- its competition bundle's definition ------------------------------------------------

    def phases(self, doc: Dict[str, Any]) -> List[Dict[str, Any]]:
        """The definition's phases, in order."""
        return self.definition.phases(doc)

    def phase_label(self, phase: Dict[str, Any]) -> str:
        return self.definition.label(phase)

    def open_phases(self, doc: Dict[str, Any], now: datetime.datetime) -> List[Dict[str, Any]]:
        """The phases that take a submission at `now`, by the platform's own rule."""
        return self.definition.open_phases(doc, now)

    def spans(self, doc: Dict[str, Any]) -> List[Span]:
        """Every phase's span as participants see it (phases() order)."""
        return self.definition.spans(doc)

    def opens_later(self, doc: Dict[str, Any], now: datetime.datetime
                    ) -> Optional[Tuple[Dict[str, Any], datetime.datetime]]:
        """(phase, start) of the first phase that takes submissions after `now`, if any."""
        later = sorted(((span.start, i) for i, span in enumerate(self.spans(doc))
                        if span.start is not None and span.start > now))
        ordered = self.phases(doc)
        for start, i in later:
            if any(p is ordered[i] for p in self.open_phases(doc, start)):
                return ordered[i], start
        return None

    def submission_phase(self, doc: Dict[str, Any],
                         now: datetime.datetime) -> Dict[str, Any]:
        """The phase a submission made at `now` goes to: the first open one, else the next to
        open (a bundle uploaded before its challenge starts), else the last one."""
        open_now = self.open_phases(doc, now)
        if open_now:
            return open_now[0]
        later = self.opens_later(doc, now)
        if later is not None:
            return later[0]
        ordered = self.phases(doc)
        if not ordered:
            raise ValueError("the definition has no phase")
        return ordered[-1]

    def phase_info(self, doc: Dict[str, Any], now: datetime.datetime) -> Dict[str, Any]:
        """What a submission made at `now` meets: the phase's name, time limit, leaderboard
        columns and rule, the ranking column's title, the data it is scored with (for a phase
        of several tasks, each task's, in "tasks")."""
        raise NotImplementedError

    def scoring_runs(self, doc: Dict[str, Any]) -> List[List[Tuple[Any, Any]]]:
        """Per phase, the (scoring program, reference) pairs a submission runs through."""
        return self.definition.scoring_runs(doc)

    def pages(self, doc: Dict[str, Any]) -> List[Tuple[str, Any]]:
        """(where, path) of every page the definition names."""
        return self.definition.pages(doc)

    def check_definition(self, doc: Dict[str, Any], bundle: Bundle, report: Report) -> Found:
        """Every rule of the platform's unpacker on the definition, into report."""
        return self.definition.check(doc, bundle, report)

    # --- its worker -----------------------------------------------------------------------

    def time_limit(self, given: Optional[float],
                   phase: Optional[Dict[str, Any]]) -> Tuple[float, str]:
        """(seconds, a note when the platform changes it): the limit given, else the phase's,
        else the platform's default."""
        return float(given or (phase or {}).get("execution_time_limit") or
                     self.default_time_limit), ""

    def unpack(self, source: str, dest: str, what: str) -> List[str]:
        """A zip's content (or a folder's) in dest, as the worker puts it there; ZipProblem if
        it cannot be unpacked. Returns notes on what happened."""
        notes = worker.unpack_source(source, dest, what)
        if not os.path.isdir(source):
            notes += self.after_unpack(dest, what)
        return notes

    def after_unpack(self, dest: str, what: str) -> List[str]:
        """What the worker does to an unpacked zip (notes)."""
        return []

    def prepare_submission(self, folder: RunFolder) -> List[str]:
        """What the worker does with the unpacked submission (and input/) before it runs the
        program: notes, or SubmissionRefused where its run fails."""
        raise NotImplementedError

    def split_command(self, line: str) -> List[str]:
        raise NotImplementedError

    def working_directory(self, folder: RunFolder) -> Tuple[str, str]:
        """(the folder the command runs in, how the platform's worker names it)."""
        raise NotImplementedError

    def watched_page(self, phase: Optional[Dict[str, Any]]) -> str:
        """The page the worker watches in output/ while the program runs ("" none)."""
        return ""

    def timeout_text(self, limit: float) -> str:
        """What the participant reads when the limit kills the program."""
        raise NotImplementedError

    def output_refusal(self, output: str) -> str:
        """Why the worker fails a run whose program exited 0 ("" it does not)."""
        return ""

    def read_scores(self, output: str) -> Tuple[Optional[Dict[str, float]], str]:
        """(scores, where they were read from), or (None, why the platform fails the run)."""
        raise NotImplementedError

    def page_fate(self, output: str, exited: float, phase: Optional[Dict[str, Any]]) -> str:
        """Whether the site shows the detailed results page ("" nothing to say)."""
        return ""

    def shown_precision(self, precision: int) -> int:
        """The decimals the leaderboard shows for a column's precision."""
        return precision

    def run_program(self, command: str, folder: RunFolder, phase: Optional[Dict[str, Any]],
                    limit: float, echo: bool, say: Say) -> "Run":
        """The program's command run as the worker runs it: placeholders substituted, split,
        in the worker's working directory, under the time limit (the killed program's error
        text is the platform's)."""
        argv = self.split_command(worker.substituted(command, folder.placeholders()))
        for note in worker.local_interpreter(argv):
            say(note)
        say("running: " + " ".join(argv))
        cwd, named = self.working_directory(folder)
        say("working directory: {} ({})".format(named, cwd))
        page = self.watched_page(phase)
        if page:
            # The worker creates an empty page before the run and watches it.
            open(os.path.join(folder.output, page), "a").close()
        started = time.time()
        ran = worker.run_command(argv, cwd, limit, echo)
        say("exit status {} after {:.1f} s (time limit {:.0f} s)".format(
            "- (killed)" if ran.timed_out else ran.code, ran.seconds, limit))
        err = ran.err + (self.timeout_text(limit) if ran.timed_out else "")
        return Run(ran.code, ran.timed_out, err, started + ran.seconds)

    def format_row(self, columns: List[Dict[str, Any]], scores: Dict[str, float],
                   width: int = 96) -> List[str]:
        """The leaderboard row as the platform formats it, wrapped to the terminal's width."""
        lines: List[str] = []
        head: List[str] = []
        vals: List[str] = []
        used = 0
        for c in columns:
            value = scores.get(c["key"])
            shown = self.missing_cell if value is None else "{:.{}f}".format(
                value, self.shown_precision(c["precision"]))
            w = max(len(c["label"]), len(shown))
            if head and used + w + 2 > width:
                lines += ["  " + "  ".join(head), "  " + "  ".join(vals), ""]
                head, vals, used = [], [], 0
            head.append(c["label"].rjust(w))
            vals.append(shown.rjust(w))
            used += w + 2
        return lines + ["  " + "  ".join(head), "  " + "  ".join(vals)]


class Run(NamedTuple):
    """The program's run: its exit code (None: killed), whether the limit killed it, its error
    text as the participant reads it, and when it exited (time.time())."""
    code: Optional[int]
    timed_out: bool
    err: str
    exited: float
