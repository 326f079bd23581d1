"""Make the scoring program's `scoring` package importable, so the kit's checks are the scorer's.

In the downloaded starting kit the program sits in ./scoring_program; in the repository, in
../scoring_program. Either way the kit runs the very code the platform runs.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = (os.path.join(HERE, "scoring_program"),
              os.path.join(os.path.dirname(HERE), "scoring_program"))


def add_scoring_to_path() -> str:
    """Put the first scoring program found on sys.path; returns its folder."""
    for folder in CANDIDATES:
        if os.path.isdir(os.path.join(folder, "scoring")):
            if folder not in sys.path:
                sys.path.insert(0, folder)
            return folder
    sys.stderr.write("ERROR: the scoring program was not found in {}. Re-download the starting "
                     "kit and run its tools from inside it.\n".format(" or ".join(CANDIDATES)))
    raise SystemExit(2)
