"""Every named mutant of tests/mutants.py still applies: its exact source occurs once in its file
and its replacement differs (a refactoring that rewrites a line must re-key the mutant, not
silently drop it: tests/mutants.py would stop at it, but is not run by CI)."""
import importlib.util
import os

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("mutants", os.path.join(ROOT, "tests", "mutants.py"))
mutants = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutants)


def test_names_are_unique():
    names = [m[0] for m in mutants.MUTATIONS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name,path,source,replacement,args", mutants.MUTATIONS,
                         ids=[m[0] for m in mutants.MUTATIONS])
def test_the_mutant_applies_once(name, path, source, replacement, args):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    assert text.count(source) == 1, (path, text.count(source))
    assert replacement != source
    for word in args.split():
        if word.startswith("tests/"):
            assert os.path.exists(os.path.join(ROOT, word.split("::")[0])), word
