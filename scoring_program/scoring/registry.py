"""The task registry: which challenge tasks exist, by their `task:` name.

Every layer may use it (the commands, the label-free check, the bundle): it imports nothing of
the tasks until one is asked for, so a run pays only for its own task (the VQA task needs neither
numpy nor Pillow: 0.3 s of start-up saved). A new task is one line here.

A task's command-line options are data in its package's light __init__ (the command line is
built before any task is imported):

    OPTIONS = {"storm_damage": dict(choices=..., default=None, help="...")}

option name -> argparse's keywords; on the command line `--storm-damage`. A command hands the
values given to the task as plain data (options_of), never its argparse namespace.
"""
import importlib
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from .config import task_name

# name -> (package under scoring/tasks/, its Task class in the package's task.py), in the order
# the help lists them.
_ENTRIES: Dict[str, Tuple[str, str]] = {
    "agriculture-vision": ("agrivision", "AgricultureVision"),
    "planetscapes-semantic": ("planetscapes_semantic", "PlanetscapesSemantic"),
    "planetscapes-instance": ("planetscapes_instance", "PlanetscapesInstance"),
    "planetscapes-vqa": ("planetscapes_vqa", "PlanetscapesVQA"),
    "planetscapes-panoptic": ("planetscapes_panoptic", "PlanetscapesPanoptic"),
}

DEFAULT = "agriculture-vision"

# One reference serves several tasks (issue 34): the Planetscapes instance and panoptic tasks read
# the semantic task's reference (labels/, instances/, the label table). task -> the task whose
# reference it reads; a task not named reads its own. The bundle gives such a reference to each
# of its tasks' tracks, and refuses one another task cannot read.
READS_REFERENCE_OF: Dict[str, str] = {
    "planetscapes-instance": "planetscapes-semantic",
    "planetscapes-panoptic": "planetscapes-semantic",
}


def reference_kind(name: str) -> str:
    """Which kind of reference the task `name` reads, named by the task whose it is."""
    return READS_REFERENCE_OF.get(name, name)


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


def _declared_options() -> List[Tuple[str, Dict[str, Any]]]:
    """(name, argparse keywords) of every task's command-line options: the `OPTIONS` each task
    package's light __init__ declares (task_api.py), read without importing the task itself."""
    out: List[Tuple[str, Dict[str, Any]]] = []
    for package, _ in _ENTRIES.values():
        out += list(getattr(_package(package), "OPTIONS", {}).items())
    return out


def add_options(parser) -> None:
    """Every task's command-line options: a task option `storm_damage` is `--storm-damage`."""
    for name, keywords in _declared_options():
        parser.add_argument("--" + name.replace("_", "-"), dest=name, **keywords)


def options_of(args: Any) -> Dict[str, Any]:
    """The task options given on a command line (argparse's namespace) as plain data, option
    name -> value, only those given: what a command hands to Task.configure. The namespace
    itself never reaches a task."""
    given = {}
    for name, _ in _declared_options():
        value = getattr(args, name, None)
        if value is not None:
            given[name] = value
    return given


def task_of(ref_config: Dict[str, Any], name: Optional[str] = None) -> Any:
    """The task a command scores: `name` (the command line's --task), else the reference's
    config.yaml `task:` (config.task_name: BrokenReference if it names no known task), else
    DEFAULT."""
    return TASKS[name or task_name(ref_config, DEFAULT, TASKS)]
