"""The reference's config.yaml, hostile or careless, for every task and both
layouts, through the real commands (score.py, and pack.py on the raw layout; measured, one task
per case and layout, the others through the same mains in this process): alias bombs,
recursive aliases, absurd nesting, integers beyond 4,300 digits, a FIFO, a device, a folder, a
file above 1 MiB: exit 3 with one clear message, quickly, in little memory; a value quoted in a
message is cut (a 226 MB message was once made from a 280-byte file)."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import (ORGANIZER, ROOT, SEM_KIT, SEM_REF, VQA_KIT, VQA_REF, pack_either, run_main,
                      run_score, score_either)
from measured import run_measured
from organizing.commands import pack as pack_cli
from scoring.commands import score as score_cli
from yaml_bombs import laughs

# config.yaml as score.py reads it (PyYAML's part) is marked compat: CI runs it on the oldest
# versions too; pack.py reads it with the same code.

SAMPLES = {
    "agriculture-vision": ("competitions/agriculture-vision/reference_data",
                           "competitions/agriculture-vision/starting_kit/sample_submission"),
    "planetscapes-semantic": (SEM_REF, os.path.join(SEM_KIT, "sample_submission")),
    "planetscapes-vqa": (VQA_REF, os.path.join(VQA_KIT, "sample_submission")),
}

BILLION_LAUGHS = laughs(9, key="task")


def _fifo(path):
    os.mkfifo(path)


def _dev_zero(path):
    os.symlink("/dev/zero", path)


def _folder(path):
    os.mkdir(path)


def _text(text):
    def write(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return write


def _bytes(data):
    def write(path):
        with open(path, "wb") as f:
            f.write(data)
    return write


# name -> (what config.yaml becomes, phrases of the message)
HOSTILE = {
    "billion laughs": (_text(BILLION_LAUGHS), ("line 5", "alias bomb")),
    "recursive alias": (_text("task: &a [1, *a]\n"), ("recursive alias",)),
    "deep nesting": (_text("task: " + "[" * 100000 + "\n"), ("nested more than 64 levels",)),
    "integer of 5,000 digits": (_text("task: " + "9" * 5000 + "\n"), ("longer than 4,300 digits",)),
    "python tag": (_text("task: !!python/object/apply:os.system ['true']\n"), ("is not allowed",)),
    "key given twice": (_text("task: a\ntask: b\n"), ("appears twice",)),
    "not UTF-8": (_bytes(b"task: caf\xe9\n"), ("unreadable YAML", "not UTF-8 text")),
    "above 1 MiB": (_text("# " + "x" * (1 << 20) + "\n"), ("larger than 1,048,576 bytes",)),
    "a FIFO": (_fifo, ("FIFO",)),
    "a link to /dev/zero": (_dev_zero, ("device file",)),
    "a folder": (_folder, ("a folder, not a file",)),
    "task is a list": (_text("task: [a, b]\n"), ("unknown task ['a', 'b']",)),
    "task of 100,000 characters": (_text("task: " + "t" * 100000 + "\n"),
                                   ("unknown task 'ttt", "(100,000 characters)")),
}
# Cases that would hang or blow up the process that reads them if their guard broke: read only
# by the real, measured command (with its timeout), never in the test's own process.
HAZARDS = {"billion laughs", "deep nesting", "a FIFO", "a link to /dev/zero"}


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """task -> {layout: folder}: each sample reference, raw and packed by pack.py (its main, in
    this process: the command itself is run for real by the tests below)."""
    out = {}
    for task, (raw, _) in SAMPLES.items():
        packed = str(tmp_path_factory.mktemp("packed") / "ref")
        code, _, err = pack_either([os.path.join(ROOT, raw), packed], real=False)
        assert code == 0, err
        out[task] = {"raw": os.path.join(ROOT, raw), "packed": packed}
    return out


def _link_or_copy(src, dst):
    """A hard link (the scorer only reads the reference's files: 40 sample images need not be
    copied for each case); a copy where links cannot be made."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _with_config(references, task, layout, tmp_path, make):
    """A copy of the reference whose config.yaml is made by make: its other files hard links to
    the sample's (read, never written: config.yaml, the only file changed, is removed first)."""
    ref = str(tmp_path / "ref")
    shutil.copytree(references[task][layout], ref, copy_function=_link_or_copy)
    config = os.path.join(ref, "config.yaml")
    if os.path.lexists(config):
        os.remove(config)
    make(config)
    return ref


def assert_refused(r, phrases, code=3):
    """A run: the exit status, one message naming config.yaml, short; a measured run (the real
    command) also bounded in time and memory."""
    out = r["out"] + r["err"]
    assert r["rc"] == code, out
    assert "Traceback" not in out and "INTERNAL ERROR" not in out, out
    assert r["err"].startswith("ERROR: the REFERENCE data"), r["err"]
    assert "config.yaml" in r["err"], r["err"]
    for phrase in phrases:
        assert phrase in r["err"], r["err"]
    assert len(r["err"]) < 1500, len(r["err"])
    if "wall" in r:
        # Quickly and in little memory (a loaded 2-CPU machine: generous bounds; the figures
        # measured are in the closing note of the issue).
        assert r["wall"] < 20 and r["rss"] < 150, (r["wall"], r["rss"])


def _in_process(main, *args):
    code, out, err = run_main(main, args)
    return {"rc": code, "out": out, "err": err}


def _measured_task(case, layout):
    """The task whose sample the real, measured command reads for this case and layout. One
    task is enough: config.yaml is read (config.read_config) before any task is chosen, by the
    same function for every task, and both layouts keep it at the reference's top; the task
    turns with the case so that each task's sample is measured. The other tasks are run in
    this process (the same main), except for the HAZARDS, which only the measured run reads."""
    tasks = sorted(SAMPLES)
    return tasks[(sorted(HOSTILE).index(case) + (layout == "packed")) % len(tasks)]


@pytest.mark.compat
@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("layout", ["raw", "packed"])
def test_hostile_config_is_refused_by_score_py(references, tmp_path, layout, case):
    make, phrases = HOSTILE[case]
    measured = _measured_task(case, layout)
    for task in sorted(SAMPLES):
        if task != measured and case in HAZARDS:
            continue
        ref = _with_config(references, task, layout, tmp_path / task, make)
        sub = os.path.join(ROOT, SAMPLES[task][1])
        out = tmp_path / task / "out"
        argv = ["--ref", ref, "--res", sub, "--out", out]
        r = run_measured("score.py", *argv, timeout=60) if task == measured else \
            _in_process(score_cli.main, *argv)
        assert_refused(r, phrases)
        assert not os.path.exists(str(out / "scores.json"))


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_config_is_refused_by_pack_py(references, tmp_path, case):
    make, phrases = HOSTILE[case]
    measured = _measured_task(case, "raw")
    for task in sorted(SAMPLES):
        if task != measured and case in HAZARDS:
            continue
        ref = _with_config(references, task, "raw", tmp_path / task, make)
        packed = tmp_path / task / "packed"
        r = run_measured("pack.py", ref, packed, timeout=60) if task == measured else \
            _in_process(pack_cli.main, ref, packed)
        assert_refused(r, phrases)
        assert not os.path.exists(str(packed))     # made by the run, removed


def test_the_same_message_from_score_py_and_pack_py(references, tmp_path):
    ref = _with_config(references, "planetscapes-vqa", "raw", tmp_path,
                       _text("task: [a, b]\n"))
    scored = run_score("--ref", ref, "--res", os.path.join(ROOT, SAMPLES["planetscapes-vqa"][1]))
    packed = subprocess.run([sys.executable, os.path.join(ORGANIZER, "pack.py"), ref,
                             str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert scored.returncode == packed.returncode == 3
    assert scored.stderr == packed.stderr and packed.stdout == ""


def test_a_config_inside_a_wrapped_reference_is_read_the_same_way(references, tmp_path):
    """The reference zipped as one folder: its config.yaml, a FIFO, is refused, not skipped."""
    wrapped = tmp_path / "wrap" / "test"
    shutil.copytree(references["planetscapes-vqa"]["raw"], str(wrapped))
    os.remove(str(wrapped / "config.yaml"))
    os.mkfifo(str(wrapped / "config.yaml"))
    r = run_measured("score.py", "--ref", tmp_path / "wrap", "--res",
                     os.path.join(ROOT, SAMPLES["planetscapes-vqa"][1]), timeout=60)
    assert_refused(r, ("FIFO",))


def test_a_link_to_a_regular_config_is_followed(references, tmp_path):
    """The organizers' own file: a link to a regular config.yaml is read."""
    ref = _with_config(references, "planetscapes-vqa", "raw", tmp_path,
                       lambda p: os.symlink(os.path.join(VQA_REF,
                                                         "config.yaml"), p))
    proc = run_score("--ref", ref, "--res", os.path.join(ROOT, SAMPLES["planetscapes-vqa"][1]))
    assert proc.returncode == 0, proc.stderr


@pytest.mark.compat
def test_long_storm_damage_value_is_quoted_briefly(references, tmp_path):
    ref = _with_config(references, "agriculture-vision", "raw", tmp_path,
                       _text("storm_damage: " + "b" * 200000 + "\n"))
    proc = run_score("--ref", ref, "--res", os.path.join(ROOT, SAMPLES["agriculture-vision"][1]))
    assert proc.returncode == 3, proc.stderr
    assert "storm_damage must be one of background, ignore, not 'bbb" in proc.stderr
    assert "(200,000 characters)" in proc.stderr and len(proc.stderr) < 1500


def test_a_bad_storm_damage_is_a_config_yaml_problem_not_a_layout_one(references, tmp_path):
    """The message's fix says to correct config.yaml, not to re-arrange the reference's
    folders."""
    ref = _with_config(references, "agriculture-vision", "raw", tmp_path,
                       _text("storm_damage: sometimes\n"))
    code, _, err = run_main(score_cli.main, [
        "--ref", ref, "--res", os.path.join(ROOT, SAMPLES["agriculture-vision"][1])])
    assert code == 3, err
    assert "Reference configuration (config.yaml) unusable (1):\n  - config.yaml: storm_damage " \
           "must be one of background, ignore, not 'sometimes'\n  Fix: correct config.yaml" in err
    assert "layout" not in err


@pytest.mark.compat
@pytest.mark.parametrize("config,phrase", [
    ("labels: " + "m" * 200000 + "\n", "`labels: 'mmm"),
    ("labels:\n  - {name: " + "n" * 200000 + ", id: 1, category: c, has_instances: 2, "
     "ignore_in_eval: false}\n", "labels row 1 ('nnn"),
    ("labels:\n  - {name: a, id: " + "7" * 4000 + ", category: c, has_instances: false, "
     "ignore_in_eval: false}\n", "is outside 0-255"),
    ("labels:\n  - {name: a, id: 1, category: c, has_instances: true, ignore_in_eval: false}\n"
     "average_instance_size: {a: " + "9" * 4000 + "}\n", "must be a positive number of pixels"),
    ("labels:\n  - {name: a, id: 1, category: c, has_instances: false, ignore_in_eval: false, "
     "1: x, null: y}\n", "unknown field `1`"),
], ids=["long table name", "long label name", "id of 4,000 digits", "size of 4,000 digits",
        "keys of other types"])
def test_label_table_values_are_quoted_briefly(references, tmp_path, config, phrase):
    """Values of the semantic task's label table: cut in the message, and an id or a size of
    4,000 digits (which no float holds) is a refusal, not an internal error."""
    ref = _with_config(references, "planetscapes-semantic", "raw", tmp_path,
                       _text("task: planetscapes-semantic\n" + config))
    # The real command for the long table name; the other values in this process (same main).
    code, _, err = score_either(["--ref", ref, "--res",
                                 os.path.join(ROOT, SAMPLES["planetscapes-semantic"][1])],
                                real=config.startswith("labels: m"))
    assert code == 3, err
    assert "Traceback" not in err and "INTERNAL ERROR" not in err
    assert phrase in err and len(err) < 2500, err
