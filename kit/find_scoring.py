"""What every kit tool stands on: the scoring program's `scoring` package importable (so the
kit's checks are the scorer's), and one frame for their main.

In the downloaded starting kit the program sits in ./scoring_program; in the repository, where
the kits' sources live (starting_kit/, competitions/<name>/starting_kit/<track>/), in the
repository's scoring_program/ above them. Either way the kit runs the very code the platform
runs. One copy of this file serves every kit.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def candidates():
    """The kit's own copy first, then each folder above it (the repository's copy)."""
    folder = HERE
    found = [os.path.join(HERE, "scoring_program")]
    while os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
        found.append(os.path.join(folder, "scoring_program"))
    return found


def add_scoring_to_path() -> str:
    """Put the first scoring program found on sys.path; returns its folder."""
    for folder in candidates():
        if os.path.isfile(os.path.join(folder, "scoring", "__init__.py")):
            if folder not in sys.path:
                sys.path.insert(0, folder)
            return folder
    sys.stderr.write("ERROR: the scoring program was not found in {}. Re-download the starting "
                     "kit and run its tools from inside it.\n".format(
                         os.path.join(HERE, "scoring_program")))
    raise SystemExit(2)
