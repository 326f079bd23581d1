"""Every command block a newcomer copies from the README works as written.

The README's `sh` blocks are its tested sequences (its two first commands, which create the venv,
are what CI itself runs). Each block runs with bash -e in a fresh copy of the repository (the
files git knows, plus `.venv` linked to the venv running these tests), from its root, in
order, so a block may use what an earlier block of the same section made."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def sh_blocks():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return [m.group(1) for m in BLOCK.finditer(text)]


def test_the_readme_has_tested_blocks():
    blocks = sh_blocks()
    assert len(blocks) >= 3
    assert all(". .venv/bin/activate" in b for b in blocks), "each block activates the venv"


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """The repository as a fresh clone has it, with this venv as its .venv."""
    dest = tmp_path_factory.mktemp("clone")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.join(str(dest), os.path.dirname(rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(str(dest), rel))
    os.symlink(sys.prefix, os.path.join(str(dest), ".venv"))
    return str(dest)


@pytest.mark.parametrize("index", range(len(sh_blocks())))
def test_readme_block_runs_as_written_and_again(clone, index):
    """Each block, run twice: a newcomer runs a block again after a typo or a change (issue 32:
    `cp -r` nested the sample submission inside results/ the second time and the verdict
    turned INVALID; an existing --kits folder refused the second build)."""
    block = sh_blocks()[index]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    verdicts = []
    for run in ("first", "second"):
        proc = subprocess.run(["bash", "-e", "-c", block], cwd=clone, env=env,
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, "block {}, {} run:\n{}\n--- stdout\n{}\n--- stderr\n{}" \
            .format(index, run, block, proc.stdout[-3000:], proc.stderr[-3000:])
        assert "Traceback" not in proc.stderr
        if "verify.py" in block:
            verdicts.append(_verdicts(clone))
            assert verdicts[-1], "a verify.py block writes a verdict"
    # The verdicts of the second run are the first's (nothing nested, nothing left over).
    assert verdicts[:1] == verdicts[1:]
    # Everything the blocks wrote is ignored by git: `git status` stays clean after them.
    made = new_files(clone)
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT,
                             input="\n".join(made), capture_output=True, text=True).stdout
    assert made and not set(made) - set(ignored.splitlines()), set(made) - set(ignored.split())


def _verdicts(clone):
    """{path: bytes} of every verdict.json under the clone."""
    out = {}
    for folder, _, files in os.walk(clone):
        if "verdict.json" in files:
            with open(os.path.join(folder, "verdict.json"), "rb") as f:
                out[os.path.relpath(folder, clone)] = f.read()
    return out


def new_files(clone):
    """The files in the clone that the repository does not track (its .venv link aside)."""
    tracked = set(subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                                 check=True).stdout.decode().split("\0"))
    out = []
    for folder, dirs, files in os.walk(clone):
        rel = os.path.relpath(folder, clone)
        dirs[:] = [d for d in dirs if not (rel == "." and d == ".venv")]
        for name in files:
            path = os.path.normpath(os.path.join(rel, name)).replace(os.sep, "/")
            if path not in tracked and path != ".venv":
                out.append(path)
    return sorted(out)


def test_the_organizers_section_ends_with_the_final_verification():
    """The organizer's path ends where the prize is decided, with verify.py and its
    document (its block runs above like every other)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n## For organizers", 1)[1].split("\n## ", 1)[0]
    last = section.strip().split("\n\n")[-1]
    assert "check_final.py" in last and "[docs/verify.md](docs/verify.md)" in last
    block = sh_blocks()[[i for i, b in enumerate(sh_blocks()) if "verify.py" in b][-1]]
    assert section.rindex("```sh") == section.index(block) - len("```sh\n")
