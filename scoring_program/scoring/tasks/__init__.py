"""Task registry: each challenge task is one package that plugs into the shared engine.

A task is imported when it is first asked for, so a run pays only for its own task (the VQA task
needs neither numpy nor Pillow: 0.3 s of start-up saved). A task package's __init__ stays light:
it may define add_options(parser), which the command line calls for every task without
importing the task itself.
"""
import importlib
from typing import Dict, Iterator, Mapping, Tuple

# name -> (package, module and class of its Task), in the order the help lists them.
_ENTRIES = {
    "agriculture-vision": ("agrivision", "task", "AgricultureVision"),
    "planetscapes-semantic": ("planetscapes_semantic", "task", "PlanetscapesSemantic"),
    "planetscapes-vqa": ("planetscapes_vqa", "task", "PlanetscapesVQA"),
}  # type: Dict[str, Tuple[str, str, str]]


class _Registry(Mapping):
    """name -> Task instance, imported on first use; otherwise a read-only dict."""

    def __init__(self, entries: Dict[str, Tuple[str, str, str]]) -> None:
        self._entries = entries
        self._tasks = {}  # type: Dict[str, object]

    def __getitem__(self, name: str):
        if name not in self._tasks:
            package, module, cls = self._entries[name]  # KeyError for an unknown name
            task = getattr(importlib.import_module(".{}.{}".format(package, module), __name__),
                           cls)()
            assert task.name == name, (task.name, name)
            self._tasks[name] = task
        return self._tasks[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


TASKS = _Registry(_ENTRIES)
DEFAULT = "agriculture-vision"


def add_options(parser) -> None:
    """Every task's command-line options, from the tasks' light package modules."""
    for package, _, _ in _ENTRIES.values():
        hook = getattr(importlib.import_module("." + package, __name__), "add_options", None)
        if hook is not None:
            hook(parser)
