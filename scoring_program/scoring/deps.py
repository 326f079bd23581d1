"""The third-party packages the program may use, and the one-line message when one is missing.

A Python without PyYAML (or numpy, Pillow) must not answer with a traceback or an "INTERNAL
ERROR": it gets one line naming the package and the exact command that installs it for this
very interpreter, and exit status 2 (the command cannot run as invoked). Use:

    try:
        from scoring.x.cli import main
    except ModuleNotFoundError as exc:     # at the entry point, around the imports
        deps.exit_if_missing(exc)

and main's last-resort handler (last_resort.exit_code) asks missing_message(exc) before calling
anything an internal error (a package imported lazily fails there).
This module itself uses the standard library only.
"""
import shlex
import sys
from typing import Dict, Optional, Tuple

EXIT_MISSING = 2

# import name -> (name on PyPI, minimum version): the worker image's versions (README).
REQUIRED: Dict[str, Tuple[str, str]] = {
    "numpy": ("numpy", "1.16"),
    "PIL": ("Pillow", "6.1"),
    "yaml": ("PyYAML", "5.1"),
}


def install_command(import_name: str, python: Optional[str] = None) -> str:
    """`<python> -m pip install 'PyYAML>=5.1'`, quoted for a POSIX shell."""
    pip_name, minimum = REQUIRED[import_name]
    return "{} -m pip install {}".format(shlex.quote(python or sys.executable),
                                         shlex.quote("{}>={}".format(pip_name, minimum)))


def missing_message(exc: BaseException, python: Optional[str] = None) -> Optional[str]:
    """The one-line message if exc says that one of REQUIRED cannot be imported, else None.

    Only ModuleNotFoundError counts: an ImportError of a name inside an installed package is a
    broken or too old installation, not a missing one, and is left to the caller."""
    if not isinstance(exc, ModuleNotFoundError):
        return None
    name = (exc.name or "").partition(".")[0]
    if name not in REQUIRED:
        return None
    pip_name, minimum = REQUIRED[name]
    return ("ERROR: this command needs {} >= {} (import {}), which is not installed for {}. "
            "Install it with: {}".format(pip_name, minimum, name, python or sys.executable,
                                         install_command(name, python)))


def exit_if_missing(exc: BaseException) -> None:
    """At an entry point: print the message and exit 2 if exc is a missing package; otherwise
    re-raise exc (a real bug must not be disguised)."""
    message = missing_message(exc)
    if message is None:
        raise exc
    sys.stderr.write(message + "\n")
    sys.exit(EXIT_MISSING)
