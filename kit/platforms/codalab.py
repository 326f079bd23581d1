"""CodaLab as a model: its v1 worker (codalab/competitions-v1-compute-worker, worker.py, run on
Python 2.7 with PyYAML 3.10) and its site (codalab/codalab-competitions, apps/web), for the
v1.5 bundles a self-hosted CodaLab server takes. Its definition: codalab_definition.py.

The worker unpacks every bundle with Python's zipfile, then keeps a single top-level folder
that holds `metadata` in the bundle's place and unpacks every zip at the top into a folder of
its name; it takes the other values of a submission's `metadata` for further bundles to fetch;
it runs the command split on single spaces, without a shell, in the run folder; it reads
scores.txt line by line; its detailed-results watcher uploads the page only while the program
runs.
"""
import glob
import math
import os
import re
import shutil
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

from . import codalab_definition as definition
from . import yaml_text
from .model import Platform
from .worker import RunFolder, SubmissionRefused, extract

# The v1 worker's detailed-results watcher (entr, restarted every second) is killed when its
# poll (every 1 s) sees the program gone, and a non-empty page is not uploaded again at the
# end: a page last written less than this before the exit may never reach the site.
WATCHER_MARGIN = 2.0   # seconds
WATCHED_PAGE = "detailed_results.html"
# Keys of a bundle's `metadata` that the v1 worker does not fetch as further bundles.
METADATA_KEYS = ("description", "command", "exitCode", "elapsedTime", "stdout", "stderr",
                 "submitted-by", "submitted-at")
# A value the worker can really fetch: a URL (urllib.urlretrieve) or, on its Python 2, a path
# of the worker's own file system.
_FETCHABLE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|/)")


class CodaLab(Platform):
    name = "codalab"
    title = "CodaLab (v1 worker)"
    version = definition.VERSION
    missing_cell = "-"
    default_time_limit = 300
    metadata_files = ("metadata",)
    definition = definition   # its reading of a competition.yaml

    # --- its definition (codalab_definition.py) ---------------------------------------------

    def phase_info(self, doc: Dict[str, Any], now) -> Dict[str, Any]:
        phase = self.submission_phase(doc, now)
        columns = definition.columns(doc)
        return {"platform": self.name, "title": doc.get("title", ""),
                "phase": phase.get("label", ""),
                "leaderboard_rule": definition.leaderboard_rule(doc, phase),
                # The default score, compared by force_best: the lowest-ranked column's
                # (apps/web/models.py, get_default_score_def).
                "ranking": columns[0]["label"] if columns else "",
                "execution_time_limit": int(phase.get("execution_time_limit") or
                                            self.default_time_limit),
                "enable_detailed_results": bool(doc.get("enable_detailed_results", False)),
                "columns": columns, "scoring_program": phase.get("scoring_program"),
                "reference_data": phase.get("reference_data")}

    # --- its worker -------------------------------------------------------------------------

    def after_unpack(self, dest: str, what: str) -> List[str]:
        """get_bundle, after unpacking: a folder holding `metadata` moved up, then every zip
        at the top unpacked into a folder of its name."""
        notes = []
        moved = flatten(dest)
        if moved:
            notes.append("CodaLab moved the folder {}/ of the {} up: it holds a "
                         "`metadata` file".format(moved, what))
        for inner in unpack_inner_zips(dest):
            notes.append("CodaLab unpacked {} inside the {} into the folder {}/ (its worker "
                         "unpacks every zip at the top of a zip)".format(
                             inner, what, os.path.splitext(inner)[0]))
        return notes

    def prepare_submission(self, folder: RunFolder) -> List[str]:
        notes = fetch_metadata(folder.predictions)
        with open(os.path.join(folder.input, "metadata"), "w") as f:
            f.write("competition-phase: 1\nsubmitted-at: {}\nsubmitted-by: dry-run\n".format(
                time.strftime("%Y-%m-%d %H:%M:%S")))
        return notes

    def split_command(self, line: str) -> List[str]:
        return line.split(" ")   # str.split(" "): two spaces make an empty argument

    def working_directory(self, folder: RunFolder) -> Tuple[str, str]:
        # docker -w: the run folder
        return folder.run, "the run folder (program/, input/, output/ ...)"

    def watched_page(self, phase: Optional[Dict[str, Any]]) -> str:
        return WATCHED_PAGE if (phase or {}).get("enable_detailed_results", True) else ""

    def timeout_text(self, limit: float) -> str:
        return "Execution time limit exceeded!\n"

    def read_scores(self, output: str) -> Tuple[Optional[Dict[str, float]], str]:
        """Each non-empty line of scores.txt is `label, value = line.split(":")`,
        float(value)."""
        path = os.path.join(output, "scores.txt")
        if not os.path.isfile(path):
            return None, "no scores.txt at the root of the output (CodaLab fails the submission)"
        scores = {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for n, line in enumerate(text.split("\n"), 1):
            if len(line) > 0:
                try:
                    key, value = line.split(":")
                    number = float(value)
                except ValueError:
                    return None, ("scores.txt line {}: {!r} is not `key: number` with exactly "
                                  "one colon (CodaLab fails the submission)".format(n, line))
                if not math.isfinite(number):
                    return None, "scores.txt line {}: {} breaks CodaLab's leaderboard".format(
                        n, value)
                scores[key.strip()] = number
        return scores, "scores.txt"

    def page_fate(self, output: str, exited: float, phase: Optional[Dict[str, Any]]) -> str:
        return detailed_page_fate(output, exited) if self.watched_page(phase) else ""

    def shown_precision(self, precision: int) -> int:
        return min(10, max(1, precision))   # the site clamps the decimals to 1..10


CODALAB = CodaLab()


# --- unpacking (get_bundle) ---------------------------------------------------------------------

def unpack_inner_zips(path: str) -> List[str]:
    """Every `*.zip` at the bundle's top level (glob: not hidden ones) unpacked into a folder of
    its name without `.zip`, beside it."""
    found = sorted(glob.glob(os.path.join(path, "*.zip")))
    for inner in found:
        extract(inner, os.path.splitext(inner)[0])
    return [os.path.basename(z) for z in found]


def flatten(path: str) -> Optional[str]:
    """_find_only_folder_with_metadata: a sub-folder holding `metadata` replaces the bundle,
    unless the bundle itself has more than two entries and a `metadata`. Listing order is the
    file system's on the worker; sorted here so a dry run is repeatable."""
    entries = sorted(os.listdir(path))
    if len(entries) > 2 and "metadata" in entries:
        return None
    for name in entries:
        folder = os.path.join(path, name)
        if os.path.isdir(folder) and "metadata" in os.listdir(folder):
            tmp = path.rstrip(os.sep) + "_tmp"
            shutil.copytree(folder, tmp)
            shutil.rmtree(path)
            shutil.move(tmp, path)
            return name
    return None


# --- a submission's `metadata` (get_bundle) -------------------------------------------------------

def _read_metadata(path: str) -> Any:
    """The submission's `metadata` as the v1 worker reads it (yaml.load); SubmissionRefused if
    that raises, which ends the run."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionRefused(
            "the submission has a file `metadata` at its root that is not UTF-8 text: CodaLab's "
            "worker reads it as YAML, fails, and the run fails. Remove metadata from the "
            "zip") from None
    if yaml_text.yaml is None:
        return yaml_text.read_mapping(path)
    try:
        return yaml_text.yaml.safe_load(text)
    except Exception as exc:  # any YAML error: the worker's yaml.load raises the same
        raise SubmissionRefused(
            "the submission has a file `metadata` at its root that is not valid YAML ({}): "
            "CodaLab's worker reads it as YAML and the run fails. Remove metadata from the "
            "zip".format(str(exc).splitlines()[0])) from None


def fetch_metadata(res: str) -> List[str]:
    """What the v1 worker does with a `metadata` file at the root of the unpacked submission
    (worker.py, get_bundle). It reads the file as YAML; every key other than the known ones
    whose value is a string (an ASCII one: PyYAML gives Python 2 `unicode` otherwise, which the
    isinstance(v, str) test skips) is taken for a further bundle: get_bundle(res, key, value)
    makes an empty temporary file in res (tmp..., with the value's extension), tries 3 times to
    download the value into it, swallowing every failure, then unzips that file if the value
    ends in .zip, else makes the folder res/<key> and copies the file there as `metadata`,
    which it reads as YAML (empty: nothing more). Scoring goes on.

    So a notes file (team: ACME) is scored, with those files added to res; the run fails when
    the file is not YAML, a key is not a string, a value ends in .zip (an empty zip) or res
    already has an entry of the key's name (mkdir). A URL or an absolute path is really
    fetched: what it brings cannot be known here, so that counts as a failure. Returns notes
    on what the worker did; SubmissionRefused where its run fails."""
    path = os.path.join(res, "metadata")
    if not os.path.isfile(path):
        return []
    doc = _read_metadata(path)
    if not isinstance(doc, dict):
        return []
    fetched = [(k, v) for k, v in doc.items() if k not in METADATA_KEYS and
               isinstance(v, str) and all(ord(c) < 128 for c in v)]
    return [_fetch(res, key, value) for key, value in sorted(fetched, key=lambda kv: str(kv[0]))]


def _fetch(res: str, key: Any, value: str) -> str:
    """get_bundle(res, key, value): its note, or SubmissionRefused where the run fails."""
    where = "the submission's `metadata` has `{}: {}`".format(key, value)
    if not isinstance(key, str):
        raise SubmissionRefused(
            "{}: CodaLab's worker takes the value for a bundle to fetch into a folder named "
            "by the key, which is not text, and the run fails. Remove metadata from the "
            "zip".format(where))
    if _FETCHABLE.match(value):
        raise SubmissionRefused(
            "{}: CodaLab's worker fetches that URL or path into input/res/{}/metadata and "
            "reads it as YAML (a zip if it ends in .zip); what it brings cannot be known "
            "here, and a web page fails the run. Remove metadata from the zip".format(
                where, key))
    name = value.split("?")[0].split("/")[-1]
    extension = os.path.splitext(name)[1]
    handle, temp = tempfile.mkstemp(prefix="tmp", suffix=extension, dir=res)
    os.close(handle)   # the worker's download target, left empty: its download fails
    if extension == ".zip":
        raise SubmissionRefused(
            "{}: CodaLab's worker takes it for a zip to fetch, its download fails, it "
            "unzips the empty file and the run fails. Remove metadata from the zip".format(
                where))
    _make_bundle_folder(res, key, where)
    return ("CodaLab: {}; its worker took `{}` for a further bundle to fetch, the download "
            "failed (the worker swallows that), and it left an empty {}/metadata and an empty "
            "{} in input/res; scoring goes on (worker.py, get_bundle)".format(
                where, key, key, os.path.basename(temp)))


def _make_bundle_folder(res: str, key: str, where: str) -> None:
    """res/<key>/metadata, empty, as the worker leaves it; SubmissionRefused where it cannot."""
    folder = os.path.join(res, key)
    inside = os.path.realpath(folder).startswith(os.path.realpath(res) + os.sep)
    if os.path.isabs(key) or not (inside or os.path.exists(folder)):
        raise SubmissionRefused(
            "{}: CodaLab's worker would make a folder outside the submission's; remove "
            "metadata from the zip".format(where))
    try:
        os.mkdir(folder)
    except OSError as exc:
        raise SubmissionRefused(
            "{}: CodaLab's worker takes it for a bundle to fetch into the folder {}/, which "
            "it cannot make ({}), and the run fails. Remove metadata from the zip".format(
                where, key, exc.strerror or exc)) from None
    open(os.path.join(folder, "metadata"), "w").close()


# --- the detailed results page ------------------------------------------------------------------

def detailed_page_fate(output: str, exited: float) -> str:
    """Whether CodaLab v1 shows the detailed results page, from the worker's timing.

    Its watcher (`entr -d`, restarted 1 s after it exits on a new file in output/) uploads the
    page when it changes; the worker kills it when its 1-second poll finds the program gone,
    and at the end uploads only an EMPTY detailed_results.html's stand-in (the first *.html).
    So the final page must be written, and any new output file created, early enough for an
    upload (python start-up + an HTTP PUT) to finish before the exit."""
    page = os.path.join(output, WATCHED_PAGE)
    if not os.path.isfile(page) or os.path.getsize(page) == 0:
        for root, _dirs, files in os.walk(output):
            for name in sorted(files):
                if name.lower().endswith(".html") and os.path.getsize(os.path.join(root, name)):
                    return ("Detailed results on CodaLab v1: {} is empty, so the worker uploads "
                            "{} at the end".format(WATCHED_PAGE, name))
        return "Detailed results on CodaLab v1: none (no non-empty .html in output/)"
    others = [os.path.getmtime(os.path.join(output, n)) for n in os.listdir(output)
              if n != WATCHED_PAGE]
    # entr -d exits on a new file in the folder; the loop restarts it (and so uploads) 1 s later.
    upload = max([os.path.getmtime(page)] + [t + 1.0 for t in others])
    ahead = exited - upload
    if ahead >= WATCHER_MARGIN:
        return ("Detailed results on CodaLab v1: shown (the page was complete {:.1f} s before "
                "the scoring ended, in time for the platform to upload it)".format(ahead))
    return ("Detailed results on CodaLab v1: AT RISK: {} was complete only {:.1f} s {} the "
            "scoring ended; CodaLab stops uploading it about 1 s after the end and does not "
            "upload a non-empty page again, so the site may show an older or empty page. This is "
            "the scoring program's timing, not the submission's: the scoring program should "
            "write its scores files first, the page last, then wait {:.0f} s before exiting"
            .format(WATCHED_PAGE, abs(ahead), "before" if ahead >= 0 else "after",
                    WATCHER_MARGIN + 1))
