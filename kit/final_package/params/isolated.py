"""The parameter count in a child process, file by file: a file that crashes a reader (a
segmentation fault in a C library such as HDF5's, memory exhausted) or keeps it busy past the
time limit fails that file, named, never the command; the other files are still counted.

    census = isolated.count_package(root, models)

On Linux: a forked child reads the files in order and sends each file's count back as soon as
it has it; if the child dies, the file it was reading is refused ("the counter crashed on it
(SIGSEGV): refused, the jury decides") and a new child goes on after it, at most MAX_CRASHES
times. Its memory is capped (RLIMIT_DATA: what it holds when forked plus CHILD_MEMORY). The
bounds of the readers (bounds.py) keep every honest package far below both limits, which are a
safety net: the verdict never depends on time except for a package that would otherwise crash
or hang the command. Elsewhere (no fork), the count runs in this process.
"""
import faulthandler
import multiprocessing
import os
import signal
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import bounds, census
from .result import REFUSED, FileCount

CHILD_MEMORY = 1536 << 20
MAX_CRASHES = 3
TIME_LIMIT = 300.0

CountOne = Callable[[str, str, bool, Any, bounds.Budget], Optional[FileCount]]


def _can_fork() -> bool:
    return sys.platform.startswith("linux")


def _cap_memory() -> None:
    try:
        import resource
        with open("/proc/self/status") as f:
            held = [int(line.split()[1]) << 10 for line in f if line.startswith("VmData:")][0]
        resource.setrlimit(resource.RLIMIT_DATA, (held + CHILD_MEMORY, held + CHILD_MEMORY))
    except (ImportError, OSError, IndexError, ValueError):
        pass


def _child(root: str, found: census.Listing, start: int, left: Dict[str, int], send: Any,
           count_one: CountOne) -> None:
    try:
        faulthandler.disable()    # a crash is the parent's to name, without a dump
        _cap_memory()
        budget = bounds.Budget(left)
        for rel, in_models in found.files[start:]:
            send.send(("count", count_one(root, rel, in_models, found.modules, budget),
                       budget.left))
        send.send(("done", None, budget.left))
        send.close()
    except BaseException:       # never a traceback from the child: the parent names the file
        os._exit(3)


def _died(code: Optional[int]) -> str:
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return "signal {}".format(-code)
    return "exit status {}".format(code)


def _run_child(root: str, found: census.Listing, start: int, left: Dict[str, int],
               deadline: float, time_limit: float,
               count_one: CountOne) -> Tuple[List[FileCount], int, Dict[str, int], Optional[str]]:
    """(the counts received, the index of the next file, the budget left, why the child
    stopped before the end, or None)."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    for stream in (sys.stdout, sys.stderr):    # nothing buffered to be written twice
        stream.flush()
    proc = ctx.Process(target=_child, args=(root, found, start, left, send, count_one),
                       daemon=True)
    proc.start()
    send.close()
    got: List[FileCount] = []
    index = start
    try:
        while True:
            wait = deadline - time.monotonic()
            if wait <= 0:
                return got, index, left, "the counter spent more than {:.0f} s on the " \
                    "package's files and stopped on this one".format(time_limit)
            if not recv.poll(min(wait, 1.0)):
                continue
            try:
                kind, value, left = recv.recv()
            except (EOFError, OSError):
                break
            if kind == "done":
                return got, index, left, None
            if value is not None:
                got.append(value)
            index += 1
        proc.join()
        return got, index, left, "the counter crashed on it ({})".format(_died(proc.exitcode))
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join()


def count_package(root: str, models: Optional[str] = "models", time_limit: float = TIME_LIMIT,
                  count_one: CountOne = census.count_one) -> census.Census:
    """census.count_package, each file read in a child process where one can be forked."""
    found = census.listing(root, models)
    counts: List[FileCount] = []
    if not _can_fork():
        budget = bounds.Budget()
        for rel, in_models in found.files:
            one = count_one(root, rel, in_models, found.modules, budget)
            if one is not None:
                counts.append(one)
        return census.finish(root, found, counts, budget)
    start, crashes, left = 0, 0, dict(bounds.PACKAGE)
    deadline = time.monotonic() + time_limit
    while start < len(found.files):
        got, start, left, stopped = _run_child(root, found, start, left, deadline, time_limit,
                                               count_one)
        counts.extend(got)
        if stopped is None:
            break
        counts.append(FileCount(found.files[start][0], "-", REFUSED, stopped +
                                ": refused, the jury decides"))
        start += 1
        crashes += 1
        if crashes >= MAX_CRASHES or time.monotonic() >= deadline:
            counts += [FileCount(rel, "-", REFUSED, "not read: the counter stopped on {} "
                                 "earlier file{} of the package".format(
                                     crashes, "" if crashes == 1 else "s"))
                       for rel, _ in found.files[start:]]
            break
    return census.finish(root, found, counts, bounds.Budget(left))
