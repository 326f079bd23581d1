"""The end of every command's error handling (score.py, pack.py, compare.py, generalist.py),
after each has handled its own errors (a broken submission or reference, bad inputs): one rule
for what is left, so that no command drifts from the others.

Standard library and the light shared modules only: generalist.py uses it without numpy.
"""
import os
import traceback
from typing import Callable, TextIO

from . import deps
from .problems import UsageError

EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 2, 4, 130


def exit_code(exc: BaseException, stderr: TextIO,
              internal: Callable[[BaseException], str]) -> int:
    """Write what exc means to stderr and return the exit status. A usage error: its one line,
    exit 2. Ctrl-C: exit 130. A package missing (imported lazily, with a task): deps' one line
    with the install command, exit 2. Anything else is a bug of ours: internal(exc) gives the
    message (it names no values, which could come from hidden labels), the traceback only with
    SCORING_DEBUG=1, exit 4. Call it inside the except clause (the traceback is the current
    exception's)."""
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
    stderr.write(internal(exc))
    if os.environ.get("SCORING_DEBUG"):
        traceback.print_exc(file=stderr)
    return EXIT_INTERNAL
