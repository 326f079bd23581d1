"""docs/architecture.md describes the tree as it is: every module of the scoring package (outside
the tasks' own folders, which the doc describes by their common files) is named there, and every
module path the doc names exists."""
import os
import re

from conftest import PROGRAM, ROOT

PACKAGE = os.path.join(PROGRAM, "scoring")
DOC = os.path.join(ROOT, "docs", "architecture.md")
TASK_FILES = {"__init__.py", "task.py", "reference.py", "metric.py", "report.py", "problems.py",
              "packed.py"}


def _modules():
    for folder, _, files in os.walk(PACKAGE):
        rel = os.path.relpath(folder, PACKAGE).replace(os.sep, "/")
        for name in files:
            if name.endswith(".py"):
                yield ("" if rel == "." else rel + "/"), name


def _doc():
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def test_every_module_is_named_in_the_architecture():
    doc = _doc()
    unnamed = []
    for folder, name in _modules():
        if folder.startswith("tasks/") and folder.count("/") == 2:
            if name in TASK_FILES and name not in doc:   # "A task's folder" lists them
                unnamed.append(folder + name)
            continue                          # a task's own tables and helpers
        if name == "__init__.py":
            continue
        if name not in doc or (folder and folder.rstrip("/").split("/")[-1] + "/" not in doc):
            unnamed.append(folder + name)
    assert not unnamed, "name these in docs/architecture.md: {}".format(unnamed)


def test_every_module_the_architecture_names_exists():
    doc = _doc()
    missing = []
    for path in set(re.findall(r"`?((?:scoring/)?[a-z_]+(?:/[a-z_<>]+)*/[a-z_]+\.py)", doc)):
        if "<task>" in path:
            continue
        rel = path[len("scoring/"):] if path.startswith("scoring/") else path
        if not (os.path.isfile(os.path.join(PACKAGE, rel)) or
                os.path.isfile(os.path.join(ROOT, rel)) or
                os.path.isfile(os.path.join(PROGRAM, rel))):
            missing.append(path)
    assert not missing, "docs/architecture.md names modules that do not exist: {}".format(
        sorted(missing))
