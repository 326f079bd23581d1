"""Score arrays in-process through the task's own pieces (reference check, mask crop, match,
state merge, summarize): the tests' way to the task without files."""
import numpy as np

from scoring.tasks.planetscapes_instance import metric, prediction, reference
from scoring.tasks.planetscapes_instance.matching import ClassSpec
from scoring.tasks.planetscapes_semantic import labels as ps_labels


def masks_of(preds):
    out = []
    for mask, label, conf in preds:
        pixels, box, crop = prediction.crop_of(np.asarray(mask, dtype=np.uint8))
        out.append(prediction.Mask(int(label), float(conf), pixels, box, crop))
    return out


def state_of(table, images, ids=None, split=None):
    """images: [(instances, [(mask, label, confidence)])]; split: lists of indices, one state
    each, merged in that order."""
    spec = ClassSpec(table)
    seg_spec = reference.SegmentSpec(table)
    ids = ids or ["img%03d" % i for i in range(len(images))]
    total = metric.InstanceState(spec)
    for group in split or [list(range(len(images)))]:
        state = metric.InstanceState(spec)
        for i in group:
            inst, preds = images[i]
            truth = reference.check_segments(np.asarray(inst, dtype=np.uint16), seg_spec, "i")
            state.update(ids[i], masks_of(preds), truth)
        total.merge(state)
    return total


def scores_of(table, images, **kw):
    result = metric.summarize(state_of(table, images, **kw))
    return {k: v for k, v in metric.score_list(result, ps_labels.key_name) if v is not None}


def classes_of(table):
    spec = ClassSpec(table)
    return list(zip(spec.ids, spec.names))


def void_of(table):
    return {lab.id for lab in table.in_images if lab.ignore_in_eval}
