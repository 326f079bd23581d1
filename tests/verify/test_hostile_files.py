"""Hostile files against the parameter counter (issue 32): each built here, small, by hand (the
big ones sparse or a few megabytes at most). Classes 1 and 2: every file that would run code
when loaded is refused naming what it would import, whatever its pickle protocol, size or name;
every reader ends any input in a status within its bounds (bounds.py), never an exception, a
crash or a hang. The payloads are live: Python's own unpickler runs them (in a child process)."""
import os
import pickle
import struct
import subprocess
import sys
import time
import zipfile

import pytest
from hypothesis import given, settings, strategies as st

import torch_files as tf
from final_package import params
from final_packages import HUB, protocol0, protocol1
from final_package.params import bounds, pickle_walk
from final_package.params.pickle_ops import OPCODES

pytestmark = pytest.mark.compat
STATUSES = (params.COUNTED, params.REFUSED, params.NOT_COUNTED, params.IGNORED)


def runs(make, tmp_path):
    """Whether Python's own unpickler runs the payload make(command) (touching a marker), in a
    child."""
    marker = tmp_path / "ran"
    subprocess.run([sys.executable, "-c", "import pickle, sys; pickle.loads(sys.stdin.buffer"
                    ".read())"], input=make("touch {}".format(marker)), capture_output=True)
    return marker.exists()


def count(path, name=None, **kw):
    return params.count_file(str(path), name or os.path.basename(str(path)), **kw)


# -- class 1: unsafe files waved through

@pytest.mark.parametrize("make", [protocol0, protocol1])
@pytest.mark.parametrize("name", ["model.pt", "vocab.dat", "notes.txt",
                                  "model.safetensors.index.json"])
def test_protocol_0_and_1_pickles_are_walked_whatever_their_name(tmp_path, make, name):
    assert runs(make, tmp_path)
    (tmp_path / name).write_bytes(make("id"))
    got = count(tmp_path / name)
    assert got.status == params.REFUSED
    assert got.reason.startswith("unsafe: the pickle imports os.system")


def test_a_file_of_any_size_is_walked_from_its_first_byte(tmp_path):
    """100 MiB (sparse: nothing written past the pickle), far above what was read before."""
    path = tmp_path / "weights.bin"
    with open(str(path), "wb") as f:
        f.write(protocol0("id"))
        f.truncate(100 << 20)
    got = count(path)
    assert got.status == params.REFUSED and "os.system" in got.reason


def test_a_torch_function_that_runs_code_is_unsafe_not_unreadable(tmp_path):
    """torch.hub._load_local(dir, name) imports dir/hubconf.py: only the rebuild functions of
    tensors are accepted from torch."""
    (tmp_path / "hubconf.py").write_text("open({!r}, 'w').close()\n".format(
        str(tmp_path / "ran")))
    (tmp_path / "m.pkl").write_bytes(HUB)
    want = "unsafe: the pickle imports torch.hub._load_local, a torch function"
    got = count(tmp_path / "m.pkl")
    assert got.status == params.REFUSED and got.reason.startswith(want)
    w = tf.T("0", (2,))
    tf.write(str(tmp_path / "m.pth"), tf.state_dict([("w", w.pickle()), ("x", HUB[2:-1])]),
             tf.records_for([w]))
    got = count(tmp_path / "m.pth")
    assert got.status == params.REFUSED and got.reason.startswith(want)
    assert not (tmp_path / "ran").exists()


def test_a_code_entry_does_not_make_a_checkpoint_torchscript_constants_pkl_does(tmp_path):
    """torch.load takes a zip for TorchScript only when it holds constants.pkl: a dummy
    archive/code/ entry beside data.pkl leaves a checkpoint whose every tensor is loaded."""
    w = tf.T("0", (40, 40))
    tf.write(str(tmp_path / "a.pt"), tf.state_dict([("w", w.pickle())]), tf.records_for([w]),
             extra=[("archive/code/__torch__/m.py", b"")])
    got = count(tmp_path / "a.pt")
    assert got.status == params.COUNTED and got.figures["parameters"] == 1600
    tf.write(str(tmp_path / "b.pt"), tf.state_dict([("w", w.pickle())]), tf.records_for([w]),
             extra=[("archive/constants.pkl", tf.PROTO + b")" + tf.STOP)])
    got = count(tmp_path / "b.pt")
    assert got.status == params.NOT_COUNTED and "TorchScript" in got.reason


def test_a_checkpoint_zip_with_two_entries_of_one_name_is_refused(tmp_path):
    w = tf.T("0", (4,))
    path = str(tmp_path / "m.pth")
    tf.write(path, tf.state_dict([("w", w.pickle())]), tf.records_for([w]))
    with zipfile.ZipFile(path, "a") as zf, pytest.warns(UserWarning):    # Duplicate name
        zf.writestr("archive/data.pkl", tf.state_dict([]))
    got = count(path)
    assert got.status == params.REFUSED
    assert got.reason == ("the zip holds two entries named 'archive/data.pkl': zip readers "
                          "disagree on which one counts (Python's zipfile reads the last, unzip "
                          "the first)")


def _legacy(main):
    """A pre-1.6 torch.save file: magic number, protocol version, sys_info, main, keys."""
    magic = tf.PROTO + b"\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19" + tf.STOP
    return magic + tf.PROTO + b"M\xe9\x03" + tf.STOP + tf.PROTO + b"}" + tf.STOP + main + \
        tf.PROTO + b"]" + tf.STOP


def test_every_pickle_of_a_legacy_file_is_walked(tmp_path):
    path = tmp_path / "legacy.pth"
    path.write_bytes(_legacy(tf.PROTO + tf.calls("os", "system", "id") + tf.STOP))
    got = count(path)
    assert got.status == params.REFUSED and got.reason.startswith(
        "unsafe: the pickle imports os.system")


def test_an_import_of_the_packages_own_module_is_unsafe_even_in_a_broken_pickle(tmp_path):
    """torch.load imports a pickle's global before anything else: code/evil.py would run even
    if the pickle stops right after. An import of no module of the package is text."""
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "evil.py").write_text("print('ran')\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.bin").write_bytes(b"ccode.evil\nx\n\xff\xfe")
    census = params.count_package(str(tmp_path))
    got = {f.path: f for f in census.files}["models/m.bin"]
    assert got.status == params.REFUSED
    assert got.reason.startswith("unsafe: the pickle imports code.evil.x, a module of the "
                                 "package itself")


@pytest.mark.parametrize("text", [b"certifi\nnumpy\ntorch\n", b"import os\nimport sys\n",
                                  b"class Net:\n    pass\n", b"(a list)\n", b"N."[:1]])
def test_text_that_begins_like_a_pickle_is_text(tmp_path, text):
    """requirements.txt beginning 'certifi' reads as GLOBAL 'ertifi numpy' and stops: Python's
    unpickler would fail to import it, and nothing else is imported."""
    (tmp_path / "requirements.txt").write_bytes(text)
    got = count(tmp_path / "requirements.txt")
    assert (got.status, got.reason) == (params.IGNORED, "not a model file: text")


# -- class 2: readers bounded

def test_a_tuple_nested_a_million_deep_as_a_dict_key_is_refused_not_hashed(tmp_path):
    """Hashing it recurses in C: Python's unpickler overflows the stack (a segmentation fault).
    Here it is refused in linear time."""
    data = tf.PROTO + b"}" + b")" + b"\x85" * 1000000 + b"K\x01s" + tf.STOP
    tf.write(str(tmp_path / "m.pth"), data, {})
    start = time.perf_counter()
    got = count(tmp_path / "m.pth")
    assert time.perf_counter() - start < 30
    assert got.status == params.REFUSED
    assert got.reason == "a dict key is a nested tuple, which no checkpoint holds"


def test_containers_nested_deeper_than_the_bound_are_refused_in_linear_time(tmp_path):
    """Paths were tuples rebuilt at each level: 100,000 levels took minutes."""
    w = tf.T("0", (2,))
    depth = 100000
    data = tf.PROTO + b"]" * depth + w.pickle() + b"a" * depth + tf.STOP
    tf.write(str(tmp_path / "m.pth"), data, tf.records_for([w]))
    start = time.perf_counter()
    got = count(tmp_path / "m.pth")
    assert time.perf_counter() - start < 30
    assert got.status == params.REFUSED
    assert got.reason.startswith("not readable: its containers nest more than 100 deep")


def test_the_opcode_bounds_per_pickle_and_per_package(tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_OPCODES_PER_PICKLE", 1000)
    flood = tf.PROTO + b"N0" * 600 + b"N" + tf.STOP     # 1,203 opcodes
    (tmp_path / "a.pkl").write_bytes(flood)
    got = count(tmp_path / "a.pkl")
    assert got.status == params.REFUSED
    assert got.reason.startswith("not readable: the pickle holds more than 1,000 pickle opcodes")
    small = tf.PROTO + b"N0" * 300 + b"N" + tf.STOP     # 603 opcodes each
    (tmp_path / "b.pkl").write_bytes(small)
    budget = bounds.Budget(dict(bounds.PACKAGE, opcodes=1000))
    assert count(tmp_path / "b.pkl", budget=budget).status == params.NOT_COUNTED
    got = count(tmp_path / "b.pkl", budget=budget)
    assert got.status == params.REFUSED
    assert got.reason.startswith("not readable: the pickle holds more pickle opcodes than the "
                                 "12,000,000 the package's files may take in all")


@pytest.mark.parametrize("bound,data,words", [
    ("MAX_PICKLE_VALUES", tf.PROTO + b"}" * 2000 + tf.STOP, "builds more than 1,000 values"),
    ("MAX_TENSOR_REFERENCES", None, "refers to tensors more than 1,000 times"),
])
def test_what_a_pickle_keeps_is_bounded(tmp_path, monkeypatch, bound, data, words):
    monkeypatch.setattr(bounds, bound, 1000)
    w = tf.T("0", (4,))
    if data is None:      # one tensor, then a list referring to it 2,000 times
        data = tf.PROTO + b"}(" + tf.text("w") + w.pickle() + b"q\x01" + tf.text("l") + \
            b"]" + b"h\x01a" * 2000 + b"u" + tf.STOP
    tf.write(str(tmp_path / "m.pth"), data, tf.records_for([w]))
    got = count(tmp_path / "m.pth")
    assert got.status == params.REFUSED and words in got.reason, got.reason


@pytest.mark.parametrize("descr", ["'|V1180591620717411303424'",
                                   "{'names': ['a'], 'formats': ['<f4'], 'offsets': [0], "
                                   "'itemsize': 1180591620717411303424}"])
def test_an_npy_item_size_numpy_cannot_make_is_refused(tmp_path, descr):
    """An item size of 2^70: numpy raises TypeError, or OverflowError (an internal error of
    verify.py before), or (numpy 1.16) wraps it around to -1."""
    header = "{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }"
    raw = header.encode() + b" " * (63 - len(header) % 64) + b"\n"
    (tmp_path / "m.npy").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw)) + raw)
    got = count(tmp_path / "m.npy")
    assert got.status == params.REFUSED
    assert got.reason.startswith("the file has a dtype numpy cannot make: ")


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_a_nul_in_an_onnx_external_location_is_refused(tmp_path):
    entry = _field(13, _field(1, b"location") + _field(2, b"w\x00.bin"))
    tensor = _varint(1 << 3) + _varint(4) + _varint(2 << 3) + _varint(1) + _field(8, b"w") + \
        entry + _varint(14 << 3) + _varint(1)
    (tmp_path / "m.onnx").write_bytes(_field(7, _field(5, tensor)))
    got = count(tmp_path / "m.onnx")
    assert got.status == params.REFUSED
    assert got.reason == ("unsafe: tensor 'w' names its external data 'w\\x00.bin', a name with "
                          "a control character")


def test_protobuf_floods_are_bounded(tmp_path, monkeypatch):
    """A flood of fields, and a tensor of a million packed dimensions."""
    monkeypatch.setattr(bounds, "MAX_PROTOBUF_FIELDS", 1000)
    (tmp_path / "a.onnx").write_bytes(_field(7, (_varint(8 << 3) + _varint(1)) * 2000))
    got = count(tmp_path / "a.onnx")
    assert got.status == params.REFUSED
    assert got.reason.startswith("not readable: it holds more than 1,000 protobuf fields")
    dims = _field(1, b"".join(_varint(1) for _ in range(100000)))
    (tmp_path / "b.onnx").write_bytes(_field(7, _field(5, dims)))
    got = count(tmp_path / "b.onnx")
    assert got.status == params.REFUSED and got.reason == "a tensor has more than 64 dimensions"


def _safetensors(path, header_text, data=b""):
    raw = header_text.encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)


def test_safetensors_metadata_and_entries_are_read_one_at_a_time_and_bounded(tmp_path,
                                                                              monkeypatch):
    """100 MB of metadata took gigabytes as one JSON value: it is skipped string by string, at
    most MAX_SAFETENSORS_METADATA entries; an entry that is no tensor's shape is refused before
    it is decoded."""
    monkeypatch.setattr(bounds, "MAX_SAFETENSORS_METADATA", 1000)
    flood = ",".join('"k{}":"v"'.format(i) for i in range(2000))
    _safetensors(tmp_path / "a.safetensors", '{"__metadata__":{' + flood + '}}')
    got = count(tmp_path / "a.safetensors")
    assert (got.status, got.reason) == (params.REFUSED, "its __metadata__ holds more than 1,000 "
                                                        "entries")
    few = ",".join('"k{}":"v"'.format(i) for i in range(500))
    _safetensors(tmp_path / "b.safetensors", '{"__metadata__":{' + few + '},'
                 '"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', bytes(8))
    got = count(tmp_path / "b.safetensors")
    assert got.status == params.COUNTED and got.figures["parameters"] == 2
    _safetensors(tmp_path / "c.safetensors", '{"w":{"dtype":"F32","shape":[' +
                 ",".join(["1"] * 100000) + '],"data_offsets":[0,4]}}', bytes(4))
    got = count(tmp_path / "c.safetensors")
    assert (got.status, got.reason) == (params.REFUSED, "its header entry 'w' is not {dtype, "
                                                        "shape, data_offsets}")


# -- totality: any bytes end in a status

@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_walked_as_a_pickle_end_in_a_value_or_a_named_refusal(data):
    try:
        pickle_walk.walk(data, "x", persistent=pickle_walk.NO_PERSISTENT)
    except (params.result.FileRefused, pickle_walk.NotAPickle) as exc:
        assert str(exc)


opcode_bytes = st.lists(st.sampled_from(sorted(OPCODES)), max_size=60).map(bytes)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(opcode_bytes, st.binary(max_size=8)), max_size=8).map(b"".join))
def test_any_run_of_opcodes_ends_in_a_value_or_a_named_refusal(data):
    """Opcodes without their arguments, and arguments without opcodes: the machine's every
    step, in any order."""
    try:
        pickle_walk.walk(b"\x80\x02" + data + b".", "x")
    except (params.result.FileRefused, pickle_walk.NotAPickle) as exc:
        assert str(exc)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([b"", b"\x93NUMPY\x01\x00", b"\x08", b"PK\x03\x04", b"\x89HDF\r\n\x1a\n",
                        b"\x80\x02", b"c", b"%PDF-", b"\x89PNG\r\n\x1a\n", b"\x10\x00\x00\x00"
                        b"\x00\x00\x00\x00{"]), st.binary(max_size=200))
def test_any_file_ends_in_a_status_never_an_exception(tmp_path_factory, head, tail):
    """Whatever a file holds behind any format's first bytes: a status."""
    path = tmp_path_factory.mktemp("any") / "f.bin"
    path.write_bytes(head + tail)
    got = count(path)
    assert got.status in STATUSES and (got.status != params.REFUSED or got.reason)
    assert "the counter failed on it" not in got.reason, got.reason


def test_a_reader_failing_in_a_way_not_foreseen_fails_closed(tmp_path, monkeypatch):
    """The last resort: a reader's own bug on some file is that file's refusal, named (the
    jury decides), never an internal error of the command."""
    from final_package.params import safetensors

    def broken(path, shown_path, budget=None):
        raise KeyError("a bug")
    monkeypatch.setattr(safetensors, "count", broken)
    header = b'{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    (tmp_path / "m.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(4))
    got = count(tmp_path / "m.safetensors")
    assert (got.status, got.reason) == (params.REFUSED, "it could not be read safely: the "
                                        "counter failed on it (KeyError); refused, the jury "
                                        "decides")


def test_the_machine_steps_cover_every_opcode():
    """A step for each opcode Python's unpickler knows (pickletools' list; Python 3.7's lacks
    protocol 5's three, which torch.load of a newer pickle meets all the same)."""
    import pickletools
    known = {op.code.encode("latin-1")[0] for op in pickletools.opcodes}
    assert known <= set(OPCODES) and set(OPCODES) - known <= {0x96, 0x97, 0x98}
    assert pickle.HIGHEST_PROTOCOL <= 5


def test_raw_floats_named_as_text_are_not_ignored(tmp_path):
    """A file is text by its content: 1.6 MB of float32 named notes.txt is no text, so it is
    not counted (the count is incomplete, a warning naming it), never 'not a model file'."""
    import numpy as np
    from final_package import param_check
    (tmp_path / "models").mkdir()
    np.random.RandomState(0).rand(400000).astype(np.float32).tofile(
        str(tmp_path / "models" / "notes.txt"))
    (tmp_path / "models" / "README.txt").write_text("the final model, trained 300 epochs\n")
    census = params.count_package(str(tmp_path))
    files = {f.path: f for f in census.files}
    assert files["models/notes.txt"].status == params.NOT_COUNTED
    assert files["models/notes.txt"].reason == (
        "a format this counter does not read (counted: PyTorch zip checkpoints, safetensors, "
        "ONNX, NumPy .npy/.npz, Keras .keras/.h5) (1,600,000 bytes)")
    assert files["models/README.txt"].status == params.IGNORED
    c = param_check.check(census, 1000)
    assert c.status == "warn" and "(models/notes.txt)" in c.summary


def test_a_zip_is_refused_by_the_entries_its_end_record_declares(tmp_path, monkeypatch):
    """Python's zipfile keeps ~500 bytes an entry of its central directory: ten million entries
    took gigabytes before a single check. The end record's count is read first."""
    monkeypatch.setattr(bounds, "MAX_ZIP_ENTRIES", 10)
    with zipfile.ZipFile(str(tmp_path / "m.npz"), "w") as zf:
        for i in range(20):
            zf.writestr("a{}.npy".format(i), b"")
    got = count(tmp_path / "m.npz")
    assert (got.status, got.reason) == (params.REFUSED, "a zip of 20 entries, more than the 10 "
                                                        "read")


def test_onnx_strings_take_from_the_package_budget_of_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "PACKAGE", dict(bounds.PACKAGE, bytes=1000))
    tensor = _varint(1 << 3) + _varint(1) + _field(8, b"w" * 2000) + _field(9, bytes(4))
    (tmp_path / "m.onnx").write_bytes(_field(7, _field(5, tensor)))
    got = count(tmp_path / "m.onnx")
    assert (got.status, got.reason) == (params.REFUSED, "not readable: it holds more bytes read "
                                        "whole than the 1,000 the package's files may take in "
                                        "all (refused: nothing was run)")
