"""What the counting rule sets apart must look like what it claims to be.

The rule (rule.py) does not count buffers, optimizer state and EMA copies: a model hidden under
`model_ema` beside a decoy `model`, or named `*.running_mean`, or filed as optimizer state would
not be counted. So each tensor set apart is checked against what it claims to be:

- an EMA copy mirrors the model: each of its tensors has the shape of a tensor of the model in
  the same file (parameters and buffers; as many of each shape as the model has);
- optimizer state mirrors the parameters: each of its tensors of more than one element has the
  shape of a counted parameter of the package (Adam's moments), or a factored one (Adafactor's
  row and column statistics: shape[:-1], shape[:-2] + shape[-1:]), at most MOMENTS a parameter;
- running statistics (running_mean, running_var, moving_mean, moving_variance) are
  per-channel vectors beside a normalization layer: one dimension, and the layer's other
  statistic, or its weight, bias, gamma or beta, of the same length.

A tensor that does not is counted as a parameter (when in doubt, counted), and the file's note
names it. Integer tensors stay buffers: param_check warns when what is set apart, counted, would
exceed the limit.
"""
import re
from collections import Counter
from typing import Dict, List, Tuple

from . import rule
from .result import BUFFERS, COUNTED, EMA, OPTIMIZER, PARAMETERS, FileCount, Record
from .rule import EMA_ONLY

MOMENTS = 4
_PAIR = {"running_mean": "running_var", "running_var": "running_mean",
         "moving_mean": "moving_variance", "moving_variance": "moving_mean"}
_LAYER = ("weight", "bias", "gamma", "beta")
_SEPARATORS = re.compile(r"([./:])")
NAMED = 3      # tensors named in a note


def _siblings(name: str) -> List[str]:
    """The names a running statistic's layer gives its other statistic and its affine
    parameters: 'bn.running_mean' -> 'bn.running_var', 'bn.weight', 'bn.bias'..."""
    parts = _SEPARATORS.split(name)
    out = []
    for i, part in enumerate(parts):
        if part.lower() in _PAIR:
            for other in (_PAIR[part.lower()],) + _LAYER:
                out.append("".join(parts[:i] + [other] + parts[i + 1:]))
    return out


def _is_statistic(r: Record) -> bool:
    return r.category == BUFFERS and r.floating and \
        any(p.lower() in _PAIR for p in _SEPARATORS.split(r.name))


def _shapes(records: List[Record], categories: Tuple[str, ...]) -> Counter:
    found: Counter = Counter()
    for r in records:
        if r.category in categories:
            found[r.shape] += r.refs
    return found


def _take(available: Counter, r: Record) -> bool:
    if available[r.shape] >= r.refs:
        available[r.shape] -= r.refs
        return True
    return False


def _optimizer_shapes(files: List[FileCount]) -> Counter:
    found: Counter = Counter()
    for f in files:
        if f.status == COUNTED:
            for shape, n in _shapes(list(f.records), (PARAMETERS,)).items():
                found[shape] += MOMENTS * n
                if len(shape) >= 2:
                    found[shape[:-1]] += n
                    found[shape[:-2] + shape[-1:]] += n
    return found


def _unlike(f: FileCount, optimizer: Counter) -> List[Record]:
    """The file's tensors set apart that do not look like what they claim."""
    records = sorted(f.records, key=lambda r: (r.name, r.shape))
    model = _shapes(records, (PARAMETERS, BUFFERS))
    by_name: Dict[str, tuple] = {r.name: r.shape for r in records
                                 if r.category in (PARAMETERS, BUFFERS)}
    unlike = []
    for r in records:
        if r.category == EMA:
            ok = _take(model, r)
        elif r.category == OPTIMIZER and r.numel > 1:
            ok = _take(optimizer, r)
        elif _is_statistic(r):
            ok = len(r.shape) == 1 and any(by_name.get(s) == r.shape for s in _siblings(r.name))
        else:
            ok = True
        if not ok:
            unlike.append(r)
    return unlike


def _note(f: FileCount, unlike: List[Record]) -> str:
    what = {EMA: "EMA", OPTIMIZER: "optimizer state", BUFFERS: "a running statistic"}
    named = ", ".join("{} ({}, {})".format(r.name or "an unnamed tensor", what[r.category],
                                          "x".join(str(d) for d in r.shape) or "scalar")
                      for r in sorted(unlike, key=lambda r: (-r.numel, r.name))[:NAMED])
    more = len(unlike) - NAMED
    note = "{:,} elements set apart do not look like what they claim, counted: {}{}".format(
        sum(r.numel for r in unlike), named, " and {:,} more".format(more) if more > 0 else "")
    return "; ".join(n for n in (f.reason, note) if n)


def _as_model(f: FileCount) -> FileCount:
    """A file holding only an EMA copy counts it as the model (rule.EMA_ONLY): its records
    too."""
    if f.reason != EMA_ONLY:
        return f
    return f._replace(records=tuple(
        r._replace(category=rule.by_name(r.name, "float32" if r.floating else "int64", False))
        if r.category == EMA else r for r in f.records))


def check(files: List[FileCount]) -> List[FileCount]:
    """Each counted file with the tensors it sets apart that do not look like what they claim
    counted as parameters, named in its note."""
    files = [_as_model(f) for f in files]
    optimizer = _optimizer_shapes(files)
    out = []
    for f in files:
        unlike = _unlike(f, optimizer) if f.status == COUNTED else []
        if unlike:
            figures = dict(f.figures)
            for r in unlike:
                figures[r.category] -= r.numel
                figures[PARAMETERS] += r.numel
            moved = set(id(r) for r in unlike)
            records = tuple(r._replace(category=PARAMETERS) if id(r) in moved else r
                            for r in f.records)
            f = f._replace(figures=figures, reason=_note(f, unlike), records=records)
        out.append(f)
    return out


def largest(files: List[FileCount], n: int = NAMED) -> List[Tuple[str, Record]]:
    """The n largest tensors set apart over the counted files: (file, record)."""
    found = [(f.path, r) for f in files if f.status == COUNTED and not f.duplicate_of
             for r in f.records if r.category in (BUFFERS, OPTIMIZER, EMA)]
    return sorted(found, key=lambda fr: (-fr[1].numel, fr[0], fr[1].name))[:n]
