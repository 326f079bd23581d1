"""The import graph flows one way (docs/architecture.md). Every import of every module of the
worker's program (scoring_program/), the kits' packages (kit/) and the organizer's commands
(organizer/) is read from the source, lazy ones inside functions included, so a module reaching
up, a worker module needing organizer code, or two modules importing each other fails here."""
import ast
import functools
import os

from conftest import KIT, ORGANIZER, PROGRAM

# Each folder a package root: the module name of a file is its path below it.
ROOTS = {"worker": PROGRAM, "kit": KIT, "organizer": ORGANIZER}
# The command-line layer of the worker's program: what only entry points may import.
ENTRY = ("scoring.commands",)
# The run layer: the engine, the registry, a reference set up as every command opens it, and
# the validation of a submission without labels.
RUN = ("scoring.engine", "scoring.registry", "scoring.reference_setup", "scoring.validate")
# Lower layers: what tasks and the engine build on.
LOWER = ("scoring.readers", "scoring.metrics", "scoring.report", "scoring.submission",
         "scoring.problems", "scoring.task_api", "scoring.config", "scoring.folders",
         "scoring.manifests", "scoring.quoting", "scoring.console", "scoring.deps",
         "scoring.regular_file", "scoring.safe_yaml", "scoring.zips")


def _files():
    """(root's role, module name, path, is a package's __init__) of every module."""
    for role, root in sorted(ROOTS.items()):
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
                    init = rel.endswith("__init__")
                    yield role, (rel[:-len(".__init__")] if init else rel), path, init


def modules():
    """module name -> the root's role it lives in."""
    return {mod: role for role, mod, _, _ in _files()}


def imports():
    return {mod: set(targets) for mod, targets in _imports().items()}


@functools.lru_cache(maxsize=None)
def _imports():
    """module -> the modules of these roots it imports. `from X import a` names X.a where that
    is a module, else X; an ancestor package of the importer is already imported, not an edge."""
    known = modules()
    graph = {}
    for _, mod, path, init in _files():
        package = mod if init else mod.rpartition(".")[0]
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".") if package else []
                    base = ".".join(parts[:len(parts) - node.level + 1])
                    target = ".".join(p for p in (base, node.module) if p)
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = target + "." + alias.name
                    found.add(sub if sub in known else target)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        ancestors = {".".join(mod.split(".")[:i]) for i in range(1, mod.count(".") + 1)}
        graph[mod] = {t for t in found if t in known and t != mod and t not in ancestors}
    return graph


def within(name, prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_graph_is_read():
    graph = imports()
    assert "scoring.engine" in graph["scoring.commands.score"]
    assert "scoring.problems" in graph["scoring.tasks.agrivision.task"]
    assert "final_package.params" in graph["organizing.verify.run"]
    assert len(graph) > 100


def test_the_worker_program_needs_nothing_outside_its_folder():
    """The worker receives scoring_program/ alone: nothing in it imports the kit's or the
    organizer's code."""
    roles = modules()
    for mod, targets in imports().items():
        if roles[mod] == "worker":
            assert [t for t in targets if roles[t] != "worker"] == [], mod


def test_the_kit_never_needs_the_organizers_code():
    """A starting kit holds scoring_program/ and kit/'s files, never organizer/."""
    roles = modules()
    for mod, targets in imports().items():
        if roles[mod] == "kit":
            assert [t for t in targets if roles[t] == "organizer"] == [], mod


def test_no_two_modules_import_each_other():
    """No circle, however long and however hidden (an import inside a function counts)."""
    graph = imports()
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(mod):   # Tarjan's strongly connected components, iteratively
        work = [(mod, iter(sorted(graph[mod])))]
        index[mod] = low[mod] = len(index)
        stack.append(mod)
        on_stack.add(mod)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))

    for mod in sorted(graph):
        if mod not in index:
            visit(mod)
    assert circles == []


def test_the_circle_finder_finds_a_circle(monkeypatch):
    """The test above can fail: two modules importing each other are found."""
    real = imports()
    fake = dict(real)
    fake["scoring.quoting"] = real["scoring.quoting"] | {"scoring.problems"}
    fake["scoring.problems"] = real["scoring.problems"] | {"scoring.quoting"}
    monkeypatch.setattr(__import__(__name__), "imports", lambda: fake)
    try:
        test_no_two_modules_import_each_other()
    except AssertionError as exc:
        assert "scoring.problems" in str(exc) and "scoring.quoting" in str(exc)
    else:
        raise AssertionError("a circle was not found")


def test_nothing_below_the_command_line_imports_it():
    for mod, targets in imports().items():
        if within(mod, ENTRY) or not within(mod, ("scoring",)):
            continue
        assert not [t for t in targets if within(t, ENTRY)], mod


def test_tasks_and_the_core_do_not_import_the_run_layer():
    for mod, targets in imports().items():
        if within(mod, ("scoring.tasks",) + LOWER):
            assert not [t for t in targets if within(t, RUN + ENTRY)], mod


# One reference folder and one label table serve the Planetscapes pixel tasks (issue 34): the
# instance and panoptic tasks read them with the semantic task's label table, reference problems
# and PNG reader, the one place they are written. No other task imports another.
SHARED_REFERENCE = {"planetscapes_instance": {"planetscapes_semantic"},
                    "planetscapes_panoptic": {"planetscapes_semantic"}}


def test_the_core_names_no_task():
    """Only the registry knows the tasks (by the names in its table); a task imports the core,
    never another task (but the reference another task shares with it: SHARED_REFERENCE)."""
    for mod, targets in imports().items():
        tasks = {t.split(".")[2] for t in targets
                 if t.startswith("scoring.tasks.") and len(t.split(".")) > 2}
        if mod.startswith("scoring.tasks."):
            own = mod.split(".")[2]
            assert tasks <= {own} | SHARED_REFERENCE.get(own, set()), mod
        else:
            assert not tasks, mod
