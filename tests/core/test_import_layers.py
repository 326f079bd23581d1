"""The import graph flows one way (docs/architecture.md): entry points -> engine and registry ->
tasks -> the shared core. Every import is read from the source, lazy ones inside functions
included, so a task reaching up for the command line or a core module naming a task fails here."""
import ast
import os

from conftest import PROGRAM

PACKAGE = os.path.join(PROGRAM, "scoring")
# The command-line layer: what only entry points (and each other) may import.
ENTRY = ("scoring.commands",)
# The run layer: the engine, the registry, a reference set up as every command opens it, and
# the validation of a submission without labels.
RUN = ("scoring.engine", "scoring.registry", "scoring.reference_setup", "scoring.validate")
# Lower layers: what tasks and the engine build on.
LOWER = ("scoring.readers", "scoring.metrics", "scoring.report", "scoring.submission",
         "scoring.problems", "scoring.task_api", "scoring.config", "scoring.folders",
         "scoring.manifests", "scoring.quoting", "scoring.console", "scoring.deps",
         "scoring.regular_file", "scoring.safe_yaml", "scoring.zips")


def module_name(path):
    rel = os.path.relpath(path, PROGRAM)[:-3].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def imports():
    """module -> the scoring modules it imports (absolute names, relative imports resolved)."""
    graph = {}
    for root, _, files in os.walk(PACKAGE):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            mod = module_name(path)
            package = mod if name == "__init__.py" else mod.rsplit(".", 1)[0]
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            found = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        parts = package.split(".")
                        base = ".".join(parts[:len(parts) - node.level + 1])
                        target = base + ("." + node.module if node.module else "")
                    else:
                        target = node.module or ""
                    found.update(target + "." + a.name for a in node.names)
                    found.add(target)
                elif isinstance(node, ast.Import):
                    found.update(a.name for a in node.names)
            graph[mod] = {t for t in found if t == "scoring" or t.startswith("scoring.")}
    return graph


def within(name, prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_graph_is_read():
    graph = imports()
    assert "scoring.engine" in graph["scoring.commands.score"]
    assert "scoring.problems" in graph["scoring.tasks.agrivision.task"]
    assert len(graph) > 50


def test_nothing_below_the_command_line_imports_it():
    for mod, targets in imports().items():
        if within(mod, ENTRY):
            continue
        assert not [t for t in targets if within(t, ENTRY)], mod


def test_tasks_and_the_core_do_not_import_the_run_layer():
    for mod, targets in imports().items():
        if within(mod, ("scoring.tasks",) + LOWER):
            assert not [t for t in targets if within(t, RUN + ENTRY)], mod


def test_the_core_names_no_task():
    """Only the registry knows the tasks (by the names in its table); a task imports the core,
    never another task."""
    for mod, targets in imports().items():
        tasks = {t.split(".")[2] for t in targets
                 if t.startswith("scoring.tasks.") and len(t.split(".")) > 2}
        if mod.startswith("scoring.tasks."):
            assert tasks <= {mod.split(".")[2]}, mod
        else:
            assert not tasks, mod
