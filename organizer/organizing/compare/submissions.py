"""The submissions named on compare.py's command line: each a zip or a folder (its name is the
model's name), or a folder holding such submissions (as downloaded from the platform).

A folder is a collection of submissions when it holds a zip, or at least two folders and no
more files than folders (a downloads folder of unzipped submissions with a notes.txt beside
them); otherwise it is one submission (whose predictions may sit in a sub-folder, as score.py
accepts, beside thousands of prediction files). Hidden entries, __MACOSX/ and the platforms'
`metadata` are ignored.

Every other entry of a collection is either compared or listed with the reason it is not (a
.tar.gz, a bare results file, a link...): nothing is skipped silently. One name is one model:
- in a collection, a zip and a folder of the same name (a download and its unzipped copy) are
  one submission: the zip is compared, the folder is listed as its copy;
- otherwise a name given twice (two arguments, or two collections holding the same name) is a
  command-line error (exit 2) naming both paths: rename one.
What is not a submission (a stray file, a link, a folder that copies a zip) is listed, never
counted as one. A comparison of fewer than two submissions is a command-line error (exit 2).
"""
import os
from typing import Callable, Dict, List, NamedTuple, Tuple

from scoring.folders import ignored, is_real_dir
from scoring.problems import ProblemLog, UsageError, shown
from scoring.submission.discovery import PLATFORM_FILES
from scoring.zips import ArchiveProblem, unpack
from scoring.task_api import Submission


class Entry(NamedTuple):
    model: str   # the model's name: the zip's or the folder's name
    path: str    # as given (zip or folder)
    error: str = ""  # why it is listed and not compared ("" if it is compared)
    submission: bool = True   # False: an entry of a collection that is not a submission


class Opened(NamedTuple):
    model: str
    folder: str             # the unpacked submission ("" if it could not be unpacked)
    files: Dict[str, str]   # unit id -> prediction file (empty if refused)
    log: ProblemLog         # discovery's problems (fatal: the submission is left out)
    error: str              # why it is left out ("" if it is not)
    submission: bool = True  # False: listed, not a submission (Entry.submission)


def _model_name(path: str) -> str:
    """The file's or folder's name without .zip, made printable (problems.shown)."""
    name = os.path.basename(os.path.normpath(path))
    return shown(name[:-4] if name.lower().endswith(".zip") else name)


def _is_collection(folder: str) -> bool:
    try:
        entries = [e for e in os.scandir(folder)
                   if not ignored(e.name) and e.name not in PLATFORM_FILES]
    except OSError:
        return False
    if any(e.name.lower().endswith(".zip") and e.is_file(follow_symlinks=False)
           for e in entries):
        return True
    folders = sum(1 for e in entries if is_real_dir(e))
    return folders >= 2 and len(entries) - folders <= folders


NOT_A_SUBMISSION = ("not a zip or a folder: compare.py reads each submission as the platform "
                    "gives it (a .zip) or unzipped into a folder named after the model")


def _collection(path: str) -> List[Entry]:
    """The entries of a downloads folder, sorted by name: zips and folders to compare, anything
    else listed with its reason; a folder named as a zip beside it is that zip's copy."""
    out: List[Entry] = []
    found = sorted(os.scandir(path), key=lambda e: e.name)
    zips = set(_model_name(e.path) for e in found
               if e.name.lower().endswith(".zip") and e.is_file(follow_symlinks=False))
    for e in found:
        if ignored(e.name) or e.name in PLATFORM_FILES:
            continue
        name = _model_name(e.path)
        if is_real_dir(e):
            out.append(Entry(name, e.path) if name not in zips else Entry(
                name, e.path, "a folder of the same name as {}.zip, which is compared (a zip "
                "and its unzipped copy are one submission; rename the folder to compare it as "
                "another model)".format(name), False))
        elif name in zips and e.name.lower().endswith(".zip"):
            out.append(Entry(name, e.path))
        elif e.is_symlink():
            out.append(Entry(shown(e.name), e.path, "a link: links are not followed", False))
        else:
            out.append(Entry(shown(e.name), e.path, NOT_A_SUBMISSION, False))
    return out


def expand(paths: List[str]) -> List[Entry]:
    """Every submission the arguments name, in the order given (a collection's sorted by
    name), and every entry of a collection that is not one, with its reason. A name given twice
    is a UsageError (exit 2)."""
    entries: List[Entry] = []
    for path in paths:
        if not os.path.exists(path):
            raise UsageError("no such file or folder: {}".format(path))
        if os.path.isdir(path) and _is_collection(path):
            entries += _collection(path)
        else:
            entries.append(Entry(_model_name(path), path))
    first: Dict[str, str] = {}
    for entry in entries:
        if entry.error:
            continue
        if entry.model in first:
            raise UsageError("two submissions named {}: {} and {} (one name per model: rename "
                             "one)".format(entry.model, first[entry.model], entry.path))
        first[entry.model] = entry.path
    if len(first) < 2:
        others = [e for e in entries if not e.submission]
        raise UsageError("compare.py compares two submissions or more; {}{} (score.py scores "
                         "one)".format(
                             "the arguments hold one: " + ", ".join(first.values()) if first
                             else "the arguments hold none",
                             "" if not others else "; not submissions: {}".format("; ".join(
                                 "{} ({})".format(e.path, e.error) for e in others))))
    return entries


def first_problem(log: ProblemLog, words: Dict[str, str]) -> str:
    """The first fatal problem of a log as one line: 'Reference images without a prediction
    (3): a.png, ...'."""
    paragraphs = log.describe(log.kinds(fatal=True), **words)
    if not paragraphs:
        return ""
    lines = paragraphs[0].splitlines()
    names = [line.strip()[2:] for line in lines[1:] if line.strip().startswith("- ")]
    more = len(paragraphs) - 1
    return "{} {}{}".format(lines[0], "; ".join(names[:3]),
                            " (and {} more kind{} of problem)".format(more, "s" * (more > 1))
                            if more else "")


def open_all(entries: List[Entry], discover: Callable[[str], Submission],
             words: Dict[str, str]) -> Tuple[List[Opened], List[Callable[[], None]]]:
    """Unpack (zips) and discover every submission; (opened, cleanups to call at the end)."""
    opened, cleanups = [], []
    for entry in entries:
        if entry.error:
            opened.append(Opened(entry.model, "", {}, ProblemLog(), entry.error,
                                 entry.submission))
            continue
        try:
            folder, cleanup = unpack(entry.path)
        except ArchiveProblem as exc:
            opened.append(Opened(entry.model, "", {}, ProblemLog(),
                                 "the zip cannot be unpacked: {}".format(exc)))
            continue
        except UsageError as exc:
            opened.append(Opened(entry.model, "", {}, ProblemLog(), str(exc)))
            continue
        cleanups.append(cleanup)
        found = discover(folder)
        error = first_problem(found.log, words) if found.log.fatal else ""
        opened.append(Opened(entry.model, folder, found.files if not error else {}, found.log,
                             error))
    return opened, cleanups

