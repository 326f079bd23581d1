"""YAML for every reader of the program, bounded: no input can make it slow, huge or crash.

PyYAML's safe loader still (a) expands aliases when the data is used (a 280-byte "billion laughs"
is 10^9 strings), (b) builds recursive structures from recursive aliases, (c) recurses in its
composer and constructor (absurd nesting ends in RecursionError), (d) raises ValueError for an
integer over Python 3.11's int/str limit (4,300 digits) and takes quadratic time for a long
one on older Pythons, and (e) keeps the last of two equal keys. Here, in this order:

  - load_file: a regular file only (regular_file.py), at most max_bytes, UTF-8;
  - the parser's events are read one by one and the nesting depth and the number of nodes are
    counted on the way (before anything recurses), refusing at the first excess;
  - the document is composed from those events; its node graph is walked once without recursion,
    counting every node as the data would hold it, aliases expanded (memoized: a bomb costs as
    little to count as to parse), refusing recursive aliases, tags other than the standard
    ones, integers longer than MAX_INT_DIGITS digits, lone surrogates (\ud800) and a key
    given twice in one mapping;
  - only then are Python objects constructed; a value that still cannot be (a date like
    2024-13-45) is refused with its line.

Every refusal is one exception, YamlError, with a short message (values quoted with
quoting.brief) and the line where it applies. Works with PyYAML 5.1 to 6.x on Python 3.7+.
"""
import re
from collections import deque
from typing import Any, Dict, List, Optional, Tuple

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import (CollectionEndEvent, CollectionStartEvent, Event,
                         NodeEvent)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from . import regular_file
from .quoting import brief

MAX_BYTES = 1 << 20          # a configuration is a few KB
MAX_DEPTH = 64               # nesting levels of sequences and mappings
MAX_NODES = 50000            # nodes of the data, every alias counted as what it expands to
MAX_INT_DIGITS = 4300        # Python 3.11's default int/str limit, applied on every version
_INT_TAG = "tag:yaml.org,2002:int"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_PROBLEM_CHARS = 200
# "\ud800" in a double-quoted string: PyYAML makes it a lone surrogate, which no UTF-8 output
# can hold (a name with one would fail the run when the results are written).
_SURROGATE = re.compile("[\ud800-\udfff]")
# The standard tags SafeConstructor builds (str, int, float, bool, null, timestamp, binary,
# seq, map, set, omap, pairs) and the merge key `<<`.
_SAFE_TAGS = frozenset(t for t in SafeConstructor.yaml_constructors if t) | {_MERGE_TAG}


class YamlError(Exception):
    """The YAML cannot be used. problem: what, in a short sentence; line: 1-based or None."""

    def __init__(self, problem: str, line: Optional[int] = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line

    def __reduce__(self):  # across processes (Exception's default loses the line)
        return (type(self), (self.problem, self.line))

    def __str__(self) -> str:
        return self.problem if self.line is None else "line {}: {}".format(self.line,
                                                                          self.problem)


def _line(node_or_event) -> Optional[int]:
    mark = getattr(node_or_event, "start_mark", None)
    return mark.line + 1 if mark is not None else None


def _from_pyyaml(exc: yaml.YAMLError) -> YamlError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem, context = getattr(exc, "problem", None), getattr(exc, "context", None)
    if problem and context and not context.startswith("while "):
        what = "{}, {}".format(context, problem)   # "expected a single document ..., but ..."
    else:
        what = problem or context or (str(exc).splitlines() or ["unreadable"])[0]
    if len(what) > _PROBLEM_CHARS:          # PyYAML quotes tokens and anchors in its messages
        what = what[:_PROBLEM_CHARS] + "..."
    return YamlError("not valid YAML: {}".format(what), mark.line + 1 if mark else None)


def _events(text: str, max_depth: int, max_nodes: int) -> List[Event]:
    """Every parser event, refusing at the first level of nesting or node beyond the caps."""
    loader = yaml.SafeLoader(text)
    events: List[Event] = []
    depth = nodes = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, NodeEvent):
                nodes += 1
                if nodes > max_nodes:
                    raise YamlError("more than {:,} values: too large for a configuration"
                                    .format(max_nodes), _line(event))
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    raise YamlError("nested more than {} levels deep".format(max_depth),
                                    _line(event))
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
            events.append(event)
    except yaml.YAMLError as exc:
        raise _from_pyyaml(exc) from None
    finally:
        loader.dispose()
    return events


class _EventComposer(Composer, Resolver):
    """PyYAML's composer fed from a list of events already checked."""

    def __init__(self, events: List[Event]) -> None:
        Composer.__init__(self)
        Resolver.__init__(self)
        self._queue = deque(events)

    def check_event(self, *choices) -> bool:
        if not self._queue:
            return False
        return not choices or isinstance(self._queue[0], choices)

    def peek_event(self) -> Optional[Event]:
        return self._queue[0] if self._queue else None

    def get_event(self) -> Optional[Event]:
        return self._queue.popleft() if self._queue else None


def _children(node: Node) -> List[Node]:
    if isinstance(node, SequenceNode):
        return node.value
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_mapping_keys(node: MappingNode) -> None:
    """A key given twice: PyYAML would silently keep the last value."""
    first: Dict[Tuple[str, str], Optional[int]] = {}
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag == _MERGE_TAG:
            continue
        ident = (key.tag, key.value)
        if ident in first:
            raise YamlError("key {} appears twice in one mapping (first on line {})".format(
                brief(key.value), first[ident]), _line(key))
        first[ident] = _line(key)


def _check_graph(root: Node, max_nodes: int) -> None:
    """Walk the node graph once, without recursion: expanded size, cycles, long integers,
    duplicate keys."""
    size: Dict[int, int] = {}            # id(node) -> nodes it stands for, aliases expanded
    on_path = set()                      # ids of the nodes being expanded (a cycle if met again)
    stack: List[Tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            total = 1 + sum(size[id(c)] for c in _children(node))
            if total > max_nodes:
                raise YamlError("more than {:,} values once its aliases (*name) are expanded: "
                                "too large for a configuration (an alias bomb?)".format(
                                    max_nodes), _line(node))
            size[key] = total
            continue
        if key in size:
            continue
        if key in on_path:
            raise YamlError("an alias (*name) refers to a node that contains it: a recursive "
                            "alias", _line(node))
        if node.tag not in _SAFE_TAGS:
            # Refused here, for every reader: one that walks the nodes itself (keeping line
            # numbers) would otherwise read a tagged collection as a plain one.
            raise YamlError("the tag {} is not allowed (plain YAML values only)".format(
                brief(node.tag)), _line(node))
        if isinstance(node, ScalarNode):
            surrogate = _SURROGATE.search(node.value)
            if surrogate:
                raise YamlError("a character that is not text: a lone surrogate {} (written as "
                                "an escape in a double-quoted string?)".format(
                                    brief(surrogate.group())), _line(node))
            if node.tag == _INT_TAG and len(node.value) > MAX_INT_DIGITS:
                raise YamlError("an integer of {:,} characters: longer than {:,} digits".format(
                    len(node.value), MAX_INT_DIGITS), _line(node))
            size[key] = 1
            continue
        if isinstance(node, MappingNode):
            _check_mapping_keys(node)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node))


def compose_text(text: str, max_depth: int = MAX_DEPTH,
                 max_nodes: int = MAX_NODES) -> Optional[Node]:
    """The document's checked node graph (with line marks), or None for an empty document."""
    composer = _EventComposer(_events(text, max_depth, max_nodes))
    try:
        node = composer.get_single_node()
    except yaml.YAMLError as exc:
        raise _from_pyyaml(exc) from None
    if node is not None:
        _check_graph(node, max_nodes)
    return node


class _Constructor(SafeConstructor):
    """SafeConstructor whose value errors (an impossible date, ...) name the value and line."""

    def construct_object(self, node, deep=False):
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError, TypeError) as exc:
            if isinstance(exc, YamlError):
                raise
            raise YamlError("the value {} cannot be read ({})".format(
                brief(node.value if isinstance(node, ScalarNode) else node.tag),
                brief(str(exc), _PROBLEM_CHARS)), _line(node)) from None


def construct(node: Node) -> Any:
    """Python data (dicts, lists, str, int, float, bool, None, dates) from a checked node."""
    try:
        return _Constructor().construct_document(node)
    except yaml.YAMLError as exc:
        raise _from_pyyaml(exc) from None


def load_text(text: str, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> Any:
    """yaml.safe_load(text) within the caps; None for an empty document."""
    node = compose_text(text, max_depth, max_nodes)
    return None if node is None else construct(node)


def decode(raw: bytes) -> str:
    """UTF-8 (a byte-order mark is fine); YamlError naming the first bad byte otherwise."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise YamlError("not UTF-8 text (byte {})".format(exc.start),
                        raw[:exc.start].count(b"\n") + 1) from None


def read_file(path: str, max_bytes: int = MAX_BYTES, follow_links: bool = True) -> bytes:
    """The file's bytes: a regular file of at most max_bytes (links followed by default: a
    configuration is the organizer's own file), else YamlError with the reason."""
    try:
        return regular_file.read_bytes(path, max_bytes, follow_links=follow_links)
    except regular_file.Refused as exc:
        raise YamlError(exc.reason) from None


def load_file(path: str, max_bytes: int = MAX_BYTES, follow_links: bool = True,
              max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> Any:
    """yaml.safe_load of a file, within the caps; raises YamlError (the caller names the file)."""
    return load_text(decode(read_file(path, max_bytes, follow_links)), max_depth, max_nodes)
