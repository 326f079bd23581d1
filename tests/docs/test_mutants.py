"""tests/mutants.py, the runner CI uses to break the code in named ways: a mutant whose code moved
stops the run with its name (never dropped silently), and CI's shares run every mutant."""
import importlib.util
import os

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("mutants", os.path.join(ROOT, "tests", "mutants.py"))
mutants = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutants)


def _tree(tmp_path, text):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("")
    (tmp_path / "m.py").write_text(text)
    return str(tmp_path)


def test_a_mutant_whose_source_moved_is_named_with_its_file(tmp_path, monkeypatch):
    root = _tree(tmp_path, "if a > 0:\n    pass\nif a > 0:\n    pass\n")
    monkeypatch.setattr(mutants, "MUTATIONS", [
        ("guard flipped", "m.py", "if a > 0:", "if a >= 0:", "tests/test_x.py"),
        ("guard removed", "m.py", "if b:", "if True:", "tests/test_x.py"),
        ("guard removed", "gone.py", "x", "y", "tests/test_gone.py -k x"),
        ("nothing changed", "m.py", "    pass\nif", "    pass\nif", "tests/test_x.py")])
    problems = mutants.problems_of_the_list(root)
    assert "guard flipped: its source occurs 2 times in m.py" in problems[0]
    assert "guard removed: its source occurs 0 times in m.py" in problems[1]
    assert "guard removed: a second mutant of this name" in problems
    assert any(p.startswith("guard removed: its source occurs 0 times in gone.py") for p in problems)
    assert "guard removed: no test file tests/test_gone.py" in problems
    assert "nothing changed: its replacement is its source" in problems


def test_the_shares_run_every_mutant_once():
    n = 20
    shares = [mutants.share_of(list(range(len(mutants.MUTATIONS))), "{}/{}".format(i, n))[0]
              for i in range(n)]
    flat = sorted(x for share in shares for x in share)
    assert flat == list(range(len(mutants.MUTATIONS)))
    assert max(map(len, shares)) - min(map(len, shares)) <= 1


def test_a_run_restores_the_file_and_a_caught_mutant_is_caught(tmp_path):
    root = _tree(tmp_path, "def f():\n    return 1\n")
    (tmp_path / "tests" / "test_x.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n"
        "import m\n\ndef test_f():\n    assert m.f() == 1\n")
    caught, _, detail = mutants.run_one(root, ("f returns 2", "m.py", "return 1", "return 2",
                                               "tests/test_x.py"))
    assert caught and "test_f" in detail
    assert (tmp_path / "m.py").read_text() == "def f():\n    return 1\n"


def test_a_python_without_the_test_tools_is_refused_before_any_mutant(monkeypatch, capsys):
    """Without hypothesis (or pytest) every mutant's tests fail to import, which would count
    each mutant as caught: the run stops first and names the Python to use."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "hypothesis" else real(name, *a))
    ran = []
    monkeypatch.setattr(mutants, "run_all", lambda *a: ran.append(a) or [])
    assert mutants.main(["PQ"]) == 2
    assert not ran
    out = capsys.readouterr().out
    assert "lacks hypothesis" in out and ".venv/bin/python tests/mutants.py" in out
