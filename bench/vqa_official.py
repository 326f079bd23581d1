"""The official VQA evaluation itself as a row of bench/vqa.py: GT-Vision-Lab/VQA's
PythonEvaluationTools/vqaEvaluation/vqaEval.py and PythonHelperTools/vqaTools/vqa.py, from the
user's own checkout, run as its vqaEvalDemo.py runs them (VQA(annotations, questions),
loadRes(results, questions), VQAEval(...).evaluate()).

The files are Python 2: they are converted in memory by bench/py2fix.py (print statements to
print() calls, leading tabs expanded as Python 2 reads them) and nothing else; nothing is
written to disk. VQAEval gets n=12 (its own parameter: the number of decimals it rounds the
accuracies to; the demo's 2 would make a comparison to 1e-9 meaningless).

    python3 bench/vqa_official.py VQAEVAL_PY VQA_PY ANNOTATIONS QUESTIONS RESULTS

prints one JSON line: the scores, the CPU time of loading (the helper) and of evaluating, the
SHA-256 of both files and what the conversion changed. The official code's own progress output
goes to /dev/null.
"""
import contextlib
import hashlib
import json
import os
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import py2fix  # noqa: E402

DECIMALS = 12


def load_module(name: str, path: str):
    """The file at `path`, converted, as a module `name`; (module, sha256, conversion info)."""
    with open(path, "rb") as f:
        raw = f.read()
    source, info = py2fix.convert(raw.decode("utf-8"))
    module = types.ModuleType(name)
    module.__file__ = path
    code = compile(source, "{} (print statements and indentation converted in memory)".format(
        path), "exec")
    exec(code, module.__dict__)
    return module, hashlib.sha256(raw).hexdigest(), info


def main(argv):
    vqaeval_path, vqa_path, annotations, questions, results = argv
    eval_module, eval_sha, eval_info = load_module("vqaEval", vqaeval_path)
    helper, helper_sha, helper_info = load_module("vqa", vqa_path)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        start = time.process_time()
        vqa = helper.VQA(annotations, questions)
        vqa_res = vqa.loadRes(results, questions)
        loaded = time.process_time()
        evaluator = eval_module.VQAEval(vqa, vqa_res, n=DECIMALS)
        evaluator.evaluate()
        done = time.process_time()
    sys.stdout.write(json.dumps({
        "overall": evaluator.accuracy["overall"],
        "perAnswerType": evaluator.accuracy["perAnswerType"],
        "cpu_load": loaded - start, "cpu_evaluate": done - loaded, "decimals": DECIMALS,
        "files": [{"path": os.path.abspath(vqaeval_path), "sha256": eval_sha, "fixed": eval_info},
                  {"path": os.path.abspath(vqa_path), "sha256": helper_sha, "fixed": helper_info}],
    }) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.stderr.write(__doc__)
        sys.exit(2)
    try:
        sys.exit(main(sys.argv[1:]))
    except py2fix.ConversionError as exc:
        sys.stderr.write("cannot convert the official file: {}\n".format(exc))
        sys.exit(1)
