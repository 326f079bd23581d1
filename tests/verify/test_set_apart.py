"""What the counting rule sets apart (EMA copies, optimizer state, buffers) must look like what it
claims to be (issue 32, class 3): a model of 1,600 elements hidden under `model_ema`, filed as
optimizer state or named `*.running_mean` beside a decoy of 10 is counted, and the check fails
against a limit of 1,000; what still follows the rule but would exceed the limit if counted (a
per-channel pair of statistics, weights bit-cast to int32) is a warning naming the tensors.
Real checkpoints written by torch, safetensors and ONNX keep their counts."""
import json
import os
import shutil

import pytest

import torch_files as tf
from final_package import param_check, params

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
COUNTS = json.load(open(os.path.join(FIXTURES, "counts.json")))
pytestmark = pytest.mark.compat
LIMIT = 1000


def _package(tmp_path, entries, tensors):
    (tmp_path / "models").mkdir(parents=True)
    tf.write(str(tmp_path / "models" / "final.pth"), tf.state_dict(entries),
             tf.records_for(tensors))
    census = params.count_package(str(tmp_path))
    return census, census.files[0], param_check.check(census, LIMIT)


def _decoy():
    w = tf.T("d", (10,))
    return w, tf.dict_of([(tf.text("fc.weight"), w.pickle())])


def test_a_model_under_model_ema_beside_a_decoy_is_counted(tmp_path):
    decoy, model = _decoy()
    hidden = tf.T("h", (40, 40))
    ema = tf.dict_of([(tf.text("backbone.weight"), hidden.pickle())])
    census, f, check = _package(tmp_path, [("model", model), ("model_ema", ema)],
                                [decoy, hidden])
    assert (census.counted, f.figures["ema"]) == (1610, 0)
    assert f.reason == ("1,600 elements set apart do not look like what they claim, counted: "
                        "backbone.weight (EMA, 40x40)")
    assert check.status == "fail" and check.summary.startswith(
        "1,610 parameters counted, above the limit of 1,000")


def test_an_ema_copy_that_mirrors_the_model_stays_apart(tmp_path):
    w, b = tf.T("0", (20, 4)), tf.T("1", (20,))
    ew, eb = tf.T("2", (20, 4)), tf.T("3", (20,))
    model = tf.dict_of([(tf.text("fc.weight"), w.pickle()), (tf.text("fc.bias"), b.pickle())])
    ema = tf.dict_of([(tf.text("module.fc.weight"), ew.pickle()),
                      (tf.text("module.fc.bias"), eb.pickle())])
    census, f, check = _package(tmp_path, [("model", model), ("model_ema", ema)],
                                [w, b, ew, eb])
    assert (census.counted, f.figures["ema"], f.reason) == (100, 100, "")
    assert check.status == "pass"


def test_a_model_filed_as_optimizer_state_is_counted(tmp_path):
    decoy, model = _decoy()
    hidden = tf.T("h", (40, 40))
    step = tf.T("s", ())
    optimizer = tf.dict_of([(tf.text("state"), tf.dict_of([(tf.integer(0), tf.dict_of(
        [(tf.text("exp_avg"), hidden.pickle()), (tf.text("step"), step.pickle())]))])),
        (tf.text("param_groups"), b"]")])
    census, f, check = _package(tmp_path, [("model", model), ("optimizer", optimizer)],
                                [decoy, hidden, step])
    assert census.counted == 1610 and f.figures["optimizer_state"] == 1   # the step stays
    assert "exp_avg (optimizer state, 40x40)" in f.reason
    assert check.status == "fail"


def test_moments_of_the_parameters_stay_optimizer_state_factored_ones_too(tmp_path):
    """Adam's moments have their parameter's shape; Adafactor's row and column statistics
    its factors."""
    w = tf.T("0", (30, 20))
    m, v, row, col = tf.T("1", (30, 20)), tf.T("2", (30, 20)), tf.T("3", (30,)), \
        tf.T("4", (20,))
    state = tf.dict_of([(tf.integer(0), tf.dict_of(
        [(tf.text("exp_avg"), m.pickle()), (tf.text("exp_avg_sq"), v.pickle()),
         (tf.text("exp_avg_sq_row"), row.pickle()), (tf.text("exp_avg_sq_col"), col.pickle())]))])
    optimizer = tf.dict_of([(tf.text("state"), state), (tf.text("param_groups"), b"]")])
    census, f, _ = _package(tmp_path, [("model", tf.dict_of([(tf.text("w"), w.pickle())])),
                                       ("optimizer", optimizer)], [w, m, v, row, col])
    assert (census.counted, f.figures["optimizer_state"], f.reason) == (600, 1250, "")


def test_a_model_named_running_mean_is_counted_unless_it_is_a_per_channel_pair(tmp_path):
    decoy, _ = _decoy()
    hidden = tf.T("h", (40, 40))
    census, f, check = _package(tmp_path / "a", [("fc.weight", decoy.pickle()),
                                                 ("bn.running_mean", hidden.pickle())],
                                [decoy, hidden])
    assert census.counted == 1610 and check.status == "fail"
    assert "bn.running_mean (a running statistic, 40x40)" in f.reason
    # one dimension, with the layer's other statistic: a normalization layer's, set apart; but
    # counted, the two would exceed the limit: a warning naming them
    mean, var = tf.T("m", (800,)), tf.T("v", (800,))
    census, f, check = _package(tmp_path / "b", [("fc.weight", decoy.pickle()),
                                                 ("bn.running_mean", mean.pickle()),
                                                 ("bn.running_var", var.pickle())],
                                [decoy, mean, var])
    assert (census.counted, f.figures["buffers"], f.reason) == (10, 1600, "")
    assert check.status == "warn"
    assert check.summary == (
        "10 parameters counted, within the limit of 1,000, but what the rule sets apart (1,600 "
        "buffers, 0 optimizer state, 0 EMA) would exceed it if counted: the jury decides "
        "(largest: models/final.pth: bn.running_mean (buffers, 800), models/final.pth: "
        "bn.running_var (buffers, 800))")


def test_weights_bit_cast_to_int32_are_a_warning_naming_them(tmp_path):
    decoy, _ = _decoy()
    cast = tf.T("i", (1600,), kind="IntStorage")
    census, f, check = _package(tmp_path, [("fc.weight", decoy.pickle()),
                                           ("fc.packed", cast.pickle())], [decoy, cast])
    assert (census.counted, f.figures["buffers"]) == (10, 1600)
    assert check.status == "warn" and \
        "(largest: models/final.pth: fc.packed (buffers, 1,600))" in check.summary


@pytest.mark.parametrize("name", ["training_checkpoint.ckpt", "state_dict.pth", "legacy.pth",
                                  "model.safetensors", "model.onnx", "parameters_half.pt",
                                  "views.pt", "float8.pth", "embedding.npy"])
def test_real_checkpoints_keep_their_counts_in_a_package(tmp_path, name):
    """torch's AdamW moments, an EMA clone of a model with tied weights, BatchNorm statistics:
    each looks like what it claims, so the library's counts stand."""
    (tmp_path / "models").mkdir()
    shutil.copy(os.path.join(FIXTURES, name), str(tmp_path / "models"))
    f = params.count_package(str(tmp_path)).files[0]
    assert f.figures == COUNTS[name] and f.reason == ""


def test_a_lone_running_mean_is_no_normalization_layers(tmp_path):
    """The fixture's .npz (written by numpy) holds bn.running_mean without running_var or a
    layer of its length: counted in a package."""
    (tmp_path / "models").mkdir()
    shutil.copy(os.path.join(FIXTURES, "weights.npz"), str(tmp_path / "models"))
    f = params.count_package(str(tmp_path)).files[0]
    want = COUNTS["weights.npz"]
    assert (f.figures["parameters"], f.figures["buffers"]) == \
        (want["parameters"] + 6, want["buffers"] - 6)
    assert "bn.running_mean (a running statistic, 6)" in f.reason
