"""The reference a bundle carries, opened as the scorer opens it: refused with the scorer's own
message when broken, packed by the scorer's own packer, its manifest (names and sizes, no
labels) for the starting kit, its config.yaml, the final submission's rules it states.
"""
import json
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from final_package import rules
from scoring import engine, reference_setup
from scoring.config import CONFIG_FILE
from scoring.folders import sole_subfolder
from scoring.formats.label_png.png import CannotOpen, NotPNG
from scoring.problems import REF_CANNOT_OPEN, ScoringError

from .refusal import Refused, shown
from .reproducible_zip import collect

# images/ holds the RGB and NIR inputs, not labels: the scorer never reads them, and for the real
# test set they would add gigabytes to every bundle.
REFERENCE_EXCLUDE = ("images",)


def reference_entries(task, reference, layout: str, build: str, say) -> List[Tuple[str, str]]:
    """Files of reference_data.zip: the raw layout as it is, or packed by the scoring program's
    own packer (docs/packed-format.md, docs/vqa-packed-format.md), which checks everything on
    the way. reference: the raw reference, as the scorer opened it."""
    root = reference.root
    if layout == "raw" or task.packing is None:
        return collect(root, exclude_top=REFERENCE_EXCLUDE)
    # A folder of its own per reference: two tracks may each pack theirs (Planetscapes).
    out = tempfile.mkdtemp(prefix="packed-reference-", dir=build)
    total, noun = reference.size()
    say("Packing the reference ({:,} {})...".format(total, noun))
    try:
        task.packing.pack(reference, out, engine.default_workers(total, task.unit_seconds),
                          engine.Progress(total, sys.stdout, 10.0, "packed", noun))
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None
    return collect(out)


def open_reference(ref_dir: str):
    """(the scorer's reference_setup.Setup, the reference) as the scorer opens them; Refused
    with the scorer's own message if the reference is broken: better now than on the first
    participant's submission."""
    try:
        setup = reference_setup.configure(ref_dir)
        reference = setup.open()
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None
    if reference.layout == "packed":
        # The manifest reads image sizes from the raw label images; packing is bundle.sh's job.
        raise Refused("{} is a packed reference: give the raw layout (the dataset's own label "
                      "files)".format(ref_dir))
    return setup, reference


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


