"""Files that are not files, in a reference or in a submission, for every task and layout: a FIFO
(opening it for reading blocks until a writer comes), a symbolic link to /dev/zero (a read never
ends) and a device node. Each must be refused by name, quickly, without being read: in the
reference as the organizers' error (exit 3), in a submission as the participant's (exit 1).

Every run is the real command in a subprocess with a timeout (support/measured.py): a hang or a
memory blow-up fails the test instead of blocking the suite."""
import os
import stat
import subprocess

import pytest

from conftest import pack_either
from measured import run_measured
from task_fixtures import FIXTURES



def _fifo(path):
    os.mkfifo(path)


def _zero_link(path):
    os.symlink("/dev/zero", path)


def _device(path):
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))   # /dev/zero's numbers
    except (PermissionError, AttributeError, OSError):
        pytest.skip("cannot make a device node here")


# kind -> (maker, what the reference's message says, what the submission's says)
SPECIALS = {
    "fifo": (_fifo, "it is a FIFO (named pipe)", "it is a FIFO (named pipe)"),
    "link to /dev/zero": (_zero_link, "it is a device file", "it is a symbolic link"),
    "device": (_device, "it is a device file", "it is a device file"),
}

# task -> layout -> files of the reference to replace ("{0}": the first unit id)
REFERENCE_FILES = {
    "agriculture-vision": {
        "raw": ["boundaries/{0}.png", "masks/{0}.png", "labels/water/{0}.png"],
        "packed": ["packed/{0}.png"],
    },
    "planetscapes-semantic": {
        "raw": ["labels/{0}.png", "instances/{0}.png"],
        "packed": ["packed/{0}.png"],
    },
    "planetscapes-vqa": {
        "raw": ["questions.json", "annotations.json"],
        "packed": ["packed-annotations.json", "packed.json"],
    },
    "planetscapes-instance": {   # raw only: the task has no packed layout
        "raw": ["instances/{0}.png"],
    },
    "planetscapes-panoptic": {   # raw only: the task has no packed layout
        "raw": ["instances/{0}.png"],
    },
}
SUBMISSION_FILE = {"agriculture-vision": "{0}.png", "planetscapes-semantic": "{0}.png",
                   "planetscapes-vqa": "results.json", "planetscapes-instance": "{0}.txt",
                   "planetscapes-panoptic": "predictions/{0}.png"}
# A mask named by an instance .txt: read like a prediction PNG (never followed or opened).
INSTANCE_MASK = "masks/{0}_0.png"


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """task -> (ids, {layout: a pristine reference folder}); packed by pack.py's main in this
    process (the real pack.py runs in test_pack_refuses_a_special_file_in_the_raw_reference)."""
    out = {}
    for task, fixtures in FIXTURES.items():
        base = tmp_path_factory.mktemp(task.replace("-", "_"))
        raw = str(base / "raw")
        ids = fixtures.make_reference(raw)
        out[task] = ids, {"raw": raw}
        if "packed" in REFERENCE_FILES[task]:
            packed = str(base / "packed")
            code, _, err = pack_either([raw, packed], real=False)
            assert code == 0, err
            out[task][1]["packed"] = packed
    return out


def _copy(src, dest):
    subprocess.run(["cp", "-a", src, dest], check=True)
    return dest


def _replace(folder, rel, make):
    path = os.path.join(folder, rel)
    os.remove(path)
    make(path)


def assert_refused(r, code, *phrases):
    out = r["out"] + r["err"]
    assert r["rc"] == code, out
    assert "Traceback" not in out and "INTERNAL ERROR" not in out, out
    for phrase in phrases:
        assert phrase in r["err"], r["err"]
    assert r["wall"] < 30 and r["rss"] < 300, (r["wall"], r["rss"])


# Every reference file is read through readers/reference_file.py or bounded_json.py, both
# regular_file.read_bytes(..., follow_links=True): os.stat follows the link to /dev/zero and
# sees the same character device as a device node of /dev/zero's numbers, so the two take the
# same branch for every file (and the link's expected "device file" proves the link is
# followed). The device node is made for the first file of each task and layout; the other
# files get the FIFO and the link.
REFERENCE_CASES = [(task, layout, rel, kind)
                   for task, layouts in sorted(REFERENCE_FILES.items())
                   for layout, rels in sorted(layouts.items())
                   for rel in rels for kind in sorted(SPECIALS)
                   if kind != "device" or rel == rels[0]]


@pytest.mark.parametrize("task,layout,rel,kind", REFERENCE_CASES)
def test_a_special_file_in_the_reference_is_the_organizers_error(tmp_path, references, task,
                                                                 layout, rel, kind):
    ids, folders = references[task]
    ref = _copy(folders[layout], str(tmp_path / "ref"))
    name = rel.format(ids[0])
    make, phrase, _ = SPECIALS[kind]
    _replace(ref, name, make)
    res = str(tmp_path / "res")
    FIXTURES[task].make_submission(res, folders["raw"], ids)
    r = run_measured("score.py", "--ref", ref, "--res", res, "--out", tmp_path / "out",
                     timeout=60)
    assert_refused(r, 3, "the REFERENCE data", name, phrase)
    assert not (tmp_path / "out" / "scores.json").exists()


PACK_CASES = [(task, rel, kind) for task, layouts in sorted(REFERENCE_FILES.items())
              if "packed" in layouts
              for rel in layouts["raw"][:1] for kind in sorted(SPECIALS)]


@pytest.mark.parametrize("task,rel,kind", PACK_CASES)
def test_pack_refuses_a_special_file_in_the_raw_reference(tmp_path, references, task, rel,
                                                          kind):
    ids, folders = references[task]
    ref = _copy(folders["raw"], str(tmp_path / "ref"))
    name = rel.format(ids[0])
    make, phrase, _ = SPECIALS[kind]
    _replace(ref, name, make)
    r = run_measured("pack.py", ref, tmp_path / "packed", timeout=60)
    assert_refused(r, 3, name, phrase)
    assert not (tmp_path / "packed" / "packed.json").exists()   # nothing that looks packed


# Both image tasks take their predictions through the same format, formats/label_png's
# PngLabels (discover, then read: prediction._open_regular before any value is looked at), so a
# special file in their submissions takes the same path: each kind is made for one of them in
# turn, and for the VQA task's results file, a format of its own.
SUBMISSION_CASES = [(kind, task) for k, kind in enumerate(sorted(SPECIALS))
                    for task in sorted(SUBMISSION_FILE)
                    if task in ("planetscapes-vqa", "planetscapes-instance", "planetscapes-panoptic") or
                    task == ("agriculture-vision", "planetscapes-semantic")[k % 2]]


@pytest.mark.parametrize("kind,task", SUBMISSION_CASES)
def test_a_special_file_in_a_submission_is_the_participants_error(tmp_path, references, task,
                                                                  kind):
    ids, folders = references[task]
    res = str(tmp_path / "res")
    FIXTURES[task].make_submission(res, folders["raw"], ids)
    name = SUBMISSION_FILE[task].format(ids[0])
    make, _, phrase = SPECIALS[kind]
    _replace(res, name, make)
    r = run_measured("score.py", "--ref", folders.get("packed", folders["raw"]), "--res", res,
                     "--out", tmp_path / "out", timeout=60)
    assert_refused(r, 1, name, phrase)
    assert "REFERENCE" not in r["err"]
    assert not (tmp_path / "out" / "scores.json").exists()


@pytest.mark.parametrize("kind", sorted(SPECIALS))
def test_a_special_file_as_an_instance_mask_is_the_participants_error(tmp_path, references,
                                                                      kind):
    """A mask the .txt names is never followed nor opened either; the message names the .txt,
    its line and the mask."""
    ids, folders = references["planetscapes-instance"]
    res = str(tmp_path / "res")
    FIXTURES["planetscapes-instance"].make_submission(res, folders["raw"], ids)
    mask = INSTANCE_MASK.format(ids[0])
    make, _, phrase = SPECIALS[kind]
    _replace(res, mask, make)
    r = run_measured("score.py", "--ref", folders["raw"], "--res", res, "--out",
                     tmp_path / "out", timeout=60)
    if kind == "link to /dev/zero":   # a link leading out of the folder: refused as such
        assert_refused(r, 1, "Mask paths that point outside the predictions' folder",
                       "{}.txt: line 1: {}".format(ids[0], mask))
    else:
        assert_refused(r, 1, "{}.txt: line 1: {}: {}".format(ids[0], mask, phrase))
    assert not (tmp_path / "out" / "scores.json").exists()
