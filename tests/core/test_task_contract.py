"""The contract every registered task keeps, whatever it scores (task_api.py): outputs both
platforms parse, no NaN, results independent of worker count and unit order, no per-unit data in
any output, every participant mistake of its format reported as the right kind of problem under
the right name and ending in exit 1 with a message, and a public manifest that lets a participant
check the valid sample without the ground truth.

The checks that could be passed for the wrong reason are plain functions (contract_*), run on
every registered task and on deliberately broken toy tasks that they must refuse."""
import json
import math
import os
import random

import pytest
import yaml

from conftest import run_score, score_either
from scoring import confidence, engine, reference_setup, validate
from scoring.confidence import interval_score_keys
from scoring.formats.label_png.kinds import BAD_VALUES
from scoring.problems import ProblemLog
from scoring.formats.label_png.prediction import PngLabels
from scoring.registry import TASKS
from scoring.task_api import PredictionProblem, Submission
from scoring.tasks.agrivision.task import AgricultureVision, AVManifest
from task_fixtures import FIXTURES

# Every task's contract (its outputs, its states' merges, its broken cases read and decoded) is
# marked compat: CI runs it on the oldest versions too. The exit status of those cases through
# the command and the checks of the contract itself depend on no version.

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


@pytest.mark.compat
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
    task = TASKS[name]
    keys = task.keys(reference_setup.configure(root, name).settings)
    assert keys[0] in v1
    # Beside the leaderboard keys, only the ranking score's confidence interval (none for a
    # task without Intervals).
    assert set(v1) - set(keys) == set(interval_score_keys(task))
    assert all(math.isfinite(v) for v in v1.values())
    assert not (out / "metadata").exists()
    for f in os.listdir(str(out)):
        if os.path.isfile(str(out / f)):
            text = (out / f).read_text(encoding="utf-8")
            leaked = [i for i in ids if i in text]
            assert not leaked, (f, leaked[:3])


def _opened(task, root):
    """(settings, reference, format) as the commands open them, for this task."""
    settings = reference_setup.configure(root, task.name).settings
    return settings, task.open_reference(root, settings), task.submission_format(settings)


def _scores(name, root, res, workers, seed):
    task = TASKS[name]
    setup = reference_setup.configure(root, name)
    config, reference, fmt = _opened(task, root)
    found = fmt.discover(res, reference.ids)
    items = [(i, p, i) for i, p in found.files.items()]
    random.Random(seed).shuffle(items)
    acc = engine.evaluate(task, reference, fmt, config, items, workers)
    assert not acc.submission_log.fatal and not acc.reference_log.fatal
    summary = task.summarize(acc.state, reference, config)
    intervals = confidence.compute(task, acc.state, summary, reference, config,
                                   setup.intervals.by)
    return summary.scores + (intervals.scores() if intervals else [])


def _same_value(a, b):
    import numpy as np
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            a.shape == b.shape and bool((a == b).all())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.compat
def test_every_field_a_state_changes_is_declared_and_merges(task_ref, tmp_path):
    """MetricState.fields lists what update changes (a field left out would be lost in every
    merge); a state merged from two halves equals the state fed every unit."""
    import copy
    name, fixtures, root, ids = task_ref
    res = str(tmp_path / "res")
    fixtures.make_submission(res, root, ids, seed=4)
    task = TASKS[name]
    config, reference, fmt = _opened(task, root)
    units = sorted(fmt.discover(res, reference.ids).files.items())
    whole, halves = task.new_state(config), [task.new_state(config), task.new_state(config)]
    import numpy as np
    plain = (dict, list, tuple, int, float, np.ndarray)
    given = dict(vars(whole))                       # the objects themselves
    before = {k: copy.deepcopy(v) for k, v in given.items() if isinstance(v, plain)}
    for i, (unit, path) in enumerate(units):
        truth = reference.read(unit)
        prediction = fmt.read(path, reference.expect(unit, truth))
        whole.update(unit, prediction, truth)
        halves[i * 2 // len(units)].update(unit, prediction, truth)
    changed = {k for k, v in vars(whole).items() if k not in given or v is not given[k] or
               (k in before and not _same_value(before[k], v))}
    assert changed and changed <= set(type(whole).fields), (changed, type(whole).fields)
    merged = halves[0].merge(halves[1])
    for field in type(whole).fields:
        assert _same_value(getattr(merged, field), getattr(whole, field)), field
    with pytest.raises(TypeError):
        merged.merge(object())


@pytest.mark.compat
def test_identical_for_any_worker_count_and_unit_order(task_ref, tmp_path):
    name, fixtures, root, ids = task_ref
    res = str(tmp_path / "res")
    fixtures.make_submission(res, root, ids, seed=3)
    base = _scores(name, root, res, 1, 0)
    for workers, seed in ((2, 1), (3, 2), (1, 5)):
        assert _scores(name, root, res, workers, seed) == base


# --- checks that a task could pass for the wrong reason -------------------------------------

def problems(task, root, res):
    """The problems the scorer finds in the submission at res (discovery and every file), in
    process, against the real reference."""
    config, reference, fmt = _opened(task, root)
    found = fmt.discover(res, reference.ids)
    items = [(i, p, os.path.relpath(p, res)) for i, p in sorted(found.files.items())]
    acc = engine.evaluate(task, reference, fmt, config, items, 1)
    log = found.log
    log.merge(acc.submission_log)
    return log


def contract_broken_cases(task, fixtures, root, ids, tmp):
    """Every mistake of the task's format is reported as the kind of problem it is, under the
    name of the file (or entry) it is in."""
    for case, (build, code, shown) in sorted(fixtures.broken.items()):
        res = os.path.join(tmp, "broken-" + case)
        build(res, root, ids)
        log = problems(task, root, res)
        kinds = {k.code: k for k in log.kinds(fatal=True)}
        assert code in kinds, (case, "reported as", sorted(kinds))
        name = shown.format(ids[0])
        names = [n for n, _ in log.examples(kinds[code])]
        assert any(name in n for n in names), (case, name, names)


def contract_manifest_round_trip(task, fixtures, root, ids, tmp):
    """Manifest.make -> JSON (as the starting kit ships it) -> the participants' check: the valid
    sample passes with every unit checked, and the manifest holds no unit's label."""
    _, reference, _ = _opened(task, root)
    manifest = json.loads(json.dumps(task.manifest.make(reference)))
    assert manifest.get("task") == task.name
    res = os.path.join(tmp, "valid")
    fixtures.make_submission(res, root, ids)
    stand_in, fmt = task.manifest.open(manifest)
    assert sorted(stand_in.ids) == sorted(reference.ids)
    log, checked = validate.check(res, stand_in, fmt, workers=1)
    assert not log.fatal, log.describe(log.kinds(fatal=True), **fmt.words)
    assert checked == len(reference.ids)


@pytest.mark.compat
def test_every_submission_problem_is_its_kind_under_its_name(task_ref, tmp_path):
    name, fixtures, root, ids = task_ref
    contract_broken_cases(TASKS[name], fixtures, root, ids, str(tmp_path))


@pytest.mark.compat
def test_the_manifest_lets_a_participant_check_the_sample(task_ref, tmp_path):
    name, fixtures, root, ids = task_ref
    contract_manifest_round_trip(TASKS[name], fixtures, root, ids, str(tmp_path))


def test_every_submission_problem_is_exit_1_with_a_message(task_ref, tmp_path):
    """In process (cli.main, as score.py calls it) for speed; the first case also through the
    real command. An exception would end as exit 4, never as exit 1."""
    name, fixtures, root, ids = task_ref
    for k, (case, (build, _, _)) in enumerate(sorted(fixtures.broken.items())):
        res = str(tmp_path / case)
        build(res, root, ids)
        argv = ["--ref", root, "--res", res, "--task", name, "--workers", "1"]
        code, out, err = score_either(argv, real=k == 0)
        assert code == 1, (case, err)
        assert err.startswith("ERROR: the submission cannot be scored"), case
        assert "Traceback" not in err + out, case


# --- the contract refuses tasks that break it -------------------------------------------------

class _EverythingBadValues(PngLabels):
    """A format that refuses every submission, always for the same wrong reason."""

    def discover(self, res_dir, expected_ids):
        found = super().discover(res_dir, expected_ids)
        log = ProblemLog()
        log.add(BAD_VALUES, "submission", "refused")
        return Submission(found.root, found.files, log)

    def read(self, path, expectation):
        raise PredictionProblem(BAD_VALUES, "refused")


class _WrongReasonManifest(AVManifest):
    def open(self, manifest):
        return super().open(manifest)[0], _EverythingBadValues(AgricultureVision.max_id)


class _WrongReasonTask(AgricultureVision):
    manifest = _WrongReasonManifest(AgricultureVision.name)

    def submission_format(self, settings=None):
        return _EverythingBadValues(self.max_id)


class _NoManifest(AVManifest):
    def make(self, reference):
        raise NotImplementedError


class _NoManifestTask(AgricultureVision):
    manifest = _NoManifest(AgricultureVision.name)


@pytest.fixture(scope="module")
def av_ref(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("toy"))
    fixtures = FIXTURES["agriculture-vision"]
    return fixtures, root, fixtures.make_reference(root)


def test_a_task_failing_every_case_for_the_wrong_reason_breaks_the_contract(av_ref, tmp_path):
    fixtures, root, ids = av_ref
    with pytest.raises(AssertionError, match="reported as"):
        contract_broken_cases(_WrongReasonTask(), fixtures, root, ids, str(tmp_path))


def test_a_task_without_a_manifest_breaks_the_contract(av_ref, tmp_path):
    fixtures, root, ids = av_ref
    with pytest.raises(NotImplementedError):
        contract_manifest_round_trip(_NoManifestTask(), fixtures, root, ids, str(tmp_path))


def test_a_task_whose_check_refuses_the_sample_breaks_the_contract(av_ref, tmp_path):
    fixtures, root, ids = av_ref
    with pytest.raises(AssertionError):
        contract_manifest_round_trip(_WrongReasonTask(), fixtures, root, ids, str(tmp_path))
