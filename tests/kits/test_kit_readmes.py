"""Every command of every starting kit's README.md, run as written, from where the README says
(the unpacked kit's folder), in the kits bundle.sh builds from the repository's samples.

A README's commands are its ```sh blocks (one command a line) and the `$ ` lines of its
```console blocks, whose other lines are the output shown, compared with the real one. The
files a participant brings are laid out under the names the READMEs use: predictions/ and
val_predictions/ (the sample's PNGs), results.json and val_results.json (the sample's answers),
val_submission/ (both), and the validation splits under ~/data/ (a HOME of the test's own) in
the dataset's layout, without config.yaml. `pip install` lines are checked against the
project's requirements, not run."""
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import AGRIVISION, ROOT, SEM_REF, VQA_REF
from kits_util import BUNDLE_SH, bundle_env, session_kits

AV_REF = os.path.join(AGRIVISION, "reference_data")
TRACKS = ["supervised", "semi-supervised", "semantic", "panoptic", "vqa", "merged"]
# The validation splits where the READMEs' examples have them (under HOME).
VALIDATION = {os.path.join("data", "Agriculture-Vision-2021", "val"): AV_REF,
              os.path.join("data", "planetscapes", "val"): SEM_REF,
              os.path.join("data", "planetscapes", "vqa-val"): VQA_REF}
# What `pip install` lines may name: the project's requirements (requirements.txt).
REQUIREMENTS = {'"numpy>=1.16"', '"Pillow>=6.1"', '"PyYAML>=5.1"'}


@pytest.fixture
def kits(tmp_path_factory):
    """The starting kits as built by bundle.sh --kits (once per session)."""
    return session_kits(tmp_path_factory)


def commands(readme):
    """[(command, expected output or None)] of a README, in order."""
    found = []
    for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", readme, re.M | re.S):
        if lang == "sh":
            for line in body.replace("\\\n", " ").splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    found.append((line.strip(), None))
        elif lang == "console":
            for block in re.split(r"^\$ ", body, flags=re.M)[1:]:
                command, _, output = block.partition("\n")
                found.append((command.strip(), output))
    return found


def participant_files(kit, track, home):
    """What the READMEs' commands take: the participant's files, in the kit's folder, and the
    validation splits under home, as the datasets distribute them (no config.yaml)."""
    if track == "panoptic":  # predictions.json and predictions/: the READMEs' out/, val_out/
        for folder in ("out", "val_out"):
            shutil.copytree(os.path.join(kit, "sample_submission"), os.path.join(kit, folder))
        shutil.copytree(SEM_REF, os.path.join(home, "data", "planetscapes", "val"),
                        ignore=shutil.ignore_patterns("config.yaml"))
        return
    samples = {"supervised": [os.path.join(kit, "sample_submission")],
               "semi-supervised": [os.path.join(kit, "sample_submission")],
               "semantic": [os.path.join(kit, "sample_submission")],
               "vqa": [os.path.join(kit, "sample_submission")],
               "merged": [os.path.join(kit, "semantic", "sample_submission"),
                          os.path.join(kit, "vqa", "sample_submission")]}[track]
    pngs = [s for s in samples if any(n.endswith(".png") for n in os.listdir(s))]
    answers = [os.path.join(s, "results.json") for s in samples
               if os.path.isfile(os.path.join(s, "results.json"))]
    for folder in ("predictions", "val_predictions"):
        if pngs:
            shutil.copytree(pngs[0], os.path.join(kit, folder))
    for name in ("results.json", "val_results.json"):
        if answers:
            shutil.copyfile(answers[0], os.path.join(kit, name))
    both = os.path.join(kit, "val_submission")
    for sample in samples:
        for name in os.listdir(sample):
            os.makedirs(both, exist_ok=True)
            shutil.copyfile(os.path.join(sample, name), os.path.join(both, name))
    if track == "merged":  # the instance and panoptic parts: instance_out/, panoptic_out/
        shutil.copytree(os.path.join(kit, "instance", "sample_submission"),
                        os.path.join(kit, "instance_out"))
        shutil.copytree(os.path.join(kit, "panoptic", "sample_submission"),
                        os.path.join(kit, "panoptic_out"))
        shutil.copytree(os.path.join(kit, "instance_out"), os.path.join(both, "instance_out"))
        shutil.copytree(os.path.join(kit, "panoptic_out", "predictions"),
                        os.path.join(both, "predictions"))
        shutil.copyfile(os.path.join(kit, "panoptic_out", "predictions.json"),
                        os.path.join(both, "predictions.json"))
    for where, ref in VALIDATION.items():
        shutil.copytree(ref, os.path.join(home, where),
                        ignore=shutil.ignore_patterns("config.yaml"))


def python3_shim(folder):
    """A `python3` on PATH that is this test's interpreter (its venv's packages)."""
    os.makedirs(folder)
    shim = os.path.join(folder, "python3")
    with open(shim, "w") as f:
        f.write('#!/bin/sh\nexec "{}" "$@"\n'.format(sys.executable))
    os.chmod(shim, os.stat(shim).st_mode | stat.S_IXUSR)
    return folder


@pytest.mark.parametrize("track", TRACKS)
def test_every_command_of_the_kits_readme_works_as_written(kits, tmp_path, track):
    kit = str(tmp_path / "kit")
    shutil.copytree(os.path.join(kits, track), kit)
    with open(os.path.join(kit, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    listed = commands(readme)
    home = str(tmp_path / "home")
    participant_files(kit, track, home)
    env = dict(os.environ, HOME=home, PYTHONDONTWRITEBYTECODE="1",
               PATH=python3_shim(str(tmp_path / "bin")) + os.pathsep + os.environ["PATH"])
    env.pop("BUNDLE_NOW", None)
    ran = []
    for command, shown in listed:
        if " -m pip install " in command:
            assert command.startswith("python3 -m pip install ")
            assert set(command.split()[4:]) <= REQUIREMENTS, command
            continue
        proc = subprocess.run(["bash", "-c", command], cwd=kit, env=env, capture_output=True,
                              text=True, timeout=300)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, "{}\n{}".format(command, out)
        assert "Traceback" not in out, command + "\n" + out
        if shown is not None:
            assert proc.stdout == shown, command
        ran.append(command)
    # Every kit says how to dry-run on validation labels, with an example that runs.
    assert any(re.search(r"dry_run\.py \S+ ~/data/", c) for c in ran), ran
    assert len(ran) >= 3


def test_the_readmes_say_where_to_run_their_commands(kits):
    for track in TRACKS:
        with open(os.path.join(kits, track, "README.md"), encoding="utf-8") as f:
            text = f.read()
        assert "Run every command below from this folder (the unpacked starting kit)." in text
        assert "dry_run.py SUBMISSION VALIDATION_DIR" in text


def test_bundle_sh_never_writes_over_a_kit(kits, tmp_path):
    proc = subprocess.run(["bash", BUNDLE_SH, "--kits", kits, "--out", str(tmp_path / "dist"),
                           "--no-smoke"], env=bundle_env(), cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--kits {}: {} exists already".format(kits, os.path.join(kits, "supervised")) \
        in proc.stderr
    assert not (tmp_path / "dist").exists()


def test_the_dry_run_speaks_the_participants_language(kits, tmp_path):
    """Issue 32: the kit's dry run told participants of "bundle.py --confidence-columns",
    counted Codabench's metadata file among their 40 predictions ("41 files") and said "the
    last upload could start 2.1 s before". Through the kit's own dry_run.py, as the README runs
    it."""
    kit = os.path.join(kits, "supervised")
    made = subprocess.run([sys.executable, "make_submission.py", "sample_submission", "-o",
                           str(tmp_path / "s.zip")], cwd=kit, capture_output=True, text=True,
                          timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    env = {k: v for k, v in os.environ.items() if k != "SCORING_HTML_SETTLE_SECONDS"}
    proc = subprocess.run([sys.executable, "dry_run.py", str(tmp_path / "s.zip"), AV_REF],
                          cwd=kit, capture_output=True, text=True, timeout=300, env=env)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    for organizers in ("bundle.py", "bundle.sh", "--confidence-columns", "could start",
                       "41 files"):
        assert organizers not in out, organizers
    assert out.count("input/res: 40 files and 0 folders at the top: ") == 1     # CodaLab
    assert out.count("input/res: 40 files and 0 folders at the top (+ Codabench's own metadata "
                     "file): ") == 1
    assert out.count("Also scored, not shown on this leaderboard: miou_ci_high, miou_ci_low (the "
                     "95% confidence interval of the score, on the detailed results page)") == 2
    assert "Detailed results on CodaLab v1: shown (the page was complete " in out
