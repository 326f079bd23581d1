"""Score panoptic cases in-process: through the task's own format and reference (files), or
straight from arrays (the metric alone)."""
import numpy as np

from scoring import engine
from scoring.registry import TASKS
from scoring.tasks.planetscapes_panoptic import metric, predictions, reference
from scoring.tasks.planetscapes_semantic import labels as ps_labels

TASK = "planetscapes-panoptic"


def table(rows):
    return ps_labels.load({"labels": rows})


def score_arrays(rows, images, split=None):
    """[(instances, segment map, {id: category})] through the task's checks and state, one
    state per group of split (merged in that order); {key: value}, undefined absent."""
    tab = table(rows)
    spec = reference.SegmentSpec(tab)
    evaluated = [lab.id for lab in tab.evaluated()]
    total = metric.PanopticState(spec, len(evaluated))
    for group in split or [list(range(len(images)))]:
        state = metric.PanopticState(spec, len(evaluated))
        for i in group:
            inst, seg, cats = images[i]
            truth = reference.Truth(np.asarray(inst, dtype=np.uint16), "i")
            ids = sorted(cats)
            segments = predictions.Segments(
                np.array([0] + ids, dtype=np.int64),
                np.array([-1] + [evaluated.index(cats[s]) for s in ids], dtype=np.int64))
            seg = np.asarray(seg, dtype=np.uint32)
            # As the PNG decodes: RGBX words, X = 255 (match_segments drops it).
            pred = predictions.match_segments(seg | np.uint32(0xFF000000), segments)
            state.update(str(i), pred, truth)
        total.merge(state)
    return total, {k: v for k, v in metric.score_list(metric.summarize(total, tab), tab)
                   if v is not None}


def score_files(ref_root, res_root, workers=2, config=None):
    """Our task through the shared engine over files; {key: value}, undefined absent."""
    task = TASKS[TASK]
    import yaml
    import os
    if config is None:
        with open(os.path.join(ref_root, "config.yaml")) as f:
            config = yaml.safe_load(f)
    settings = task.configure({}, config)
    ref = task.open_reference(ref_root, settings)
    fmt = task.submission_format(settings)
    found = fmt.discover(res_root, ref.ids)
    assert not found.log.fatal, found.log.describe(found.log.kinds())
    items = [(i, p, i) for i, p in sorted(found.files.items())]
    acc = engine.evaluate(task, ref, fmt, settings, items, workers)
    assert not acc.submission_log.fatal, acc.submission_log.describe(acc.submission_log.kinds())
    assert not acc.reference_log.fatal
    return {k: v for k, v in task.summarize(acc.state, ref, settings).scores if v is not None}
