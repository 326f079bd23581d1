"""The decoding shortcuts give exactly what the plain calls give: load_array (straight into a
numpy array) equals np.asarray(img) (its dtype too, but 16-bit grayscale PNGs are uint16 under
every Pillow), png.inflate (a presized buffer) equals zlib.decompress."""
import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from scoring.formats.label_png import png
from scoring.formats.label_png import pillow_array
from scoring.formats.label_png.pillow_array import DIRECT_DTYPES, _image_over, load_array

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def _plain(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as img:
        img.load()
        return np.asarray(img)


def _fast(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as img:
        return load_array(img)


def _copying_frombuffer(mode, size, data, *args):
    """Image.frombuffer as some modes and versions behave: a copy, never the caller's memory."""
    return Image.frombytes(mode, size, bytes(data), *args)


def _dtype_of(data: bytes, plain: np.ndarray) -> np.dtype:
    """What load_array must give: np.asarray's dtype, except uint16 for a 16-bit grayscale PNG
    (IHDR: bit depth at byte 24, colour type at 25), which older Pillow widens to int32."""
    return np.dtype(np.uint16) if (data[24], data[25]) == (16, 0) else plain.dtype


def _as_old_pillow(img: "Image.Image") -> "Image.Image":
    """A just-opened 16-bit grayscale PNG as Pillow < 10 presents it: mode 'I', raw mode
    I;16B (current Pillow says I;16, same tile)."""
    assert img.mode in ("I;16", "I") and img.tile[0][3] == "I;16B"
    if img.mode != "I":
        pillow_array._set_mode(img, "I")
    return img


def _pillow_png(arr: np.ndarray, mode: str, **save) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).convert(mode).save(buf, "PNG", **save)
    return buf.getvalue()


def _filtered_png(arr: np.ndarray, filters, interlace: bool = False) -> bytes:
    """A grayscale PNG of arr (uint8: 8-bit, uint16: 16-bit big-endian samples) whose row r uses
    filter filters[r % len(filters)] (0-4), written by hand (Pillow chooses its own filters),
    so the decoder's unfiltering is exercised; interlace: Adam7, each pass filtered likewise."""
    depth = 16 if arr.dtype == np.uint16 else 8
    bpp = depth // 8  # bytes per pixel: the filters' "left" neighbour is bpp bytes back
    h, w = arr.shape
    if interlace:
        passes = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2),
                  (0, 1, 2, 2), (1, 0, 2, 1)]
        images = [arr[y0::dy, x0::dx] for y0, x0, dy, dx in passes]
    else:
        images = [arr]
    rows, r = [], 0
    for image in images:
        if not image.size:
            continue
        raw = np.ascontiguousarray(image.astype(">u2") if depth == 16 else image)
        data = raw.view(np.uint8).reshape(image.shape[0], -1).astype(np.int64)
        prev = np.zeros(data.shape[1], dtype=np.int64)
        for cur in data:
            ftype = filters[r % len(filters)]
            r += 1
            left = np.concatenate([np.zeros(bpp, np.int64), cur[:-bpp]])
            upleft = np.concatenate([np.zeros(bpp, np.int64), prev[:-bpp]])
            if ftype == 0:
                out = cur
            elif ftype == 1:
                out = cur - left
            elif ftype == 2:
                out = cur - prev
            elif ftype == 3:
                out = cur - (left + prev) // 2
            else:
                p = left + prev - upleft
                pa, pb, pc = abs(p - left), abs(p - prev), abs(p - upleft)
                pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, upleft))
                out = cur - pred
            rows.append(bytes([ftype]) + (out % 256).astype(np.uint8).tobytes())
            prev = cur
    header = struct.pack(">IIBBBBB", w, h, depth, 0, 0, 0, 1 if interlace else 0)
    return (png.SIGNATURE + png.chunk(b"IHDR", header) +
            png.chunk(b"IDAT", zlib.compress(b"".join(rows))) + png.chunk(b"IEND", b""))


@settings(max_examples=60, deadline=None)
@given(h=st.integers(1, 70), w=st.integers(1, 70), top=st.integers(1, 256),
       seed=st.integers(0, 2 ** 31 - 1),
       filters=st.lists(st.integers(0, 4), min_size=1, max_size=5))
def test_every_filter_type_decodes_as_pillow_does(h, w, top, seed, filters):
    arr = np.random.RandomState(seed).randint(0, top, size=(h, w)).astype(np.uint8)
    data = _filtered_png(arr, filters)
    got = _fast(data)
    assert got.shape == (h, w) and got.dtype == np.uint8
    assert np.array_equal(got, arr)
    assert np.array_equal(got, _plain(data))


@pytest.mark.parametrize("mode,save", [
    ("L", {}), ("L", {"optimize": True}), ("L", {"compress_level": 0}),
    ("L", {"transparency": 3}), ("P", {}), ("I;16", {}), ("I;16", {"compress_level": 0}),
    ("1", {}), ("LA", {}), ("RGB", {}),
])
def test_every_mode_equals_asarray(mode, save):
    arr = (np.arange(37 * 23).reshape(37, 23) % 7).astype(np.uint8)
    data = _pillow_png(arr, mode, **save)
    got, want = _fast(data), _plain(data)
    assert got.dtype == _dtype_of(data, want) and got.shape == want.shape
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_interlaced_png_equals_asarray(dtype):
    """Adam7: the decoder writes the seven passes into the image itself."""
    arr = (np.arange(41 * 29).reshape(41, 29) * 7919 % (251 if dtype == np.uint8 else 65521))
    arr = arr.astype(dtype)
    data = _filtered_png(arr, [0, 1, 2, 3, 4], interlace=True)
    assert np.array_equal(_fast(data), arr)
    assert np.array_equal(_plain(data), arr)
    assert _fast(data).dtype == _dtype_of(data, _plain(data)) == dtype


@settings(max_examples=60, deadline=None)
@given(h=st.integers(1, 50), w=st.integers(1, 50), top=st.integers(1, 65536),
       seed=st.integers(0, 2 ** 31 - 1),
       filters=st.lists(st.integers(0, 4), min_size=1, max_size=5))
def test_16_bit_every_filter_type_decodes_as_pillow_does(h, w, top, seed, filters):
    """Instance images: 16-bit samples (big-endian in the file), decoded straight into a uint16
    array by current Pillow (mode I;16) and by older Pillow (opened as mode I, 32-bit: decoded
    as I;16B instead), with the values np.asarray gives."""
    arr = np.random.RandomState(seed).randint(0, top, size=(h, w)).astype(np.uint16)
    data = _filtered_png(arr, filters)
    got, want = _fast(data), _plain(data)
    assert got.shape == (h, w) and got.dtype == np.uint16
    assert np.array_equal(got, arr) and np.array_equal(got, want)
    with Image.open(io.BytesIO(data)) as img:
        old = load_array(_as_old_pillow(img))
        assert img.mode == "I;16B"  # decoded as stored, not widened to 32 bits
    assert old.dtype == np.uint16 and np.array_equal(old, arr)


def test_16_bit_png_opened_as_mode_i_takes_the_ordinary_path_when_pillow_copies(monkeypatch):
    """If the I;16B image cannot share the array, nothing is switched: Pillow decodes its mode
    I and the values come back as uint16 all the same."""
    arr = np.random.RandomState(5).randint(0, 65536, size=(9, 13)).astype(np.uint16)
    data = _filtered_png(arr, [2, 4])

    monkeypatch.setattr(Image, "frombuffer", _copying_frombuffer)
    with Image.open(io.BytesIO(data)) as img:
        got = load_array(_as_old_pillow(img))
        assert img.mode == "I"
    assert got.dtype == np.uint16 and np.array_equal(got, arr)


def test_only_16_bit_grayscale_pngs_switch_mode():
    """A mode-I image that is not a PNG's 16-bit grayscale (made in memory, or already loaded)
    keeps np.asarray's int32."""
    ints = Image.fromarray(np.arange(6, dtype=np.int32).reshape(2, 3) * 70000)
    assert ints.mode == "I" and load_array(ints).dtype == np.int32
    arr = np.arange(6, dtype=np.uint16).reshape(2, 3) * 9000
    with Image.open(io.BytesIO(_filtered_png(arr, [0]))) as img:
        _as_old_pillow(img).load()
        got = load_array(img)
    assert got.dtype == np.int32 and np.array_equal(got, arr)


def test_direct_modes_have_the_dtype_asarray_gives():
    """Each mode decoded in place gets the dtype (and byte order) np.asarray gives it, and an
    image made over such an array shows the array's values."""
    for mode, dtype in DIRECT_DTYPES.items():
        assert np.asarray(Image.new(mode, (3, 2))).dtype == dtype, mode
        arr = np.zeros((2, 3), dtype=dtype)
        image = _image_over(arr, mode)
        assert image is not None, mode
        arr[1, 2] = 200 if mode == "L" else 54321
        assert image.getpixel((2, 1)) == arr[1, 2], mode


def test_modes_pillow_copies_are_decoded_the_ordinary_way(monkeypatch):
    """Pillow < 10 opens 16-bit PNGs as mode I, which Image.frombuffer copies instead of
    sharing; any mode or version that copies must take the ordinary path, never return the
    untouched array."""
    assert _image_over(np.zeros((2, 3), dtype=np.int32), "I") is None
    arr = np.random.RandomState(3).randint(0, 60000, size=(20, 30)).astype(np.uint16)
    data = _filtered_png(arr, [1, 4])

    monkeypatch.setattr(Image, "frombuffer", _copying_frombuffer)
    assert np.array_equal(_fast(data), arr)


def test_an_image_already_loaded_keeps_its_pixels():
    arr = (np.arange(12).reshape(3, 4) * 7).astype(np.uint8)
    assert np.array_equal(load_array(Image.fromarray(arr)), arr)
    sixteen = Image.frombuffer("I;16", (4, 3), (arr.astype("<u2") * 999).tobytes(), "raw",
                               "I;16", 0, 1)
    assert np.array_equal(load_array(sixteen), arr.astype(np.uint16) * 999)


@pytest.mark.parametrize("dtype,top", [(np.uint8, 9), (np.uint16, 40000)])
def test_truncated_data_raises_as_pillow_does(dtype, top):
    arr = np.random.RandomState(1).randint(0, top, size=(64, 64)).astype(dtype)
    data = _filtered_png(arr, [4])
    cut = data[:len(data) // 2]
    from scoring.formats.label_png.decode_errors import Undecodable, pillow_says
    with pytest.raises(OSError) as plain:
        _plain(cut)
    with pytest.raises(Undecodable) as fast:     # Pillow's error, said in Pillow's words
        _fast(cut)
    assert str(fast.value) == pillow_says(plain.value)


def test_result_is_independent_of_pillows_image():
    """The array owns its memory: closing the image or decoding another must not change it."""
    a = np.full((8, 8), 5, np.uint8)
    b = np.full((8, 8), 6, np.uint8)
    first = _fast(_pillow_png(a, "L"))
    _fast(_pillow_png(b, "L"))
    assert (first == 5).all()


class _ReplacingImage:
    """An image whose load() allocates its own pixel memory, as a future Pillow might."""

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = arr
        self.mode = "L"
        self.size = (arr.shape[1], arr.shape[0])
        self.im = None

    def load(self) -> None:
        self.im = Image.fromarray(self._arr).im
        self.__array_interface__ = self._arr.__array_interface__


def test_falls_back_to_asarray_when_pillow_replaces_the_memory():
    arr = (np.arange(48).reshape(6, 8) % 9).astype(np.uint8)
    got = load_array(_ReplacingImage(arr))
    assert np.array_equal(got, arr)


@settings(max_examples=50, deadline=None)
@given(data=st.binary(max_size=5000), expected=st.integers(-5, 1 << 30))
def test_inflate_gives_zlibs_output_whatever_size_is_expected(data, expected):
    """png.inflate presizes its buffer from the header; a wrong or huge size changes nothing."""
    packed = zlib.compress(data)
    assert png.inflate(packed, expected) == data
    assert png.inflate(packed[:-1], expected) is None   # truncated
    assert png.inflate(b"not zlib" + packed, expected) is None
