"""A challenge's final leaderboards, as compare.py writes them, feed the generalist ranking
directly: a leaderboard entry with only `name` and `file` is enough (the model column, the
ranking key and its direction come from leaderboard.csv itself)."""
import csv
import json
import os
import subprocess
import sys

import pytest

from conftest import AGRIVISION, ORGANIZER, VQA_KIT, VQA_REF
from generalist_util import run_generalist, write_case


COMPARE = os.path.join(ORGANIZER, "compare.py")


def compare(ref, out, *subs):
    proc = subprocess.run([sys.executable, COMPARE, "--ref", ref, "--out", str(out)] +
                          [str(s) for s in subs], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(str(out / "leaderboard.csv"), encoding="utf-8", newline="") as f:
        return f.read()


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """Two challenges' final leaderboards from compare.py: Agriculture-Vision (the sample
    submission, a copy and a noisy one) and VQA (the sample results and two variants)."""
    tmp = tmp_path_factory.mktemp("boards")
    av_subs = tmp / "av"
    av_subs.mkdir()
    sample = os.path.join(AGRIVISION, "starting_kit", "sample_submission")
    import shutil
    import numpy as np
    from PIL import Image
    shutil.copytree(sample, str(av_subs / "aurora"))
    shutil.copytree(sample, str(av_subs / "borealis"))
    (av_subs / "cirrus").mkdir()
    rng = np.random.RandomState(3)
    for name in sorted(os.listdir(sample)):
        a = np.array(Image.open(os.path.join(sample, name)))
        Image.fromarray((a + rng.randint(0, 2, a.shape)).clip(0, 8).astype(np.uint8)).save(
            str(av_subs / "cirrus" / name))
    av = compare(os.path.join(AGRIVISION, "reference_data"), tmp / "av_out", av_subs)

    vqa_subs = tmp / "vqa"
    with open(os.path.join(VQA_KIT, "sample_submission", "results.json")) as f:
        results = json.load(f)
    variants = {"cirrus": results,
                "aurora": [dict(r, answer="yes") for r in results],
                "dune_lab": [dict(r, answer="no") for r in results]}
    for name, entries in variants.items():
        (vqa_subs / name).mkdir(parents=True)
        (vqa_subs / name / "results.json").write_text(json.dumps(entries))
    vqa = compare(VQA_REF, tmp / "vqa_out", vqa_subs)
    return {"av.csv": av, "vqa.csv": vqa}


def test_the_leaderboards_have_the_agreed_header(boards):
    for name, text in boards.items():
        header = next(csv.reader([text.splitlines()[0]]))
        assert header[:2] == ["model", "rank"]
        assert header[2] == {"av.csv": "miou", "vqa.csv": "accuracy"}[name]
        assert header[-2:] == [header[2] + "_ci_low", header[2] + "_ci_high"]


def test_a_leaderboard_entry_with_only_name_and_file_is_enough(boards, tmp_path):
    config = """
        min_leaderboards: 1
        leaderboards:
          - name: Agriculture-Vision
            file: av.csv
          - name: Planetscapes VQA
            file: vqa.csv
        """
    path = write_case(tmp_path / "case", config, boards)
    proc = run_generalist(path, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    with open(str(tmp_path / "out" / "ranking.json"), encoding="utf-8") as f:
        ranking = json.load(f)
    for board, text in (("Agriculture-Vision", boards["av.csv"]),
                        ("Planetscapes VQA", boards["vqa.csv"])):
        expected = {row["model"]: int(row["rank"]) for row in csv.DictReader(text.splitlines())}
        got = {m["model"]: m["leaderboards"][board]["rank"] for m in ranking["models"]
               if m["leaderboards"].get(board, {}).get("rank") is not None}
        assert got == expected
