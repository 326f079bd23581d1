"""cityscapesScripts' pixel-level evaluator as bench/planetscapes.py's anchor, run in the anchor's
own Python (an environment with `cityscapesscripts` and numpy < 2.4; stdlib only here).

    ANCHOR_PYTHON bench/cityscapes_anchor.py LISTS_JSON   # evaluate; one JSON line
    ANCHOR_PYTHON bench/cityscapes_anchor.py --detect     # which path it would run; one JSON line

cityscapesScripts' evalPixelLevelSemanticLabeling has two code paths for the confusion matrix:
at import it tries `from cityscapesscripts.evaluation import addToConfusionMatrix` (the Cython
extension, built only when the package is installed from its repository with CYTHONIZE_EVAL set)
and sets its module flag CSUPPORT to False when that fails; evaluatePair then calls
addToConfusionMatrix.cEvaluatePair if CSUPPORT, else counts pixel pairs with np.unique in
Python. The path is read from that flag, in the process that evaluates, so the row's label is
the path that ran.
"""
import json
import os
import sys
import time

EVALUATOR = "cityscapesscripts.evaluation.evalPixelLevelSemanticLabeling"
CYTHON, PURE = "Cython", "pure Python"
SCORE_KEYS = ("classScores", "classInstScores", "categoryScores", "categoryInstScores",
              "averageScoreClasses", "averageScoreInstClasses", "averageScoreCategories",
              "averageScoreInstCategories")


def evaluation_path(ev):
    """(path, file of the compiled extension or None) of an imported evaluator module `ev`:
    the branch its evaluatePair takes (`if (CSUPPORT):` -> addToConfusionMatrix.cEvaluatePair)."""
    ext = getattr(ev, "addToConfusionMatrix", None)
    if getattr(ev, "CSUPPORT", False) and ext is not None and hasattr(ext, "cEvaluatePair"):
        return CYTHON, getattr(ext, "__file__", None)
    return PURE, None


def version():
    """The imported package's own VERSION file (shipped as package data), else its metadata."""
    import cityscapesscripts
    try:
        with open(os.path.join(os.path.dirname(cityscapesscripts.__file__), "VERSION")) as f:
            return f.read().strip()
    except (OSError, TypeError):
        pass
    try:
        from importlib import metadata  # novermin (guarded: 3.7 falls through to "?")
        return metadata.version("cityscapesScripts")
    except Exception:  # Python 3.7 has no importlib.metadata; a source tree has no metadata
        return "?"


def describe(ev):
    path, extension = evaluation_path(ev)
    return {"path": path, "extension": extension, "version": version(),
            "module": getattr(ev, "__file__", None)}


def evaluate(ev, gt, pred):
    args = ev.args
    args.quiet, args.JSONOutput, args.evalPixelAccuracy = True, False, False
    args.evalInstLevelScore = True
    started, cpu = time.perf_counter(), time.process_time()
    result = ev.evaluateImgLists(pred, gt, args)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"seconds": seconds, "cpu": cpu, "scores": {k: result[k] for k in SCORE_KEYS}}


def main(argv):
    import importlib
    ev = importlib.import_module(EVALUATOR)
    out = describe(ev)
    if argv != ["--detect"]:
        with open(argv[0]) as f:
            gt, pred = json.load(f)
        out.update(evaluate(ev, gt, pred))
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
