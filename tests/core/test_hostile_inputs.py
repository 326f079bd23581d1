"""Hostile and careless inputs, each a class: what the decoder is held to, what a zip may do,
what a folder may hold, what a name may contain, what the outputs look like after a failure.
Per-file mistakes shared with the starting kit live in broken_cases.py; this file holds the rest."""
import json
import os
import stat
import struct
import subprocess
import sys
import time
import zipfile
import zlib

import numpy as np
import pytest
from PIL import Image

import broken_cases
from conftest import ROOT, PROGRAM, run_main, run_score, score_either
from agrivision_data import SMALL_IDS, SMALL_SIZE, save, write_reference, write_small_reference
from scoring.commands import score as cli
from scoring import zips as archive
from scoring.formats.label_png.prediction import max_prediction_bytes, read_prediction
from zip_headers import patch_zip

KIT = os.path.join(ROOT, "kit")
if KIT not in sys.path:
    sys.path.insert(0, KIT)
import check_submission  # noqa: E402
import make_submission  # noqa: E402
from scoring.registry import DEFAULT, TASKS  # noqa: E402

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

IDS, SIZE = SMALL_IDS, SMALL_SIZE


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    return write_small_reference(str(tmp_path_factory.mktemp("ref")))


@pytest.fixture(scope="module")
def manifest(ref, tmp_path_factory):
    task = TASKS[DEFAULT]
    path = str(tmp_path_factory.mktemp("manifest") / "manifest.json")
    with open(path, "w") as f:
        json.dump(task.manifest.make(task.open_reference(ref)), f)
    return path


def scores_of(out_dir):
    with open(os.path.join(str(out_dir), "scores.json")) as f:
        return json.load(f)


# --- 1. predictions: the decoded samples, and only those ---------------------------------------

def _samples(rng, depth, size=SIZE):
    return rng.randint(0, min(8, (1 << depth) - 1) + 1, size=size).astype(np.uint8)


@pytest.mark.parametrize("color_type,depth", [(0, 1), (0, 2), (0, 4), (0, 8), (0, 16),
                                              (3, 1), (3, 2), (3, 4), (3, 8)])
@pytest.mark.parametrize("width", [1, 7, 9, 20])
def test_every_bit_depth_reads_the_stored_samples(tmp_path, color_type, depth, width):
    """One rule for every depth: the class id is the sample stored in the file (Pillow scales
    2- and 4-bit grayscale to 0-255; 1-bit is mode '1'). Odd widths catch row padding."""
    rng = np.random.RandomState(depth * 10 + width)
    samples = _samples(rng, depth, (5, width))
    if depth == 16:
        rows = b"".join(b"\0" + r.astype(">u2").tobytes() for r in samples)
    elif depth == 8:
        rows = b"".join(b"\0" + r.tobytes() for r in samples)
    else:
        rows = broken_cases.pack_rows(samples, depth)
    extra = broken_cases.png_chunk(b"PLTE", bytes(k % 256 for k in range(3 << depth))) \
        if color_type == 3 else b""
    path = str(tmp_path / "p.png")
    with open(path, "wb") as f:
        f.write(broken_cases.png_bytes(width, 5, rows, depth, color_type, extra=extra))
    got = read_prediction(path, (5, width), 8)
    assert got.dtype == np.uint8 and got.shape == (5, width)
    assert (got == samples).all(), (got, samples)


def test_pillow_mode_1_and_4_bit_submissions_score_like_8_bit(tmp_path, ref):
    """A submission of 1-bit PNGs (Pillow's mode '1') and one of 4-bit grayscale PNGs score
    exactly as the same samples in 8-bit PNGs."""
    rng = np.random.RandomState(3)
    preds = {i: rng.randint(0, 2, size=SIZE).astype(np.uint8) for i in IDS}
    for form in ("L", "1", "gray4"):
        res = tmp_path / form
        res.mkdir()
        for i, p in preds.items():
            path = str(res / (i + ".png"))
            if form == "gray4":
                with open(path, "wb") as f:
                    f.write(broken_cases.png_bytes(SIZE[1], SIZE[0],
                                                   broken_cases.pack_rows(p, 4), 4))
            else:
                Image.fromarray(p * (255 if form == "1" else 1)).convert(form).save(path)
        # The real command on the 1-bit PNGs; the others through the same main in this process.
        code, _, err = score_either(["--ref", ref, "--res", res, "--out",
                                     tmp_path / ("out-" + form)], real=form == "1")
        assert code == 0, err
    assert Image.open(str(tmp_path / "1" / (IDS[0] + ".png"))).mode == "1"
    base = scores_of(tmp_path / "out-L")
    assert scores_of(tmp_path / "out-1") == base == scores_of(tmp_path / "out-gray4")


def test_a_second_header_buys_no_decode(tmp_path, ref):
    """First IHDR: the expected size; second (which Pillow obeys): 13000 x 13000, 169 MB to
    decode. Refused before decoding: the whole run stays small."""
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    broken_cases._second_ihdr(13000, 13000)(os.path.join(res, IDS[0] + ".png"), SIZE)
    proc = subprocess.run(
        [sys.executable, "-c", "import resource, subprocess, sys; "
         "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
         "sys.stderr.write(p.stderr); "
         "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
         sys.executable, os.path.join(PROGRAM, "score.py"), "--ref", ref, "--res", res,
         "--workers", "1"], capture_output=True, text=True, timeout=120)
    code, peak_kb = map(int, proc.stdout.split())
    assert code == 1 and "13000 x 13000" in proc.stderr and IDS[0] in proc.stderr
    assert peak_kb < 150 * 1024, peak_kb


def test_size_cap_is_stated_and_scales_with_the_image(tmp_path, ref):
    assert max_prediction_bytes(512, 512) == 2 * 1024 ** 2
    assert max_prediction_bytes(1024, 2048) == 9 * 1024 ** 2
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    broken_cases._padded(os.path.join(res, IDS[0] + ".png"), SIZE)
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 1
    assert "limit for a 20 x 16 prediction is {:,} bytes".format(
        max_prediction_bytes(*SIZE)) in proc.stderr
    # Just under the cap: a valid PNG with private chunks is scored.
    h, w = SIZE
    rows = b"".join(b"\0" + bytes(w) for _ in range(h))
    small = broken_cases.png_bytes(w, h, rows)
    room = max_prediction_bytes(h, w) - len(small) - 12
    with open(os.path.join(res, IDS[0] + ".png"), "wb") as f:
        f.write(broken_cases.png_bytes(w, h, rows, extra=broken_cases.png_chunk(
            b"prVt", bytes(room))))
    assert os.path.getsize(os.path.join(res, IDS[0] + ".png")) == max_prediction_bytes(h, w)
    code, _, err = score_either(["--ref", ref, "--res", res], real=False)   # the same main
    assert code == 0, err


def test_messages_hold_no_object_repr_and_are_identical_run_to_run(tmp_path, ref):
    """A broken IHDR CRC makes Pillow say 'cannot identify image file <_io.BytesIO object at
    0x...>'; a zip makes a temporary folder: neither may reach the message."""
    res = tmp_path / "res"
    broken_cases.good(str(res), IDS, SIZE)
    path = res / (IDS[0] + ".png")
    data = bytearray(path.read_bytes())
    data[29] ^= 0xFF   # IHDR CRC
    path.write_bytes(bytes(data))
    ref_zip = str(tmp_path / "ref.zip")
    with zipfile.ZipFile(ref_zip, "w") as zf:
        for folder, _, files in os.walk(ref):
            for n in files:
                zf.write(os.path.join(folder, n), os.path.relpath(os.path.join(folder, n), ref))
    (tmp_path / "empty").mkdir()
    messages = set()
    for real in (True, False):   # the real command, then the same main in this process
        code, _, err = score_either(["--ref", ref_zip, "--res", res], real)
        assert code == 1
        assert " at 0x" not in err and IDS[0] in err
        messages.add(err)
        # names the reference
        messages.add(score_either(["--ref", ref_zip, "--res", tmp_path / "empty"], real)[2])
    assert len(messages) == 2, messages


# --- 2. folders and names ------------------------------------------------------------------------

def test_a_linked_folder_is_not_followed(tmp_path, ref):
    """A link to a folder of predictions, to the reference, or to / is never entered."""
    broken_cases.good(str(tmp_path / "real"), IDS, SIZE)
    res = tmp_path / "res"
    res.mkdir()
    os.symlink(str(tmp_path / "real"), str(res / "preds"))
    os.symlink(ref, str(res / "ref"))
    os.symlink("/", str(res / "root"))
    os.symlink("loop", str(res / "loop"))
    started = time.monotonic()
    proc = run_score("--ref", ref, "--res", res)
    assert time.monotonic() - started < 30
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "No PNG files found" in proc.stderr and "preds (a symbolic link, not followed)" in proc.stderr


def test_links_to_the_reference_are_refused_not_scored(tmp_path, ref):
    res = tmp_path / "res"
    res.mkdir()
    for i in IDS:   # the reference's own boundary files as predictions
        os.symlink(os.path.join(ref, "boundaries", i + ".png"), str(res / (i + ".png")))
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 1
    assert "symbolic link" in proc.stderr and "(3)" in proc.stderr
    assert not (tmp_path / "out" / "scores.json").exists()


def test_a_device_file_is_not_opened(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE, skip=IDS[:1])
    try:
        os.mknod(os.path.join(res, IDS[0] + ".png"), stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except (PermissionError, AttributeError):
        pytest.skip("cannot make a device node here")
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 1 and "device file" in proc.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_an_unreadable_file_is_named(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    os.chmod(os.path.join(res, IDS[0] + ".png"), 0)
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 1 and IDS[0] in proc.stderr and "cannot be read" in proc.stderr


HOSTILE_NAMES = [b"evil\n  - FAKE.png", b"esc\x1b[2J\x1b[31mred.txt", b"bad\xff\xfeutf8.png",
                 b"rtl\xe2\x80\xaegnp.txt", b"cr\rreturn.png"]


def test_hostile_names_cannot_forge_lines_or_crash(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    for name in HOSTILE_NAMES:
        with open(os.path.join(os.fsencode(res), name), "wb") as f:
            f.write(b"x")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, os.path.join(PROGRAM, "score.py"), "--ref", ref,
                           "--res", res, "--out", str(out)], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode("utf-8")   # valid UTF-8 throughout
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
    assert not any(line.startswith("  - FAKE") for line in text.splitlines())
    for escaped in ("evil\\n  - FAKE.png", "esc\\x1b[2J\\x1b[31mred.txt", "bad\\xff\\xfeutf8.png",
                    "rtl\\u202egnp.txt", "cr\\rreturn.png"):
        assert escaped in text, escaped
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    assert "bad\\xff\\xfeutf8.png" in page and "\x1b" not in page
    assert set(scores_of(out)) >= {"miou"}


def test_a_hostile_name_of_a_broken_file_is_escaped_in_the_error(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(os.path.join(res, "a\nb"), IDS, SIZE)
    with open(os.path.join(res, "a\nb", IDS[0] + ".png"), "wb") as f:
        f.write(b"")
    proc = run_score("--ref", ref, "--res", res)
    assert proc.returncode == 1
    assert "a\\nb/" + IDS[0] + ".png: the file is empty" in proc.stderr


# --- 2. zips: every way one can fail to unpack ---------------------------------------------------

def _zip_of_good(tmp_path, name="sub.zip", method=zipfile.ZIP_STORED, arcname=lambda i: i + ".png"):
    src = tmp_path / "src"
    broken_cases.good(str(src), IDS, SIZE)
    path = tmp_path / name
    with zipfile.ZipFile(str(path), "w", method) as zf:
        for i in IDS:   # ZipInfo keeps the name as given (zf.write would strip a leading /)
            info = zipfile.ZipInfo(arcname(i), (2021, 1, 1, 0, 0, 0))
            info.compress_type = method
            zf.writestr(info, (src / (i + ".png")).read_bytes())
    return path


def _encrypted(tmp_path):
    path = _zip_of_good(tmp_path)
    patch_zip(path, 6, struct.pack("<H", 1))          # general purpose flag: encrypted
    return path


def _deflate64(tmp_path):
    path = _zip_of_good(tmp_path, method=zipfile.ZIP_DEFLATED)
    patch_zip(path, 8, struct.pack("<H", 9))          # compression method 9: Deflate64
    return path


def _bad_crc(tmp_path):
    path = _zip_of_good(tmp_path)
    data = bytearray(path.read_bytes())
    data[30 + len(IDS[0] + ".png") + 40] ^= 0xFF       # a byte of the first member's data
    path.write_bytes(bytes(data))
    return path


def _long_name(tmp_path):
    return _zip_of_good(tmp_path, arcname=lambda i: "x" * 300 + "/" + i + ".png")


def _slip(tmp_path):
    return _zip_of_good(tmp_path, arcname=lambda i: "../" + i + ".png")


def _absolute(tmp_path):
    return _zip_of_good(tmp_path, arcname=lambda i: "/tmp/" + i + ".png")


def _file_and_folder(tmp_path):
    path = _zip_of_good(tmp_path)
    with zipfile.ZipFile(str(path), "a") as zf:
        zf.writestr("a", b"x")
        zf.writestr("a/b.png", b"x")
    return path


def _truncated_zip(tmp_path):
    path = _zip_of_good(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:200] + data[-22:])          # central directory points nowhere
    return path


ZIPS = {
    "encrypted": (_encrypted, "encrypted"),
    "deflate64": (_deflate64, "Deflate64"),
    "bad_crc": (_bad_crc, "CRC"),
    "long_name": (_long_name, "File name too long"),
    "zip_slip": (_slip, "points outside the archive"),
    "absolute": (_absolute, "points outside the archive"),
    "file_and_folder": (_file_and_folder, "cannot be written"),
    "truncated": (_truncated_zip, "sub.zip"),
}


@pytest.mark.parametrize("case", sorted(ZIPS))
def test_a_zip_that_cannot_be_unpacked_is_a_submission_problem(tmp_path, ref, manifest, case):
    build, phrase = ZIPS[case]
    path = build(tmp_path)
    # The real command for the zip slip; the other zips through the same main in this process.
    code, _, stderr = score_either(["--ref", ref, "--res", path, "--out", tmp_path / "out"],
                                   real=case == "zip_slip")
    assert code == 1, stderr
    assert "Traceback" not in stderr and "Fix:" in stderr
    assert phrase in stderr and "sub.zip" in stderr
    assert not (tmp_path / "out" / "scores.json").exists()
    code, _, err = run_main(check_submission.main, [path, "--manifest", manifest])
    assert code == 1 and phrase in err and err.startswith(stderr.split("\n\n")[0])
    assert not os.path.exists("/tmp/" + IDS[0] + ".png") or case != "absolute"


def test_a_reference_zip_that_cannot_be_unpacked_is_the_organizers(tmp_path, ref):
    path = _slip(tmp_path)
    broken_cases.good(str(tmp_path / "res"), IDS, SIZE)
    proc = run_score("--ref", path, "--res", tmp_path / "res")
    assert proc.returncode == 3 and "REFERENCE" in proc.stderr and "outside" in proc.stderr


def test_unpacked_size_and_entry_caps(tmp_path, ref, monkeypatch):
    path = _zip_of_good(tmp_path)
    total = sum(i.file_size for i in zipfile.ZipFile(str(path)).infolist())
    assert archive.MAX_UNPACKED_BYTES == 16 * 1024 ** 3
    monkeypatch.setattr(archive, "MAX_UNPACKED_BYTES", total - 1)
    code, _, err = run_main(cli.main, ["--ref", ref, "--res", path, "--workers", "1"])
    assert code == 1 and "unpacks to more than {:,} bytes".format(total - 1) in err
    monkeypatch.setattr(archive, "MAX_UNPACKED_BYTES", total)
    assert run_main(cli.main, ["--ref", ref, "--res", path, "--workers", "1", "--quiet"])[0] == 0
    monkeypatch.setattr(archive, "MAX_MEMBERS", len(IDS) - 1)
    code, _, err = run_main(cli.main, ["--ref", ref, "--res", path, "--workers", "1"])
    assert code == 1 and "entries" in err


def test_a_zip_bomb_is_refused_before_anything_is_written(tmp_path, ref):
    """Five entries declaring 4 GiB each (20 GiB) in a tiny zip: refused from the central
    directory, before a byte is written."""
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(str(path), "w", zipfile.ZIP_STORED) as zf:
        for k in range(5):
            zf.writestr("zeros%d.png" % k, bytes(10))
    patch_zip(path, 22, struct.pack("<I", 0xFFFFFFF0))   # uncompressed size
    assert sum(i.file_size for i in zipfile.ZipFile(str(path)).infolist()) > 16 * 1024 ** 3
    started = time.monotonic()
    proc = run_score("--ref", ref, "--res", path)
    assert proc.returncode == 1 and "16 GiB" in proc.stderr, proc.stderr
    assert time.monotonic() - started < 20


def test_backslash_separators_get_a_hint(tmp_path, ref, manifest):
    path = _zip_of_good(tmp_path, arcname=lambda i: "preds\\" + i + ".png")
    proc = run_score("--ref", ref, "--res", path)
    assert proc.returncode == 1
    assert "backslash" in proc.stderr and "preds\\" + IDS[0] + ".png" in proc.stderr
    code, _, err = run_main(check_submission.main, [path, "--manifest", manifest])
    assert code == 1 and "backslash" in err


# --- 3. outputs and exit codes -------------------------------------------------------------------

def test_a_failed_run_leaves_no_scores_of_an_earlier_one(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    out = tmp_path / "out"
    # The scores of an earlier run (the same main, in this process); the failing run is real.
    assert score_either(["--ref", ref, "--res", res, "--out", out], real=False)[0] == 0
    assert (out / "scores.json").exists() and (out / "scores.txt").exists()
    os.remove(os.path.join(res, IDS[0] + ".png"))
    proc = run_score("--ref", ref, "--res", res, "--out", out)
    assert proc.returncode == 1
    assert sorted(os.listdir(str(out))) == []


def test_codalab_v1s_empty_page_is_kept_and_filled(tmp_path, ref):
    """The v1 worker creates an empty detailed_results.html before the run (its watcher uploads
    it when it changes): a run neither removes it early nor leaves it empty."""
    inp = tmp_path / "input"
    inp.mkdir()
    os.symlink(ref, str(inp / "ref"))
    broken_cases.good(str(inp / "res"), IDS, SIZE, skip=IDS[:1])
    out = tmp_path / "output"
    out.mkdir()
    (out / "detailed_results.html").write_text("")
    code, _, _ = run_main(cli.main, [inp, out, "--workers", "1"])
    assert code == 1 and (out / "detailed_results.html").exists()
    broken_cases.good(str(inp / "res"), IDS, SIZE)
    assert run_main(cli.main, [inp, out, "--workers", "1", "--quiet"])[0] == 0
    assert "mIoU" in (out / "detailed_results.html").read_text()


@pytest.mark.parametrize("platform", ["codalab_v1", "codabench"])
def test_page_last_and_held_for_codalab_v1s_watcher_only(tmp_path, ref, platform, monkeypatch):
    """CodaLab v1 (the only worker that pre-creates an empty page) restarts its page watcher on
    every new file and kills it about 1 s after the exit: the scores come first, the page last,
    then the program waits. Elsewhere it does not wait."""
    monkeypatch.delenv(cli.SETTLE_VARIABLE)          # the platform's wait, not the tests' 0 s
    inp = tmp_path / "input"
    inp.mkdir()
    os.symlink(ref, str(inp / "ref"))
    broken_cases.good(str(inp / "res"), IDS, SIZE)
    out = tmp_path / "output"
    out.mkdir()
    if platform == "codalab_v1":
        (out / "detailed_results.html").write_text("")
    proc = run_score(inp, out)
    ended = time.time()
    assert proc.returncode == 0, proc.stderr
    page, scores = (os.stat(str(out / n)).st_mtime for n in ("detailed_results.html",
                                                              "scores.txt"))
    assert scores <= page
    if platform == "codalab_v1":
        assert ended - page >= cli.HTML_SETTLE_SECONDS - 0.05
    else:
        assert ended - page < cli.HTML_SETTLE_SECONDS - 1
    assert sorted(os.listdir(str(out))) == ["detailed_results.html", "scores.json", "scores.txt"]


@pytest.mark.parametrize("value, seconds", [("0", 0.0), ("1.5", 1.5), ("-1", 3.0), ("99", 3.0),
                                            ("nan", 3.0), ("x", 3.0)])
def test_only_a_shorter_wait_can_be_asked_for(monkeypatch, value, seconds):
    monkeypatch.setenv(cli.SETTLE_VARIABLE, value)
    assert cli.settle_seconds() == seconds
    monkeypatch.delenv(cli.SETTLE_VARIABLE)
    assert cli.settle_seconds() == cli.HTML_SETTLE_SECONDS


def test_an_internal_error_after_scoring_leaves_no_scores(tmp_path, ref, monkeypatch):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    out = tmp_path / "out"

    def boom(*args):
        raise KeyError("a bug in the page")

    monkeypatch.setattr(type(TASKS[DEFAULT].report), "page", boom)
    code, _, err = run_main(cli.main, ["--ref", ref, "--res", res, "--out", out, "--workers", "1"])
    assert code == 4
    assert not (out / "scores.json").exists() and not (out / "scores.txt").exists()


def test_internal_error_tells_organizers_where_to_look(tmp_path, ref, monkeypatch):
    inp = tmp_path / "input"
    inp.mkdir()
    os.symlink(ref, str(inp / "ref"))
    broken_cases.good(str(inp / "res"), IDS, SIZE)

    def boom(*args):
        raise ZeroDivisionError("hidden value 0.123456")

    monkeypatch.setattr(type(TASKS[DEFAULT]), "summarize", boom)
    messages = set()
    for k in range(2):
        out = tmp_path / ("output%d" % k)
        code, _, err = run_main(cli.main, [inp, out, "--workers", "1"])
        assert code == 4
        messages.add(err)
        assert "ZeroDivisionError" in (out / "private" / "traceback.txt").read_text()
    (err,) = messages
    assert "ZeroDivisionError at tests/" not in err
    for phrase in ("INTERNAL ERROR", "ZeroDivisionError", "CodaLab", "private/traceback.txt",
                   "Codabench", "SCORING_DEBUG=1", "not a problem with the submission"):
        assert phrase in err, phrase
    assert "0.123456" not in err and "Traceback" not in err


def test_usage_errors_for_output_paths(tmp_path, ref, manifest):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    (tmp_path / "file").write_text("x")
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "file")
    assert proc.returncode == 2 and "not a folder" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "file").read_text() == "x"
    code, _, err = score_either(["--ref", ref, "--res", res, "--out",
                                 tmp_path / "file" / "below"], real=False)   # the same main
    assert code == 2 and "cannot write into the output folder" in err
    (tmp_path / "folder").mkdir()
    for target in (tmp_path / "folder", tmp_path / "nowhere" / "sub.zip"):
        code, _, err = run_main(make_submission.main, [res, "-o", target, "--manifest", manifest])
        assert code == 2 and "Traceback" not in err, err
    assert os.listdir(str(tmp_path / "folder")) == []
    (tmp_path / "bad.json").write_text("{not json")
    code, _, err = run_main(check_submission.main, [res, "--manifest", tmp_path / "bad.json"])
    assert code == 2 and "manifest" in err


@pytest.mark.parametrize("config,phrase", [
    ("task: [a, b]\n", "task"),
    ("task: {a: 1}\n", "task"),
    ("task: nonexistent\n", "unknown task 'nonexistent'"),
    ("storm_damage: [background]\n", "storm_damage"),
    ("storm_damage: {x: 1}\n", "storm_damage"),
    ("- just\n- a list\n", "not a mapping"),
    ("storm_damage: [unclosed\n", "unreadable YAML"),
])
def test_config_of_the_wrong_shape_is_the_organizers(tmp_path, ref, config, phrase):
    import shutil
    bad = str(tmp_path / "ref")
    shutil.copytree(ref, bad)
    with open(os.path.join(bad, "config.yaml"), "w") as f:
        f.write(config)
    broken_cases.good(str(tmp_path / "res"), IDS, SIZE)
    # The real command for an unknown task; the other shapes through the same main.
    code, _, err = score_either(["--ref", bad, "--res", tmp_path / "res"],
                                real=config == "task: nonexistent\n")
    assert code == 3, err
    assert "REFERENCE" in err and "config.yaml" in err and phrase in err


def test_config_inside_a_wrapped_reference_is_read(tmp_path):
    """A reference zipped as a folder: its config.yaml is one level down and still counts."""
    wrapped = tmp_path / "wrap" / "test_labels"
    one = np.ones((1, 2), np.uint8)
    write_reference(str(wrapped), "a", one, one, {"water": np.array([[1, 0]], np.uint8)},
                    storm=np.array([[0, 1]], np.uint8))
    res = tmp_path / "res"
    res.mkdir()
    save(str(res / "a.png"), np.array([[6, 6]]))
    proc = run_score("--ref", tmp_path / "wrap", "--res", res, "--out", tmp_path / "o1")
    assert proc.returncode == 0, proc.stderr
    assert scores_of(tmp_path / "o1")["miou"] == 0.25
    # The other configs through the same main in this process.
    (wrapped / "config.yaml").write_text("storm_damage: ignore\n")
    code, _, err = score_either(["--ref", tmp_path / "wrap", "--res", res, "--out",
                                 tmp_path / "o2"], real=False)
    assert code == 0, err
    assert scores_of(tmp_path / "o2")["miou"] == 1.0
    (wrapped / "config.yaml").write_text("task: nonexistent\n")
    code, _, err = score_either(["--ref", tmp_path / "wrap", "--res", res], real=False)
    assert code == 3 and "nonexistent" in err


def test_a_fifo_given_as_the_submission_is_a_usage_error(tmp_path, ref):
    os.mkfifo(str(tmp_path / "fifo.zip"))
    proc = run_score("--ref", ref, "--res", tmp_path / "fifo.zip", timeout=30)
    assert proc.returncode == 2 and "neither a folder nor a zip" in proc.stderr


def adam7_png(arr):
    """An interlaced (Adam7) 8-bit grayscale PNG of arr, written by hand (Pillow writes none)."""
    h, w = arr.shape
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
              (0, 1, 1, 2)]
    raw = b""
    for x0, y0, dx, dy in passes:
        sub = arr[y0::dy, x0::dx]
        if sub.size:
            raw += b"".join(b"\0" + row.astype(np.uint8).tobytes() for row in sub)
    ihdr = broken_cases.png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 1))
    return (b"\x89PNG\r\n\x1a\n" + ihdr + broken_cases.png_chunk(b"IDAT", zlib.compress(raw)) +
            broken_cases.png_chunk(b"IEND", b""))


def test_interlaced_predictions_read_exactly(tmp_path):
    rng = np.random.RandomState(9)
    for shape in ((16, 20), (1, 1), (3, 9), (9, 3)):
        arr = rng.randint(0, 9, size=shape).astype(np.uint8)
        path = str(tmp_path / "p.png")
        with open(path, "wb") as f:
            f.write(adam7_png(arr))
        assert (read_prediction(path, shape, 8) == arr).all(), shape


def test_an_unreadable_folder_is_named(tmp_path, monkeypatch):
    from scoring.submission import discovery
    res = tmp_path / "res"
    broken_cases.good(str(res / "preds"), IDS, SIZE)
    real = os.scandir

    def scandir(path):
        if str(path).endswith("preds"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    found = discovery.discover(str(res), IDS)
    text = "\n".join(found.log.summary_lines())
    assert "preds/ (a folder that cannot be read)" in text
