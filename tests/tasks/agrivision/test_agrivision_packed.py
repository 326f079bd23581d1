"""The packed reference holds everything the metric needs: scores from it equal scores from the
raw layout, exactly (the whole state), for both storm_damage policies and any worker count."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import broken_cases
from conftest import AGRIVISION, ORGANIZER, pack_either, run_score, score_either
from agrivision_data import PATTERNS, layered_image, random_image, write_reference
from scoring import engine
from scoring.submission.discovery import discover
from scoring.registry import TASKS
from scoring.tasks.agrivision import packed
from scoring.tasks.agrivision.reference import find_root, open_raw

# Reading the packed reference (our PNG decoder and Pillow's) is marked compat: CI runs it on the
# oldest versions too; pack.py, the organizer's, is left to the current ones.

TASK = TASKS["agriculture-vision"]


def pack(raw, out, workers=1):
    return subprocess.run([sys.executable, os.path.join(ORGANIZER, "pack.py"), str(raw), str(out),
                           "--workers", str(workers)], capture_output=True,
                          text=True)


def counts(ref_dir, res_dir, workers=1):
    reference = TASK.open_reference(str(ref_dir))
    found = discover(str(res_dir), reference.ids)
    acc = engine.evaluate(TASK, reference, TASK.submission_format(None), None,
                          [(i, p, i) for i, p in found.files.items()], workers)
    assert not acc.reference_log.fatal and not acc.submission_log.fatal
    return reference.layout, acc.state.counts


def pack_raw(raw_dir, out_dir):
    """packed.pack on the raw reference at raw_dir, as pack.py opens it."""
    return packed.pack(open_raw(find_root(str(raw_dir))), str(out_dir), workers=1)


def make_set(root, rng, n, h, w, density=0.3, with_storm=True, layered=False):
    ids = ["F%02d_0-0-%d-%d" % (k, w, h) for k in range(n)]
    for i in ids:
        if layered:  # each layer empty, full or random: every reader path
            b, m, labels, storm, _ = layered_image(rng, h, w, with_storm)
        else:
            b, m, labels, storm, _ = random_image(rng, h, w, density=density, with_storm=with_storm)
        write_reference(str(root / "raw"), i, b, m, labels, storm)
    broken_cases.good(str(root / "res"), ids, (h, w))
    return ids


@pytest.mark.compat
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(1, 4), h=st.integers(1, 24),
       w=st.integers(1, 24), density_pct=st.integers(0, 100), storm=st.booleans(),
       layered=st.booleans())
def test_packed_state_equals_raw_state(tmp_path_factory, seed, n, h, w, density_pct, storm, layered):
    root = tmp_path_factory.mktemp("set")
    make_set(root, np.random.RandomState(seed), n, h, w, density_pct / 100.0, storm, layered)
    pack_raw(root / "raw", root / "packed")
    layout_raw, raw_counts = counts(root / "raw", root / "res")
    layout_packed, packed_counts = counts(root / "packed", root / "res")
    assert (layout_raw, layout_packed) == ("raw", "packed")
    assert (raw_counts == packed_counts).all()


@pytest.mark.compat
def test_more_than_256_codes_falls_back_to_16_bit(tmp_path):
    # 48 x 48 layers each set with probability 1/2: hundreds of distinct label sets in one image.
    rng = np.random.RandomState(5)
    one = np.ones((48, 48), np.uint8)
    layers = {c: rng.randint(0, 2, size=(48, 48)) for c in PATTERNS}
    write_reference(str(tmp_path / "raw"), "F00_0-0-48-48", one, one, layers,
                    rng.randint(0, 2, size=(48, 48)))
    broken_cases.good(str(tmp_path / "res"), ["F00_0-0-48-48"], (48, 48))
    pack_raw(tmp_path / "raw", tmp_path / "packed")
    from PIL import Image
    (png,) = os.listdir(str(tmp_path / "packed" / "packed"))
    assert Image.open(str(tmp_path / "packed" / "packed" / png)).mode in ("I", "I;16")
    assert (counts(tmp_path / "raw", tmp_path / "res")[1] ==
            counts(tmp_path / "packed", tmp_path / "res")[1]).all()


def test_pack_command_and_scores_identical_for_any_workers(tmp_path):
    make_set(tmp_path, np.random.RandomState(2), 7, 20, 16)
    shutil.copyfile(os.path.join(AGRIVISION, "reference_data", "config.yaml"),
                    str(tmp_path / "raw" / "config.yaml"))
    proc = pack(tmp_path / "raw", tmp_path / "packed", workers=2)
    assert proc.returncode == 0, proc.stderr
    assert "Packed 7 images" in proc.stdout and "smaller" in proc.stdout
    assert "The layout: docs/packed-format.md" in proc.stdout   # where the format is documented
    assert (tmp_path / "packed" / "config.yaml").exists()
    outputs = set()
    for ref in ("raw", "packed"):
        for workers in ("1", "2", "3"):
            out = tmp_path / ("out-" + ref + workers)
            # The real command with a pool; the other counts through the same main, in process.
            code, _, err = score_either(["--ref", tmp_path / ref, "--res", tmp_path / "res",
                                         "--out", out, "--workers", workers],
                                        real=workers == "2")
            assert code == 0, err
            outputs.add((out / "scores.txt").read_text())
    assert len(outputs) == 1
    assert "packed" in (tmp_path / "out-packed1" / "detailed_results.html").read_text()


def test_pack_refuses_non_empty_output_and_broken_raw(tmp_path):
    make_set(tmp_path, np.random.RandomState(3), 2, 8, 8)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    code, _, err = pack_either([tmp_path / "raw", tmp_path / "busy"], real=False)  # same main
    assert code == 2 and "not empty" in err
    os.remove(str(tmp_path / "raw" / "labels" / "water" / "F01_0-0-8-8.png"))
    proc = pack(tmp_path / "raw", tmp_path / "packed")
    assert proc.returncode == 3 and "REFERENCE" in proc.stderr
    assert "labels/water/F01_0-0-8-8.png" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "packed" / "packed.json").exists()


@pytest.mark.compat
@pytest.mark.parametrize("breakage", ["missing_image", "bad_manifest", "corrupt_image"])
def test_broken_packed_reference_blames_the_reference(tmp_path, breakage):
    ids = make_set(tmp_path, np.random.RandomState(4), 3, 8, 8)
    pack_raw(tmp_path / "raw", tmp_path / "packed")
    target = tmp_path / "packed" / "packed" / (ids[1] + ".png")
    if breakage == "missing_image":
        target.unlink()
    elif breakage == "corrupt_image":
        target.write_bytes(target.read_bytes()[:40])
    else:
        (tmp_path / "packed" / "packed.json").write_text(json.dumps({"format": "other"}))
    # The real command for the missing image; the other breakages through the same main.
    code, _, err = score_either(["--ref", tmp_path / "packed", "--res", tmp_path / "res"],
                                real=breakage == "missing_image")
    assert code == 3, err
    assert "REFERENCE" in err and "Traceback" not in err
    assert (ids[1] if breakage != "bad_manifest" else "packed.json") in err


@pytest.mark.compat
def test_packed_reference_wrapped_in_a_folder_is_found(tmp_path):
    make_set(tmp_path, np.random.RandomState(6), 2, 8, 8)
    pack_raw(tmp_path / "raw", tmp_path / "wrap" / "test_labels")
    proc = run_score("--ref", tmp_path / "wrap", "--res", tmp_path / "res")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.compat
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), h=st.integers(1, 40), w=st.integers(1, 40),
       n_codes=st.integers(1, 300))
def test_fast_reader_equals_pillow_and_survives_resaving(seed, h, w, n_codes):
    import io
    from PIL import Image, PngImagePlugin
    rng = np.random.RandomState(seed)
    palette = rng.randint(0, 1024, size=n_codes).astype(np.uint16)
    code = palette[rng.randint(0, n_codes, size=(h, w))]
    data = packed.encode(code)
    fast = packed.read_fast(data)
    slow = packed._decode_pillow(data, "x")
    expected = np.where(code & 512, code, 0)
    for coded in filter(None, (fast, slow)):
        assert (coded.table[coded.labels] == expected).all()
    if len(np.unique(expected)) <= 256:
        assert fast is not None                  # the packer's own files take the fast path
        # Re-saved by Pillow (adaptive filters): still read right, through Pillow.
        img = Image.open(io.BytesIO(data))
        info = PngImagePlugin.PngInfo()
        info.add_text(packed.TABLE_KEY, img.info[packed.TABLE_KEY])
        buf = io.BytesIO()
        img.save(buf, "PNG", pnginfo=info, optimize=True)
        resaved = packed.read_fast(buf.getvalue()) or packed._decode_pillow(buf.getvalue(), "x")
        assert (resaved.table[resaved.labels] == expected).all()


def _rebuild(data, table_text=None, index_change=None, keep_crc=False):
    """A packed PNG with its av-codes text replaced and/or one index byte set, every chunk CRC
    recomputed unless keep_crc (then the changed tEXt keeps its old CRC)."""
    import struct
    import zlib
    from scoring.formats.label_png import png
    out = png.SIGNATURE
    for kind, body, crc in png.chunks(data):
        if kind == b"tEXt" and table_text is not None:
            new = packed.TABLE_KEY.encode() + b"\0" + table_text.encode()
            out += (struct.pack(">I", len(new)) + kind + new + crc) if keep_crc else \
                png.chunk(kind, new)
            continue
        if kind == b"IDAT" and index_change is not None:
            raw = bytearray(zlib.decompress(body))
            raw[1] = index_change          # first pixel of the first row (byte 0: filter)
            body = zlib.compress(bytes(raw))
        out += png.chunk(kind, body)
    return out


def _packed_set(tmp_path):
    ids = make_set(tmp_path, np.random.RandomState(8), 2, 6, 6, density=0.5)
    pack_raw(tmp_path / "raw", tmp_path / "packed")
    target = tmp_path / "packed" / "packed" / (ids[0] + ".png")
    return ids, target


def _table(target):
    from scoring.formats.label_png import png
    text = [body for kind, body, _ in png.chunks(target.read_bytes()) if kind == b"tEXt"][0]
    return text.split(b"\0", 1)[1].decode().split(",")


@pytest.mark.compat
@pytest.mark.parametrize("breakage,phrase", [
    ("not_numbers", "comma-separated decimal codes"),
    ("code_too_big", "above the largest code"),
    ("repeated_code", "not strictly ascending"),
    ("index_beyond_table", "exceed its code table"),
    ("bad_crc", "packed/"),
])
def test_a_packed_table_not_as_the_format_says_is_the_organizers(tmp_path, breakage, phrase):
    """docs/packed-format.md: 1-256 decimal 10-bit codes, ascending, every index within the
    table, CRCs checked. A repeated code would silently drop counts; a code of 1024 or more would
    alias another prediction's counts: both must be refused, as must a table whose digits were
    changed after its CRC was written (read_fast's CRC check) and an index past the table."""
    ids, target = _packed_set(tmp_path)
    data = target.read_bytes()
    table = _table(target)
    assert len(table) >= 2
    if breakage == "not_numbers":
        data = _rebuild(data, "0,x512")
    elif breakage == "code_too_big":
        data = _rebuild(data, ",".join(table[:-1] + ["1024"]))
    elif breakage == "repeated_code":
        data = _rebuild(data, ",".join(table + table[-1:]))
    elif breakage == "index_beyond_table":
        data = _rebuild(data, index_change=len(table))
    else:   # the last code changed by one, still a valid ascending table, CRC left as it was
        last = int(table[-1])
        changed = table[:-1] + [str(last + 1 if last + 1 < 1024 else last - 1)]
        assert sorted(set(map(int, changed))) == list(map(int, changed))
        data = _rebuild(data, ",".join(changed), keep_crc=True)
    target.write_bytes(data)
    # The real command for the CRC; the other breakages through the same main in this process.
    code, out, err = score_either(["--ref", tmp_path / "packed", "--res", tmp_path / "res",
                                   "--workers", "1"], real=breakage == "bad_crc")
    assert code == 3, out + err
    assert "REFERENCE" in err and phrase in err and ids[0] in err
    assert "Traceback" not in err


@pytest.mark.compat
def test_a_16_bit_packed_image_with_codes_beyond_10_bits_is_refused(tmp_path):
    import io
    from PIL import Image
    ids, target = _packed_set(tmp_path)
    code = np.full((6, 6), 512, np.uint16)
    code[0, 0] = 1024 + 512
    buf = io.BytesIO()
    Image.frombytes("I;16", (6, 6), code.astype("<u2").tobytes()).save(buf, "PNG")
    target.write_bytes(buf.getvalue())
    proc = run_score("--ref", tmp_path / "packed", "--res", tmp_path / "res", "--workers", "1")
    assert proc.returncode == 3 and "10-bit" in proc.stderr, proc.stderr
