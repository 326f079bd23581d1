import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.metrics.histogram import histogram
import pytest

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


@settings(max_examples=200, deadline=None)
@given(h=st.integers(1, 40), w=st.integers(1, 40), top=st.integers(1, 255),
       seed=st.integers(0, 2 ** 31 - 1), dtype=st.sampled_from([np.uint8, np.uint16]),
       uniform=st.booleans())
def test_histogram_equals_naive_count(h, w, top, seed, dtype, uniform):
    rng = np.random.RandomState(seed)
    key = (np.full((h, w), top - 1) if uniform else rng.randint(0, top, size=(h, w))).astype(dtype)
    expected = [0] * top
    for v in key.ravel().tolist():
        expected[v] += 1
    assert histogram(key, top).tolist() == expected


def test_large_image_with_dominant_key():
    key = np.zeros((512, 512), np.uint8)
    key[100:103, 7:9] = 53
    got = histogram(key, 54)
    assert got[0] == 512 * 512 - 6 and got[53] == 6 and got.sum() == 512 * 512
