"""The agreement of two submissions' predictions (scoring/agreement.py), against a naive
oracle; and compare.py --leaderboard's comparison.json, against the PNGs read here."""
import io
import json
import zipfile

import numpy as np
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp
from PIL import Image

import platform_downloads
from conftest import AV_REF, run_main
from organizing.commands.compare import main
from scoring import agreement


def naive(a, b):
    same = total = 0
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist()):
        total += 1
        same += x == y
    return same, total


@given(hnp.arrays(np.uint8, st.tuples(st.integers(1, 6), st.integers(1, 6)),
                  elements=st.integers(0, 3)), st.data())
def test_pixels_as_counted_one_by_one(a, data):
    b = data.draw(hnp.arrays(np.uint8, a.shape, elements=st.integers(0, 3)))
    assert agreement.counts(a, b) == naive(a, b)
    assert agreement.counts(a, np.zeros((7, 7), np.uint8)) is None   # other shape: not compared


@given(st.dictionaries(st.integers(0, 9), st.sampled_from(["yes", "no", "2"])),
       st.dictionaries(st.integers(0, 9), st.sampled_from(["yes", "no", "2"])))
def test_answers_over_the_union_of_questions(a, b):
    keys = set(a) | set(b)
    assert agreement.counts(a, b) == (sum(1 for k in keys if a.get(k, 0) == b.get(k, 1)),
                                      len(keys))


def pngs(bulk, prefix):
    with zipfile.ZipFile(str(bulk)) as outer:
        name = [n for n in outer.namelist() if n.startswith(prefix)][0]
        with zipfile.ZipFile(io.BytesIO(outer.read(name))) as inner:
            return {n: np.array(Image.open(io.BytesIO(inner.read(n)))) for n in inner.namelist()}


def test_compare_writes_each_pairs_identical_pixels(tmp_path_factory, tmp_path):
    downloads = platform_downloads.made(tmp_path_factory)
    code, _, err = run_main(main, ["--ref", AV_REF, "-q", "--out", tmp_path / "o", "--workers",
                                   "2", "--leaderboard", downloads / "results.csv",
                                   downloads / "bulk_submissions.zip"])
    assert code == 0, err
    doc = json.loads((tmp_path / "o" / "comparison.json").read_text())
    pairs = {(p["a"], p["b"]): p for p in doc["agreement"]}
    assert len(pairs) == 15      # every pair of the six rows, once
    alpha, bravo = pngs(downloads / "bulk_submissions.zip", "48601_"), \
        pngs(downloads / "bulk_submissions.zip", "48602_")
    same = sum(int((alpha[n] == bravo[n]).sum()) for n in alpha)
    total = sum(alpha[n].size for n in alpha)
    found = pairs.get(("alpha", "bravo_x")) or pairs[("bravo_x", "alpha")]
    assert (found["identical"], found["compared"]) == (same, total)
    assert [r["model"] for r in doc["leaderboard_rows"]][:2] == ["alpha", "bravo_x"]
