"""The contract every registered task keeps, whatever it scores (task_api.py): outputs both
platforms parse, no NaN, results independent of worker count and unit order, no per-unit data in
any output, and every participant mistake of its format ends in exit 1 with a message, never a
traceback."""
import json
import math
import os
import random

import pytest
import yaml

from conftest import run_score, score_either
from scoring import engine
from scoring.config import read_config
from scoring.registry import TASKS
from task_fixtures import FIXTURES

NAMES = sorted(TASKS)


def test_every_registered_task_has_contract_fixtures():
    assert sorted(FIXTURES) == NAMES


@pytest.fixture(scope="module", params=NAMES)
def task_ref(request, tmp_path_factory):
    name = request.param
    root = str(tmp_path_factory.mktemp(name.replace("-", "_")))
    fixtures = FIXTURES[name]
    ids = fixtures.make_reference(root)
    return name, fixtures, root, ids


def parse_v1(text):
    """CodaLab v1's reader: label, value = line.split(':'); float(value)."""
    out = {}
    for line in text.splitlines():
        label, value = line.split(":")
        out[label] = float(value)
    return out


def test_outputs_parse_on_both_platforms_and_hold_no_unit_data(task_ref, tmp_path):
    name, fixtures, root, ids = task_ref
    res = str(tmp_path / "res")
    fixtures.make_submission(res, root, ids)
    out = tmp_path / "out"
    proc = run_score("--ref", root, "--res", res, "--out", out, "--task", name)
    assert proc.returncode == 0, proc.stderr
    txt = (out / "scores.txt").read_text()
    v1 = parse_v1(txt)
    assert v1 == {k: float(v) for k, v in yaml.safe_load(txt).items()}
    assert v1 == json.loads((out / "scores.json").read_text())
    keys = _keys(name, root)
    assert keys[0] in v1
    assert set(v1) <= set(keys)
    assert all(math.isfinite(v) for v in v1.values())
    assert not (out / "metadata").exists()
    for f in os.listdir(str(out)):
        if os.path.isfile(str(out / f)):
            text = (out / f).read_text(encoding="utf-8")
            leaked = [i for i in ids if i in text]
            assert not leaked, (f, leaked[:3])


def _keys(name, root):
    """The task's leaderboard keys; a task whose keys follow its reference's configuration (a
    label table) lists them with keys(config)."""
    task = TASKS[name]
    return task.keys(task.configure(None, read_config(root)))


def _scores(name, root, res, workers, seed):
    task = TASKS[name]
    config = task.configure(None, read_config(root))
    reference = task.open_reference(root, config)
    fmt = task.submission_format(config)
    found = fmt.discover(res, reference.ids)
    items = [(i, p, i) for i, p in found.files.items()]
    random.Random(seed).shuffle(items)
    acc = engine.evaluate(task, reference, fmt, config, items, workers)
    assert not acc.submission_log.fatal and not acc.reference_log.fatal
    return task.summarize(acc.state, reference, config)["scores"]


def test_identical_for_any_worker_count_and_unit_order(task_ref, tmp_path):
    name, fixtures, root, ids = task_ref
    res = str(tmp_path / "res")
    fixtures.make_submission(res, root, ids, seed=3)
    base = _scores(name, root, res, 1, 0)
    for workers, seed in ((2, 1), (3, 2), (1, 5)):
        assert _scores(name, root, res, workers, seed) == base


def test_every_submission_problem_is_exit_1_with_a_message(task_ref, tmp_path):
    """In process (cli.main, as score.py calls it) for speed; the first case also through the
    real command. An exception would end as exit 4, never as exit 1."""
    name, fixtures, root, ids = task_ref
    for k, (case, build) in enumerate(sorted(fixtures.broken.items())):
        res = str(tmp_path / case)
        build(res, root, ids)
        argv = ["--ref", root, "--res", res, "--task", name, "--workers", "1"]
        code, out, err = score_either(argv, real=k == 0)
        assert code == 1, (case, err)
        assert err.startswith("ERROR: the submission cannot be scored"), case
        assert "Traceback" not in err + out, case
