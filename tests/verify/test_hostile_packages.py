"""Hostile final packages through the real verify.py (issue 32), measured (tests/support/
measured.py): what waved unsafe files through now makes the verdict invalid, naming each file
and what it would import; what felled the command (a segmentation fault, hours, gigabytes, exit
4) ends in a verdict within the documented bounds, with nothing left in --out but the verdict;
the terminal shows every name escaped. The packages are small (folders, so the 100 MiB file
stays sparse), each hostile file built here."""
import json
import os
import shutil
import signal
import struct
import sys
import zipfile

import pytest

import torch_files as tf
from agrivision_data import write_small_reference
from conftest import ORGANIZER
from measured import run_measured
from final_packages import FIXTURES, HUB, package, protocol0

pytestmark = pytest.mark.compat
VERIFY = os.path.join(ORGANIZER, "verify.py")
COUNT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support",
                     "count_files.py")


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    return write_small_reference(str(tmp_path_factory.mktemp("ref")))


def verify(pkg, ref, out, *more, timeout=120):
    r = run_measured(VERIFY, pkg, "--ref", ref, "--out", out, "--workers", "1", *more,
                     timeout=timeout)
    text = r["out"] + r["err"]
    assert "Traceback" not in text and "INTERNAL ERROR" not in text, text
    assert sorted(os.listdir(str(out))) == ["verdict.html", "verdict.json"]   # nothing else
    with open(os.path.join(str(out), "verdict.json")) as f:
        return r, json.load(f)


def files_of(doc):
    return {f["path"]: f for f in doc["parameters"]["files"]}


def check(doc, name):
    return [c for c in doc["checks"] if c["name"] == name][0]


def test_unsafe_files_make_the_verdict_invalid_naming_each(tmp_path, ref):
    """Each of these was VALID (or its file 'not counted'): a protocol 0 pickle calling
    os.system, the same at the start of 100 MiB, a bare pickle calling torch.hub._load_local.
    A checkpoint with a dummy code/ entry is counted, and so is one at code/assets/vocab.dat."""
    pkg = package(tmp_path, as_zip=False, model_file="state_dict.pth")
    models = pkg / "submission" / "models"
    (models / "model.pt").write_bytes(protocol0("id"))
    with open(str(models / "big.bin"), "wb") as f:
        f.write(protocol0("id"))
        f.truncate(100 << 20)
    (models / "hub.pkl").write_bytes(HUB)
    w = tf.T("0", (10, 10))
    tf.write(str(models / "scripted_looking.pt"), tf.state_dict([("w", w.pickle())]),
             tf.records_for([w]), extra=[("archive/code/m.py", b"")])
    (pkg / "submission" / "code" / "assets").mkdir()
    shutil.copy(os.path.join(FIXTURES, "state_dict.pth"),
                str(pkg / "submission" / "code" / "assets" / "vocab.dat"))
    r, doc = verify(pkg, ref, tmp_path / "out")
    assert r["rc"] == 1 and doc["verdict"] == "invalid"
    files = files_of(doc)
    for name, what in (("models/model.pt", "os.system"), ("models/big.bin", "os.system"),
                       ("models/hub.pkl", "torch.hub._load_local")):
        assert files[name]["status"] == "refused"
        assert files[name]["reason"].startswith("unsafe: the pickle imports " + what), name
    assert files["models/scripted_looking.pt"]["parameters"] == 100
    assert files["code/assets/vocab.dat"]["status"] == "counted"
    c = check(doc, "parameters")
    assert c["status"] == "fail" and c["summary"].startswith("models/big.bin refused: unsafe")
    assert "models/model.pt: refused - unsafe: the pickle imports os.system" in r["out"]


def test_a_zip_with_two_entries_of_one_name_is_refused(tmp_path, ref):
    """Python's zipfile extracts the last of them, unzip the first: the report verified would
    not be the one the jury reads."""
    pkg = package(tmp_path)
    with zipfile.ZipFile(str(pkg), "a") as zf, pytest.warns(UserWarning):
        zf.writestr("submission/challenge_report.pdf", b"not the report")
    r, doc = verify(pkg, ref, tmp_path / "out")
    assert r["rc"] == 1
    assert check(doc, "package")["summary"] == (
        "the final package final.zip cannot be unpacked safely: it holds two entries named "
        "'submission/challenge_report.pdf': zip readers disagree on which one counts (Python's "
        "zipfile extracts the last, unzip the first)")


def _felling(models):
    """What felled verify.py: a tuple nested a million deep as a dict key (a segmentation
    fault), an empty-dict flood and one tensor referred to 600,000 times (gigabytes), lists
    nested 100,000 deep (quadratic)."""
    tf.write(str(models / "deep_key.pth"), tf.PROTO + b"}" + b")" + b"\x85" * 1000000 +
             b"K\x01s" + tf.STOP, {})
    (models / "dicts.pkl").write_bytes(tf.PROTO + b"}" * 5100000 + tf.STOP)
    w = tf.T("0", (4,))
    tf.write(str(models / "refs.pth"), tf.PROTO + b"}(" + tf.text("w") + w.pickle() + b"q\x01" +
             tf.text("l") + b"]" + b"h\x01a" * 600000 + b"u" + tf.STOP, tf.records_for([w]))
    tf.write(str(models / "deep.pth"), tf.PROTO + b"]" * 100000 + w.pickle() + b"a" * 100000 +
             tf.STOP, tf.records_for([w]))
    return {"models/deep_key.pth": "a dict key is a nested tuple, which no checkpoint holds",
            "models/dicts.pkl": "not readable: the pickle builds more than 5,000,000 values",
            "models/refs.pth": "not readable: it refers to tensors more than 500,000 times",
            "models/deep.pth": "not readable: its containers nest more than 100 deep"}


def test_what_felled_verify_ends_in_a_verdict_within_the_bounds(tmp_path, ref):
    """And a report of 2 MB of '/Type /Pages' (about 35 minutes before) whose /Count has 5,000
    digits (exit 4 before). The counter's own peak memory, measured apart (verify.py runs it in
    a child process), stays far below 2 GiB."""
    report = b"%PDF-1.4\n" + b"/Type /Pages " * 160000 + b"/Count " + b"9" * 5000 + \
        b"\n%%EOF\n"
    pkg = package(tmp_path, as_zip=False, model_file="state_dict.pth", report=report)
    want = _felling(pkg / "submission" / "models")
    r, doc = verify(pkg, ref, tmp_path / "out", timeout=120)
    assert r["rc"] == 1 and r["wall"] < 60 and r["rss"] < 2048, (r["wall"], r["rss"])
    files = files_of(doc)
    for name, words in want.items():
        assert files[name]["status"] == "refused" and files[name]["reason"].startswith(words), \
            files[name]
    assert files["models/state_dict.pth"]["status"] == "counted"
    assert check(doc, "report")["status"] == "pass"
    alone = run_measured(COUNT, pkg / "submission", timeout=120)
    assert alone["rc"] == 0 and alone["rss"] < 1024, (alone["rss"], alone["err"])


def test_the_reading_budget_holds_at_the_documented_bounds(tmp_path, ref):
    """Floods just past each file's bound and past the package's: an 8.2M-opcode pickle, twice
    (the second over the package's 12M), 4.1M protobuf fields: refused each, by name, within
    60 s and 2 GiB (measured on the shared machine)."""
    pkg = package(tmp_path, as_zip=False, model_file="state_dict.pth")
    models = pkg / "submission" / "models"
    flood = tf.PROTO + b"N0" * 4100000 + b"N" + tf.STOP
    (models / "flood1.pkl").write_bytes(flood)
    (models / "flood2.pkl").write_bytes(flood)
    (models / "fields.onnx").write_bytes(b"\x3a" + _varint(8200000) + b"\x40\x01" * 4100000)
    r, doc = verify(pkg, ref, tmp_path / "out", timeout=180)
    assert r["rc"] == 1 and r["wall"] < 60 and r["rss"] < 2048, (r["wall"], r["rss"])
    files = files_of(doc)
    assert files["models/flood1.pkl"]["reason"].startswith(
        "not readable: the pickle holds more than 8,000,000 pickle opcodes")
    assert files["models/flood2.pkl"]["reason"].startswith(
        "not readable: the pickle holds more pickle opcodes than the 12,000,000 the package's "
        "files may take in all")
    assert files["models/fields.onnx"]["reason"].startswith(
        "not readable: it holds more than 4,000,000 protobuf fields")


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def test_what_ended_as_exit_4_ends_in_a_verdict_and_names_are_shown_escaped(tmp_path, ref):
    """An npy item size of 2^70, a NUL in an ONNX external location, a file name that is not
    UTF-8 (writing verdict.html failed, leaving verdict.html.part), one with an escape sequence
    (it reached the terminal raw) and one with a newline (it forged a line)."""
    pkg = package(tmp_path, as_zip=False, model_file="state_dict.pth")
    models = str(pkg / "submission" / "models")
    header = ("{'descr': {'names': ['a'], 'formats': ['<f4'], 'offsets': [0], 'itemsize': "
              "1180591620717411303424}, 'fortran_order': False, 'shape': (1,), }")
    raw = header.encode() + b" " * (63 - len(header) % 64) + b"\n"
    with open(os.path.join(models, "bad.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw)) + raw)
    entry = b"\x6a\x11\x0a\x08location\x12\x05w\x00bin"
    tensor = b"\x08\x04\x10\x01\x42\x01w" + entry + b"\x70\x01"
    with open(os.path.join(models, "m.onnx"), "wb") as f:
        f.write(b"\x3a" + bytes([len(tensor) + 2]) + b"\x2a" + bytes([len(tensor)]) + tensor)
    for name in (b"w\xff.pt", b"\x1b[2J.pt", b"x\nFORGED-LINE parameters 0 parameters.pt"):
        with open(os.path.join(models.encode(), name), "wb") as f:
            f.write(protocol0("id"))
    r, doc = verify(pkg, ref, tmp_path / "out")
    assert r["rc"] == 1
    files = files_of(doc)
    assert files["models/bad.npy"]["reason"].startswith("the file has a dtype numpy cannot make")
    assert files["models/m.onnx"]["reason"].startswith("unsafe: tensor 'w' names its external "
                                                       "data 'w\\x00bin'")
    for shown in ("models/w\\xff.pt", "models/\\x1b[2J.pt",
                  "models/x\\nFORGED-LINE parameters 0 parameters.pt"):
        assert files[shown]["status"] == "refused", sorted(files)
    assert "\x1b" not in r["out"] + r["err"]
    assert not any(line.startswith("FORGED-LINE") for line in r["out"].splitlines())
    assert "models/\\x1b[2J.pt: refused" in r["out"]
    page = (tmp_path / "out" / "verdict.html").read_text(encoding="utf-8")
    assert "models/w\\xff.pt" in page and "\x1b" not in page


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child is forked on Linux")
def test_a_reader_that_crashes_fails_its_file_not_the_command(tmp_path):
    """A file on which a reader dies (a segmentation fault in C: HDF5's, or the stack) is
    refused by name, and the files after it are still counted; so is one that keeps a reader
    past the time limit."""
    from final_package.params import census, isolated
    (tmp_path / "models").mkdir()
    for name in ("a.pth", "b.pth", "c.pth"):
        shutil.copy(os.path.join(FIXTURES, "state_dict.pth"), str(tmp_path / "models" / name))

    def crashing(root, rel, in_models, modules, budget):
        if rel.endswith("b.pth"):
            os.kill(os.getpid(), signal.SIGSEGV)
        return census.count_one(root, rel, in_models, modules, budget)
    found = {f.path: f for f in isolated.count_package(str(tmp_path), count_one=crashing).files}
    assert found["models/b.pth"].status == "refused"
    assert found["models/b.pth"].reason == ("the counter crashed on it (SIGSEGV): refused, the "
                                            "jury decides")
    assert found["models/a.pth"].status == found["models/c.pth"].status == "counted"

    def hanging(root, rel, in_models, modules, budget):
        if rel.endswith("a.pth"):
            import time
            time.sleep(60)
        return census.count_one(root, rel, in_models, modules, budget)
    found = {f.path: f for f in isolated.count_package(str(tmp_path), time_limit=2,
                                                       count_one=hanging).files}
    assert found["models/a.pth"].reason.startswith("the counter spent more than 2 s")
    assert found["models/b.pth"].reason == "not read: the counter stopped on 1 earlier file " \
        "of the package"
