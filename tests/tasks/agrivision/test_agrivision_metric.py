"""The program's confusion matrix equals the naive oracle's, exactly, through the real readers."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agrivision_oracle as oracle
from agrivision_data import PATTERNS, layered_image, random_image, save, write_reference
from scoring.tasks.agrivision import metric
from scoring.tasks.agrivision.reference import open_raw
from scoring.formats.label_png.prediction import read_prediction

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

CLS = {c: i for i, c in enumerate(oracle.CLASSES)}


def program_confusion(root, preds, policy):
    """Score predictions {id: array} against the raw reference at root, via the program."""
    ref = open_raw(root)
    state = metric.LabelSetHistogram()
    for image_id in ref.ids:
        path = os.path.join(root, "pred", image_id + ".png")
        save(path, preds[image_id])
        code = ref.read(image_id)
        state.update(image_id, read_prediction(path, code.shape, 8), code)
    return metric.confusion(state.counts, policy), state


def one_pixel_case(tmp_path, labels, pred, storm=False, valid=True):
    """A 1x1 image: labels is a list of class names."""
    root = str(tmp_path / "ref")
    one = np.ones((1, 1), np.uint8)
    write_reference(root, "a", one, one if valid else one * 0,
                    {c: one for c in labels}, one if storm else one * 0)
    return root, {"a": np.full((1, 1), pred, np.uint8)}


def matrix(**cells):
    m = [[0] * 9 for _ in range(9)]
    for key, n in cells.items():
        x, y = key.split("_")[1:]
        m[int(x)][int(y)] = n
    return m


# (labels, prediction, storm, valid, policy, expected cells m_x_y)
CASES = [
    ([], 0, False, True, "background", matrix(m_0_0=1)),                 # background hit
    ([], 4, False, True, "background", matrix(m_4_0=1)),                 # background miss
    (["drydown"], 2, False, True, "background", matrix(m_2_2=1)),        # single hit
    (["drydown"], 0, False, True, "background", matrix(m_0_2=1)),        # single miss
    (["double_plant", "endrow"], 3, False, True, "background",           # spec's worked example
     matrix(m_1_1=1, m_3_3=1)),
    (["double_plant", "endrow"], 5, False, True, "background",
     matrix(m_5_1=1, m_5_3=1)),
    (["double_plant", "endrow", "water"], 6, False, True, "background",  # three labels, hit
     matrix(m_1_1=1, m_3_3=1, m_6_6=1)),
    (["weed_cluster"], 8, False, False, "background", matrix()),         # invalid pixel
    ([], 0, True, True, "background", matrix(m_0_0=1)),                  # storm alone
    ([], 2, True, True, "background", matrix(m_2_0=1)),
    ([], 2, True, True, "ignore", matrix()),                             # storm alone, ignored
    (["water"], 6, True, True, "ignore", matrix(m_6_6=1)),               # storm + label
    (["water"], 0, True, True, "background", matrix(m_0_6=1)),
]


@pytest.mark.parametrize("labels,pred,storm,valid,policy,expected", CASES)
def test_rule_branches(tmp_path, labels, pred, storm, valid, policy, expected):
    root, preds = one_pixel_case(tmp_path, labels, pred, storm, valid)
    m, _ = program_confusion(root, preds, policy)
    assert m == expected
    one = np.ones((1, 1), np.uint8)
    assert oracle.confusion_one(one, one * int(valid), {c: one * (c in labels) for c in PATTERNS},
                                one * int(storm), preds["a"], policy) == expected


def test_image_without_valid_pixel_and_absent_class(tmp_path):
    rng = np.random.RandomState(1)
    root = str(tmp_path / "ref")
    b, m, labels, storm, pred = random_image(rng, 12, 9)
    labels["waterway"][:] = 0
    pred[pred == 7] = 1                               # waterway absent everywhere
    write_reference(root, "full", b, m, labels, storm)
    write_reference(root, "void", np.zeros_like(b), m, labels, storm)   # no valid pixel
    preds = {"full": pred, "void": rng.randint(0, 9, size=pred.shape)}
    got, state = program_confusion(root, preds, "background")
    want = oracle.confusion_one(b, m, labels, storm, pred)
    assert got == want
    assert state.images == 2
    tp, fp, fn = metric.pixel_counts(got)
    ious = metric.iou(tp, fp, fn)
    assert ious[CLS["waterway"]] is None
    want_ious, want_miou = oracle.scores(want)
    assert ious == want_ious
    assert metric.mean_iou(ious) == want_miou


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 31 - 1), h=st.integers(1, 12), w=st.integers(1, 12),
       n=st.integers(1, 3), policy=st.sampled_from(["background", "ignore"]),
       storm=st.booleans(), density_pct=st.integers(0, 100))
def test_random_images_match_oracle(tmp_path_factory, seed, h, w, n, policy, storm, density_pct):
    rng = np.random.RandomState(seed)
    root = str(tmp_path_factory.mktemp("ref"))
    preds, want = {}, None
    for k in range(n):
        b, m, labels, s, pred = random_image(rng, h, w, density=density_pct / 100.0, with_storm=storm)
        write_reference(root, "img%d" % k, b, m, labels, s)
        preds["img%d" % k] = pred
        want = oracle.confusion_one(b, m, labels, s, pred, policy, want)
    got, _ = program_confusion(root, preds, policy)
    assert got == want


def test_label_values_other_than_255_count_as_set(tmp_path):
    root = str(tmp_path / "ref")
    one = np.ones((1, 3), np.uint8)
    write_reference(root, "a", one, one, {})
    save(os.path.join(root, "labels", "water", "a.png"), np.array([[1, 17, 0]]))
    m, _ = program_confusion(root, {"a": np.array([[6, 0, 6]], np.uint8)}, "background")
    assert m == matrix(m_6_6=1, m_0_6=1, m_6_0=1)


def test_histogram_merge_is_order_independent():
    rng = np.random.RandomState(3)
    states = []
    for k in range(4):
        s = metric.LabelSetHistogram()
        code = rng.randint(0, 1024, size=(7, 5)).astype(np.uint16)
        s.update(str(k), rng.randint(0, 9, size=(7, 5)).astype(np.uint8),
                 metric.CodedLabels(code, metric.IDENTITY_TABLE))
        states.append(s)
    a = metric.LabelSetHistogram()
    for s in states:
        a.merge(s)
    b = metric.LabelSetHistogram()
    for s in reversed(states):
        b.merge(s)
    assert (a.counts == b.counts).all() and a.images == b.images == 4


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 31 - 1), h=st.integers(1, 10), w=st.integers(1, 10),
       n=st.integers(1, 3), policy=st.sampled_from(["background", "ignore"]), storm=st.booleans())
def test_uniform_and_varying_layers_match_oracle(tmp_path_factory, seed, h, w, n, policy, storm):
    """Every mix of empty, full and random layers: each of the reader's paths (no valid pixel,
    compact byte index, full 16-bit code) against the oracle."""
    rng = np.random.RandomState(seed)
    root = str(tmp_path_factory.mktemp("ref"))
    preds, want = {}, None
    for k in range(n):
        b, m, labels, s, pred = layered_image(rng, h, w, storm)
        write_reference(root, "img%d" % k, b, m, labels, s)
        preds["img%d" % k] = pred
        want = oracle.confusion_one(b, m, labels, s, pred, policy, want)
    got, _ = program_confusion(root, preds, policy)
    assert got == want
