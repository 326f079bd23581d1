"""docs/architecture.md is the map of the code: its "map" block names every source file of the
worker's program, the kits, the organizer's commands, the competitions, the developers' tools and
the benchmarks, each once with its job, and nothing else. A file added, moved or deleted without
the map following fails here, by name."""
import os
import re
import subprocess

from conftest import ROOT

DOC = os.path.join(ROOT, "docs", "architecture.md")
# What the map covers: every tracked Python file below these folders, and the organizer's shell
# command. Tests are mapped by their own rule (docs/architecture.md, "Tests").
MAPPED = ("scoring_program/", "kit/", "organizer/", "competitions/", "dev/", "bench/")
ALSO = ("bundle.sh", "scoring_program/metadata")


def map_block(text):
    """The fenced block under the heading "## The map": (path, job) for each of its lines;
    a line that starts with white space continues the job of the line above."""
    head = text.index("\n## The map")
    start = text.index("```", head)
    body = text[text.index("\n", start) + 1:text.index("```", start + 3)]
    entries = []
    for line in body.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0].isspace():
            assert entries, "the map's first line continues nothing: {!r}".format(line)
            entries[-1] = (entries[-1][0], entries[-1][1] + " " + line.strip())
            continue
        path, _, job = line.partition(" ")
        entries.append((path, job.strip()))
    return entries


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.split()
    return {p for p in out if (p.startswith(MAPPED) and p.endswith(".py")) or p in ALSO}


def _doc():
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def test_the_map_names_every_source_file_and_nothing_else():
    named = [path for path, _ in map_block(_doc())]
    duplicates = sorted({p for p in named if named.count(p) > 1})
    assert duplicates == [], "named twice in the map: {}".format(duplicates)
    files = tracked()
    assert sorted(files - set(named)) == [], "add these to the map in docs/architecture.md"
    assert sorted(set(named) - files) == [], "the map names files that do not exist"


def test_every_file_of_the_map_has_a_job():
    assert [path for path, job in map_block(_doc()) if len(job) < 10] == []


def test_the_map_reader_sees_what_it_must(tmp_path):
    """The test above can fail: a file missing from a map, and one only the map names."""
    text = "x\n## The map\n\n```\na/b.py  reads b\n  over two lines\nc.py  the c\n```\n"
    assert map_block(text) == [("a/b.py", "reads b over two lines"), ("c.py", "the c")]
    named = {p for p, _ in map_block(text)}
    assert {"a/b.py", "d.py"} - named == {"d.py"} and named - {"a/b.py"} == {"c.py"}


def test_every_path_the_architecture_names_exists():
    """Beyond the map, the prose names folders and files too."""
    missing = []
    for path in set(re.findall(r"`((?:scoring_program|kit|organizer|competitions|dev|bench|tests)"
                               r"/[\w./-]*)`", _doc())):
        if not os.path.exists(os.path.join(ROOT, path.rstrip("/"))):
            missing.append(path)
    assert sorted(missing) == []
