"""The uniform-layer memo: a file with the exact bytes of a known uniform layer is not decoded
again, and anything else still is."""
import io

import numpy as np
import pytest
from PIL import Image

from scoring.tasks.agrivision import layers

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


def png_bytes(arr):
    buf = io.BytesIO()
    Image.fromarray(np.asarray(arr, dtype=np.uint8)).save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
def reader():
    return layers.LayerReader()


def test_uniform_layer_is_decoded_once(monkeypatch, reader):
    data = png_bytes(np.full((64, 48), 255))
    first = reader.read(data, ("L",))
    assert first == layers.Layer((64, 48), 255, None)

    def no_decode(*args, **kwargs):
        raise AssertionError("decoded again")

    monkeypatch.setattr(layers.Image, "open", no_decode)
    assert reader.read(data, ("L",)) == first


def test_same_size_other_content_is_decoded(reader):
    reader.read(png_bytes(np.zeros((8, 8))), ("L",))
    arr = np.zeros((8, 8))
    arr[3, 4] = 255
    got = reader.read(png_bytes(arr), ("L",))
    assert got.value is None and (got.array == arr).all()
    other_size = reader.read(png_bytes(np.zeros((8, 9))), ("L",))
    assert other_size.shape == (8, 9) and other_size.value == 0


def test_large_files_are_not_remembered(reader):
    rng = np.random.RandomState(0)
    noisy = rng.randint(0, 256, size=(128, 128))
    got = reader.read(png_bytes(noisy), ("L",))
    assert got.value is None and (got.array == noisy).all()
    assert reader.uniform == {}


def test_mode_is_checked_before_remembering(reader):
    rgb = io.BytesIO()
    Image.new("RGB", (4, 4)).save(rgb, "PNG")
    from scoring.tasks.agrivision.layers import WrongMode
    with pytest.raises(WrongMode, match="RGB"):      # the file's fault, said as such
        reader.read(rgb.getvalue(), ("L",))
    assert reader.uniform == {}
