"""The task registry: which challenge tasks exist, by their `task:` name.

Every layer may use it (the command line, the label-free check, pack.py): it imports nothing of
the tasks until one is asked for, so a run pays only for its own task (the VQA task needs neither
numpy nor Pillow: 0.3 s of start-up saved). A new task is one line here.
"""
import importlib
from typing import Any, Dict, Iterator, Mapping, Tuple

from .config import task_name

# name -> (package under scoring/tasks/, its Task class in the package's task.py), in the order
# the help lists them.
_ENTRIES: Dict[str, Tuple[str, str]] = {
    "agriculture-vision": ("agrivision", "AgricultureVision"),
    "planetscapes-semantic": ("planetscapes_semantic", "PlanetscapesSemantic"),
    "planetscapes-vqa": ("planetscapes_vqa", "PlanetscapesVQA"),
}

DEFAULT = "agriculture-vision"


def _package(package: str, module: str = ""):
    return importlib.import_module(".tasks." + package + ("." + module if module else ""),
                                   __package__)


class _Registry(Mapping):
    """name -> Task instance, imported on first use; otherwise a read-only dict."""

    def __init__(self, entries: Dict[str, Tuple[str, str]]) -> None:
        self._entries = entries
        self._tasks: Dict[str, object] = {}

    def __getitem__(self, name: str):
        if name not in self._tasks:
            package, cls = self._entries[name]  # KeyError for an unknown name
            task = getattr(_package(package, "task"), cls)()
            assert task.name == name, (task.name, name)
            self._tasks[name] = task
        return self._tasks[name]

    def __contains__(self, name: object) -> bool:
        # A config.yaml's `task:` may be any YAML value (a list is unhashable): never an error.
        return isinstance(name, str) and name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


TASKS = _Registry(_ENTRIES)


def add_options(parser) -> None:
    """Every task's command-line options: the `add_options(parser)` hook of each task package's
    light __init__ (task_api.py), called without importing the task itself."""
    for package, _ in _ENTRIES.values():
        hook = getattr(_package(package), "add_options", None)
        if hook is not None:
            hook(parser)


def task_of(ref_config: Dict[str, Any], args: Any = None) -> Any:
    """The task a command scores: the command line's --task, else the reference's config.yaml
    `task:` (config.task_name: BrokenReference if it names no known task), else DEFAULT."""
    return TASKS[getattr(args, "task", None) or task_name(ref_config, DEFAULT, TASKS)]
