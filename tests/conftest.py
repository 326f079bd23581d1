import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "scoring_program")
for p in (PROGRAM, os.path.dirname(os.path.abspath(__file__))):
    if p not in sys.path:
        sys.path.insert(0, p)


def run_score(*args, timeout=120):
    """Run the real command as a subprocess; returns CompletedProcess with text output."""
    return subprocess.run([sys.executable, os.path.join(PROGRAM, "score.py")] + [str(a) for a in args],
                          capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def score():
    return run_score
