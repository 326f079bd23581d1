"""What both platforms' workers do alike: lay out the run folder, unpack what they are given,
read the program's command and run it under the time limit.

Each model (codalab.py, codabench.py) adds what its worker does differently: what it does after
unpacking, how it splits the command, where it runs it, how it reads the scores.
"""
import errno
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import zipfile
from typing import Dict, List, NamedTuple, Optional, Tuple

from scoring import zips
from scoring.problems import BAD_ZIP, UsageError, shown

from . import yaml_text

# What the worker substitutes in the program's command: every version these ...
PLACEHOLDERS = ("$program", "$input", "$output")
# ... and these only some (the dry run substitutes all six).
OTHER_PLACEHOLDERS = ("$tmp", "$shared", "$predictions")
# The interpreters of the workers' images; the dry run runs its own Python instead.
INTERPRETERS = ("python3", "python")


class ZipProblem(Exception):
    """A zip that cannot be unpacked; the message names the file and the fix."""


class SubmissionRefused(Exception):
    """The platform refuses the submission before the scoring program runs."""


# --- the run folder ------------------------------------------------------------------------

class RunFolder(NamedTuple):
    """The worker's folders for one run: run/ holds program/, input/ (ref/, res/), output/
    and temp/; shared/ sits beside it."""
    root: str
    run: str
    program: str
    input: str
    output: str
    tmp: str
    shared: str

    @property
    def predictions(self) -> str:
        return os.path.join(self.input, "res")

    def placeholders(self) -> Dict[str, str]:
        """$name -> path, for every placeholder a worker substitutes."""
        return {"program": self.program, "input": self.input, "output": self.output,
                "tmp": self.tmp, "shared": self.shared, "predictions": self.predictions}


def run_folder(root: str) -> RunFolder:
    run = os.path.join(root, "run")
    return RunFolder(root, run, os.path.join(run, "program"), os.path.join(run, "input"),
                     os.path.join(run, "output"), os.path.join(run, "temp"),
                     os.path.join(root, "shared"))


# --- unpacking ------------------------------------------------------------------------------

def extract(zip_path: str, dest: str) -> None:
    """Unpack a zip into dest as the platforms' zipfile does, refusing what it cannot unpack
    safely by the scoring program's own rules (scoring/zips.py: encrypted members, methods
    zipfile cannot read, bad CRCs, names the file system refuses, entries outside the archive,
    zip bombs): ZipProblem naming the file and the fix. A symbolic-link entry becomes a plain
    file holding the link's text, as zipfile writes it: no link is ever created."""
    name = os.path.basename(zip_path)
    try:
        zips.extract(zip_path, dest)
    except zips.ArchiveProblem as exc:
        raise ZipProblem("{}: {}; {}".format(shown(name), shown(str(exc)),
                                             BAD_ZIP.fix.format(zip_hint=""))) from None
    except OSError as exc:   # the disk is full: this machine's problem, not the zip's
        if exc.errno != errno.ENOSPC:
            raise
        raise UsageError("no space left on the disk to unpack {} into {}: free some and run "
                         "again".format(name, dest)) from None


def is_symlink_entry(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _copy_regular(src: str, dst: str) -> str:
    """shutil.copy2 for a regular file (or a link to one); ZipProblem for anything else."""
    try:
        mode: Optional[int] = os.stat(src).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise ZipProblem("{} is not a regular file ({}), which no zip can hold: remove it".format(
            src, "a FIFO" if stat.S_ISFIFO(mode) else "a device or a socket"))
    return shutil.copy2(src, dst)


def unpack_source(source: str, dest: str, what: str) -> List[str]:
    """A zip's content (or a folder's) in dest, as every worker puts it there; ZipProblem if
    it cannot be unpacked. Returns notes on what happened."""
    notes: List[str] = []
    if os.path.isdir(source):
        # A submission folder's links are copied as links, never followed: the scorer then
        # names them (make_submission.py refuses them too). A FIFO or a device is refused,
        # never read: no zip can hold one, and a copy of /dev/zero would fill the disk.
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                        symlinks=what == "submission", copy_function=_copy_regular)
        return notes
    if not zipfile.is_zipfile(source):
        raise ZipProblem("{} is neither a folder nor a zip file: upload a .zip".format(
            os.path.basename(source)))
    os.makedirs(dest)
    extract(source, dest)
    with zipfile.ZipFile(source) as zf:
        links = [i.filename for i in zf.infolist() if is_symlink_entry(i)]
    if links:
        notes.append("{} symbolic link(s) in the {} unpacked as plain files holding the link's "
                     "text, as the platforms' zipfile does: {}".format(
                         len(links), what, ", ".join(links[:3])))
    return notes


def counted(n: int, noun: str) -> str:
    """'1 file', '2 files', '0 files'."""
    return "{} {}{}".format(n, noun, "" if n == 1 else "s")


def describe_res(res: str, added: Tuple[str, ...] = (), platform: str = "") -> str:
    """What the scoring program finds at the top of input/res: the submission's own files
    counted as the participant sent them, and apart, those the platform added (added: their
    names; Codabench's `metadata`), so that 40 predictions read "40 files", not 41."""
    entries = sorted(os.listdir(res))
    extra = [e for e in entries if e in added and os.path.isfile(os.path.join(res, e))]
    entries = [e for e in entries if e not in extra]
    files = [e for e in entries if os.path.isfile(os.path.join(res, e))]
    folders = [e + "/" for e in entries if os.path.isdir(os.path.join(res, e))]
    shown_entries = ", ".join((folders + files)[:3]) + (", ..." if len(entries) > 3 else "")
    return "{} and {} at the top{}: {}".format(
        counted(len(files), "file"), counted(len(folders), "folder"),
        " (+ {}'s own {} file{})".format(platform or "the platform", ", ".join(extra),
                                         "s" if len(extra) > 1 else "") if extra else "",
        shown_entries or "-")


# --- the program's command ------------------------------------------------------------------

def read_metadata(program: str, names: Tuple[str, ...]) -> Tuple[Optional[str], str]:
    """(command or None, the metadata file read): the first of names in the program folder."""
    for name in names:
        path = os.path.join(program, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            return yaml_text.command_of(text), name
    return None, ""


def substituted(command: str, paths: Dict[str, str]) -> str:
    """The command with the worker's placeholders replaced (str.replace, as the workers do)."""
    line = command.strip()
    for placeholder in ("program", "input", "output", "tmp", "shared", "predictions"):
        line = line.replace("$" + placeholder, paths[placeholder])
    return line


def local_interpreter(argv: List[str]) -> List[str]:
    """The worker's `python3` is its image's; here, the Python running the dry run. Returns the
    note saying so (argv changed in place)."""
    if argv and argv[0] in INTERPRETERS:
        note = "`{}` runs as {} here (the worker uses its Docker image's)".format(
            argv[0], sys.executable)
        argv[0] = sys.executable
        return [note]
    return []


# --- running it -----------------------------------------------------------------------------

def _pump(stream, sink: List[str], echo: bool) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace")
        sink.append(line)
        if echo:
            sys.stdout.write("  | " + line)
            sys.stdout.flush()
    stream.close()


class Ran(NamedTuple):
    code: Optional[int]
    timed_out: bool
    seconds: float      # to the exit, not to the end of the output pumps
    out: str
    err: str


def run_command(argv: List[str], cwd: str, limit: float, echo: bool) -> Ran:
    """The command run to its end or to the limit; at the limit the whole process group is
    killed, as the worker kills the container."""
    out: List[str] = []
    err: List[str] = []
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=(os.name == "posix"))
    except OSError as exc:
        return Ran(127, False, 0.0, "", "cannot start {}: {}\n".format(argv[0], exc))
    threads = [threading.Thread(target=_pump, args=(proc.stdout, out, echo)),
               threading.Thread(target=_pump, args=(proc.stderr, err, False))]
    for t in threads:
        t.daemon = True
        t.start()
    timed_out = False
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait()
    seconds = time.monotonic() - started
    for t in threads:
        t.join(5)
    return Ran(proc.returncode, timed_out, seconds, "".join(out), "".join(err))
