"""scoring/quoting.py: values quoted briefly in messages; formula cells neutralised."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.quoting import brief, spreadsheet_safe


def test_brief_short_values_are_their_repr():
    for value in ("abc", 12, 1.5, None, True, [1, 2], {"a": 1}, "it's"):
        assert brief(value) == repr(value)


def test_brief_cuts_long_strings_and_says_how_long():
    text = brief("x" * 100000)
    assert text.startswith("'xxxx") and text.endswith("... (100,000 characters)")
    assert len(text) < 110


def test_brief_escapes_control_characters():
    assert brief("a\x1b[2J\nb\u202e") == "'a\\x1b[2J\\nb\\u202e'"


def test_brief_huge_integers_are_described():
    huge = 10 ** 5000 - 1             # no int("9" * 5000): Python 3.11 (and 3.7.14+) refuse it
    assert brief(huge) == "<an integer of about 5,000 digits>"
    assert brief(-huge) == "<an integer of about 5,000 digits>"
    assert len(brief(10 ** 1000)) < 110                 # repr'd, then cut by reprlib


def test_brief_huge_and_recursive_structures():
    assert len(brief([list(range(1000))] * 1000)) < 110
    loop = []
    loop.append(loop)
    assert len(brief(loop)) < 110
    assert len(brief({"k" * 1000: ["v" * 1000] * 10})) < 200


def test_brief_never_fails():
    class Hostile:
        def __repr__(self):
            raise RuntimeError("no")
    assert brief(Hostile()).startswith("<Hostile")


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(st.one_of(st.text(max_size=300), st.integers(), st.floats()),
                    lambda inner: st.lists(inner, max_size=20) |
                    st.dictionaries(st.text(max_size=30), inner, max_size=10), max_leaves=30),
       st.integers(10, 200))
def test_brief_is_bounded(value, limit):
    assert len(brief(value, limit)) <= limit + 24


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx",
                                  "=HYPERLINK(\"http://x\")"])
def test_formula_cells_get_a_quote(cell):
    assert spreadsheet_safe(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["", "plain", "a=b", " =x", "'=x", "1-2", "\u00e9t\u00e9"])
def test_other_cells_are_unchanged(cell):
    assert spreadsheet_safe(cell) == cell
