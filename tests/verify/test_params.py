"""The parameter counter (scoring/verify/params/): files written by the real libraries against
the counts the libraries gave (fixtures/counts.json, made by fixtures/make_fixtures.py), hostile
files made by hand, and the shared-storage rule against a naive oracle that lists every element.
Never needs torch."""
import itertools
import json
import os
import pickle
import shutil
import struct
import subprocess
import sys
import zipfile

import pytest
from hypothesis import example, given, settings, strategies as st

import torch_files
from conftest import KIT, PROGRAM
from final_package import params
from final_package.params import rule

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
# Pure Python and NumPy headers: CI runs it on the oldest versions and Python 3.7 too.
pytestmark = pytest.mark.compat
COUNTS = json.load(open(os.path.join(FIXTURES, "counts.json")))
CATS = ("parameters", "buffers", "optimizer_state", "ema")

try:
    import h5py  # noqa: F401
    HAVE_H5PY = True
except ImportError:
    HAVE_H5PY = False


@pytest.mark.parametrize("name", sorted(n for n in COUNTS if not n.startswith("_")))
def test_real_library_files_are_counted_as_the_libraries_count(name):
    got = params.count_file(os.path.join(FIXTURES, *name.split("/")), name)
    want = COUNTS[name]
    if name.endswith((".h5", ".keras")) and not HAVE_H5PY:
        assert got.status == params.NOT_COUNTED
        assert "pip install h5py" in got.reason
        return
    if "status" in want:
        assert got.status == want["status"], got.reason
        return
    assert got.status == params.COUNTED, got.reason
    assert {c: got.figures[c] for c in CATS} == {c: want[c] for c in CATS}


def test_the_fixtures_record_the_library_versions():
    assert COUNTS["_versions"]["torch"].startswith("2.13.0")
    assert set(COUNTS["_versions"]) >= {"torch", "safetensors", "onnx", "numpy", "h5py"}


def _ckpt(tmp_path, entries, tensors, records=None, name="m.pth", **kw):
    path = str(tmp_path / name)
    torch_files.write(path, torch_files.state_dict(entries),
                      torch_files.records_for(tensors) if records is None else records, **kw)
    return path


def test_a_pickle_calling_os_system_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    payload = torch_files.calls("os", "system", "touch {}".format(marker))
    w = torch_files.T("0", (2, 2))
    path = _ckpt(tmp_path, [("w", w.pickle()), ("evil", payload)], [w])
    got = params.count_file(path, "m.pth")
    assert got.status == params.REFUSED
    assert "os.system" in got.reason and "nothing was run" in got.reason
    assert not marker.exists()
    # The payload is live: Python's own unpickler runs it (in a child, with another marker).
    live = tmp_path / "live"
    data = torch_files.state_dict([("evil", torch_files.calls("os", "system",
                                                              "touch {}".format(live)))])
    subprocess.run([sys.executable, "-c", "import pickle, sys; pickle.loads(sys.stdin.buffer"
                    ".read())"], input=data, check=True)
    assert live.exists()


def test_a_pickle_importing_an_unknown_global_is_refused_by_name(tmp_path):
    w = torch_files.T("0", (3,))
    odd = torch_files.glob("mylib.layers", "Secret")
    path = _ckpt(tmp_path, [("w", w.pickle()), ("x", odd)], [w])
    got = params.count_file(path, "m.pth")
    assert got.status == params.REFUSED
    assert "mylib.layers.Secret" in got.reason


def test_a_storage_record_shorter_than_its_tensor_is_refused(tmp_path):
    w = torch_files.T("0", (4, 4))
    path = _ckpt(tmp_path, [("w", w.pickle())], [w], records={"0": 4 * 15})
    got = params.count_file(path, "m.pth")
    assert got.status == params.REFUSED
    assert "archive/data/0 holds 60 bytes" in got.reason and "16 elements (64 bytes)" in \
        got.reason


def test_a_tensor_reading_past_its_storage_is_refused(tmp_path):
    # the storage declares 8 elements and holds them; the tensor's view needs 16
    w = torch_files.T("0", (4, 4), numel=8)
    path = _ckpt(tmp_path, [("w", w.pickle())], [w], records={"0": 32})
    got = params.count_file(path, "m.pth")
    assert got.status == params.REFUSED
    assert "lies outside its storage" in got.reason


def test_a_checkpoint_zip_member_with_dotdot_is_refused(tmp_path):
    w = torch_files.T("0", (2,))
    path = _ckpt(tmp_path, [("w", w.pickle())], [w], extra=[("../escape.txt", b"x")])
    got = params.count_file(path, "m.pth")
    assert got.status == params.REFUSED
    assert "../escape.txt" in got.reason and "outside" in got.reason
    assert not (tmp_path / "escape.txt").exists()


def test_missing_record_and_a_malformed_pickle_are_refused(tmp_path):
    w = torch_files.T("0", (2,))
    got = params.count_file(_ckpt(tmp_path, [("w", w.pickle())], [w], records={}), "m.pth")
    assert got.status == params.REFUSED and "has no record" in got.reason
    path = str(tmp_path / "bad.pth")
    torch_files.write(path, b"\x80\x02}(X", {})
    got = params.count_file(path, "bad.pth")
    assert got.status == params.REFUSED and "not a readable pickle" in got.reason


def _safetensors(path, header, data_len):
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + bytes(data_len))
    return str(path)


@pytest.mark.parametrize("entries,data,words", [
    ({"a": [0, 16], "b": [8, 24]}, 24, "an overlap"),
    ({"a": [0, 16], "b": [20, 36]}, 36, "a hole"),
    ({"a": [0, 16], "b": [16, 32]}, 40, "the file holds 40 data bytes"),
    ({"a": [0, 12], "b": [12, 28]}, 28, "span 12 bytes"),
])
def test_a_safetensors_header_lying_about_offsets_is_refused(tmp_path, entries, data, words):
    header = {k: {"dtype": "F32", "shape": [2, 2], "data_offsets": v} for k, v in entries.items()}
    got = params.count_file(_safetensors(tmp_path / "m.safetensors", header, data),
                            "m.safetensors")
    assert got.status == params.REFUSED
    assert "lies" in got.reason and words in got.reason


def test_an_honest_safetensors_file_by_hand(tmp_path):
    header = {"__metadata__": {"format": "pt"},
              "w": {"dtype": "F16", "shape": [3, 4], "data_offsets": [0, 24]},
              "bn.running_var": {"dtype": "F32", "shape": [4], "data_offsets": [24, 40]}}
    got = params.count_file(_safetensors(tmp_path / "m.bin", header, 40), "m.bin")
    assert got.status == params.COUNTED, got.reason
    assert got.format == "safetensors"
    assert got.figures["parameters"] == 12 and got.figures["buffers"] == 4


def test_npy_with_objects_is_refused_and_npz_members_checked(tmp_path):
    import numpy as np
    np.save(str(tmp_path / "o.npy"), np.array([{"a": 1}], dtype=object), allow_pickle=True)
    got = params.count_file(str(tmp_path / "o.npy"), "o.npy")
    assert got.status == params.REFUSED and "unsafe" in got.reason
    np.savez(str(tmp_path / "w.npz"), w=np.zeros((2, 3), np.float32))
    with open(str(tmp_path / "w.npz"), "r+b") as f:
        f.truncate(os.path.getsize(str(tmp_path / "w.npz")))
    got = params.count_file(str(tmp_path / "w.npz"), "w.npz")
    assert got.status == params.COUNTED and got.figures["parameters"] == 6


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _onnx_external(location, length):
    entry = lambda k, v: _field(13, _field(1, k.encode()) + _field(2, v.encode()))  # noqa: E731
    tensor = _varint(1 << 3) + _varint(4) + _varint(2 << 3) + _varint(1) + \
        _field(8, b"w") + entry("location", location) + entry("length", str(length)) + \
        _varint(14 << 3) + _varint(1)
    return _field(7, _field(5, tensor))


@pytest.mark.parametrize("location", ["../outside.bin", "/etc/passwd", "sub/../../x.bin"])
def test_onnx_external_data_outside_the_folder_is_refused(tmp_path, location):
    (tmp_path / "m").mkdir()
    (tmp_path / "outside.bin").write_bytes(bytes(16))
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(_onnx_external(location, 16))
    got = params.count_file(str(path), "model.onnx")
    assert got.status == params.REFUSED and "unsafe" in got.reason


def test_onnx_external_data_inside_the_folder_is_counted_and_checked(tmp_path):
    (tmp_path / "w.bin").write_bytes(bytes(16))
    path = tmp_path / "model.onnx"
    path.write_bytes(_onnx_external("w.bin", 16))
    got = params.count_file(str(path), "model.onnx")
    assert got.status == params.COUNTED and got.figures["parameters"] == 4
    (tmp_path / "w.bin").write_bytes(bytes(12))
    got = params.count_file(str(path), "model.onnx")
    assert got.status == params.REFUSED and "needs 16 bytes" in got.reason


def test_a_bare_pickle_that_would_run_code_is_refused_and_a_plain_one_not_counted(tmp_path):
    (tmp_path / "evil.pkl").write_bytes(torch_files.PROTO + torch_files.calls(
        "subprocess", "call", "id") + torch_files.STOP)
    got = params.count_file(str(tmp_path / "evil.pkl"), "evil.pkl")
    assert got.status == params.REFUSED and "subprocess.call" in got.reason
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps({"a": [1, 2.5]}, protocol=2))
    got = params.count_file(str(tmp_path / "plain.pkl"), "plain.pkl")
    assert got.status == params.NOT_COUNTED


def _covered(t):
    """The naive oracle: every storage element index the view reads."""
    return {t.offset + sum(i * s for i, s in zip(idx, t.stride))
            for idx in itertools.product(*[range(n) for n in t.size])}


views = st.builds(lambda size, stride, offset: (size, stride, offset),
                  st.lists(st.integers(1, 3), min_size=1, max_size=3),
                  st.lists(st.integers(1, 5), min_size=3, max_size=3), st.integers(0, 6))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), views), min_size=1, max_size=5))
# Two views that overlap in part ([0, 3) and [2, 5)): two parameters once loaded into a model
# (load_state_dict copies each), 6 elements, not the 5 of their union.
@example([("a", ([3], [1, 1, 1], 0)), ("a", ([3], [1, 1, 1], 2))])
def test_views_of_one_storage_count_as_the_models_parameters_would(tmp_path_factory, specs):
    """Each distinct view (offset, size, stride) is a parameter of its own once loaded; the
    same view twice (tied weights: one tensor under two names) is one parameter."""
    tmp = tmp_path_factory.mktemp("views")
    tensors = []
    for key, (size, stride, offset) in specs:
        t = torch_files.T(key, tuple(size), offset=offset, stride=tuple(stride[:len(size)]))
        tensors.append(t)
    # each storage large enough for all its views
    need = {}
    for t in tensors:
        need[t.key] = max(need.get(t.key, 0), max(_covered(t)) + 1)
    for t in tensors:
        t.numel = need[t.key]
    entries = [("t{}".format(i), t.pickle()) for i, t in enumerate(tensors)]
    entries.append(("tied", tensors[0].pickle()))        # one view under a second name
    path = _ckpt(tmp, entries, tensors)
    got = params.count_file(path, "m.pth")
    assert got.status == params.COUNTED, got.reason
    # The naive oracle: the elements each distinct view reads, one view at a time.
    distinct = {(t.key, t.offset, t.size, t.stride) for t in tensors}
    assert got.figures["parameters"] == sum(
        len(list(itertools.product(*[range(n) for n in size]))) for _, _, size, _ in distinct)


def test_shifted_windows_of_one_storage_are_not_counted_as_their_union(tmp_path):
    """Sixteen tensors of 100 elements, each a window of one storage shifted by 10: a model
    loading them has 1,600 parameters, not the 250 their union covers; above a limit of
    1,000, the check fails."""
    from final_package import param_check
    windows = [torch_files.T("0", (100,), offset=10 * i, numel=250) for i in range(16)]
    (tmp_path / "models").mkdir()
    _ckpt(tmp_path / "models", [("layer{}.weight".format(i), t.pickle())
                                for i, t in enumerate(windows)], windows[:1], name="m.pth")
    census = params.count_package(str(tmp_path))
    assert census.counted == 1600
    c = param_check.check(census, 1000)
    assert c.status == "fail" and c.summary.startswith("1,600 parameters counted, above the "
                                                       "limit of 1,000")


@pytest.mark.parametrize("path,dtype,category", [
    (("layer1.0.bn1.running_mean",), "float32", "buffers"),
    (("bn.num_batches_tracked",), "int64", "buffers"),
    (("rel_pos_index",), "int64", "buffers"),
    (("conv.weight",), "float32", "parameters"),
    (("model", "conv.weight"), "float16", "parameters"),
    (("model_ema", "conv.weight"), "float32", "ema"),
    (("state_dict_ema", "conv.weight"), "float32", "ema"),
    (("ema.conv.weight",), "float32", "ema"),
    (("state_dict", "ema_backbone_conv1_weight"), "float32", "ema"),
    (("emb.weight",), "float32", "parameters"),
    (("schema", "conv.weight"), "float32", "parameters"),
    (("optimizer_states", 0, "state", 3, "exp_avg"), "float32", "optimizer_state"),
    (("lr_scheduler", "base"), "float32", "optimizer_state"),
    (("model_weights", "bn", "bn", "moving_variance:0"), "float32", "buffers"),
    (("teacher", "conv.weight"), "float32", "parameters"),
])
def test_the_counting_rule(path, dtype, category):
    assert rule.category(path, dtype, False) == category


def test_optimizer_state_under_any_key_is_recognised_by_its_shape(tmp_path):
    w, m = torch_files.T("0", (3, 2)), torch_files.T("1", (3, 2))
    tf = torch_files
    trainer = tf.dict_of([(tf.text("state"), tf.dict_of([(tf.integer(0), tf.dict_of(
        [(tf.text("exp_avg"), m.pickle())]))])), (tf.text("param_groups"), b"]")])
    path = _ckpt(tmp_path, [("w", w.pickle()), ("trainer_state", trainer)], [w, m])
    got = params.count_file(path, "m.pth")
    assert got.status == params.COUNTED, got.reason
    assert got.figures["parameters"] == 6 and got.figures["optimizer_state"] == 6


def test_an_optimizer_state_dict_is_recognised_by_its_shape():
    assert rule.category(("opt_whatever", "m"), "float32", True) == "optimizer_state"


def test_count_package_counts_identical_files_once_and_says_what_it_skipped(tmp_path):
    models = tmp_path / "models"
    (models / "sub").mkdir(parents=True)
    (tmp_path / "code").mkdir()
    for target in (models / "a.pth", models / "sub" / "copy.pth", tmp_path / "code" / "c.pt"):
        with open(os.path.join(FIXTURES, "state_dict.pth"), "rb") as src:
            target.write_bytes(src.read())
    (models / "README.txt").write_text("final model")
    (models / "weights.xyz").write_bytes(b"\x00" * 10)
    (tmp_path / "code" / "train.py").write_text("print(1)")
    census = params.count_package(str(tmp_path))
    by_path = {f.path: f for f in census.files}
    assert sorted(by_path) == ["code/c.pt", "models/README.txt", "models/a.pth",
                               "models/sub/copy.pth", "models/weights.xyz"]
    assert by_path["models/README.txt"].status == params.IGNORED
    assert by_path["models/weights.xyz"].status == params.NOT_COUNTED
    dupes = [f for f in census.files if f.duplicate_of]
    assert len(dupes) == 2 and census.counted == COUNTS["state_dict.pth"]["parameters"]
    assert not census.complete


def test_the_counter_never_imports_torch_or_runs_the_file():
    code = ("import sys; sys.path[:0] = [{!r}, {!r}]; from final_package import params; "
            "params.count_file({!r}, 'x'); params.count_file({!r}, 'y'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'tensorflow', 'keras', 'onnx', 'safetensors')))").format(
                PROGRAM, KIT, os.path.join(FIXTURES, "training_checkpoint.ckpt"),
                os.path.join(FIXTURES, "model.onnx"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_zip_that_is_no_checkpoint_is_not_counted(tmp_path):
    path = str(tmp_path / "m.bin")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("notes.txt", "hello")
    assert params.count_file(path, "m.bin").status == params.NOT_COUNTED


def test_damaged_files_are_refused_or_not_counted_never_a_crash(tmp_path):
    """Every fixture with bytes changed, cut or inserted at random (seeded): the counter answers
    with a status, never an exception (a participant's file never ends as an internal error),
    and the reason is the reader's own, not the fail-closed net's."""
    import random
    rng = random.Random(2024)
    names = sorted(n for n in COUNTS if not n.startswith("_") and "/" not in n)
    seen = set()
    for i in range(400):
        name = names[i % len(names)]
        with open(os.path.join(FIXTURES, name), "rb") as f:
            data = bytearray(f.read())
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            roll = rng.random()
            if roll < 0.6:
                data[at] = rng.randrange(256)
            elif roll < 0.8:
                del data[at:at + rng.randint(1, 50)]
            else:
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 20)))
        path = tmp_path / name
        path.write_bytes(bytes(data))
        got = params.count_file(str(path), name)
        assert got.status in (params.COUNTED, params.REFUSED, params.NOT_COUNTED,
                              params.IGNORED), got
        # each refusal a foreseen one, named: never the last-resort net of a reader that failed
        assert "the counter failed on it" not in got.reason, (name, got.reason)
        seen.add(got.status)
    assert {params.COUNTED, params.REFUSED} <= seen


def test_a_torch_object_the_counter_cannot_size_is_refused_as_unreadable(tmp_path):
    w = torch_files.T("0", (2,))
    q = torch_files.glob("torch._utils", "_rebuild_qtensor")
    got = params.count_file(_ckpt(tmp_path, [("w", w.pickle()), ("q", q)], [w]), "m.pth")
    assert got.status == params.REFUSED
    assert got.reason.startswith("not readable: the pickle uses torch._utils._rebuild_qtensor")


def test_an_onnx_models_external_data_is_counted_with_it_not_left_uncounted(tmp_path):
    """w.bin beside model.onnx holds bare tensor bytes: counted through the model, so the
    count is complete, where the model's tensors (or zero padding) fill it; a checkpoint an
    ONNX file names as its external data is not hidden by it."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "model.onnx").write_bytes(_onnx_external("w.bin", 16))
    for tail in (b"", bytes(100)):                   # exact, or zero padding after the tensor
        (models / "w.bin").write_bytes(b"\x00\x00\x80?" * 4 + tail)
        census = params.count_package(str(tmp_path))
        by_path = {f.path: f for f in census.files}
        assert by_path["models/w.bin"].status == params.IGNORED
        assert by_path["models/w.bin"].reason == \
            "the external data of models/model.onnx, counted with it"
        assert census.complete and census.counted == 4
    # An ONNX file whose external data is a checkpoint (4 float32 elements = 16 bytes of its
    # bytes, offset 0): the checkpoint keeps its own status.
    other = tmp_path / "other" / "models"
    other.mkdir(parents=True)
    shutil.copy(os.path.join(FIXTURES, "scripted.pt"), str(other / "w.bin"))
    (other / "model.onnx").write_bytes(_onnx_external("w.bin", 16))
    census = params.count_package(str(tmp_path / "other"))
    by_path = {f.path: f for f in census.files}
    assert by_path["models/model.onnx"].status == params.COUNTED
    assert by_path["models/w.bin"].status == params.NOT_COUNTED
    assert "TorchScript" in by_path["models/w.bin"].reason and not census.complete


def test_external_data_no_tensor_takes_is_named_not_hidden(tmp_path):
    """A 4-element tensor naming a blob of 64 KB more floats as its external data: the blob's
    other bytes are no tensor's; the file is not counted, its loose bytes named (the count is
    incomplete: a warning the jury reads), never ignored as the model's. The real onnx package
    appends to an existing data file: the fixture's weights.bin holds 272 bytes of an earlier
    save, named the same way."""
    from final_package import param_check
    models = tmp_path / "models"
    models.mkdir()
    (models / "model.onnx").write_bytes(_onnx_external("blob.bin", 16))
    (models / "blob.bin").write_bytes(b"\x00\x00\x80?" * (4 + 16384))
    census = params.count_package(str(tmp_path))
    blob = {f.path: f for f in census.files}["models/blob.bin"]
    assert blob.status == params.NOT_COUNTED
    assert blob.reason == ("the external data of models/model.onnx, but 65,536 of its 65,552 "
                           "bytes are no tensor's (and not zero padding): not counted")
    c = param_check.check(census, 1000)
    assert c.status == "warn" and "models/blob.bin" in c.summary
    shutil.copytree(os.path.join(FIXTURES, "onnx_external"), str(tmp_path / "real" / "models"))
    census = params.count_package(str(tmp_path / "real"))
    by_path = {f.path: f for f in census.files}
    assert census.counted == COUNTS["onnx_external/model.onnx"]["parameters"]
    assert by_path["models/weights.bin"].reason.endswith(
        "but 272 of its 408 bytes are no tensor's (and not zero padding): not counted")


@pytest.mark.parametrize("name", ["keras_weights.h5", "model.keras"])
def test_without_h5py_keras_files_are_not_counted_with_the_install_command(monkeypatch, name):
    """Whether or not h5py is installed here: without it, the file is not counted and the
    reason is the command that installs it for this Python."""
    monkeypatch.setitem(sys.modules, "h5py", None)      # import h5py raises ImportError
    got = params.count_file(os.path.join(FIXTURES, name), name)
    assert got.status == params.NOT_COUNTED
    assert got.reason == ("reading HDF5 weights needs the h5py package, which is not "
                          "installed: {} -m pip install h5py".format(sys.executable))


def test_a_file_holding_only_an_ema_copy_counts_it_as_the_model(tmp_path):
    """An EMA copy beside the model is reported apart (training_checkpoint.ckpt above); a file
    whose only weights are an EMA copy holds the model itself: counted, or the count would be
    0."""
    tf = torch_files
    w, rm = tf.T("0", (3, 2)), tf.T("1", (2,))
    ema = tf.dict_of([(tf.text("conv.weight"), w.pickle()),
                      (tf.text("bn.running_mean"), rm.pickle())])
    want = {"parameters": 6, "buffers": 2, "optimizer_state": 0, "ema": 0}
    got = params.count_file(_ckpt(tmp_path, [("state_dict_ema", ema)], [w, rm]), "m.pth")
    assert got.status == params.COUNTED, got.reason
    assert {c: got.figures[c] for c in CATS} == want and got.reason == rule.EMA_ONLY
    header = {"ema.w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}
    got = params.count_file(_safetensors(tmp_path / "e.safetensors", header, 16), "e")
    assert got.figures["parameters"] == 4 and got.reason == rule.EMA_ONLY
    # beside the model's own parameters, the EMA copy stays apart
    header["w"] = {"dtype": "F32", "shape": [1], "data_offsets": [16, 20]}
    got = params.count_file(_safetensors(tmp_path / "f.safetensors", header, 20), "f")
    assert (got.figures["parameters"], got.figures["ema"], got.reason) == (1, 4, "")


def test_files_that_hold_no_parameter_are_a_warning_not_a_pass(tmp_path):
    import numpy as np
    from final_package import param_check
    (tmp_path / "models").mkdir()
    np.save(str(tmp_path / "models" / "index.npy"), np.arange(5))
    c = param_check.check(params.count_package(str(tmp_path)), 150000000)
    assert c.status == "warn"
    assert c.summary == ("0 parameters counted: the model files hold no floating-point weights "
                         "the rule counts (5 buffers, 0 optimizer state, 0 EMA); the jury "
                         "decides whether models/ holds the final model")


def test_one_state_dict_under_ema_and_by_reference_under_model_is_the_models_too(tmp_path):
    """The pickle writes a dict once and refers to it again (BINGET): the walk sees it by
    every path that says something else of it, so naming its first occurrence "ema" hides
    nothing (here beside a decoy tensor, which alone would be counted otherwise)."""
    tf = torch_files
    w, rm, tiny = tf.T("0", (3, 2)), tf.T("1", (2,)), tf.T("2", (1,))
    ema = tf.dict_of([(tf.text("conv.weight"), w.pickle()),
                      (tf.text("bn.running_mean"), rm.pickle())])
    shared = tf.PROTO + tf.EMPTY_DICT + tf.MARK + tf.text("ema") + ema + b"q\x01" + \
        tf.text("decoy") + tiny.pickle() + tf.text("model") + b"h\x01" + tf.SETITEMS + tf.STOP
    path = str(tmp_path / "shared.pth")
    tf.write(path, shared, tf.records_for([w, rm, tiny]))
    got = params.count_file(path, "shared.pth")
    assert got.status == params.COUNTED, got.reason
    assert {c: got.figures[c] for c in CATS} == {"parameters": 7, "buffers": 2,
                                                  "optimizer_state": 0, "ema": 8}
    assert got.reason == ""
