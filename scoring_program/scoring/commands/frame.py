"""One frame for every command (score.py, pack.py, compare.py, generalist.py, verify.py and the
starting kits' tools): what happens around a command's own work, decided once.

- Both streams are guarded (console.py: a reader who goes away, `| head -1`, ends the printing,
  never the run) and tolerant of characters the terminal cannot encode (backslash escapes).
- A batch command runs with the cyclic garbage collector off (see without_cycle_collector).
- A refusal (problems.Refusal: a broken submission, reference, configuration...) is its own
  message and exit status, with the temporary folders of unpacked zips named as the user gave
  them.
- What is left: a usage error is one line, exit 2; Ctrl-C is exit 130; a package missing when a
  task imports it is deps.py's line with the install command, exit 2; anything else is a bug of
  ours, exit 4, with the text of internal_error_message (no values: they could come from hidden
  labels) and the traceback only with SCORING_DEBUG=1.

A command module holds only what is its own: its parser, its body(args, io) -> exit status, and
what its internal error adds (Command). Standard library and the light shared modules only: the
generalist ranking and the VQA kit run without numpy.
"""
import argparse
import gc
import os
import sys
import traceback
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, TextIO  # noqa: F401

from .. import console, deps
from ..problems import Refusal, UsageError

# The exit statuses of every command. 1 and 3 are the refusals' own (problems.Refusal.exit_code):
# 1 the participant's input has problems, 3 the organizer's input is broken.
EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_INPUTS, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
assert deps.EXIT_MISSING == EXIT_USAGE

DEBUG_VARIABLE = "SCORING_DEBUG"


class Io:
    """A command's streams, and what its messages must show instead of a temporary folder."""

    def __init__(self, stdout: console.Guarded, stderr: console.Guarded) -> None:
        self.stdout, self.stderr = stdout, stderr
        self.shown_paths: Dict[str, str] = {}  # temporary folder -> the path given

    def show_as(self, temporary: str, given: str) -> None:
        if temporary != given:
            self.shown_paths[temporary] = given

    def restore_paths(self, text: str) -> str:
        for tmp, given in self.shown_paths.items():  # temporary folders change from run to run
            text = text.replace(tmp, given)
        return text

    def sayer(self, quiet: bool) -> Callable[[str], None]:
        """say(line): one line on stdout, flushed (the worker's live log moves); nothing if
        quiet."""
        if quiet:
            return lambda line: None

        def say(line: str) -> None:
            self.stdout.write(line + "\n")
            self.stdout.flush()
        return say


class Command(NamedTuple):
    """What a command brings to the frame."""

    prog: str                                              # "score.py": named in messages
    build_parser: Callable[[], argparse.ArgumentParser]
    body: Callable[[argparse.Namespace, Io], int]          # the command's own work
    # What an internal error is not a problem with ("the submission", "the inputs"...).
    not_blamed: str = "the inputs"
    # Checks of the parsed arguments that argparse cannot make: call parser.error (exit 2).
    check_args: Optional[Callable[[argparse.ArgumentParser, argparse.Namespace], None]] = None
    # After an internal error, before its message: clean up (score.py discards partial scores)
    # and say where the traceback went; returns the lines added to the message.
    after_internal_error: Optional[Callable[[Optional[argparse.Namespace], BaseException],
                                            List[str]]] = None
    batch: bool = True     # the cyclic collector is off while the body runs


def tolerant_streams(*streams: TextIO) -> None:
    """A name we failed to escape must not crash the run: unencodable characters are written
    as backslash escapes."""
    for stream in streams:
        if hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


@contextmanager
def without_cycle_collector() -> Iterator[None]:
    """A command is a short batch job whose objects hold no reference cycles worth looking for,
    yet it can build millions of containers at once (json.loads of a 100,000-question file makes
    over a million dicts), and every few thousand new containers the collector walks every live
    object: half of that parsing time. Memory is still freed by reference counting; only cycles
    wait for the end of the process."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run(command: Command, argv: Optional[List[str]] = None, stdout: Optional[TextIO] = None,
        stderr: Optional[TextIO] = None) -> int:
    """The command's main: parse argv, run the body inside the frame, return the exit status."""
    out: Any = console.guard(stdout or sys.stdout)
    err: Any = console.guard(stderr or sys.stderr)
    tolerant_streams(out.stream, err.stream)
    io = Io(out, err)
    args: Optional[argparse.Namespace] = None
    try:
        try:
            parser = command.build_parser()
            args = parser.parse_args(argv)
            if command.check_args is not None:
                command.check_args(parser, args)
            if command.batch:
                with without_cycle_collector():
                    return command.body(args, io)
            return command.body(args, io)
        except Refusal as exc:
            err.write(io.restore_paths(exc.message()))
            return exc.exit_code
        except (KeyboardInterrupt, Exception) as exc:
            return _last_resort(command, args, exc, err)
    finally:
        console.finish(out)
        console.finish(err)


def _last_resort(command: Command, args: Optional[argparse.Namespace], exc: BaseException,
                 stderr: Any) -> int:
    """Write what exc means and return the exit status (inside the except clause: the traceback
    is the current exception's)."""
    if isinstance(exc, UsageError):
        stderr.write("ERROR: {}\n".format(exc))
        return EXIT_USAGE
    if isinstance(exc, KeyboardInterrupt):
        stderr.write("Interrupted.\n")
        return EXIT_INTERRUPTED
    missing = deps.missing_message(exc)
    if missing:
        stderr.write(missing + "\n")
        return deps.EXIT_MISSING
    extra: List[str] = []
    if command.after_internal_error is not None:
        try:
            extra = command.after_internal_error(args, exc)
        except Exception:            # a second failure must not hide the first
            extra = []
    stderr.write(internal_error_message(command.prog, exc, command.not_blamed, extra))
    if os.environ.get(DEBUG_VARIABLE):
        stderr.write(traceback_text(exc))
    return EXIT_INTERNAL


def traceback_text(exc: BaseException) -> str:
    """The traceback of exc; for a failure in a worker process, the worker's own."""
    remote = getattr(exc, "remote_traceback", None)
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text + ("\nIn the worker process:\n" + remote if remote else "")


def internal_error_message(prog: str, exc: BaseException, not_blamed: str,
                           extra: List[str]) -> str:
    """Where the bug is (our code's file, line and function, and the exception's type: no
    values, which could come from hidden labels), then the command's own lines."""
    frames = getattr(exc, "remote_frames", None) or [
        (f.filename, f.lineno, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    kind = getattr(exc, "remote_type", None) or type(exc).__name__
    ours = [f for f in frames if os.sep + "scoring" + os.sep in f[0]] or frames
    where = ""
    if ours:
        filename, line, function = ours[-1]
        where = " at {}:{} in {}()".format(_short(filename), line, function)
    first = "INTERNAL ERROR in {}: {}{}. This is not a problem with {}.".format(
        prog, kind, where, not_blamed)
    if not extra:   # one line: the organizer's own commands
        return "{} Set {}=1 to see the traceback.\n".format(first, DEBUG_VARIABLE)
    return "\n".join([first] + extra) + "\n"


def _short(filename: str) -> str:
    """scoring/... part of a source path: the same on every machine."""
    marker = os.sep + "scoring" + os.sep
    i = filename.rfind(marker)
    return filename[i + 1:].replace(os.sep, "/") if i >= 0 else os.path.basename(filename)
