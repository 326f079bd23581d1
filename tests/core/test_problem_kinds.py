"""Problem kinds: one code names one kind, across the shared kinds and every task's, so two
problems can never merge in a log; a second definition fails when its module is imported."""
import importlib.util

import pytest

from scoring import problems
from scoring.registry import TASKS


def test_every_task_imports_with_its_own_codes():
    for name in TASKS:
        TASKS[name]  # a code defined twice would fail here
    codes = list(problems._KINDS)
    assert len(codes) == len(set(codes))
    assert {"missing", "bad_values", "ps_ref_config", "vqa_not_json"} <= set(codes)


def test_a_code_defined_twice_fails_at_import(tmp_path):
    module = tmp_path / "toy_problems.py"
    module.write_text('from scoring.problems import Kind\n'
                      'TOY = Kind("toy_only_code", "a toy problem", "fix it")\n'
                      'AGAIN = Kind("bad_values", "the toy\'s own bad values", "fix them")\n')
    spec = importlib.util.spec_from_file_location("toy_problems", str(module))
    with pytest.raises(ValueError, match="'bad_values' is defined twice"):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    problems._KINDS.pop("toy_only_code", None)


def test_kinds_are_reported_in_their_explicit_order_whatever_the_import_order():
    """The shared kinds carry their order (finding the files, each file's problems, the noted
    ones, the organizers'), the label-PNG format's among them though its own module defines
    them; a task's kinds follow all of them: moving a kind to another module,
    or importing the tasks in another order, reorders no message."""
    from scoring.formats.label_png import kinds as png
    from scoring.tasks.planetscapes_vqa.problems import NO_RESULTS
    shared = [problems.BAD_ZIP, problems.NO_PREDICTIONS, problems.AMBIGUOUS_ROOT,
              problems.MISSING, problems.MISNAMED, problems.DUPLICATE, png.NOT_PNG,
              png.NOT_REGULAR, png.TOO_LARGE, png.WRONG_SIZE,
              png.TRANSPOSED, png.NOT_SINGLE_CHANNEL, png.BAD_VALUES,
              problems.EXTRA_PNG, problems.EXTRA_FILE, problems.REF_ARCHIVE,
              problems.REF_CONFIG]
    assert [k.order for k in shared] == sorted(k.order for k in shared)
    assert max(k.order for k in shared) < problems.ORDER_TASK <= NO_RESULTS.order
    log = problems.ProblemLog()
    for kind in [NO_RESULTS] + shared[::-1]:          # added in the reverse order
        log.add(kind, "x")
    assert log.kinds() == shared + [NO_RESULTS]
    # A task's kinds, in the order its module defines them, after every shared kind, even when
    # the task's module is imported first.
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from scoring.tasks.planetscapes_vqa import problems as p; "
            "from scoring import problems as s; "
            "print(p.NO_RESULTS.order > s.REF_CONFIG.order, p.NO_RESULTS.order < p.TWO_RESULTS.order)")
    import subprocess
    import sys
    from conftest import PROGRAM
    out = subprocess.run([sys.executable, "-c", code, PROGRAM], capture_output=True, text=True,
                         timeout=60).stdout
    assert out.split() == ["True", "True"]
