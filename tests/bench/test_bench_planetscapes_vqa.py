"""bench/vqa.py end to end at a tiny scale. Not a timed test: nothing about speed is asserted,
only that the measurements run, the scorer agrees with the baseline on both reference layouts,
the packed reference is cached, and the report has its rows."""
import os
import subprocess
import sys

from conftest import ROOT  # noqa: E402
BENCH = os.path.join(ROOT, "bench", "vqa.py")


# ---------------------------------------------------------------- the official code's converter
import contextlib  # noqa: E402
import hashlib  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402

import pytest  # noqa: E402

_spec = importlib.util.spec_from_file_location("py2fix", os.path.join(ROOT, "bench", "py2fix.py"))
py2fix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(py2fix)

# Python 2, written for this test: print statements of every form, tab indentation mixed with
# spaces (a tab reaches the next multiple of 8: "  \t" is 8 columns, "        \t" 16), and a
# docstring and a string whose inner lines start with tabs (string content: it must stay;
# a string, not a docstring, is printed: Python 3.13 strips docstrings' indentation itself).
PY2_SNIPPET = (
    'import sys\n'
    '\n'
    'def show(items):\n'
    '\t"""Docstring:\n'
    '\t\tits inner tabs stay."""\n'
    '\ttotal = 0\n'
    '\tnote = \"\"\"Note:\n'
    '  \t\tinner tabs stay.\"\"\"\n'
    '\tfor i, item in enumerate(items):\n'
    '\t\tif i % 2: print "odd", item\n'
    '\t\telse:\n'
    '\t\t    print "even", item,\n'
    '  \t\t    print "|"\n'
    '        \ttotal += i\n'
    '        return total, note\n'
    '\n'
    'printer = 5\n'
    'print printer, "print x"\n'
    'print ("tuple", 1)\n'
    'print ("paren")\n'
    'print >>sys.stdout, "to", "stdout"\n'
    'print >>sys.stdout\n'
    'print "%s-%d" % ("fmt", 2)   # a comment\n'
    'x = 3; print x; print x * 2\n'
    'print "multi", (1 +\n'
    '\t2), \\\n'
    '\t"end"\n'
    'd = {"k": lambda v: v + 1}\n'
    'n, note = show(["a", "b", "c"])\n'
    'print d["k"](1), n\n'
    'print\n'
    'print note\n'
)
# What Python 2.7 prints for it (checked against python2.7 where one is installed, below).
PY2_OUTPUT = ("5 print x\n('tuple', 1)\nparen\nto stdout\n\nfmt-2\n3\n6\nmulti 3 end\n"
              "even a |\nodd b\neven c |\n2 3\n\nNote:\n  \t\tinner tabs stay.\n")
PYTHON2 = next((p for p in ("/root/.pyenv/versions/2.7.18/bin/python2.7",
                             shutil.which("python2.7")) if p and subprocess.run(
                                 [p, "-c", "pass"], capture_output=True).returncode == 0), None)


def _run_converted(source):
    code, info = py2fix.convert(source)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<converted>", "exec"), {"__name__": "__main__"})
    return code, info, out.getvalue()


def test_converted_snippet_prints_what_python2_prints():
    code, info, out = _run_converted(PY2_SNIPPET)
    assert out == PY2_OUTPUT
    assert info == {"print_statements": 15, "reindented_lines": 11}
    for expected in ('print("even", item, end=" ")', 'print("to", "stdout", file=sys.stdout)',
                     'print(file=sys.stdout)', 'print(("tuple", 1))', 'print()',
                     'x = 3; print(x); print(x * 2)', 'print("%s-%d" % ("fmt", 2))   # a comment',
                     'printer = 5\n', 'if i % 2: print("odd", item)'):
        assert expected in code, expected


def test_nothing_but_indentation_and_prints_changes():
    """Line for line (the conversion keeps the line structure): a line is unchanged, or only
    its leading whitespace changed (to the columns Python 2 reads), or it held a print."""
    code, _, _ = _run_converted(PY2_SNIPPET)
    before, after = PY2_SNIPPET.split("\n"), code.split("\n")
    assert len(before) == len(after)
    for old, new in zip(before, after):
        if re.search(r"^\s*(if .*: |x = 3; )?print\b", old):  # a print statement starts here
            assert "print(" in new, (old, new)
        elif old != new:
            text = old.lstrip(" \t")
            closing = ")" if old == '\t"end"' else ""  # the last line of a multi-line print
            assert new == " " * len(old[:len(old) - len(text)].expandtabs(8)) + text + closing, (
                old, new)
    # string content, not indentation
    assert "\n\t\tits inner tabs stay." in code and "\n  \t\tinner tabs stay." in code


@pytest.mark.skipif(PYTHON2 is None, reason="no python2.7 here (dev-only check)")
def test_snippet_output_is_python2s():
    proc = subprocess.run([PYTHON2, "-c", PY2_SNIPPET], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == PY2_OUTPUT


def test_converter_leaves_print_functions_and_reports_what_it_cannot_read():
    src = "from __future__ import print_function\nprint('a', end='')\n"
    assert py2fix.convert(src) == (src, {"print_statements": 0, "reindented_lines": 0})
    with pytest.raises(py2fix.ConversionError):
        py2fix.convert('print "unterminated\n')
    with pytest.raises(py2fix.ConversionError):
        py2fix.convert("print >>\n")


# ---------------------------------------------------------------- the official row, end to end
# Stand-ins for GT-Vision-Lab/VQA's vqaEval.py and vqa.py (the real ones are not ours to ship):
# Python 2 files with the official classes' interface, laid out as in that repository's
# checkout, that evaluate with the project's baseline algorithm and round to VQAEval's n.
STUB_HELPER = (
    "import os, sys\n"
    "class VQA:\n"
    "\tdef __init__(self, annotation_file=None, question_file=None):\n"
    "\t\tprint 'loading VQA annotations and questions into memory...'\n"
    "\t\tself.files = [annotation_file, question_file]\n"
    "\tdef loadRes(self, resFile, quesFile):\n"
    "\t\tres = VQA()\n"
    "\t\tres.files = [resFile]\n"
    "\t\tprint 'DONE'\n"
    "\t\treturn res\n"
)
STUB_EVAL = (
    "import sys\n"
    "sys.path.insert(0, {bench!r})\n"
    "import vqa_baseline\n"
    "class VQAEval:\n"
    "\tdef __init__(self, vqa, vqaRes, n=2):\n"
    "\t\tself.vqa, self.vqaRes, self.n = vqa, vqaRes, n\n"
    "\tdef evaluate(self):\n"
    "\t\tprint \"computing accuracy\"\n"
    "\t\tgts, res = vqa_baseline.load(self.vqa.files[0], self.vqa.files[1], self.vqaRes.files[0])\n"
    "\t\tout = vqa_baseline.evaluate(gts, res)\n"
    "\t\tshift = {shift}\n"
    "\t\tself.accuracy = {{'overall': round(out['overall'] + shift, self.n), 'perAnswerType':\n"
    "\t\t\t{{k: round(v, self.n) for k, v in out['perAnswerType'].items()}}}}\n"
)


def _checkout(root, shift=0.0):
    evaluation = root / "PythonEvaluationTools" / "vqaEvaluation"
    helper = root / "PythonHelperTools" / "vqaTools"
    evaluation.mkdir(parents=True)
    helper.mkdir(parents=True)
    (evaluation / "vqaEval.py").write_text(STUB_EVAL.format(bench=os.path.join(ROOT, "bench"),
                                                            shift=shift))
    (helper / "vqa.py").write_text(STUB_HELPER)
    return evaluation / "vqaEval.py"


def test_vqa_bench_end_to_end(tmp_path):
    """Every row, the official code's included; a second run reuses the generated set and its
    packed reference, and fails when the official code's scores are off by 1e-8 from the
    scorer's."""
    report = tmp_path / "report.md"
    scratch = tmp_path / "tmp"  # the bench's temporary folders, which it must remove
    scratch.mkdir()
    vqaeval = _checkout(tmp_path / "VQA")
    proc = subprocess.run([sys.executable, BENCH, "--questions", "200", "--repeat", "1",
                           "--memory-sizes", "100", "--data", str(tmp_path / "data"),
                           "--report", str(report), "--official-vqaeval", str(vqaeval)],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TMPDIR=str(scratch)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert os.listdir(str(scratch)) == []
    out = proc.stdout
    sha = hashlib.sha256(vqaeval.read_bytes()).hexdigest()
    for row in ("| (a) floor", "| (b) project baseline", "| (c) scorer, packed reference",
                "| (d) scorer, raw reference", "| startup", "Packing (once, at bundle time",
                "- scorer / floor:", "vs project baseline: **", "- raw reference (d)",
                "| 100 |", "| 200 |",
                "| (c') the same with config.yaml `confidence: false`",
                "- confidence interval (bootstrap, 1,000 resamples of the 200 questions",
                "| (o) official vqaEval.py + vqa.py",
                "official: ran {} (sha256 {}) converted in memory with only these fixes: "
                "1 print statements".format(vqaeval, sha),
                "vs official vqaEval.py: **", "; vs project baseline: **",
                "packed == raw exactly, == project baseline == official vqaEval.py (to 1e-9)",
                "the baseline is ", "target, vs project baseline: **"):
        assert row in out, row
    assert report.read_text() in out and "pack.py: packed" in out
    assert os.path.isfile(str(tmp_path / "data" / "vqa-200-2021" / "packed" / "packed.json"))
    off = _checkout(tmp_path / "VQA-off", shift=1e-8)
    proc = subprocess.run([sys.executable, BENCH, "--questions", "200", "--repeat", "1",
                           "--memory-sizes", "", "--skip-baseline", "--data",
                           str(tmp_path / "data"), "--official-vqaeval", str(off)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "scores differ" in proc.stderr and "official vqaEval.py" in proc.stderr
    assert "generated" not in proc.stdout and "pack.py: packed" not in proc.stdout, proc.stdout


def test_official_needs_both_files(tmp_path):
    vqaeval = _checkout(tmp_path / "VQA")
    os.remove(str(tmp_path / "VQA" / "PythonHelperTools" / "vqaTools" / "vqa.py"))
    proc = subprocess.run([sys.executable, BENCH, "--official-vqaeval", str(vqaeval), "--data",
                           str(tmp_path / "data")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--official-vqa-helper" in proc.stderr, proc.stderr
