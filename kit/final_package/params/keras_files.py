"""Keras files: `.keras` (a zip of metadata.json, config.json and model.weights.h5) and HDF5
`.h5` weights. Only the HDF5 datasets' shapes and dtypes are read, through h5py (optional: a
missing h5py leaves the file not counted, with the command that installs it). config.json is
never read: it can carry code (CVE-2024-3660, CVE-2025-1550).

Legacy Keras `.h5` files name their weights (`bn/moving_mean:0`), so the rule tells BatchNorm's
moving statistics apart; Keras 3's `model.weights.h5` names them by index (`vars/2`), so they
are counted with the parameters.
"""
import sys
import zipfile
from typing import Any, Optional

from scoring import zips
from scoring.problems import shown
from . import bounds, rule
from .result import ZIP_ERRORS, FileCount, NotCounted, FileRefused, counted

WEIGHTS_MEMBER = "model.weights.h5"


def _h5py():
    try:
        import h5py
    except ImportError:
        raise NotCounted("reading HDF5 weights needs the h5py package, which is not installed: "
                         "{} -m pip install h5py".format(sys.executable)) from None
    return h5py


def _count_h5(source: Any, shown_path: str, fmt: str, budget: bounds.Budget) -> FileCount:
    h5py = _h5py()
    figures = rule.Figures()
    found = []
    limit = budget.limit("entries", bounds.MAX_HDF5_DATASETS)

    def visit(name: str, obj: Any) -> Any:
        if isinstance(obj, h5py.Dataset):
            found.append((name, obj.dtype, obj.shape))
        return True if len(found) > limit else None       # True stops the visit
    try:
        with h5py.File(source, "r") as f:
            f.visititems(visit)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:  # h5py's, damaged
        raise FileRefused("the HDF5 file cannot be read ({})".format(
            shown(str(exc)[:120]))) from None
    budget.take("entries", len(found))
    if len(found) > limit:
        if budget.binding("entries", bounds.MAX_HDF5_DATASETS):
            raise budget.exhausted("entries", "the HDF5 file")
        raise FileRefused("the HDF5 file holds more than {:,} datasets".format(
            bounds.MAX_HDF5_DATASETS))
    tensors = 0
    for name, dtype, shape in sorted(found, key=lambda x: x[0]):
        if dtype.kind in "OSUV" or shape is None:
            continue      # strings and attributes-like datasets: no weights
        numel = 1
        for d in shape:
            numel *= d
        figures.add(tuple(name.split("/")), dtype.name, False, numel, shape)
        tensors += 1
    result, note = figures.result()
    return counted(shown_path, fmt, result, tensors, note=note, records=tuple(figures.records))


def count_h5(path: str, shown_path: str, budget: Optional[bounds.Budget] = None) -> FileCount:
    return _count_h5(path, shown_path, "Keras HDF5", bounds.default_budget(budget))


def count_keras(path: str, shown_path: str, budget: Optional[bounds.Budget] = None) -> FileCount:
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                zips.check_members(zf, path + ".d")
            except zips.ArchiveProblem as exc:
                raise FileRefused("the .keras zip is unsafe: {}".format(shown(str(exc)))) from None
            if WEIGHTS_MEMBER not in zf.namelist():
                raise FileRefused("a .keras zip without {}".format(WEIGHTS_MEMBER))
            _h5py()
            with zf.open(WEIGHTS_MEMBER) as f:
                return _count_h5(f, shown_path, "Keras .keras", bounds.default_budget(budget))
    except ZIP_ERRORS as exc:
        raise FileRefused("the .keras zip cannot be read ({})".format(shown(str(exc)))) from None
