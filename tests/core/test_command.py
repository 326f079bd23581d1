"""End-to-end runs of the real command on CodaLab/Codabench-shaped folders (a test that runs it
several times runs it once for real, the other times through the same main in this process)."""
import json
import os
import random
import zipfile

import numpy as np
import pytest
import yaml

import broken_cases
from conftest import run_score, score_either
from agrivision_data import random_image, write_reference
from scoring import engine
from scoring.submission.discovery import discover
from scoring.registry import TASKS
from scoring.tasks.agrivision.reference import open_raw

# What one Agriculture-Vision image costs (its task says), the switch the tests below check.
AV_SECONDS = TASKS["agriculture-vision"].unit_seconds

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

IDS = ["FLD%03d_%d-0-%d-24" % (k // 3, 24 * k, 24 * k + 24) for k in range(9)]
SIZE = (24, 24)
KEYS = TASKS["agriculture-vision"].score_keys
CI_KEYS = ["miou_ci_low", "miou_ci_high"]  # the ranking score's confidence interval


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("ref"))
    rng = np.random.RandomState(11)
    for i in IDS:
        b, m, labels, storm, _ = random_image(rng, *SIZE, density=0.5)
        write_reference(root, i, b, m, labels, storm)
    return root


def worker_layout(tmp_path, ref, shape):
    """$input with ref/ and res/ as the platforms lay them out."""
    inp = tmp_path / "input"
    os.makedirs(str(inp))
    os.symlink(ref, str(inp / "ref"))
    res = inp / "res"
    if shape == "plain":
        broken_cases.good(str(res), IDS, SIZE)
    elif shape == "nested":
        broken_cases.good(str(res / "submission"), IDS, SIZE)
    elif shape == "codabench":
        broken_cases.good(str(res), IDS, SIZE)
        (res / "metadata").write_text("exitCode: 0\nelapsedTime: 12.5\nsubmitted_by: x\n")
    return inp


def parse_v1(text):
    """CodaLab v1's reader: label, value = line.split(':'); float(value)."""
    scores = {}
    for line in text.splitlines():
        label, value = line.split(":")
        scores[label] = float(value)
    return scores


@pytest.mark.parametrize("shape", ["plain", "nested", "codabench"])
def test_worker_form_writes_every_output(tmp_path, ref, shape):
    inp = worker_layout(tmp_path, ref, shape)
    out = tmp_path / "output"
    out.mkdir()
    # The real command on the plain layout; the others through the same main in this process.
    code, stdout, err = score_either([inp, out], real=shape == "plain")
    assert code == 0, err
    assert sorted(os.listdir(str(out))) == ["detailed_results.html", "scores.json", "scores.txt"]
    text = (out / "scores.txt").read_text()
    v1 = parse_v1(text)
    as_yaml = yaml.safe_load(text)
    as_json = json.loads((out / "scores.json").read_text())
    assert list(v1) == KEYS + CI_KEYS     # every key, in order (no class absent here)
    assert v1 == as_yaml == as_json
    for key, value in v1.items():
        assert isinstance(as_yaml[key], float) and 0.0 <= value <= 1.0
    for line in text.splitlines():
        assert line.count(":") == 1 and ": " in line and "e" not in line.split(": ")[1]
    assert abs(v1["miou"] - sum(v1[k] for k in KEYS[1:]) / 9) < 1e-9
    page = (out / "detailed_results.html").read_text()
    assert "mIoU" in page and "<script" not in page
    for image_id in IDS:                   # no per-image information
        assert image_id not in page and image_id not in stdout


def test_same_scores_for_folder_zip_and_worker_form(tmp_path, ref):
    inp = worker_layout(tmp_path, ref, "plain")
    out = tmp_path / "o1"
    out.mkdir()
    assert run_score(inp, out).returncode == 0
    z = tmp_path / "sub.zip"
    with zipfile.ZipFile(str(z), "w") as zf:
        for i in IDS:
            zf.write(str(inp / "res" / (i + ".png")), "preds/" + i + ".png")
        zf.writestr("__MACOSX/preds/._x.png", b"junk")
    code, stdout, err = score_either(["--ref", ref, "--res", z, "--out", tmp_path / "o2"],
                                     real=False)   # the same main, in this process
    assert code == 0, err
    assert (out / "scores.txt").read_text() == (tmp_path / "o2" / "scores.txt").read_text()
    assert "mIoU" in stdout and "weed_cluster" in stdout   # the printed table


def test_absent_class_is_omitted_not_nan(tmp_path):
    ref = str(tmp_path / "ref")
    one = np.ones((4, 4), np.uint8)
    write_reference(ref, "a", one, one, {"water": np.eye(4, dtype=np.uint8)})
    res = tmp_path / "res"
    res.mkdir()
    from PIL import Image
    Image.fromarray((np.eye(4) * 6).astype(np.uint8)).save(str(res / "a.png"))
    proc = run_score("--ref", ref, "--res", res, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    scores = parse_v1((tmp_path / "out" / "scores.txt").read_text())
    # One image: every resample is that image, so the interval of the 2 classes it shows is
    # the score itself; the 7 classes it does not show join the mean anywhere in [0, 1]
    # (metrics/unseen.py): from (2 x 1 + 7 x 0) / 9 to 1.
    assert scores == {"miou": 1.0, "iou_background": 1.0, "iou_water": 1.0,
                      "miou_ci_low": round(2 / 9, 10), "miou_ci_high": 1.0}
    text = (tmp_path / "out" / "scores.txt").read_text() + (tmp_path / "out" / "scores.json").read_text()
    assert "nan" not in text.lower() and "inf" not in text.lower()
    assert "n/a" in (tmp_path / "out" / "detailed_results.html").read_text()


def test_storm_policy_from_option_and_reference_config(tmp_path):
    ref = str(tmp_path / "ref")
    one = np.ones((1, 2), np.uint8)
    write_reference(ref, "a", one, one, {"water": np.array([[1, 0]], np.uint8)},
                    storm=np.array([[0, 1]], np.uint8))
    res = tmp_path / "res"
    res.mkdir()
    from PIL import Image
    Image.fromarray(np.array([[6, 6]], np.uint8)).save(str(res / "a.png"))

    def miou(*extra, real=False):
        # The real command once; the other runs through the same main in this process.
        code, _, err = score_either(["--ref", ref, "--res", res, "--out", tmp_path / "out"] +
                                    list(extra), real)
        assert code == 0, err
        return parse_v1((tmp_path / "out" / "scores.txt").read_text())["miou"]

    assert miou() == 0.25                           # storm pixel is background, predicted water
    assert miou("--storm-damage", "ignore") == 1.0  # storm pixel not evaluated
    with open(os.path.join(ref, "config.yaml"), "w") as f:
        f.write("storm_damage: ignore\n")
    assert miou(real=True) == 1.0
    assert miou("--storm-damage", "background") == 0.25


def test_a_task_gets_the_options_given_as_plain_data(tmp_path, ref, monkeypatch):
    """score.py and compare.py hand the task the task options given on the command line as a
    dict (only those given), never argparse's namespace."""
    from conftest import run_main
    from organizing.commands import compare
    from scoring.commands import score
    from scoring.tasks.agrivision.task import AgricultureVision
    seen = []
    configure = AgricultureVision.configure

    def spy(self, options, ref_config):
        seen.append(options)
        return configure(self, options, ref_config)
    monkeypatch.setattr(AgricultureVision, "configure", spy)
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    broken_cases.good(str(tmp_path / "other"), IDS, SIZE)   # compare.py compares two or more
    for main, argv in ((score.main, ["--ref", ref, "--res", res]),
                       (compare.main, ["--ref", ref, "--out", tmp_path / "cmp", res,
                                       tmp_path / "other"])):
        for extra in ([], ["--storm-damage", "ignore"]):
            code, _, err = run_main(main, argv + ["--workers", "1", "-q"] + extra)
            assert code == 0, err
    assert seen == [{}, {"storm_damage": "ignore"}] * 2
    assert all(type(options) is dict for options in seen)


def test_help_and_usage_errors(tmp_path):
    proc = run_score("--help")
    assert proc.returncode == 0
    for option in ("--ref", "--res", "--out", "--workers", "--storm-damage", "exit status"):
        assert option in proc.stdout
    proc = run_score("--ref", tmp_path)
    assert proc.returncode == 2 and "--res" in proc.stderr and "Traceback" not in proc.stderr
    code, _, err = score_either(["--ref", tmp_path, "--res", tmp_path / "nope.zip"],
                                real=False)   # the same main (the two above exit in argparse)
    assert code == 2 and "nope.zip" in err


def test_progress_lines(tmp_path, ref):
    inp = worker_layout(tmp_path, ref, "plain")
    proc = run_score("--ref", inp / "ref", "--res", inp / "res", "--progress-every", "0",
                     "--workers", "1")
    assert proc.returncode == 0
    assert "images/s" in proc.stdout and "left" in proc.stdout


def test_never_writes_metadata(tmp_path, ref):
    inp = worker_layout(tmp_path, ref, "codabench")
    out = tmp_path / "output"
    out.mkdir()
    assert run_score(inp, out).returncode == 0
    assert not (out / "metadata").exists()


def test_internal_error_traceback_goes_to_private_output(tmp_path, ref, monkeypatch):
    import io
    from scoring.commands import score as cli

    def boom(*args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(type(TASKS["agriculture-vision"]), "summarize", boom)
    inp = worker_layout(tmp_path, ref, "plain")
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(inp), str(tmp_path / "output"), "--workers", "1"], out, err)
    assert code == 4
    assert "INTERNAL ERROR" in err.getvalue() and "Traceback" not in err.getvalue()
    assert "ZeroDivisionError" in (tmp_path / "output" / "private" / "traceback.txt").read_text()


def _state(ref, res, workers, order_seed):
    task = TASKS["agriculture-vision"]
    reference = open_raw(ref)
    found = discover(res, reference.ids)
    items = [(i, p, i) for i, p in found.files.items()]
    random.Random(order_seed).shuffle(items)
    return engine.evaluate(task, reference, task.submission_format(None), None, items, workers)


def test_identical_for_any_worker_count_and_file_order(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    base = _state(ref, res, 1, 0)
    for workers, seed in ((2, 1), (3, 2), (4, 3), (1, 4)):
        acc = _state(ref, res, workers, seed)
        assert (acc.state.counts == base.state.counts).all()
        assert acc.state.images == base.state.images == len(IDS)


def test_problem_report_identical_for_any_worker_count(tmp_path, ref):
    res = str(tmp_path / "res")
    broken_cases.good(res, IDS, SIZE)
    from PIL import Image
    for i in IDS[::2]:
        Image.new("RGB", SIZE[::-1]).save(os.path.join(res, i + ".png"))
    messages = set()
    for workers in (1, 2, 3):
        # The real command with a pool; the other counts through the same main in this process.
        code, _, err = score_either(["--ref", ref, "--res", res, "--workers", workers],
                                    real=workers == 2)
        assert code == 1
        messages.add(err)
    assert len(messages) == 1


def test_default_workers_scale_with_the_set():
    cpus = engine.usable_cpus()
    switch = engine.min_units_for_pool(cpus, AV_SECONDS)
    assert engine.default_workers(0, AV_SECONDS) == 1
    assert engine.default_workers(switch - 1, AV_SECONDS) == 1
    assert engine.default_workers(switch, AV_SECONDS) == cpus
    assert engine.default_workers(10 ** 6, AV_SECONDS) == cpus
    assert 1 <= engine.default_workers(2 * engine.min_units_for_pool(2, AV_SECONDS), AV_SECONDS) <= cpus
    assert engine.default_workers(10 ** 6, None) == 1      # a task that does not say: one process


@pytest.mark.parametrize("cpus", [2, 3, 4, 8, 64])
def test_the_pool_switch_is_where_all_cpus_start_to_win(cpus):
    """All CPUs from the first N where the time they save on the slowest layout, N * t * (1 -
    1/W), exceeds the pool's start-up cost; one process below it."""
    n = engine.min_units_for_pool(cpus, AV_SECONDS)
    from fractions import Fraction as F
    start, image = F(str(engine.POOL_START_SECONDS)), F(str(AV_SECONDS))
    saved = lambda images: images * image * (1 - F(1, cpus))  # noqa: E731
    assert saved(n) > start >= saved(n - 1)
    assert engine.min_units_for_pool(1, AV_SECONDS) > 10 ** 9
    # The case of the issue: 240 images on 2 CPUs must use both.
    assert engine.min_units_for_pool(2, AV_SECONDS) <= 240
    # A task whose units cost more switches sooner.
    assert engine.min_units_for_pool(cpus, 0.07) < n
    assert engine.min_units_for_pool(cpus, AV_SECONDS) == n


@pytest.mark.parametrize("images,workers", [(0, 2), (1, 2), (3, 2), (33, 2), (100, 2), (400, 2),
                                            (19708, 2), (5000, 8), (100, 1), (19708, 1)])
def test_chunks_cover_every_item_once_and_shrink_at_the_end(images, workers):
    """Chunks are consecutive slices in order; with workers, never larger than a share of what is
    left (guided scheduling), so the run ends on single images and the workers finish together;
    never larger than CHUNK."""
    items = list(range(images))
    chunks = engine.chunked(items, workers)
    assert [i for chunk in chunks for i in chunk] == items
    assert all(1 <= len(chunk) <= engine.CHUNK for chunk in chunks)
    if workers > 1 and images >= 2 * workers:
        left = images
        for chunk in chunks:
            assert len(chunk) <= max(1, -(-left // (engine.TAIL_SHARES * workers)))
            left -= len(chunk)
        assert [len(chunk) for chunk in chunks[-workers:]] == [1] * workers
        sizes = [len(chunk) for chunk in chunks]
        assert sizes == sorted(sizes, reverse=True)
    if workers == 1 and images:
        assert len({len(chunk) for chunk in chunks[:-1]}) <= 1  # one process: equal chunks


@pytest.mark.parametrize("files,expected", [
    ({"/sys/fs/cgroup/cpu.max": "150000 100000\n"}, 1),      # 1.5 CPUs: one whole CPU
    ({"/sys/fs/cgroup/cpu.max": "50000 100000\n"}, 1),
    ({"/sys/fs/cgroup/cpu.max": "200000 100000\n"}, 2),
    ({"/sys/fs/cgroup/cpu.max": "299999 100000\n"}, 2),
    ({"/sys/fs/cgroup/cpu.max": "max 100000\n"}, None),
    ({"/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "250000\n",
      "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"}, 2),
    ({"/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
      "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({}, None),
])
def test_cgroup_quota_counts_whole_cpus(monkeypatch, files, expected):
    """A fractional quota is rounded down (at least 1): with 1.5 CPUs, one worker, and the half
    CPU left for the main process. Files as cgroup v2 and v1 write them."""
    import io as _io

    def fake_open(path, *args, **kwargs):
        if path in files:
            return _io.StringIO(files[path])
        raise FileNotFoundError(path)

    monkeypatch.setattr(engine, "open", fake_open, raising=False)
    assert engine._cgroup_cpus() == expected
