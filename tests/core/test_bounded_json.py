"""readers/bounded_json.py: one rule for integers on every Python (at most 4,300 digits), whether
the interpreter enforces Python 3.11's limit itself (3.11+, the 3.7-3.10 security releases) or
not (the worker image's Python 3.7.3: the parse_int hook); regular files only."""
import json
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import regular_file
from scoring.readers import bounded_json

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

LIMIT = bounded_json.MAX_INT_DIGITS


@pytest.fixture(params=["interpreter", "hook"])
def mode(request, monkeypatch):
    """Both paths: the interpreter's own limit (when it has the default one) and the hook."""
    if request.param == "interpreter":
        if not bounded_json._interpreter_limits_ints():
            pytest.skip("this Python has no int/str limit of 4,300 digits")
    else:
        monkeypatch.setattr(bounded_json, "_interpreter_limits_ints", lambda: False)
    return request.param


@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_of_exactly_4300_digits_is_read(mode, sign):
    got = bounded_json.loads("[" + sign + "9" * LIMIT + "]")
    assert got == [int(sign + "1") * (10 ** LIMIT - 1)]


def test_floats_beyond_a_double_are_infinities_as_json_reads_them(mode):
    assert bounded_json.loads("[1, -2, 0, 3.5, 1e400, -1e400]") == \
        [1, -2, 0, 3.5, float("inf"), float("-inf")]


@pytest.mark.parametrize("text", ["9" * (LIMIT + 1), "-" + "9" * (LIMIT + 1),
                                  '{"a": [1, ' + "1" * (LIMIT + 1) + "]}",
                                  "[" + "7" * 1000000 + "]"])
def test_beyond_the_limit(mode, text):
    started = time.process_time()
    with pytest.raises(bounded_json.LongInteger):
        bounded_json.loads(text)
    assert time.process_time() - started < 1.0     # not the quadratic conversion


def test_the_hook_names_the_length(monkeypatch):
    monkeypatch.setattr(bounded_json, "_interpreter_limits_ints", lambda: False)
    with pytest.raises(bounded_json.LongInteger) as info:
        bounded_json.loads("[" + "5" * 5000 + "]")
    assert info.value.digits == 5000 and str(info.value) == "an integer of 5,000 digits"


def test_json_errors_are_json_errors(mode):
    with pytest.raises(json.JSONDecodeError):
        bounded_json.loads("[1, 2")
    with pytest.raises(RecursionError):
        bounded_json.loads("[" * 100000 + "]" * 100000)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children,
                                                                      max_size=4),
    max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(doc=JSON)
def test_the_same_document_as_json_loads(doc):
    text = json.dumps(doc)
    expected = json.loads(text)
    assert bounded_json.loads(text) == expected
    bounded_json._interpreter_limits_ints, saved = (lambda: False), \
        bounded_json._interpreter_limits_ints
    try:
        assert bounded_json.loads(text) == expected
    finally:
        bounded_json._interpreter_limits_ints = saved


def test_load_file_reads_regular_files_only(tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(b'\xef\xbb\xbf{"a": [1]}')          # a byte-order mark is tolerated
    assert bounded_json.load_file(str(good)) == {"a": [1]}
    os.mkfifo(str(tmp_path / "fifo.json"))
    os.symlink(str(good), str(tmp_path / "link.json"))
    os.symlink("/dev/zero", str(tmp_path / "zero.json"))
    for name, kind in (("fifo.json", regular_file.NOT_REGULAR),
                       ("link.json", regular_file.NOT_REGULAR),
                       ("zero.json", regular_file.NOT_REGULAR)):
        with pytest.raises(regular_file.Refused) as info:
            bounded_json.load_file(str(tmp_path / name))
        assert info.value.kind == kind, name
    # An organizer's file: a link to a regular file is followed, to a device it is not.
    assert bounded_json.load_file(str(tmp_path / "link.json"), follow_links=True) == {"a": [1]}
    with pytest.raises(regular_file.Refused) as info:
        bounded_json.load_file(str(tmp_path / "zero.json"), follow_links=True)
    assert info.value.detail() == "it is a device file"
    with pytest.raises(regular_file.Refused) as info:
        bounded_json.read_bytes(str(good), max_bytes=3)
    assert info.value.kind == regular_file.TOO_LARGE
