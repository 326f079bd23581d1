"""scoring/safe_yaml.py: the same data as yaml.safe_load on ordinary YAML, and every hostile
document refused quickly with one exception naming the line."""
import contextlib
import os
import signal
import threading
import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import safe_yaml
from scoring.safe_yaml import YamlError
from yaml_bombs import laughs

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

# ------------------------------------------------------------------ ordinary YAML

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 30, 10 ** 30),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)),
    max_leaves=40)


@settings(max_examples=150, deadline=None)
@given(documents, st.booleans())
def test_same_data_as_safe_load(doc, flow):
    text = yaml.safe_dump(doc, default_flow_style=flow, allow_unicode=True)
    assert safe_yaml.load_text(text) == yaml.safe_load(text)


def test_aliases_merge_keys_and_tags_as_safe_load():
    text = ("base: &b {x: 1, y: [1, 2]}\nother: {<<: *b, y: 3}\nagain: *b\n"
            "when: 2024-05-01\nbits: !!binary aGVsbG8=\nset: !!set {a, b}\n"
            "n: 0x1F\nsexa: 1:30\nf: 1e-12\nflt: 1.5e-12\nnull: ~\n")
    assert safe_yaml.load_text(text) == yaml.safe_load(text)


def test_empty_documents():
    assert safe_yaml.load_text("") is None
    assert safe_yaml.load_text("# only a comment\n") is None
    assert safe_yaml.compose_text("") is None


# ------------------------------------------------------------------ refusals

REFUSED = {
    "billion laughs": (laughs(9), 5, "alias bomb"),
    # Two aliases per level, 40 levels: 2^40 paths through 80 nodes; memoized, it is cheap.
    # Level 14 stands for 2^16 - 1 values: the first over the cap.
    "2^40 paths": (laughs(40, width=2), 15, "alias bomb"),
    "recursive sequence": ("a: &a [1, *a]\n", 1, "recursive alias"),
    "recursive mapping": ("a: &a {b: {c: *a}}\n", 1, "recursive alias"),
    "recursive merge": ("a: &a {<<: *a}\n", 1, "recursive alias"),
    "deep flow sequences": ("a: " + "[" * 65 + "]" * 65 + "\n", 1, "nested more than 64 levels"),
    "deep flow mappings": ("a: " + "{x: " * 70 + "1" + "}" * 70 + "\n", 1,
                           "nested more than 64 levels"),
    "deep block": ("".join(" " * i + "k:\n" for i in range(80)), 65,
                   "nested more than 64 levels"),
    "long int": ("n: " + "1" * 4301 + "\n", 1, "longer than 4,300 digits"),
    "long tagged int": ("n: !!int " + "1" * 4301 + "\n", 1, "longer than 4,300 digits"),
    "long binary int": ("n: -0b" + "1" * 5000 + "\n", 1, "longer than 4,300 digits"),
    "duplicate key": ("a: 1\nb: 2\na: 3\n", 3,
                      "key 'a' appears twice in one mapping (first on line 1)"),
    "duplicate key quoted": ("a: 1\n'a': 2\n", 2, "appears twice"),
    "impossible date": ("d: 2024-02-30\n", 1, "day is out of range"),
    "python tag": ("x: !!python/object:os.system {}\n", 1, "is not allowed"),
    "local tag": ("x: !custom 1\n", 1, "the tag '!custom' is not allowed"),
    "unclosed": ("a: [1\n", 2, "not valid YAML"),
    "undefined alias": ("a: *undefined\n", 1, "found undefined alias"),
    "two documents": ("a: 1\n---\nb: 2\n", 2,
                      "expected a single document in the stream, but found another"),
    "unhashable key": ("{[1, 2]: x}\n", 1, "unhashable"),
    "lone surrogate": ('a: ok\nb: "x\\ud800"\n', 2, "a lone surrogate '\\ud800'"),
    "lone surrogate in a key": ('"\\udfff": 1\n', 1, "lone surrogate"),
}


class Hung(Exception):
    pass


@contextlib.contextmanager
def bounded(seconds):
    """Raise Hung after `seconds` of wall time: a guard that stopped working (a cycle walked
    forever, its stack growing by gigabytes) fails the test instead of hanging the run."""
    if threading.current_thread() is not threading.main_thread():
        yield                                   # signals reach the main thread only
        return

    def stop(signum, frame):
        raise Hung("still running after {} s".format(seconds))

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    text, line, words = REFUSED[name]
    start = time.process_time()
    with pytest.raises(YamlError) as info, bounded(3):
        safe_yaml.load_text(text)
    assert time.process_time() - start < 1.0
    assert info.value.line == line, str(info.value)
    assert words in info.value.problem
    assert str(info.value).startswith("line {}: ".format(line))
    assert len(str(info.value)) < 300


def test_too_many_values():
    """Counted on the parser's events, before composing (a legitimate but huge document is
    parsed only up to the cap: PyYAML reads about 30,000 values per second)."""
    with pytest.raises(YamlError) as info:
        safe_yaml.load_text("- 1\n" * 1001, max_nodes=1000)
    assert (info.value.line, info.value.problem) == (1000, "more than 1,000 values: too large "
                                                           "for a configuration")


def test_integer_at_the_limit_is_read():
    assert safe_yaml.load_text("n: " + "7" * 4300 + "\n") == {"n": int("7" * 4300)}


def test_caps_can_be_set():
    assert safe_yaml.load_text("[1, 2]", max_nodes=3) == [1, 2]
    with pytest.raises(YamlError, match="more than 2 values"):
        safe_yaml.load_text("[1, 2]", max_nodes=2)
    with pytest.raises(YamlError, match="nested more than 1 levels"):
        safe_yaml.load_text("[[1]]", max_depth=1)
    # Expanded: the mapping, its 3 keys, a (3 values), b and c (1 + 2 x 3 each) = 21.
    text = "a: &a [1, 2]\nb: [*a, *a]\nc: [*a, *a]\n"
    assert safe_yaml.load_text(text, max_nodes=21) == yaml.safe_load(text)
    with pytest.raises(YamlError, match="alias bomb"):
        safe_yaml.load_text(text, max_nodes=20)


def test_long_anchor_in_a_pyyaml_message_is_cut():
    with pytest.raises(YamlError) as info:
        safe_yaml.load_text("a: *" + "x" * 100000 + "\n")
    assert len(str(info.value)) < 300


# ------------------------------------------------------------------ files

def test_load_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbfa: 1\n")
    assert safe_yaml.load_file(str(path)) == {"a": 1}
    path.write_bytes(b"a: 1\nb: \xff\n")
    with pytest.raises(YamlError) as info:
        safe_yaml.load_file(str(path))
    assert (info.value.line, info.value.problem) == (2, "not UTF-8 text (byte 8)")
    path.write_bytes(b"a: 1\n" + b"#" * 100)
    assert safe_yaml.load_file(str(path), max_bytes=105) == {"a": 1}
    with pytest.raises(YamlError, match="larger than 104 bytes"):
        safe_yaml.load_file(str(path), max_bytes=104)
    with pytest.raises(YamlError, match=r"cannot be read \(No such file"):
        safe_yaml.load_file(str(tmp_path / "nope.yaml"))


def test_load_file_refuses_a_fifo_and_follows_a_link(tmp_path):
    os.mkfifo(str(tmp_path / "fifo.yaml"))
    with pytest.raises(YamlError, match="not a regular file: a FIFO"):
        safe_yaml.load_file(str(tmp_path / "fifo.yaml"))
    (tmp_path / "real.yaml").write_text("a: 2\n", encoding="utf-8")
    os.symlink(str(tmp_path / "real.yaml"), str(tmp_path / "link.yaml"))
    assert safe_yaml.load_file(str(tmp_path / "link.yaml")) == {"a": 2}
    with pytest.raises(YamlError, match="not a regular file: a symbolic link"):
        safe_yaml.load_file(str(tmp_path / "link.yaml"), follow_links=False)
