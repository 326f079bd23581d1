"""scoring/regular_file.py: only a regular file is read, never blocking, never past its cap."""
import os
import socket
import subprocess
import sys

import pytest

from scoring import regular_file
from scoring.regular_file import Refused

from conftest import ROOT  # noqa: E402

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def refused(path, max_bytes=100, follow_links=False):
    with pytest.raises(Refused) as info:
        regular_file.read_bytes(str(path), max_bytes, follow_links=follow_links)
    return info.value


def test_regular_file_and_the_cap(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert regular_file.read_bytes(str(path), 100) == b"x" * 100
    exc = refused(path, max_bytes=99)
    assert (exc.kind, exc.reason) == (regular_file.TOO_LARGE, "larger than 99 bytes (100 bytes)")
    path.write_bytes(b"")
    assert regular_file.read_bytes(str(path), 0) == b""


def test_file_reporting_size_zero_is_read_to_its_end():
    """Files in /proc are regular files of st_size 0 with content."""
    data = regular_file.read_bytes("/proc/self/status", 1 << 20)
    assert b"Name:" in data
    with pytest.raises(Refused, match="larger than 10 bytes"):
        regular_file.read_bytes("/proc/self/status", 10)


def test_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(str(tmp_path / "fifo"))
    (tmp_path / "folder").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock"))
        cases = {"fifo": (regular_file.NOT_REGULAR, "not a regular file: a FIFO (named pipe)"),
                 "folder": (regular_file.FOLDER, "a folder, not a file"),
                 "sock": (regular_file.NOT_REGULAR, "not a regular file: a socket")}
        for name, (kind, reason) in cases.items():
            exc = refused(tmp_path / name)
            assert (exc.kind, exc.reason) == (kind, reason), name
    finally:
        sock.close()
    exc = refused("/dev/zero")
    assert (exc.kind, exc.what) == (regular_file.NOT_REGULAR, "a device file")
    exc = refused(tmp_path / "missing")
    assert (exc.kind, exc.reason) == (regular_file.UNREADABLE,
                                      "cannot be read (No such file or directory)")


def test_links(tmp_path):
    (tmp_path / "real").write_bytes(b"data")
    os.symlink(str(tmp_path / "real"), str(tmp_path / "link"))
    os.symlink("/dev/zero", str(tmp_path / "zero"))
    os.mkfifo(str(tmp_path / "fifo"))
    os.symlink(str(tmp_path / "fifo"), str(tmp_path / "to-fifo"))
    # A participant's file: a link is never followed, whatever it points to.
    for name in ("link", "zero", "to-fifo"):
        assert refused(tmp_path / name).reason == "not a regular file: a symbolic link"
    # An organizer's file: followed, and what it points to must be a regular file.
    assert regular_file.read_bytes(str(tmp_path / "link"), 10, follow_links=True) == b"data"
    assert refused(tmp_path / "zero", follow_links=True).what == "a device file"
    assert refused(tmp_path / "to-fifo", follow_links=True).what == "a FIFO (named pipe)"
    os.symlink(str(tmp_path / "nowhere"), str(tmp_path / "dangling"))
    assert refused(tmp_path / "dangling", follow_links=True).kind == regular_file.UNREADABLE


def test_link_swapped_in_after_the_check(tmp_path, monkeypatch):
    """O_NOFOLLOW: a file replaced by a link between lstat and open is still refused."""
    (tmp_path / "real").write_bytes(b"data")
    real_stat = os.lstat(str(tmp_path / "real"))
    os.symlink(str(tmp_path / "real"), str(tmp_path / "link"))
    monkeypatch.setattr(regular_file.os, "lstat", lambda path: real_stat)
    assert refused(tmp_path / "link").reason == "not a regular file: a symbolic link"


def test_fifo_with_a_writer_is_not_read(tmp_path):
    """Even with a writer waiting on the FIFO, nothing is read from it (and nothing blocks):
    the check is on the opened descriptor. In a child process, so a hang cannot stall the
    suite."""
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from scoring import regular_file\n"
            "try:\n    regular_file.read_bytes(sys.argv[2], 100, follow_links=True)\n"
            "except regular_file.Refused as exc:\n    print(exc.reason)\n")
    writer = subprocess.Popen(["sh", "-c", "exec 3>\"$0\"; sleep 5", fifo])
    try:
        proc = subprocess.run([sys.executable, "-c", code, os.path.join(ROOT, "scoring_program"),
                               fifo], capture_output=True, text=True, timeout=20)
    finally:
        writer.kill()
        writer.wait()
    assert proc.stdout == "not a regular file: a FIFO (named pipe)\n", proc.stderr


def test_open_regular_returns_a_descriptor(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    fd = regular_file.open_regular(str(tmp_path / "f"))
    try:
        assert os.read(fd, 10) == b"abc"
    finally:
        os.close(fd)


@pytest.mark.parametrize("mode, expected", [
    (0o100644, None), (0o040755, "a folder"), (0o120777, "a symbolic link"),
    (0o010644, "a FIFO (named pipe)"), (0o020644, "a device file"), (0o060644, "a device file"),
    (0o140755, "a socket")])
def test_kind_of_file(mode, expected):
    assert regular_file.kind_of_file(mode) == expected


def test_what_is_opened_is_checked_again(tmp_path, monkeypatch):
    """A FIFO put in place of a checked regular file is refused on the opened descriptor."""
    (tmp_path / "real").write_bytes(b"data")
    real_stat = os.lstat(str(tmp_path / "real"))
    os.mkfifo(str(tmp_path / "fifo"))
    monkeypatch.setattr(regular_file.os, "lstat", lambda path: real_stat)
    assert refused(tmp_path / "fifo").reason == "not a regular file: a FIFO (named pipe)"


def test_a_nul_byte_in_the_name():
    exc = refused("a\x00b.csv")
    assert (exc.kind, exc.reason) == (regular_file.UNREADABLE,
                                      "cannot be read (a NUL byte in its name)")
