"""Every path of this repository that a document names exists: after files move, a README or a
doc that still sends a reader to the old place fails here, not in a reader's terminal."""
import os
import re
import subprocess

from conftest import ROOT

# Codabench's own source files, cited by path in docs/bundle.md, share a folder name with ours.
PLATFORM_SOURCES = re.compile(r"^competitions/(models|tasks|unpackers/v[12])\.py$")
# Made by the benchmarks, never committed (bench/README.md says where they go).
GENERATED = ("bench/data/",)


def _documents():
    tracked = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    return [p for p in tracked if not p.startswith("tests/")]


def _top_level():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout.split()
    return sorted({p.split("/")[0] for p in tracked if "/" in p})


def named_paths(text, tops):
    """Repository paths in a text: a top-level folder's name, a slash, a path; placeholders
    (<task>, {a,b}, *) are not paths."""
    pattern = re.compile(r"(?<![\w./~-])((?:%s)/[\w./<>{},*-]*)" % "|".join(map(re.escape, tops)))
    for match in pattern.finditer(text):
        path = match.group(1).rstrip(".,:;")
        if not re.search(r"[<>{}*]", path):
            yield path


def test_every_path_a_document_names_exists():
    tops = _top_level()
    missing = []
    for doc in _documents():
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        for path in named_paths(text, tops):
            if PLATFORM_SOURCES.match(path) or path.startswith(GENERATED):
                continue
            if not os.path.exists(os.path.join(ROOT, path)):
                missing.append("{}: {}".format(doc, path))
    assert missing == []


def test_a_moved_path_would_be_found():
    found = list(named_paths("run `scoring_program/compare.py` or kit/<tool>.py, then docs/x.md.",
                             ["docs", "kit", "scoring_program"]))
    assert found == ["scoring_program/compare.py", "docs/x.md"]
