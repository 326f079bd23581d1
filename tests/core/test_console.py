"""scoring/console.py: a reader that goes away ends the printing, not the command."""
import io
import os
import subprocess
import sys

from scoring import console

from conftest import ROOT  # noqa: E402
import pytest

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

# Prints a lot, then writes a file: the file must exist whatever happened to stdout.
SCRIPT = """
import os, sys
sys.path.insert(0, sys.argv[1])
from scoring import console
guarded = sys.argv[3] == "guarded"
out = console.guard(sys.stdout) if guarded else sys.stdout
for i in range(20000):
    out.write("line %d\\n" % i)
if guarded:
    console.finish(out)
else:
    out.flush()
with open(sys.argv[2], "w") as f:
    f.write("done")
"""


def _run_with_reader_gone(tmp_path, mode):
    marker = tmp_path / ("done-" + mode)
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, os.path.join(ROOT, "scoring_program"),
                             str(marker), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()                                 # the reader goes away after one line
    err = proc.stderr.read().decode("utf-8")
    proc.stderr.close()
    return proc.wait(timeout=60), err, marker.exists()


def test_guarded_stream_survives_a_closed_pipe(tmp_path):
    code, err, done = _run_with_reader_gone(tmp_path, "guarded")
    assert (code, err, done) == (0, "", True)


def test_unguarded_stream_fails_the_same_way_the_issue_says(tmp_path):
    """The control: without the guard the same script dies on BrokenPipeError."""
    code, err, done = _run_with_reader_gone(tmp_path, "plain")
    assert code != 0 and "BrokenPipeError" in err and not done


def test_guarded_pipe_in_process():
    read_end, write_end = os.pipe()
    stream = io.TextIOWrapper(os.fdopen(write_end, "wb"), encoding="utf-8")
    os.close(read_end)
    out = console.guard(stream)
    assert console.guard(out) is out
    assert out.write("x" * 100000) == 100000           # the buffer fills: EPIPE inside
    out.write("more")
    console.finish(out)
    assert out.gone
    assert os.readlink("/proc/self/fd/{}".format(stream.fileno())) == "/dev/null"
    stream.close()                                      # the final flush: to /dev/null


def test_a_stream_without_descriptor():
    buf = io.StringIO()
    out = console.guard(buf)
    out.write("hello\n")
    console.finish(out)
    assert buf.getvalue() == "hello\n" and not out.gone
    assert out.getvalue() == "hello\n"                  # other attributes pass through
