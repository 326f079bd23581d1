"""The Planetscapes semantic reference: config.yaml, labels/<id>.png, instances/<id>.png.

labels/ holds 8-bit label ids; instances/ 16-bit images with class_id * 1000 + k on instance
pixels and the label id elsewhere (the Cityscapes *_instanceIds.png convention). Every image is
checked as it is read; a problem is the organizers' (exit 3), reported with the file.
"""
import io
import os
from typing import List, Tuple

import numpy as np
from PIL import Image

from ... import folders
from ...metrics.histogram import histogram
from ...problems import BrokenReference, ProblemLog
from ...readers import reference_file
from ...formats.label_png.decode_errors import Undecodable, pillow_call
from ...formats.label_png.pillow_array import load_array
from ...task_api import Reference, ReferenceProblem
from .labels import LabelTable
from .metric import FIRST_INSTANCE, Truth
from .problems import (REF_INSTANCE_CLASS, REF_INSTANCE_DEPTH, REF_LAYOUT, REF_MISSING,
                       REF_UNKNOWN_ID, REF_UNREADABLE, REF_WRONG_SIZE)

LABELS, INSTANCES = "labels", "instances"
PACKED_MANIFEST = "packed.json"  # marks the packed layout (packed.py)

LABEL_MODES = ("L", "P")
INSTANCE_MODES = ("L", "P", "I", "I;16", "I;16B", "I;16L")


def _values(values: np.ndarray, limit: int = 8) -> str:
    shown = ", ".join(str(int(v)) for v in values[:limit])
    return shown + (", ..." if values.size > limit else "")


def read_png(path: str, name: str, modes: Tuple[str, ...]) -> np.ndarray:
    data = reference_file.read(path, name, REF_UNREADABLE, missing=REF_MISSING)  # no FIFO, device
    try:
        with pillow_call():
            img = Image.open(io.BytesIO(data))
        with img:
            if img.format != "PNG" or img.mode not in modes:
                raise ReferenceProblem(
                    REF_UNREADABLE, name, "{} image of mode {}; expected a single-channel PNG "
                    "({})".format(img.format, img.mode, "/".join(modes)))
            arr = load_array(img)
    except Undecodable as exc:
        raise ReferenceProblem(REF_UNREADABLE, name, str(exc).strip() or type(exc).__name__) \
            from None
    if arr.ndim != 2:
        raise ReferenceProblem(REF_UNREADABLE, name, "it decodes to shape {}".format(arr.shape))
    return arr


class CheckSpec:
    """The label-table facts the per-image checks need (small arrays, pickled to workers)."""

    def __init__(self, table: LabelTable) -> None:
        self.size = table.size
        self.contiguous = table.contiguous
        self.allowed = table.allowed
        # Classes that may carry instance values > 1000: those with instances, and ignored ones
        # (their instances are skipped). Any other class would crash the anchor (KeyError).
        self.instance_ok = np.zeros(256, dtype=bool)
        # Classes whose instances are scored (iIoU): evaluated, with instances, id >= 1 (class
        # 0's values 0 * 1000 + k are below 1000: never instances). Their pixels must hold an
        # instance value or, in a crowd region, their own label id.
        self.scored = np.zeros(256, dtype=bool)
        for lab in table.in_images:
            if lab.has_instances or lab.ignore_in_eval:
                self.instance_ok[lab.id] = True
            if lab.has_instances and not lab.ignore_in_eval and lab.id >= 1:
                self.scored[lab.id] = True


def _check_label_ids(labels: np.ndarray, spec: CheckSpec, label_name: str) -> None:
    if int(labels.max()) < spec.size and spec.contiguous:
        return
    present = np.flatnonzero(histogram(labels, 256))
    bad = present[~spec.allowed[present]]
    if bad.size:
        raise ReferenceProblem(REF_UNKNOWN_ID, label_name, "ids {}".format(_values(bad)))


def check_truth(labels: np.ndarray, instances: np.ndarray, spec: CheckSpec,
                label_name: str, instance_name: str) -> Truth:
    """The checks of one reference image, vectorised; returns the Truth the metric consumes.

    The instance image must agree with the label image (docs/planetscapes.md): a value v >= 1000
    only over label id v // 1000 (instances, v > 1000, only for classes that may have them);
    over a class whose instances are scored, a value below 1000 only if it is that label id (a
    crowd region, as Cityscapes' json2instanceImg writes it). An 8-bit instance image cannot
    hold instance ids: refused when the image has pixels of such a class."""
    if labels.shape != instances.shape:
        raise ReferenceProblem(REF_WRONG_SIZE, instance_name, "{} x {}, {} is {} x {}".format(
            instances.shape[1], instances.shape[0], label_name, labels.shape[1], labels.shape[0]))
    if labels.dtype != np.uint8:
        labels = labels.astype(np.uint8)  # 'L' and 'P' decode to uint8 already
    _check_label_ids(labels, spec, label_name)
    if instances.dtype == np.uint8 and spec.scored[np.flatnonzero(histogram(labels, 256))].any():
        raise ReferenceProblem(REF_INSTANCE_DEPTH, instance_name, "it is an 8-bit image, which "
                               "cannot hold instance ids (class_id * 1000 + k), and {} has "
                               "pixels of classes with instances".format(label_name))
    where = instances >= 1000
    values = instances[where]
    if values.size:
        under = labels[where]
        disagree = values // 1000 != under
        if disagree.any():
            first = int(np.flatnonzero(disagree)[0])
            raise ReferenceProblem(REF_INSTANCE_CLASS, instance_name, "{} pixels disagree with "
                                   "{}, e.g. instance value {} over label id {}".format(
                                       int(disagree.sum()), label_name, int(values[first]),
                                       int(under[first])))
        present = np.flatnonzero(histogram(under, 256))  # the classes, as they agree
        bad = present[~spec.instance_ok[present]]
        # 1000 is class 1's value but never an instance (the anchor selects values > 1000).
        if bad.size and bad[0] == 1 and not (values[under == 1] >= FIRST_INSTANCE).any():
            bad = bad[1:]
        if bad.size:
            raise ReferenceProblem(REF_INSTANCE_CLASS, instance_name, "instances (values > 1000) "
                                   "of class ids {} whose has_instances is false".format(
                                       _values(bad)))
    # Every other pixel should hold its label id (Cityscapes' instance images do, everywhere):
    # counting is enough when they all do; otherwise only scored classes' pixels matter.
    if np.count_nonzero(instances == labels) + values.size != labels.size:
        odd = instances != labels
        odd &= ~where
        under = labels[odd]
        wrong = spec.scored[under]
        if wrong.any():
            first = int(np.flatnonzero(wrong)[0])
            raise ReferenceProblem(REF_INSTANCE_CLASS, instance_name, "{} pixels of classes "
                                   "with instances hold neither an instance id (class_id * 1000 "
                                   "+ k) nor their label id (a crowd region), e.g. value {} over "
                                   "label id {} in {}: were the instance images saved with fewer "
                                   "than 16 bits, or clipped?".format(
                                       int(wrong.sum()), int(instances[odd][first]),
                                       int(under[first]), label_name))
    return Truth(labels, instances, where, values)


_KEEPS_FREED_MEMORY: List[bool] = []


def keep_freed_memory() -> None:
    """Once per process, before the first image: allocate and free one block just under 32 MB.
    A 2048 x 1024 image needs about 40 MB of temporaries (decoded images, masks, the 16 MB
    confusion key), which glibc's malloc otherwise hands back to the system after every image
    (its trim threshold starts low) and the next image faults in again: 95,000 minor faults and
    6% of the CPU time for 100 images with 2 workers. Freeing a block allocated by mmap raises
    glibc's dynamic thresholds to that block's size (mmap) and twice it (trim), up to 32 MB
    (mallopt(3), "dynamic mmap threshold"); with other allocators this is one allocation."""
    if not _KEEPS_FREED_MEMORY:
        _KEEPS_FREED_MEMORY.append(True)
        np.empty((32 << 20) - (1 << 16), dtype=np.uint8)


def find_root(ref_dir: str) -> str:
    """ref_dir itself or its single sub-folder (a zip of a folder)."""
    root = folders.find_root(ref_dir, lambda d: os.path.isdir(os.path.join(d, LABELS)) or
                             os.path.isfile(os.path.join(d, PACKED_MANIFEST)))
    if root is not None:
        return root
    log = ProblemLog()
    log.add(REF_LAYOUT, ref_dir, "no labels/ folder (nor packed.json) in it")
    raise BrokenReference(log)


class SemanticReference(Reference):
    layout = "raw"
    root: str

    def __init__(self, root: str, ids: List[str], table: LabelTable) -> None:
        self.root = root
        self.ids = ids
        self.table = table
        self.spec = CheckSpec(table)


    def expect(self, unit_id: str, truth: Truth) -> Tuple[int, int]:
        """(height, width) of the image: the public fact a prediction must meet."""
        return truth.shape

    def read(self, unit_id: str) -> Truth:
        keep_freed_memory()
        label_name = "{}/{}.png".format(LABELS, unit_id)
        instance_name = "{}/{}.png".format(INSTANCES, unit_id)
        labels = read_png(os.path.join(self.root, label_name), label_name, LABEL_MODES)
        instances = read_png(os.path.join(self.root, instance_name), instance_name,
                             INSTANCE_MODES)
        return check_truth(labels, instances, self.spec, label_name, instance_name)


def open_raw(root: str, table: LabelTable) -> SemanticReference:
    """Check the listing (both files of every image) and return the reader."""
    log = ProblemLog()
    label_ids = folders.png_stems(os.path.join(root, LABELS)) or set()
    instance_ids = folders.png_stems(os.path.join(root, INSTANCES))
    if not label_ids:
        log.add(REF_LAYOUT, LABELS + "/", "it holds no PNG file")
        raise BrokenReference(log)
    if instance_ids is None:
        log.add(REF_LAYOUT, INSTANCES + "/", "no such folder (the instance images are needed "
                "for iIoU)")
        raise BrokenReference(log)
    for i in sorted(label_ids - instance_ids):
        log.add(REF_MISSING, "{}/{}.png".format(INSTANCES, i))
    for i in sorted(instance_ids - label_ids):
        log.add(REF_MISSING, "{}/{}.png".format(LABELS, i), "instances/{}.png has no label "
                "image".format(i))
    if log.fatal:
        raise BrokenReference(log)
    return SemanticReference(root, sorted(label_ids), table)
