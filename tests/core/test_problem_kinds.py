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
