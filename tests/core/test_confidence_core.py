"""The interval's glue (scoring/confidence.py) through the real command: the repository's three
samples give the same interval ends on every platform and numpy version (hard-coded: the CI's
Python 3.7 / numpy 1.16 run and its numpy 2 run must both reproduce them), and a task that gives
no per-unit rows gets no interval and says so."""
import json
import os

import pytest

from conftest import AGRIVISION, ROOT, run_main, run_score
from scoring import confidence, registry
from scoring.commands import score as cli
from scoring.tasks.agrivision.task import AgricultureVision

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

SAMPLES = {
    "agriculture-vision": ("competitions/agriculture-vision/reference_data",
                           "competitions/agriculture-vision/starting_kit/sample_submission",
                           {"miou_ci_low": 0.3745183878, "miou_ci_high": 0.7753493753}),
    "planetscapes-semantic": ("competitions/planetscapes/reference_data/semantic",
                              "competitions/planetscapes/starting_kit/semantic/sample_submission",
                              {"iou_class_ci_low": 0.5738736991,
                               "iou_class_ci_high": 0.7482624635,
                               "iiou_class_ci_low": 0.4264442699,
                               "iiou_class_ci_high": 0.5780783173}),
    "planetscapes-vqa": ("competitions/planetscapes/reference_data/vqa",
                         "competitions/planetscapes/starting_kit/vqa/sample_submission",
                         {"accuracy_ci_low": 67.3162273296, "accuracy_ci_high": 76.9578430861}),
}


@pytest.mark.parametrize("task", sorted(SAMPLES))
def test_the_samples_intervals_are_the_same_everywhere(task, tmp_path):
    ref, res, expected = SAMPLES[task]
    proc = run_score("--ref", os.path.join(ROOT, ref), "--res", os.path.join(ROOT, res),
                     "--out", tmp_path, "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert {k: v for k, v in scores.items() if "_ci_" in k} == expected


class _NoIntervals(AgricultureVision):
    name = "no-intervals"
    intervals = None


def test_a_task_without_rows_gets_no_interval_and_says_so(tmp_path, monkeypatch):
    # The option's choices come from the command's TASKS, the task itself from registry.task_of.
    tasks = {"no-intervals": _NoIntervals()}
    monkeypatch.setattr(cli, "TASKS", tasks)
    monkeypatch.setattr(registry, "TASKS", tasks)
    code, out, err = run_main(cli.main, [
        "--ref", os.path.join(AGRIVISION, "reference_data"),
        "--res", os.path.join(AGRIVISION, "starting_kit", "sample_submission"),
        "--out", tmp_path, "--task", "no-intervals", "--workers", "1"])
    assert code == 0, err
    assert "No confidence interval: Agriculture-Vision gives no per-unit statistics to " \
           "resample." in out
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert "miou" in scores and not [k for k in scores if "_ci_" in k]
    assert "95% CI" not in (tmp_path / "detailed_results.html").read_text()
    assert confidence.interval_score_keys(_NoIntervals()) == []


def test_basic_interval_mirrors_the_percentile_ends_within_the_bounds():
    values = [k / 1000 for k in range(1000)]   # percentile ends: the 26th smallest and largest
    assert confidence.basic_interval(values, 0.5) == pytest.approx((2 * 0.5 - 0.974,
                                                                    2 * 0.5 - 0.025))
    assert confidence.basic_interval(values, 0.9) == pytest.approx((0.826, 1.0))  # 1.775 held
    assert confidence.basic_interval([50.0] * 1000, 99.0, (0.0, 100.0)) == (100.0, 100.0)
    assert confidence.basic_interval([None] + values[1:], 0.5) is None


@pytest.mark.parametrize("bounds,widened,held", [
    ((0.0, 1.0), (-0.25, 1.5), (0.0, 1.0)),
    ((0.0, 100.0), (20.0, 100.5), (20.0, 100.0)),
    ((0.0, 1.0), (1.25, 1.5), (1.0, 1.0))])
def test_every_interval_is_held_within_the_scores_range_after_the_widening(bounds, widened,
                                                                           held):
    """Whatever a task's widening (res.widen) gives, the interval written is inside the score's
    range: the widening is a step like the others."""
    from scoring.task_api import Resampling
    rows = [(k % 3, 1) for k in range(30)]
    res = Resampling("questions", 30, lambda: (list(range(30)), rows),
                     lambda s: [bounds[1] * s[0] / (2.0 * s[1])], bounds=bounds,
                     widen=lambda key, ends, total: widened)
    assert confidence.of_resampling(["score"], res, resamples=50).interval("score") == held
