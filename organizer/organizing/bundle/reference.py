"""The reference a bundle carries, opened as the scorer opens it: refused with the scorer's own
message when broken, packed by the scorer's own packer, its manifest (names and sizes, no
labels) for the starting kit, its config.yaml, the final submission's rules it states.
"""
import json
import os
import re
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from final_package import rules
from scoring import engine, reference_setup, safe_yaml
from scoring.config import CONFIG_FILE, read_config
from scoring.folders import sole_subfolder
from scoring.formats.label_png.png import CannotOpen, NotPNG
from scoring.problems import REF_CANNOT_OPEN, ScoringError
from scoring.registry import DEFAULT, TASKS, reference_kind

from .refusal import Refused, shown
from .reproducible_zip import collect

# images/ holds the RGB and NIR inputs, not labels: the scorer never reads them, and for the real
# test set they would add gigabytes to every bundle.
REFERENCE_EXCLUDE = ("images",)


def reference_entries(task, reference, layout: str, build: str, say,
                      ) -> Tuple[List[Tuple[str, str]], Dict[str, bytes]]:
    """Files of reference_data.zip (on disk, and generated): the raw layout as it is, or packed
    by the scoring program's own packer (docs/packed-format.md, docs/vqa-packed-format.md),
    which checks everything on the way; config.yaml naming `task` where the organizer's names
    another task that reads the same reference (config_for_task). reference: the raw
    reference, as the scorer opened it."""
    root = reference.root
    if layout == "raw" or task.packing is None:
        entries = collect(root, exclude_top=REFERENCE_EXCLUDE)
    else:
        # A folder of its own per reference: two tracks may each pack theirs (Planetscapes).
        out = tempfile.mkdtemp(prefix="packed-reference-", dir=build)
        total, noun = reference.size()
        say("Packing the reference ({:,} {})...".format(total, noun))
        try:
            task.packing.pack(reference, out, engine.default_workers(total, task.unit_seconds),
                              engine.Progress(total, sys.stdout, 10.0, "packed", noun))
        except ScoringError as exc:
            raise Refused(exc.message().strip()) from None
        entries = collect(out)
    config = config_for_task(root, task.name)
    if config is None:
        return entries, {}
    name = config_entry_name(entries, root)
    return [e for e in entries if e[0] != name], {name: config}


def open_reference(ref_dir: str, task_name: str = "", what: str = ""):
    """(the scorer's reference_setup.Setup, the reference) as the scorer opens them; Refused
    with the scorer's own message if the reference is broken: better now than on the first
    participant's submission. task_name: the track's task (source.json track_data.<track>.task)
    instead of config.yaml's, for a reference that task reads (registry.READS_REFERENCE_OF);
    what: the option and track, for that refusal."""
    try:
        if task_name:
            refuse_other_kind(ref_dir, task_name, what)
        setup = reference_setup.configure(ref_dir, task_name or None)
        reference = setup.open()
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None
    if reference.layout == "packed":
        # The manifest reads image sizes from the raw label images; packing is bundle.sh's job.
        raise Refused("{} is a packed reference: give the raw layout (the dataset's own label "
                      "files)".format(ref_dir))
    return setup, reference


def own_task(ref_dir: str) -> str:
    """The task the reference's config.yaml names (the scorer's default without one);
    BrokenReference for a config.yaml that cannot be read or names no known task."""
    from scoring.config import task_name   # the one reading of `task:`
    return task_name(read_config(ref_dir), DEFAULT, TASKS)


def refuse_other_kind(ref_dir: str, task_name: str, what: str) -> None:
    """Refused if the task cannot read the reference: a reference of another kind than its
    task's (a VQA reference given to a pixel track) cannot be meant."""
    own = own_task(ref_dir)
    if reference_kind(own) == reference_kind(task_name):
        return
    raise Refused("{}{}: its config.yaml says task: {}, and the task {} cannot read that "
                  "reference (it reads a {} reference). Give a reference of that kind.\n"
                  .format(what + " " if what else "", shown(ref_dir), own, task_name,
                          reference_kind(task_name)).rstrip("\n"))


def config_for_task(ref_dir: str, task_name: str) -> Optional[bytes]:
    """The reference's config.yaml as a track scored by task_name bundles it: its `task:` line
    set to that task (every other line as the organizer wrote it), so the worker's score.py,
    which reads config.yaml, scores the track with its task; None when config.yaml already
    names it (or no task is asked)."""
    if not task_name or own_task(ref_dir) == task_name:
        return None
    path = reference_config_file(ref_dir)
    text = ""
    if path:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    line = "task: {}   # bundle.sh: this track's task (source.json); the organizer's folder " \
           "says {}".format(task_name, own_task(ref_dir))
    top = re.compile(r"^task[ \t]*:.*$", re.M)
    found = top.findall(text)
    new = top.sub(line, text) if len(found) == 1 else line + "\n" + text
    # Every other setting must be the organizer's: read both back and compare.
    before = read_config(ref_dir)
    try:
        after = safe_yaml.load_text(new) or {}
    except safe_yaml.YamlError:
        after = None
    if not isinstance(after, dict) or after != dict(before, task=task_name):
        raise Refused("{}: its config.yaml's `task:` cannot be set to {} by one line (write "
                      "`task:` as a line of its own at the top level)".format(
                          shown(path or ref_dir), task_name))
    return new.encode("utf-8")


def config_entry_name(entries: List[Tuple[str, str]], ref_dir: str) -> str:
    """The name config.yaml has among a reference's zip entries ("config.yaml", or under its
    only sub-folder); "config.yaml" if it has none."""
    names = [n for n, _ in entries if os.path.basename(n) == CONFIG_FILE]
    return min(names, key=lambda n: n.count("/")) if names else CONFIG_FILE


def final_rules(ref_config: Dict[str, Any]):
    """The final-submission rules the reference's config.yaml states (`final_submission:`,
    kit/final_package/rules.py), as verify.py and the kit's check_final.py will apply them: the
    terms page says the same limit ({{max_params}}), and a broken block is refused now rather
    than when the winners are verified."""
    try:
        return rules.read(ref_config)
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None


def worker_program(root: str) -> List[Tuple[str, str]]:
    """The worker's program: the scoring_program folder, whole. What only organizers run lives
    in organizer/ and never reaches it (tests/core/test_import_layers.py holds score.py to it)."""
    return collect(root)


def reference_manifest(task, reference) -> Dict[str, Any]:
    """The task's manifest of the reference (names, sizes, ids; no labels)."""
    try:
        return task.manifest.make(reference)
    except NotPNG as exc:   # read before the packing checks every file: a broken one, named
        opening = isinstance(exc, CannotOpen)   # the system's refusal, not the file's content
        raise Refused("the reference {} is broken: {}{}{}".format(
            shown(reference.root), REF_CANNOT_OPEN.headline + ": " if opening else "", exc,
            "\n  Fix: " + REF_CANNOT_OPEN.fix if opening else "")) from None


def manifest_bytes(task, reference) -> bytes:
    """Test image names and sizes (no labels) for the kit's check_submission.py."""
    manifest = reference_manifest(task, reference)
    if "images" not in manifest:
        return (json.dumps(manifest, sort_keys=True) + "\n").encode("utf-8")
    # One image a line: readable, diffable, and about 50 bytes an image for the real test set.
    head = json.dumps({k: v for k, v in manifest.items() if k != "images"}, sort_keys=True)
    images = ",\n".join(" {}: {}".format(json.dumps(i), json.dumps(manifest["images"][i]))
                        for i in sorted(manifest["images"]))
    return (head[:-1] + ', "images": {\n' + images + "\n}}\n").encode("utf-8")


def reference_config_file(ref_dir: str) -> Optional[str]:
    """The reference's config.yaml where the scorer reads it (scoring/config.py): in the folder,
    else in its only sub-folder; None without one."""
    for folder in (ref_dir, sole_subfolder(ref_dir)):
        if folder and os.path.isfile(os.path.join(folder, CONFIG_FILE)):
            return os.path.join(folder, CONFIG_FILE)
    return None


