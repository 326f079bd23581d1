"""verify.py --split split.json (issue 35): the leaderboard showed the public part's score, so
the match compares results/ on the public part; the private part's score (the final ranking's)
is reported beside it, equal to scoring a reference of the private units alone."""
import json
import os

from agrivision_data import write_small_reference
from conftest import run_main
from final_packages import package
from reference_part import units_alone

from organizing.commands import verify as cli
from organizing.split import choose, document, grouping
from scoring import reference_setup
from scoring.commands import score as score_cli


def miou(ref, res, out):
    code, _, err = run_main(score_cli.main, ["--ref", ref, "--res", res, "--out", out, "-q",
                                             "--workers", "1"])
    assert code == 0, err
    return json.load(open(os.path.join(str(out), "scores.json")))["miou"]


def test_the_match_is_on_the_public_part_and_the_private_score_is_reported(tmp_path):
    ref = write_small_reference(str(tmp_path / "ref"))
    setup = reference_setup.configure(ref)
    split = choose.choose(grouping.grouping_of(setup, setup.open()), 0.5, 0)
    assert split.public and split.private
    (tmp_path / "split.json").write_text(document.to_json(split, "agriculture-vision"))
    pkg = package(tmp_path)
    results = tmp_path / "final" / "submission" / "results"
    public = miou(units_alone(ref, split.public, str(tmp_path / "pub")), results,
                  tmp_path / "a")
    private = miou(units_alone(ref, split.private, str(tmp_path / "priv")), results,
                   tmp_path / "b")
    whole = miou(ref, results, tmp_path / "c")
    assert len({round(public, 4), round(private, 4), round(whole, 4)}) == 3
    code, out, err = run_main(cli.main, [pkg, "--ref", ref, "--out", tmp_path / "v",
                                         "--claimed", "{:.4f}".format(public), "--split",
                                         tmp_path / "split.json", "--workers", "1"])
    doc = json.load(open(str(tmp_path / "v" / "verdict.json")))
    checks = {c["name"]: c for c in doc["checks"]}
    assert checks["leaderboard match"]["status"] == "pass", checks["leaderboard match"]
    parts = checks["split parts"]["figures"]
    assert parts["public"] == round(public, 10) and parts["private"] == round(private, 10)
    assert parts["private_ci"][0] <= parts["private"] <= parts["private_ci"][1]
    assert "private part miou {:.4f}".format(private) in out
    # without --split, the same claim is compared with the whole test set's score: no match
    code, out, err = run_main(cli.main, [pkg, "--ref", ref, "--out", tmp_path / "w",
                                         "--claimed", "{:.4f}".format(public), "--workers", "1"])
    doc = json.load(open(str(tmp_path / "w" / "verdict.json")))
    assert [c["status"] for c in doc["checks"] if c["name"] == "leaderboard match"] == ["fail"]


def test_a_split_of_another_reference_is_refused_before_the_package_is_read(tmp_path):
    ref = write_small_reference(str(tmp_path / "ref"))
    other = choose.Split(0.5, 0, grouping.Grouping(["X_1", "Y_1"], str, "image", "images",
                                                   "images"), ["X_1"], ["Y_1"], ["X_1"],
                         ["Y_1"])
    (tmp_path / "split.json").write_text(document.to_json(other, "agriculture-vision"))
    code, out, err = run_main(cli.main, [package(tmp_path), "--ref", ref, "--out",
                                         tmp_path / "v", "--split", tmp_path / "split.json"])
    assert code == 2 and "not of this reference" in err
