"""A bug of the scoring program is its own fault (exit 4, "INTERNAL ERROR"), never reported as the
participant's (exit 1) or the organizers' (exit 3): the readers catch only what Pillow, zlib,
json and the OS raise for a broken file (scoring/readers/decode_errors.py)."""
import os

import pytest

from conftest import ROOT, VQA_KIT, VQA_REF, run_main
from scoring.commands import score as cli

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

AV_REF = os.path.join(ROOT, "reference_data")
AV_RES = os.path.join(ROOT, "starting_kit", "sample_submission")
VQA_RES = os.path.join(VQA_KIT, "sample_submission")


def bug(*args, **kwargs):
    raise KeyError("a bug of ours")


@pytest.mark.parametrize("module, name", [
    ("scoring.readers.png_labels", "load_array"),          # decoding a prediction
    ("scoring.tasks.agrivision.reference", "layers"),      # reading a reference layer
])
def test_a_bug_while_reading_an_image_is_exit_4(monkeypatch, module, name):
    import importlib
    target = importlib.import_module(module)
    if name == "layers":
        monkeypatch.setattr(target.LayerReader, "read", bug)
    else:
        monkeypatch.setattr(target, name, bug)
    code, out, err = run_main(cli.main, ["--ref", AV_REF, "--res", AV_RES, "--workers", "1"])
    assert code == 4, err
    assert err.startswith("INTERNAL ERROR") and "KeyError" in err


def test_a_bug_while_reading_the_packed_vqa_payload_is_exit_4(monkeypatch, tmp_path):
    from scoring.commands import pack as pack_command
    from scoring.tasks.planetscapes_vqa import packed
    assert pack_command.main([VQA_REF, str(tmp_path / "pk")]) == 0
    def attribute_bug(data, manifest):
        # KeyError and TypeError are what a foreign payload raises there (PAYLOAD_ERRORS).
        raise AttributeError("a bug of ours")
    monkeypatch.setattr(packed, "decode", attribute_bug)
    code, out, err = run_main(cli.main, ["--ref", str(tmp_path / "pk"), "--res", VQA_RES])
    assert code == 4, err


def test_a_damaged_payload_is_still_the_organizers(tmp_path):
    from scoring.commands import pack as pack_command
    assert pack_command.main([VQA_REF, str(tmp_path / "pk")]) == 0
    manifest = tmp_path / "pk" / "packed.json"
    manifest.write_text("[1, 2]")
    code, out, err = run_main(cli.main, ["--ref", str(tmp_path / "pk"), "--res", VQA_RES])
    assert code == 3, err
    assert "packed.json" in err and "not a planetscapes-vqa-packed v1 manifest" in err


@pytest.mark.parametrize("module, name, error", [
    # KeyError and TypeError were once caught as "a foreign payload": a bug of ours is not one.
    ("scoring.tasks.planetscapes_vqa.packed", "_read_strings", KeyError),
    ("scoring.tasks.planetscapes_vqa.packed", "_look_up", TypeError),
    ("scoring.safe_yaml", "load_text", KeyError),             # reading config.yaml
    ("scoring.readers.bounded_json", "loads", TypeError),      # every JSON file of the task
    ("scoring.tasks.planetscapes_vqa.results", "check_entries", ValueError),
    ("scoring.submission.discovery", "discover_one", OSError),  # finding the results file
])
def test_a_bug_in_the_vqa_path_is_exit_4(monkeypatch, tmp_path, module, name, error):
    import importlib
    from scoring.commands import pack as pack_command
    assert pack_command.main([VQA_REF, str(tmp_path / "pk")]) == 0
    res = tmp_path / "res"
    res.mkdir()
    (res / "results.json").write_text("[]")       # every question missing: check_entries runs

    def raise_it(*args, **kwargs):
        raise error("a bug of ours")
    monkeypatch.setattr(importlib.import_module(module), name, raise_it)
    for ref in (VQA_REF, str(tmp_path / "pk")):
        code, out, err = run_main(cli.main, ["--ref", ref, "--res", str(res)])
        if name in ("_read_strings", "_look_up") and ref == VQA_REF:
            continue                               # the raw layout does not decode a payload
        assert code == 4, (ref, err)
        assert err.startswith("INTERNAL ERROR") and error.__name__ in err, err
