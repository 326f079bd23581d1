"""Find the predictions inside an unpacked submission: one file per unit (discover: a PNG per
image, matched to the image ids) or exactly one file (discover_one: a VQA results file).

Platforms hand us `$input/res` as the participant zipped it: the files may sit at the root or in
one top-level folder, next to Codabench's `metadata`, macOS's `__MACOSX/` and `.DS_Store`, and
whatever else the participant zipped. We locate the one folder (or the one file) that holds the
predictions, refuse ambiguity, and list (not score) everything else. One walk serves both
(_walk): links are never followed and special files never opened, so a link loop, a link to /
or a FIFO leads nowhere.
"""
import os
import stat
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from .. import regular_file
from ..folders import ignored, is_real_dir
from ..problems import (AMBIGUOUS_ROOT, DUPLICATE, EXTRA_FILE, EXTRA_PNG, MISNAMED, MISSING,
                        NO_PREDICTIONS, NONE_MATCH, OTHER_IMAGE_FORMAT, Kind,
                        ProblemLog)
from ..task_api import Submission

# Written by the platform, never by the participant on purpose: ignored silently.
PLATFORM_FILES = ("metadata",)


def has_suffix(name: str, suffix: str) -> bool:
    """The extension's case is ignored: x.PNG is a PNG."""
    return name.lower().endswith(suffix)


def _walk(top: str, suffix: str = ".png", unreadable: Optional[List[str]] = None):
    """Yield (dir, prediction entries, other files, subdirs) under top, skipping ignored names.
    Prediction entries are the names ending in suffix.

    A folder named like a prediction is listed as one (it will be refused as unreadable), not
    descended into. Links are never followed: a link named like a prediction is a prediction
    entry (refused when read), any other link an other file, so a link to the reference or a link
    loop leads nowhere. FIFOs and devices are never opened here either.
    """
    stack = [top]
    while stack:
        d = stack.pop()
        pngs, others, subdirs = [], [], []
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            if unreadable is not None and d != top:
                unreadable.append(d)
            continue
        for e in entries:
            if ignored(e.name):
                continue
            if has_suffix(e.name, suffix):
                pngs.append(e.name)
            elif is_real_dir(e):
                subdirs.append(e.name)
            elif not (d == top and e.name in PLATFORM_FILES):
                others.append(e.name)
        yield d, pngs, others, subdirs
        stack.extend(os.path.join(d, s) for s in reversed(subdirs))


def _what_else(path: str) -> str:
    """'' for a regular file, else what the entry is (it was not followed or opened)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return ""
    what = regular_file.kind_of_file(mode)
    if what is None:
        return ""
    return what + (", not followed" if stat.S_ISLNK(mode) else ", not opened")


def is_json_pair(path: str) -> bool:
    """A .json file with a folder of the same name beside it (predictions.json and
    predictions/), or that folder: COCO's panoptic results, whose folder of PNGs belongs to its
    JSON. In a submission that several tasks score (the merged Planetscapes competition), the
    pair is the panoptic task's: never another task's results file or folder of PNGs."""
    stem, ext = os.path.splitext(path)
    if ext.lower() == ".json":
        return is_real_dir_path(stem)
    return any(os.path.isfile(path + e) and not os.path.islink(path + e)
               for e in (".json", ".JSON", ".Json"))


def instance_folders(res_dir: str, listing: list, expected: Optional[Set[str]]) -> List[str]:
    """The folders (never res_dir itself) holding the instance task's `<image id>.txt` files
    (any .txt without expected ids): in a submission that several tasks score (the merged
    Planetscapes competition), such a folder and everything under it (its masks) is the instance
    task's, never another task's PNG predictions."""
    return [d for d, _, others, _ in listing if d != res_dir and any(
        has_suffix(n, ".txt") and (expected is None or os.path.splitext(n)[0] in expected)
        for n in others)]


def _other_tasks_folders(res_dir: str, listing: list, expected: Optional[Set[str]],
                         suffix: str) -> List[str]:
    """The folders another task of a merged submission owns: a panoptic pair's folder of PNGs
    (is_json_pair) and, unless .txt files are looked for, the instance task's folders
    (instance_folders)."""
    pairs = [d for d, _, _, _ in listing if d != res_dir and is_json_pair(d)]
    if suffix == ".txt":
        return pairs
    return pairs + instance_folders(res_dir, listing, expected)


def _under(path: str, folders: List[str]) -> bool:
    return any(path == f or path.startswith(f + os.sep) for f in folders)


def is_real_dir_path(path: str) -> bool:
    return os.path.isdir(path) and not os.path.islink(path)


def _rel(top: str, path: str) -> str:
    rel = os.path.relpath(path, top)
    return "." if rel == "." else rel.replace(os.sep, "/")


def discover(res_dir: str, expected_ids: Optional[Iterable[str]], suffix: str = ".png",
             expected_other: Optional[Callable[[str], bool]] = None) -> Submission:
    """Locate one prediction file `<unit id><suffix>` per unit in res_dir; expected_ids None
    means 'any name ending in suffix is a prediction'. expected_other(name): True for the other
    files a format expects beside its predictions (the instance format's mask PNGs), which are
    then not listed as extra files when they sit in the prediction folder or under it (where
    the format reads them; elsewhere they are another task's)."""
    expected: Optional[Set[str]] = None if expected_ids is None else set(expected_ids)
    noun = suffix.lstrip(".").upper() + " files"  # ".png" -> "PNG files"
    log = ProblemLog()
    unreadable: List[str] = []
    listing = list(_walk(res_dir, suffix, unreadable))
    for d in unreadable:  # permissions: say so, or a folder of predictions silently vanishes
        log.add(EXTRA_FILE, _rel(res_dir, d) + "/", "a folder that cannot be read")
    found = _prediction_folder(res_dir, listing, expected, suffix, noun, log)
    if found is None:
        return Submission("", {}, log)
    root, names = found
    by_id: Dict[str, List[str]] = {}
    for n in names:
        by_id.setdefault(os.path.splitext(n)[0], []).append(n)
    around: Dict[str, Tuple[str, str, str]] = {}
    if expected is not None:
        # Names with a backslash have their own hint (a zip made with Windows separators).
        around = named_around(expected - set(by_id),
                              [s for s in by_id if s not in expected and "\\" not in s])
    files = _matched(res_dir, root, by_id, expected, around, log)
    _list_the_rest(res_dir, root, listing, log, expected_other,
                   _other_tasks_folders(res_dir, listing, expected, suffix))
    if expected is not None:
        _report_missing(res_dir, root, listing, expected, by_id, around, suffix, log)
        lower = {k.lower() for k in by_id}
        if not files and not around and not lower & {i.lower() for i in expected}:
            _none_match(log, len(names), noun)
    return Submission(root, files, log)


def _prediction_folder(res_dir: str, listing: list, expected: Optional[Set[str]], suffix: str,
                       noun: str, log: ProblemLog) -> Optional[Tuple[str, List[str]]]:
    """(the one folder holding the predictions, their names), or None with the problem logged:
    no file with the suffix, several folders of them none named like a test unit, or several
    folders named like test units (ambiguous)."""
    def matches(names: List[str]) -> int:
        if expected is None:
            return len(names)
        return sum(1 for n in names if os.path.splitext(n)[0] in expected)

    # A panoptic pair's folder of PNGs is not this task's (is_json_pair), nor the instance
    # task's folder of .txt files with its masks (instance_folders), when PNGs are looked for.
    theirs = _other_tasks_folders(res_dir, listing, expected, suffix)
    with_pngs = [(d, p) for d, p, _, _ in listing if p and not _under(d, theirs)]
    candidates = [(d, p) for d, p in with_pngs if matches(p)]
    if not candidates and len(with_pngs) == 1:
        candidates = with_pngs  # PNGs in one place, none named right: report them by name
    if not with_pngs:
        _nothing_found(res_dir, listing, NO_PREDICTIONS, EXTRA_FILE, noun, log)
        return None
    if not candidates:  # PNGs in several folders, none named like a test image
        for d, p in with_pngs:
            for n in p:
                log.add(EXTRA_PNG, _rel(res_dir, os.path.join(d, n)))
        for image_id in sorted(expected or ()):
            log.add(MISSING, image_id + suffix)
        _none_match(log, sum(len(p) for _, p in with_pngs), noun)
        return None
    if len(candidates) > 1:
        for d, p in candidates:
            log.add(AMBIGUOUS_ROOT, _rel(res_dir, d) + "/",
                    "{} {}{}".format(len(p), noun, "" if expected is None else
                                            ", {} named like test images".format(matches(p))))
        return None
    return candidates[0]


def _matched(res_dir: str, root: str, by_id: Dict[str, List[str]],
             expected: Optional[Set[str]], around: Dict[str, Tuple[str, str, str]],
             log: ProblemLog) -> Dict[str, str]:
    """unit id -> its prediction, from the prediction folder's names by id; two files for one
    id are a duplicate, a name of no unit (and not a misnamed one) an extra file."""
    files: Dict[str, str] = {}
    misnamed = {stem for stem, _, _ in around.values()}
    for image_id, group in sorted(by_id.items()):
        if len(group) > 1:
            log.add(DUPLICATE, ", ".join(_rel(res_dir, os.path.join(root, g)) for g in group),
                    "all are predictions for {}".format(image_id))
        elif expected is None or image_id in expected:
            files[image_id] = os.path.join(root, group[0])
        elif image_id not in misnamed:
            log.add(EXTRA_PNG, _rel(res_dir, os.path.join(root, group[0])))
    return files


def _list_the_rest(res_dir: str, root: str, listing: list, log: ProblemLog,
                   expected_other: Optional[Callable[[str], bool]] = None,
                   theirs: Optional[List[str]] = None) -> None:
    """Predictions outside the prediction folder and every other file (but those the format
    expects in the prediction folder or under it): listed, not scored. Another task's folder
    (theirs) is listed once, as that folder: not its every mask or PNG."""
    outer = [f for f in theirs or [] if not _under(os.path.dirname(f), theirs or [])]
    for f in sorted(outer):
        log.add(EXTRA_FILE, _rel(res_dir, f) + "/", (
            "the panoptic task's: the PNGs of the .json beside it" if is_json_pair(f) else
            "the instance task's: <image id>.txt files and their masks"))
    for d, p, others, _ in listing:
        if _under(d, outer):
            continue
        if d != root:
            for n in p:
                log.add(EXTRA_PNG, _rel(res_dir, os.path.join(d, n)))
        for n in others:
            if expected_other is not None and expected_other(n) and _under(d, [root]):
                continue
            log.add(EXTRA_FILE, _rel(res_dir, os.path.join(d, n)), _what_else(os.path.join(d, n)))


def _report_missing(res_dir: str, root: str, listing: list, expected: Set[str],
                    by_id: Dict[str, List[str]], around: Dict[str, Tuple[str, str, str]],
                    suffix: str, log: ProblemLog) -> None:
    """Every unit without a prediction, with the likeliest reason: a backslash in the zip's
    names, a name with something around the id (one hint per pattern), the wrong case."""
    patterns: Dict[Tuple[str, str], int] = {}
    for _, before, after in around.values():
        patterns[before, after] = patterns.get((before, after), 0) + 1
    lower = {k.lower(): k for k in by_id}
    backslashed = _backslashed(res_dir, listing)
    # Some predictions saved as JPEG (or TIFF...) beside the PNGs: named where each is missing.
    images = {os.path.splitext(n)[0]: n for d, _, others, _ in listing if d == root
              for n in others if _image_format(n)} if suffix == ".png" else {}
    for image_id in sorted(expected - set(by_id)):
        near = lower.get(image_id.lower())
        if image_id in backslashed:
            detail = BACKSLASH_HINT.format(backslashed[image_id])
        elif image_id in images:
            detail = "found {} instead, a {} file: convert it to PNG".format(
                images[image_id], _image_format(images[image_id]))
        elif image_id in around:
            stem, before, after = around[image_id]
            n = patterns[before, after]
            log.add(MISNAMED, _rel(res_dir, os.path.join(root, by_id[stem][0])),
                    "rename it {}{} ({}<id>{}{}: {:,} file{})".format(
                        image_id, suffix, before, after, suffix, n, "" if n == 1 else "s"))
            continue
        else:
            detail = ("found {}{} instead: names are case-sensitive".format(near, suffix)
                      if near else "")
        log.add(MISSING, image_id + suffix, detail)


def _none_match(log: ProblemLog, found: int, noun: str) -> None:
    """Files of the right kind, none named after a test unit: most often another split's."""
    log.add(NONE_MATCH, "submission", "none of its {:,} {} is named after a test id or close "
            "to one".format(found, noun))


def _nothing_found(res_dir: str, listing: list, none: Kind, extra: Kind, noun: str,
                   log: ProblemLog) -> None:
    """No file with the suffix: say so (pointing at a zip inside the zip) and list the others."""
    others = [os.path.join(d, o) for d, _, oo, _ in listing for o in oo]
    zips = [_rel(res_dir, o) for o in others if o.lower().endswith(".zip")]
    if zips:
        detail = "it contains another zip ({}): zip the {}, not a zip".format(
            ", ".join(zips[:3]), noun)
    elif not others:
        detail = "it is empty: it holds no file at all"
    else:
        detail = "found {} other file{}".format(len(others), "" if len(others) == 1 else "s")
    images = [o for o in others if _image_format(o)] if none is NO_PREDICTIONS else []
    if images:   # the likeliest cause, named first: predictions written as JPEG (or TIFF...)
        for o in images:
            log.add(OTHER_IMAGE_FORMAT, _rel(res_dir, o), "a {} file".format(_image_format(o)))
    else:
        log.add(none, "submission", detail)
    for o in others:
        if o not in images:
            log.add(extra, _rel(res_dir, o), _what_else(o))


# Image formats by their usual extensions: predictions saved in one of them instead of PNG.
_IMAGE_FORMATS = {".jpg": "JPEG", ".jpeg": "JPEG", ".jpe": "JPEG", ".tif": "TIFF", ".tiff": "TIFF",
                  ".bmp": "BMP", ".gif": "GIF", ".webp": "WebP", ".jp2": "JPEG 2000"}


def _image_format(path: str) -> str:
    return _IMAGE_FORMATS.get(os.path.splitext(path)[1].lower(), "")


def discover_one(res_dir: str, suffix: str, unit: str, none: Kind, several: Kind, extra: Kind,
                 noun: str, skip_pairs: bool = False) -> Submission:
    """Exactly one file ending in suffix, anywhere under res_dir (any name): {unit: its path}.
    None is the problem `none`, two or more are each a problem `several`; every other file is
    listed as `extra` (warnings: not scored). noun names the file in the messages."""
    log = ProblemLog()
    unreadable: List[str] = []
    listing = list(_walk(res_dir, suffix, unreadable))
    for d in unreadable:
        log.add(extra, _rel(res_dir, d) + "/", "a folder that cannot be read")
    found = [os.path.join(d, n) for d, names, _, _ in listing for n in names]
    if skip_pairs:  # a panoptic JSON beside its folder is another task's (is_json_pair)
        paired = [f for f in found if is_json_pair(f)]
        found = [f for f in found if f not in paired]
        for f in paired:
            log.add(extra, _rel(res_dir, f), "another task's: a .json beside its folder of PNGs")
    if not found:
        _nothing_found(res_dir, listing, none, extra, noun, log)
        return Submission("", {}, log)
    for d, _, others, _ in listing:
        for n in others:
            log.add(extra, _rel(res_dir, os.path.join(d, n)), _what_else(os.path.join(d, n)))
    if len(found) > 1:
        for f in found:
            log.add(several, _rel(res_dir, f))
        return Submission("", {}, log)
    return Submission(os.path.dirname(found[0]), {unit: found[0]}, log)


def named_around(missing: Set[str], stems: List[str]) -> Dict[str, Tuple[str, str, str]]:
    """missing id -> (stem, what comes before the id, what comes after) for file stems that hold
    a missing id with something around it (pred_<id>, <id>_leftImg8bit, <id>.jpg). A stem that
    holds several ids, or an id held by several stems, is left out: no guess."""
    found: Dict[str, List[Tuple[str, str, str]]] = {}
    lengths = sorted({len(i) for i in missing})
    for stem in stems:
        hits = [(stem[:k], i, stem[k + n:]) for n in lengths for k in range(len(stem) - n + 1)
                for i in (stem[k:k + n],) if i in missing]
        if len(hits) == 1:
            before, image_id, after = hits[0]
            found.setdefault(image_id, []).append((stem, before, after))
    return {i: got[0] for i, got in found.items() if len(got) == 1}


BACKSLASH_HINT = ("found '{}' instead: the zip was made with backslash (\\) separators, which "
                  "the platforms keep as part of the name; zip with a tool that writes '/' (e.g. "
                  "make_submission.py), or zip the files without their folder")


def _backslashed(res_dir: str, listing: list) -> Dict[str, str]:
    """image id -> shown name, for PNG names like 'preds\\<id>.png' (a zip made with Windows
    separators, unpacked on Linux)."""
    out: Dict[str, str] = {}
    for d, pngs, _, _ in listing:
        for n in pngs:
            if "\\" in n:
                out.setdefault(os.path.splitext(n.rsplit("\\", 1)[1])[0],
                               _rel(res_dir, os.path.join(d, n)))
    return out
