#!/usr/bin/env python3
"""Organizer's command: a track's prize places, decided from the platform's own files, the
roster and verify.py's verdicts. `--help` for the options."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import organizing  # noqa: E402,F401  (puts the worker's program and the kit's on sys.path)
from scoring import deps  # noqa: E402  (standard library only)

try:
    from organizing.commands.standings import main  # noqa: E402
except ModuleNotFoundError as exc:  # PyYAML (or numpy, Pillow) missing: one line, the command
    deps.exit_if_missing(exc)

if __name__ == "__main__":
    sys.exit(main())
