"""The tensors and NumPy arrays a walked pickle's value reaches, each with the categories the
keys on its way give it (rule.py): the same answer as rule.category(path, ...) for every path,
computed key by key as the walk descends instead of from the whole path at each tensor, so a
deep or wide structure costs time linear in what it holds.

A container is visited once for each thing its paths can say of it (under an optimizer state,
an EMA copy, neither: rule.container_category), so a pickle can be cyclic, and one state dict
pickled under `ema` and, by reference, under `model` is seen as the model too, not only as the
copy its first path names.

Bounds (bounds.py): containers nest at most MAX_NESTING deep on the way to a tensor; at most
MAX_TENSOR_REFERENCES tensors are reached in all. The walk keeps one iterator per level, never
a list of what is left to visit.
"""
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

from . import bounds, rule
from .pickle_globals import Array, Tensor
from .result import FileRefused

# A path, linked from the leaf back to the root: (parent, key) or None for the root. Built in
# constant time per level; spelt out only when a message names a tensor.
Node = Optional[Tuple[Any, Any]]


def path_of(node: Node) -> tuple:
    keys: List[Any] = []
    while node is not None:
        node, key = node
        keys.append(key)
    return tuple(reversed(keys))


class Leaf(NamedTuple):
    node: Node          # its path (path_of)
    value: Any          # a Tensor or an Array
    told: str           # its category with EMA copies told apart (the rule)
    as_model: str       # and without (what counts when a file holds only an EMA copy)
    name: str           # the last string key on its path ("" if none)


class _Keys(NamedTuple):
    """What the string keys on the way say: `found`, the first container category among all
    but the last; `optimizer`, whether one of those says optimizer state; `last`, the last."""
    found: Optional[str]
    optimizer: bool
    last: Optional[str]


class _Categories:
    """rule.container_category and rule.by_name, cached: a checkpoint repeats its names."""

    def __init__(self) -> None:
        self.containers: Dict[str, Optional[str]] = {}
        self.names: Dict[Tuple[str, str, bool], str] = {}
        self.leaves: Dict[Tuple[_Keys, str, bool], Tuple[str, str]] = {}

    def container(self, key: str) -> Optional[str]:
        found = self.containers.get(key, "?")
        if found == "?":
            found = self.containers[key] = rule.container_category(key)
        return found

    def by_name(self, name: str, dtype: str, ema: bool) -> str:
        k = (name, dtype, ema)
        found = self.names.get(k)
        if found is None:
            found = self.names[k] = rule.by_name(name, dtype, ema)
        return found

    def descend(self, keys: _Keys, key: Any) -> _Keys:
        if not isinstance(key, str):
            return keys
        if keys.last is None:
            return _Keys(keys.found, keys.optimizer, key)
        said = self.container(keys.last)
        return _Keys(keys.found if keys.found is not None else said,
                     keys.optimizer or said == rule.OPTIMIZER, key)

    def said(self, keys: _Keys) -> Tuple[Optional[str], bool]:
        """What every string key so far (the last too) says of a container."""
        own = self.container(keys.last) if keys.last is not None else None
        return (keys.found if keys.found is not None else own,
                keys.optimizer or own == rule.OPTIMIZER)

    def of_leaf(self, keys: _Keys, dtype: str, optimizer: bool) -> Tuple[str, str]:
        found = self.leaves.get((keys, dtype, optimizer))
        if found is not None:
            return found
        name = keys.last or ""
        if optimizer:
            found = rule.OPTIMIZER, rule.OPTIMIZER
        else:
            found = (keys.found if keys.found is not None else self.by_name(name, dtype, True),
                     rule.OPTIMIZER if keys.optimizer else self.by_name(name, dtype, False))
        self.leaves[(keys, dtype, optimizer)] = found
        return found


def dtype_of(leaf: Any) -> str:
    return leaf.dtype if isinstance(leaf, Tensor) else numpy_kind(leaf.dtype)


def numpy_kind(descr: str) -> str:
    """'<f4' -> 'float32' for the rule's floating test; anything else as it is."""
    code = descr.lstrip("<>|=")
    return {"f2": "float16", "f4": "float32", "f8": "float64", "c8": "complex64",
            "c16": "complex128"}.get(code, descr)


def leaves(root: Any, budget: Optional[bounds.Budget] = None) -> Iterator[Leaf]:
    """Every tensor and array reached from root, with its categories; FileRefused past the
    bounds (budget: the package's references, taken as they are reached)."""
    budget = bounds.default_budget(budget)
    own = bounds.MAX_TENSOR_REFERENCES
    limit, package_bound = budget.limit("references", own), budget.binding("references", own)
    cats = _Categories()
    seen = set()
    reached = 0
    # Each level: (iterator over (key, child), the container's node, optimizer, keys).
    levels: List[Tuple[Iterator, Node, bool, _Keys]] = []

    def enter(value: Any, node: Node, optimizer: bool, keys: _Keys) -> None:
        said = cats.said(keys)
        mark = (id(value), optimizer, said)
        if mark in seen:
            return
        seen.add(mark)
        if len(levels) >= bounds.MAX_NESTING:
            raise FileRefused("not readable: its containers nest more than {} deep on the way "
                              "to a value (refused: nothing was run)".format(bounds.MAX_NESTING))
        if isinstance(value, dict):
            optimizer = optimizer or ("state" in value and "param_groups" in value)
            items: Iterator = iter(value.items())
        else:
            items = enumerate(value)
        levels.append((items, node, optimizer, keys))

    root_keys = _Keys(None, False, None)
    if isinstance(root, (Tensor, Array)):
        told, as_model = cats.of_leaf(root_keys, dtype_of(root), False)
        yield Leaf(None, root, told, as_model, "")
        return
    if isinstance(root, (dict, list, tuple)):
        enter(root, None, False, root_keys)
    while levels:
        items, node, optimizer, keys = levels[-1]
        step = next(items, None)
        if step is None:
            levels.pop()
            continue
        key, child = step
        if isinstance(child, (dict, list, tuple)):
            enter(child, (node, key), optimizer, cats.descend(keys, key))
        elif isinstance(child, (Tensor, Array)):
            reached += 1
            if reached > limit:
                budget.take("references", reached)
                if package_bound:
                    raise budget.exhausted("references", "it")
                raise FileRefused("not readable: it refers to tensors more than {:,} times "
                                  "(refused: nothing was run)".format(own))
            child_keys = cats.descend(keys, key) if isinstance(key, str) else keys
            told, as_model = cats.of_leaf(child_keys, child.dtype if isinstance(child, Tensor)
                                          else numpy_kind(child.dtype), optimizer)
            yield Leaf((node, key), child, told, as_model, child_keys.last or "")
    budget.take("references", reached)
