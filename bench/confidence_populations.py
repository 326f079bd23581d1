"""Populations with a known score for bench/confidence.py: generators of the per-unit rows each
task's bootstrap resamples (scoring/task_api.py's Resampling), drawn from a stated model.

A population is a generative process. A test set is n units drawn from it (for a clustered
population, n / k clusters of k units each); the population's score is the metric of the
expected column sums, estimated once from TRUTH_UNITS units with the conditional expectations
of every binomial (so its Monte Carlo error is far below the intervals' widths; printed).

Models (one per task; nothing here is measured data, the parameters are stated below):
- Agriculture-Vision: 512 x 512 tiles, 9 classes; class 0 (background) fills what the 8 field
  anomaly classes leave. A field has a skill s_f ~ Beta(7, 3) and, per anomaly class, a
  propensity ~ Beta(2 q_c, 2 (1 - q_c)) (mean q_c, from common to rare); a tile of the field
  holds class c with that probability, over a fraction ~ Beta(2, 10) of its pixels. A pixel of
  class c is predicted right with probability p = clip(s_f + shift + N(0, 0.08) per tile
  + N(0, 0.06) per tile and model), a
  missed pixel becomes background; a background pixel becomes anomaly c with probability
  0.002 (1 - p) / 0.3 / 8 each (false alarms also where the class is absent). Row: TP per class,
  then union per class (metric.miou_of_sums). "Independent tiles": one tile per field.
- Planetscapes semantic: 2048 x 1024 images, 19 evaluated classes of prevalence q_c, 8 of them
  with instances; the same per-pixel model, no clusters; instances Poisson(3) per present
  instance class, each hit at the image's rate. Row: TP, FP, FN per class, then per instance
  class its instance count and its weighted hits in fixed point (intervals.scores_of_sums).
- VQA: images of k questions; a question is answered right with probability
  sigmoid(skill + shift - d_image - d_question), d_image ~ N(0, tau) (tau = 0: independent
  questions), d_question ~ N(0, 1); a right answer agrees with Binomial(10, 0.9) of the 10
  humans, a wrong one with Binomial(10, 0.05); the row is the official accuracy numerator
  n = m min(3, m - 1) + (10 - m) min(3, m) (accuracy n / 30).

- Planetscapes panoptic: 2048 x 1024 images, 19 evaluated classes (the last 8 things); a stuff
  class present with probability q_c is one reference segment, a thing class present holds
  Poisson(3) instances. A reference segment is matched with probability p (the semantic model's
  per-image rate: skill ~ Beta(8, 2) + shift + noise, clipped to 0.02-0.98), its IoU then
  0.5 + 0.5 Beta(4, 2) (the sum over TP matches drawn as TP x Beta(4 TP, 2 TP), same mean); a
  missed segment is FN and, half of the time, a predicted FP; plus Poisson(0.3 (1 - p)) false
  segments per present class. Row: per class TP, FP, FN, IoU sum in units of 2^-24
  (planetscapes_panoptic.intervals.pq_of_sums).

Models "equally good" share the same process; each draws its own errors on the same content.
"""
import math
from typing import Any, Callable, List, Optional, Sequence

import numpy as np

AV_PIXELS = 512 * 512
# Share of the tiles holding each anomaly class: Agriculture-Vision's own (Chiu et al., CVPR
# 2020, images per class of 94,986: double_plant 6,234, drydown 16,806, endrow 4,481,
# nutrient_deficiency 13,308, planter_skip 2,599, water 2,155, waterway 3,899, weed_cluster
# 11,111).
AV_PREVALENCE = np.array([6234, 16806, 4481, 13308, 2599, 2155, 3899, 11111]) / 94986.0
PS_PIXELS = 2048 * 1024
PS_PREVALENCE = np.array([1.0, 0.9, 0.9, 0.3, 0.3, 0.7, 0.4, 0.6, 0.9, 0.4, 0.8, 0.5, 0.1,
                          0.9, 0.1, 0.04, 0.03, 0.1, 0.3])
PS_INSTANCE = list(range(11, 19))  # person .. bicycle in the train-id order
PS_AVERAGE_SIZE = 2000.0
TRUTH_UNITS = 400000
MODEL_NOISE = 0.06
FIXED_POINT_BITS = 24


class Population:
    """units(rng, n, models) -> (per model a table of rows (n, width) int64, cluster ids (n,));
    scores(sums) -> [values of the interval keys]; truth[m]: the population's scores of model m."""

    def __init__(self, name: str, noun: str, cluster: int, width: int,
                 draw: Callable[..., Any], scores: Callable[[Sequence[int]], List[Optional[float]]],
                 expected: Callable[..., Any], shifts: Sequence[float] = (0.0,)) -> None:
        self.name, self.noun, self.cluster, self.width = name, noun, cluster, width
        self._draw, self.scores, self._expected = draw, scores, expected
        self.shifts = list(shifts)
        self.truth = [self._truth(s) for s in self.shifts]

    def _truth(self, shift: float) -> List[Optional[float]]:
        rng = np.random.RandomState(77)
        total = np.zeros(self.width)
        for _ in range(TRUTH_UNITS // 50000):
            content = self._draw(rng, 50000 // self.cluster, None)
            total += self._expected(content, shift).sum(axis=0)
        return self.scores([float(v) for v in total])

    def units(self, rng, n: int, models: int = 1, shifts: Optional[Sequence[float]] = None):
        """A test set of n units (n // cluster clusters) and each model's rows on it."""
        content = self._draw(rng, max(1, n // self.cluster), None)
        shifts = list(shifts) if shifts is not None else [0.0] * models
        tables = [self._draw(rng, 0, (content, s)) for s in shifts]
        # whether a class has no reference pixel in this test set (its IoU is 0 or undefined
        # whatever the truth): the diagnosis of the coverage table
        # (panoptic: no reference segment of some class)
        seen = content.get("areas", content.get("segments"))
        self.last_absent = bool((seen.sum(0) == 0).any()) if seen is not None else False
        # the reference's pixels per class (Agriculture-Vision: background first), which the
        # task reads from its counts and the bench's rows do not hold
        self.last_reference = None
        if "areas" in content and content["areas"].shape[1] == 8:
            areas = content["areas"]
            self.last_reference = [int(AV_PIXELS * len(areas) - areas.sum())] + \
                [int(v) for v in areas.sum(0)]
        return tables, content["cluster"]


# --- Agriculture-Vision ------------------------------------------------------------------------

def _av(cluster: int):
    def draw(rng, fields, predict):
        if predict is not None:
            return _av_predict(rng, *predict)
        q = AV_PREVALENCE
        prop = rng.beta(2 * q, 2 * (1 - q), size=(fields, 8))
        skill = rng.beta(7, 3, fields)
        present = rng.random_sample((fields, cluster, 8)) < prop[:, None, :]
        frac = rng.beta(2, 10, (fields, cluster, 8)) * present
        over = frac.sum(-1, keepdims=True)
        frac = np.where(over > 0.9, frac * 0.9 / np.maximum(over, 1e-12), frac)
        areas = np.floor(frac * AV_PIXELS).astype(np.int64).reshape(-1, 8)
        return {"areas": areas, "skill": np.repeat(skill, cluster),
                "noise": rng.normal(0, 0.08, fields * cluster),
                "cluster": np.repeat(np.arange(fields), cluster)}

    def expected(content, shift):
        return _av_rows(content, shift, None)

    return draw, expected


def _own(rng, shape):
    """A model's own luck on each tile (N(0, MODEL_NOISE)): two models differ tile by tile. The
    truth (rng None) draws it too, from a fixed stream: the expectation of a clipped rate is not
    the clipped rate of its expectation."""
    return (rng or np.random.RandomState(99)).normal(0, MODEL_NOISE, shape)


def _av_rate(content, shift, rng=None):
    own = _own(rng, len(content["skill"]))
    p = np.clip(content["skill"] + shift + content["noise"] + own, 0.02, 0.98)
    return p, 0.002 * (1 - p) / 0.3 / 8


def _av_rows(content, shift, rng):
    areas = content["areas"]
    p, alarm = _av_rate(content, shift, rng)
    bg = AV_PIXELS - areas.sum(1)
    if rng is None:  # conditional expectations (the population's score)
        tp = areas * p[:, None]
        fp = np.repeat((bg * alarm)[:, None], 8, axis=1)
    else:
        tp = rng.binomial(areas, p[:, None])
        fp = rng.binomial(np.repeat(bg[:, None], 8, axis=1), alarm[:, None])
    fn = areas - tp
    tp0 = bg - fp.sum(1)
    union0 = bg + fn.sum(1)
    return np.concatenate([tp0[:, None], tp, union0[:, None], areas + fp], axis=1)


def _av_predict(rng, content, shift):
    return _av_rows(content, shift, rng).astype(np.int64)


def miou(sums):
    ious = [t / u for t, u in zip(sums[:9], sums[9:]) if u]
    return [sum(ious) / len(ious) if ious else None]


def agrivision(cluster: int = 1, shifts=(0.0,)) -> Population:
    draw, expected = _av(cluster)
    return Population("Agriculture-Vision" + (", {} tiles per field".format(cluster)
                                              if cluster > 1 else ""),
                      "tiles" if cluster == 1 else "fields", cluster, 18, draw, miou, expected,
                      shifts)


# --- Planetscapes semantic ---------------------------------------------------------------------

class Layout:
    """What intervals.scores_of_sums reads of a RowLayout."""
    evaluated = list(range(19))
    instance = PS_INSTANCE
    width = 3 * 19 + 2 * len(PS_INSTANCE)


def _ps_draw(rng, images, predict):
    if predict is not None:
        return _ps_rows(predict[0], predict[1], rng)
    q = PS_PREVALENCE
    present = rng.random_sample((images, 19)) < q
    frac = rng.beta(2, 12, (images, 19)) * present
    frac = frac / np.maximum(frac.sum(1, keepdims=True), 1.0)
    counts = rng.poisson(3, (images, len(PS_INSTANCE))) * present[:, PS_INSTANCE]
    return {"areas": np.floor(frac * PS_PIXELS).astype(np.int64),
            "skill": rng.beta(8, 2, images), "noise": rng.normal(0, 0.05, (images, 19)),
            "instances": counts, "cluster": np.arange(images)}


def _ps_rows(content, shift, rng):
    areas = content["areas"]
    own = _own(rng, areas.shape)
    p = np.clip(content["skill"][:, None] + shift + content["noise"] + own, 0.02, 0.98)
    other = PS_PIXELS - areas
    alarm = 0.004 * (1 - p) / 0.2 / 19
    n = content["instances"]
    pi = p[:, PS_INSTANCE]
    scale = float(1 << FIXED_POINT_BITS)
    if rng is None:
        tp, fp, w = areas * p, other * alarm, n * pi * scale
    else:
        tp, fp = rng.binomial(areas, p), rng.binomial(other, alarm)
        w = np.floor(rng.binomial(n * 100, pi) / 100.0 * scale)
    fn = areas - tp
    rows = np.stack([tp, fp, fn], axis=2).reshape(len(areas), -1)
    inst = np.stack([n, w], axis=2).reshape(len(areas), -1)
    out = np.concatenate([rows, inst], axis=1)
    return out if rng is None else out.astype(np.int64)


def _ps_scores(sums):
    from scoring.tasks.planetscapes_semantic import intervals
    return intervals.scores_of_sums(Layout, {c: PS_AVERAGE_SIZE for c in PS_INSTANCE}, sums)


def planetscapes(shifts=(0.0,)) -> Population:
    return Population("Planetscapes semantic", "images", 1, Layout.width, _ps_draw, _ps_scores,
                      lambda content, shift: _ps_rows(content, shift, None), shifts)


# --- Planetscapes panoptic --------------------------------------------------------------------

PAN_CLASSES = 19
PAN_THINGS = list(range(11, 19))
PAN_IOU_MEAN = 0.5 + 0.5 * 4.0 / 6.0


def _pan_draw(rng, images, predict):
    if predict is not None:
        return _pan_rows(predict[0], predict[1], rng)
    present = rng.random_sample((images, PAN_CLASSES)) < PS_PREVALENCE
    segments = present.astype(np.int64)
    segments[:, PAN_THINGS] = rng.poisson(3, (images, len(PAN_THINGS))) * present[:, PAN_THINGS]
    return {"segments": segments, "present": present, "skill": rng.beta(8, 2, images),
            "noise": rng.normal(0, 0.05, (images, PAN_CLASSES)), "cluster": np.arange(images)}


def _pan_rows(content, shift, rng):
    n = content["segments"]
    own = _own(rng, n.shape)
    p = np.clip(content["skill"][:, None] + shift + content["noise"] + own, 0.02, 0.98)
    alarms = 0.3 * (1 - p) * content["present"]
    scale = float(1 << FIXED_POINT_BITS)
    if rng is None:
        tp = n * p
        fn = n - tp
        fp = 0.5 * fn + alarms
        iou = tp * PAN_IOU_MEAN * scale
    else:
        tp = rng.binomial(n, p)
        fn = n - tp
        fp = rng.binomial(fn, 0.5) + rng.poisson(alarms)
        safe = np.maximum(tp, 1)
        iou = np.where(tp > 0, np.floor(tp * (0.5 + 0.5 * rng.beta(4 * safe, 2 * safe)) * scale),
                       0)
    out = np.stack([tp, fp, fn, iou], axis=2).reshape(len(n), -1)
    return out if rng is None else out.astype(np.int64)


def pan_scores(sums):
    from scoring.tasks.planetscapes_panoptic import intervals
    return intervals.pq_of_sums(sums)


def panoptic(shifts=(0.0,)) -> Population:
    return Population("Planetscapes panoptic", "images", 1, 4 * PAN_CLASSES, _pan_draw,
                      pan_scores, lambda content, shift: _pan_rows(content, shift, None), shifts)


# --- VQA ---------------------------------------------------------------------------------------

def numerator(m):
    """The official accuracy numerator of an answer matching m of the 10 humans."""
    return m * np.minimum(3, np.maximum(m - 1, 0)) + (10 - m) * np.minimum(3, m)


def _binomial_mean(f, n, p):
    comb = math.factorial
    return sum(comb(n) // (comb(k) * comb(n - k)) * p ** k * (1 - p) ** (n - k) * f(k)
               for k in range(n + 1))


RIGHT_MEAN = _binomial_mean(lambda m: int(numerator(np.array(m))), 10, 0.9)
WRONG_MEAN = _binomial_mean(lambda m: int(numerator(np.array(m))), 10, 0.05)


def _vqa(cluster: int, tau: float):
    """Rows (1, n): a question and its numerator, so that a resample of images knows how many
    questions it holds."""
    def draw(rng, images, predict):
        if predict is not None:
            content, shift = predict
            s = _vqa_prob(content, shift)
            right = rng.random_sample(len(s)) < s
            m = np.where(right, rng.binomial(10, 0.9, len(s)), rng.binomial(10, 0.05, len(s)))
            return np.stack([np.ones(len(s), np.int64), numerator(m)], axis=1).astype(np.int64)
        d = np.repeat(rng.normal(0, tau, images), cluster) + rng.normal(0, 1, images * cluster)
        return {"difficulty": d, "cluster": np.repeat(np.arange(images), cluster)}

    def expected(content, shift):
        s = _vqa_prob(content, shift)
        return np.stack([np.ones(len(s)), s * RIGHT_MEAN + (1 - s) * WRONG_MEAN], axis=1)

    return draw, expected


def _vqa_prob(content, shift):
    return 1 / (1 + np.exp(-(0.8 + shift - content["difficulty"])))


def vqa_accuracy(sums):
    return [100.0 * sums[1] / (30 * sums[0]) if sums[0] else None]


def vqa(cluster: int = 1, tau: float = 0.0, shifts=(0.0,)) -> Population:
    draw, expected = _vqa(cluster, tau)
    return Population("VQA" + (", {} questions per image".format(cluster) if cluster > 1
                               else ""), "questions" if cluster == 1 else "images", cluster, 2,
                      draw, vqa_accuracy, expected, shifts)


POPULATIONS = {
    "agrivision": lambda: agrivision(1),
    "agrivision-fields": lambda: agrivision(5),
    "planetscapes": lambda: planetscapes(),
    "panoptic": lambda: panoptic(),
    "vqa": lambda: vqa(1),
    "vqa-images": lambda: vqa(5, 0.8),
}


# --- instance-level labeling (AP): per-image records, no sums ------------------------------------

AP_CLASSES = 8
AP_GT_PER_CLASS = 1.5       # mean counted instances of a class per image (Poisson)
AP_DETECT = 0.75            # chance an instance gets a prediction
AP_DUPLICATE = 0.1          # chance a detected instance gets a second one
AP_FALSE = 6.0              # mean unmatched predictions per image (Poisson), over the classes


def instance_records(rng, n: int, classes: int = AP_CLASSES):
    """n images' records (planetscapes_instance.matching.ImageRecord) drawn from a population:
    per class Poisson instances; a detected instance's prediction has an IoU drawn in (0.3, 1)
    and a confidence that rises with it; duplicates; unmatched predictions (IoU < 0.5, a share
    of them mostly on void) with lower confidences. Confidences have 3 decimals: ties occur."""
    from scoring.tasks.planetscapes_instance.matching import ImageRecord
    gts = rng.poisson(AP_GT_PER_CLASS, size=(n, classes))
    out = []
    for i in range(n):
        cls, conf, iou, inst, ign = [], [], [], [], []
        for k in range(classes):
            g = int(gts[i, k])
            det = rng.rand(g) < AP_DETECT
            for j in np.flatnonzero(det):
                copies = 2 if rng.rand() < AP_DUPLICATE else 1
                for _ in range(copies):
                    q = 0.3 + 0.7 * rng.beta(4, 1.5)
                    cls.append(k)
                    iou.append(q)
                    inst.append(1000 * (k + 1) + int(j))
                    conf.append(round(min(1.0, max(0.0, q + 0.25 * rng.randn())), 3))
                    ign.append(0.0)
        for _ in range(rng.poisson(AP_FALSE)):
            cls.append(int(rng.randint(classes)))
            iou.append(0.5 * rng.rand())
            inst.append(-1)
            conf.append(round(float(rng.beta(1.5, 3)), 3))
            ign.append(float(rng.rand() < 0.2) * 0.9)
        out.append(ImageRecord(np.array(cls, dtype=np.int64), np.array(conf, dtype=np.float64),
                               np.array(iou, dtype=np.float64), np.array(inst, dtype=np.int64),
                               np.array(ign, dtype=np.float64), gts[i].astype(np.int64)))
    return out
