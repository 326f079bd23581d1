"""Cityscapes-style IoU and iIoU as additive state, computed as cityscapesScripts'
evalPixelLevelSemanticLabeling computes them (the anchor; see docs/planetscapes.md).

State per run, whatever the number of images:
- the confusion matrix over label ids (rows reference, columns prediction) as int64 counts, one
  histogram of (reference * K + prediction) per image;
- per class with instances, exact sufficient statistics of its instances: for each instance size
  s, how many instances have that size, and the summed pixels predicted as the class (tp) and as
  any class of its category (category tp). The weighted sums the anchor accumulates in floats,
  sum_i tp_i / size_i, are then formed at the end from integers: identical for any worker count
  and order, and free of the average sizes, which may be known only once every image is seen
  (the default is the mean instance size over the whole reference).
Merging adds counts. Floats appear only in summarize().
"""
import math
from fractions import Fraction
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from ...task_api import CAT, SUM, MetricState
from .intervals import RowLayout, image_row
from .labels import LabelTable, key_name

# Instances are the values > 1000 of the instance image: the anchor selects `instanceNp > 1000`,
# so 1000 itself (class 1, k = 0) is never one.
FIRST_INSTANCE = 1001


class Truth(NamedTuple):
    """One reference image: label ids (uint8) and the instance image (uint16 or int32), and,
    when the reader already found them, the pixels whose instance value is >= 1000 as a mask
    and their values (1000 itself, class 1's first value, is among them but is never an
    instance: the metric skips it)."""

    labels: np.ndarray
    instances: np.ndarray
    where: Optional[np.ndarray] = None
    ids: Optional[np.ndarray] = None

    @property
    def shape(self):
        return self.labels.shape


class PackedTruth(NamedTuple):
    """One image of the packed reference (packed.py): per pixel an index into a table of the
    (label id, instance) pairs present."""

    index: np.ndarray      # 2-D uint8 or uint16
    labels: np.ndarray     # 1-D uint8: label id of each table entry
    instances: np.ndarray  # 1-D uint16: instance value (> 1000) of each entry, 0 if none

    @property
    def shape(self):
        return self.index.shape


class MetricSpec:
    """What update() needs from the label table, as small lookup arrays (pickled with states)."""

    def __init__(self, table: LabelTable) -> None:
        self.size = table.size
        # Category index of every id in the table (-1 elsewhere): a pixel predicted p is a
        # category hit for an instance of class c when category[p] == category[c].
        self.category = np.full(256, -1, dtype=np.int16)
        for lab in table.in_images:
            self.category[lab.id] = table.categories.index(lab.category)
        # Instances of ignored classes are skipped, as in the anchor.
        self.counted = np.zeros(256, dtype=bool)
        for lab in table.instance_classes():
            self.counted[lab.id] = True


class SemanticState(MetricState):
    """Additive state of one run (see the module docstring)."""

    fields = {"matrix": SUM, "instances": SUM, "units": SUM, "unit_rows": CAT}

    def __init__(self, spec: MetricSpec, row_layout: Optional[RowLayout] = None) -> None:
        self.spec = spec
        self.matrix = np.zeros((spec.size, spec.size), dtype=np.int64)
        # class id -> {instance size: [instances, summed tp, summed category tp]}
        self.instances: Dict[int, Dict[int, List[int]]] = {}
        self.units = 0
        # With a row layout, update() keeps each image's row for the confidence interval.
        self.row_layout = row_layout
        self.unit_rows: Dict[str, np.ndarray] = {}

    @property
    def images(self) -> int:
        return self.units

    @property
    def pixels(self) -> int:
        return int(self.matrix.sum())

    def update(self, unit_id: str, prediction: np.ndarray, truth) -> None:
        """prediction: label ids of the table (checked), the shape of the truth; truth: a Truth
        (raw layout) or a PackedTruth. With a row layout, the image is scored into a state of
        its own, whose matrix and instances give its row (intervals.py), then merged."""
        if self.row_layout is None:
            self._fold(prediction, truth)
            return
        one = SemanticState(self.spec)
        one._fold(prediction, truth)
        self.merge(one)
        self.unit_rows[unit_id] = image_row(self.row_layout, one)

    def _fold(self, prediction: np.ndarray, truth) -> None:
        if isinstance(truth, PackedTruth):
            self._update_packed(prediction, truth)
        else:
            self._update_raw(prediction, truth)
        self.units += 1

    def _update_raw(self, prediction: np.ndarray, truth: Truth) -> None:
        k = self.spec.size
        key = truth.labels.astype(np.uint16)  # ids < k <= 256: keys fit in 16 bits
        key *= k
        key += prediction
        # bincount casts its input to intp; an explicit cast first is 2-3x faster under numpy 2
        # (and no slower under 1.x) than letting it cast a uint16 array.
        counts = np.bincount(key.ravel().astype(np.intp), minlength=k * k)
        self.matrix += counts.reshape(k, k)
        where, values = truth.where, truth.ids
        if where is None or values is None:  # the reader gives both or neither
            where = truth.instances >= 1000
            values = truth.instances[where]
        if values.size:
            self._count_instances(values, prediction[where])

    def _count_instances(self, values: np.ndarray, predicted: np.ndarray) -> None:
        """The instance pixels of one image (their instance values and predictions): one
        histogram of (instance, prediction), over the instances present, gives every
        instance's size and hits."""
        k = self.spec.size
        ids = values.astype(np.intp)
        seen = np.bincount(ids)
        present = np.flatnonzero(seen)
        index = np.zeros(seen.size, dtype=np.intp)
        index[present] = np.arange(present.size)
        key = index[ids]
        key *= k
        key += predicted
        hist = np.bincount(key, minlength=present.size * k).reshape(present.size, k)
        self._add_rows(present, hist)

    def _update_packed(self, prediction: np.ndarray, truth: PackedTruth) -> None:
        """One joint histogram of (table entry, prediction) gives everything: the confusion
        rows of each entry's label, and each instance's size and hits."""
        k, t = self.spec.size, len(truth.labels)
        key = truth.index.astype(np.uint16 if t * k <= 65536 else np.intp)
        key *= k
        key += prediction
        hist = np.bincount(key.ravel().astype(np.intp), minlength=t * k).reshape(t, k)
        np.add.at(self.matrix, truth.labels.astype(np.intp), hist)
        entries = np.flatnonzero(truth.instances >= FIRST_INSTANCE)
        if entries.size:
            self._add_rows(truth.instances[entries].astype(np.int64), hist[entries])

    def _add_rows(self, ids: np.ndarray, rows: np.ndarray) -> None:
        """Fold in one image's instances: ids their values, rows[i] the histogram of the
        predictions over instance i's pixels. A value of 1000 or less is no instance (the
        anchor's `instanceNp > 1000`) and instances of uncounted classes are skipped."""
        classes = ids // 1000
        category = self.spec.category[:rows.shape[1]]
        same = category[None, :] == category[classes][:, None]
        sizes, tp = rows.sum(axis=1), rows[np.arange(len(ids)), classes]
        cat_tp = (rows * same).sum(axis=1)
        for i, s, t, ct in zip(ids.tolist(), sizes.tolist(), tp.tolist(), cat_tp.tolist()):
            c = i // 1000
            if i < FIRST_INSTANCE or not s or not self.spec.counted[c]:
                continue
            entry = self.instances.setdefault(c, {}).setdefault(s, [0, 0, 0])
            entry[0] += 1
            entry[1] += t
            entry[2] += ct



# --------------------------------------------------------------------------------------------
# Scores from the state
# --------------------------------------------------------------------------------------------

class ClassRow(NamedTuple):
    name: str
    id: int
    tp: int
    fp: int
    fn: int
    iou: Optional[float]
    has_instances: bool
    instances: int                 # instances of the class in the reference
    average_size: Optional[float]  # the average instance size used (None: not needed)
    size_source: str               # "configured", "reference" or ""
    itp: Optional[float]
    ifn: Optional[float]
    iiou: Optional[float]


class CategoryRow(NamedTuple):
    name: str
    members: List[str]
    tp: int
    fp: int
    fn: int
    iou: Optional[float]
    itp: Optional[float]
    ifp: Optional[int]
    ifn: Optional[float]
    iiou: Optional[float]


class Result(NamedTuple):
    classes: List[ClassRow]
    categories: List[CategoryRow]
    means: Dict[str, Optional[float]]  # iou_class, iiou_class, iou_category, iiou_category
    matrix: np.ndarray


def _weighted(by_size: Dict[int, List[int]], category: bool) -> Tuple[float, float]:
    """(sum over instances of tp_i / size_i, sum of (size_i - tp_i) / size_i), tp_i being the
    pixels of instance i predicted as its class (category=False) or as any class of its
    category, from integers: each key's term is one correctly rounded division and math.fsum
    adds them exactly, so the result does not depend on any order."""
    hits, misses = [], []
    for s in sorted(by_size):
        n, tp, cat_tp = by_size[s]
        hit = cat_tp if category else tp
        hits.append(hit / s)
        misses.append((n * s - hit) / s)
    return math.fsum(hits), math.fsum(misses)


def average_sizes(state: SemanticState, table: LabelTable) -> Dict[int, Optional[Fraction]]:
    """Average instance size per class with an iIoU: configured, else the mean size of the class's
    instances over the reference (None when neither exists: the class has no instance, so its
    weighted sums are 0 whatever the size)."""
    out: Dict[int, Optional[Fraction]] = {}
    for lab in table.instance_classes():
        if lab.name in table.average_sizes:
            out[lab.id] = Fraction(table.average_sizes[lab.name])
            continue
        by_size = state.instances.get(lab.id, {})
        count = sum(n for n, _, _ in by_size.values())
        total = sum(n * s for s, (n, _, _) in by_size.items())
        out[lab.id] = Fraction(total, count) if count else None
    return out


def _ratio(num, den) -> Optional[float]:
    return float(num / den) if den else None


def _mean(values: List[Optional[float]]) -> Optional[float]:
    defined = [v for v in values if v is not None]
    return math.fsum(defined) / len(defined) if defined else None


class _Matrix(NamedTuple):
    """The confusion matrix (rows reference) and the sums the rows are read from."""

    m: np.ndarray
    row_sums: np.ndarray
    # Rows of ignored reference labels never count (the anchor's `notIgnored` rows).
    counted_rows: np.ndarray
    counted_col_sums: np.ndarray


def summarize(state: SemanticState, table: LabelTable) -> Result:
    m = state.matrix
    counted_rows = np.zeros(table.size, dtype=bool)
    for lab in table.evaluated():
        counted_rows[lab.id] = True
    mx = _Matrix(m, m.sum(axis=1), counted_rows, m[counted_rows].sum(axis=0))
    sizes = average_sizes(state, table)
    classes = [_class_row(lab, mx, state, table, sizes) for lab in table.evaluated()]
    categories = [row for row in (_category_row(cat, mx, state, table, sizes)
                                  for cat in table.categories) if row is not None]
    means = {
        "iou_class": _mean([r.iou for r in classes]),
        "iiou_class": _mean([r.iiou for r in classes]),
        "iou_category": _mean([r.iou for r in categories]),
        "iiou_category": _mean([r.iiou for r in categories]),
    }
    return Result(classes, categories, means, m)


def _class_row(lab: Any, mx: _Matrix, state: SemanticState, table: LabelTable,
               sizes: Dict[int, Optional[Fraction]]) -> ClassRow:
    """One evaluated class: its IoU and, for a class with instances, its iIoU."""
    c = lab.id
    tp = int(mx.m[c, c])
    fn = int(mx.row_sums[c]) - tp
    fp = int(mx.counted_col_sums[c]) - tp  # column c over counted rows other than c
    row: Dict[str, Any] = dict(
        name=lab.name, id=c, tp=tp, fp=fp, fn=fn, iou=_ratio(Fraction(tp), tp + fp + fn),
        has_instances=lab.has_instances, instances=0, average_size=None, size_source="",
        itp=None, ifn=None, iiou=None)
    if lab.has_instances:
        by_size = state.instances.get(c, {})
        avg = sizes[c]
        row["instances"] = sum(n for n, _, _ in by_size.values())
        if avg is not None:
            row["average_size"] = float(avg)
            row["size_source"] = ("configured" if lab.name in table.average_sizes
                                  else "reference")
        f_avg = float(avg) if avg is not None else 0.0
        hits, misses = _weighted(by_size, category=False)
        itp, ifn = f_avg * hits, f_avg * misses
        row.update(itp=itp, ifn=ifn, iiou=_ratio(itp, itp + fp + ifn))
    return ClassRow(**row)


def _category_row(cat: str, mx: _Matrix, state: SemanticState, table: LabelTable,
                  sizes: Dict[int, Optional[Fraction]]) -> Optional[CategoryRow]:
    """One category: its IoU over its evaluated classes and, when all its classes have
    instances, its iIoU; None for a category of ignored labels only (Cityscapes' void)."""
    m = mx.m
    ids = table.category_ids(cat)
    inst_ids = table.instance_category_ids(cat)
    if not ids and inst_ids is None:
        return None
    outside = mx.counted_rows.copy()
    for lab in table.members[cat]:
        if lab.id >= 0:
            outside[lab.id] = False
    row: Dict[str, Any] = dict(
        name=cat, members=[lab.name for lab in table.members[cat] if lab.id >= 0],
        tp=0, fp=0, fn=0, iou=None, itp=None, ifp=None, ifn=None, iiou=None)
    if ids:
        tp = int(m[np.ix_(ids, ids)].sum())
        fn = int(mx.row_sums[ids].sum()) - tp
        fp = int(m[np.ix_(np.flatnonzero(outside), ids)].sum())
        row.update(tp=tp, fp=fp, fn=fn, iou=_ratio(Fraction(tp), tp + fp + fn))
    if inst_ids is not None:
        # FP over the iIoU members (ignored classes included), unweighted.
        ifp = int(m[np.ix_(np.flatnonzero(outside), inst_ids)].sum()) if inst_ids else 0
        itp_terms, ifn_terms = [], []
        for lab in table.members[cat]:
            avg = sizes.get(lab.id)
            if lab.id < 0 or lab.ignore_in_eval or avg is None:
                continue
            by_size = state.instances.get(lab.id, {})
            f_avg = float(avg)
            hits, misses = _weighted(by_size, category=True)
            itp_terms.append(f_avg * hits)
            ifn_terms.append(f_avg * misses)
        itp, ifn = math.fsum(itp_terms), math.fsum(ifn_terms)
        row.update(itp=itp, ifp=ifp, ifn=ifn, iiou=_ratio(itp, itp + ifp + ifn))
    return CategoryRow(**row)


def score_list(result: Result, table: LabelTable) -> List[Tuple[str, Optional[float]]]:
    """(key, value) in the order of table.score_keys(); None = undefined (never written)."""
    values = dict(result.means)
    for row in result.classes:
        values["iou_class_" + key_name(row.name)] = row.iou
        if row.has_instances:
            values["iiou_class_" + key_name(row.name)] = row.iiou
    for cat_row in result.categories:
        values["iou_category_" + key_name(cat_row.name)] = cat_row.iou
        values["iiou_category_" + key_name(cat_row.name)] = cat_row.iiou
    return [(k, values.get(k)) for k in table.score_keys()]
