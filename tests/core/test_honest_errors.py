"""A bug of the scoring program is its own fault (exit 4, "INTERNAL ERROR"), never reported as the
participant's (exit 1) or the organizers' (exit 3): the readers catch only what Pillow, zlib,
json and the OS raise for a broken file (scoring/formats/label_png/decode_errors.py)."""
import os

import pytest

from conftest import AGRIVISION, VQA_KIT, VQA_REF, run_main
from organizing.commands import pack as pack_command
from scoring.commands import score as cli

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat

AV_REF = os.path.join(AGRIVISION, "reference_data")
AV_RES = os.path.join(AGRIVISION, "starting_kit", "sample_submission")
VQA_RES = os.path.join(VQA_KIT, "sample_submission")


def bug(*args, **kwargs):
    raise KeyError("a bug of ours")


# ValueError and MemoryError are what Pillow raises for some broken files (decode_errors.py): raised
# by our own code they are still a bug, so they are caught only around Pillow's calls.
@pytest.mark.parametrize("error", [KeyError, ValueError, MemoryError])
@pytest.mark.parametrize("module, name", [
    ("scoring.formats.label_png.prediction", "load_array"),          # decoding a prediction
    ("scoring.tasks.agrivision.reference", "layers"),      # reading a reference layer
    ("scoring.tasks.agrivision.layers", "load_array"),     # decoding a reference layer
])
def test_a_bug_while_reading_an_image_is_exit_4(monkeypatch, module, name, error):
    import importlib
    target = importlib.import_module(module)

    def raise_it(*args, **kwargs):
        raise error("a bug of ours")
    if name == "layers":
        monkeypatch.setattr(target.LayerReader, "read", raise_it)
    else:
        monkeypatch.setattr(target, name, raise_it)
    code, out, err = run_main(cli.main, ["--ref", AV_REF, "--res", AV_RES, "--workers", "1"])
    assert code == 4, err
    assert err.startswith("INTERNAL ERROR") and error.__name__ in err


@pytest.mark.parametrize("error", [KeyError, ValueError, MemoryError])
@pytest.mark.parametrize("module, name", [
    ("scoring.tasks.planetscapes_semantic.reference", "load_array"),  # a raw reference image
    ("scoring.formats.label_png.prediction", "load_array"),                     # a prediction
])
def test_a_bug_while_reading_a_planetscapes_image_is_exit_4(monkeypatch, module, name, error):
    import importlib
    from conftest import SEM_KIT, SEM_REF

    def raise_it(*args, **kwargs):
        raise error("a bug of ours")
    monkeypatch.setattr(importlib.import_module(module), name, raise_it)
    code, out, err = run_main(cli.main, ["--ref", SEM_REF, "--res",
                                         os.path.join(SEM_KIT, "sample_submission"),
                                         "--workers", "1"])
    assert code == 4, err
    assert err.startswith("INTERNAL ERROR") and error.__name__ in err


def test_a_bug_while_reading_a_packed_planetscapes_image_is_exit_4(monkeypatch, tmp_path):
    from conftest import SEM_KIT, SEM_REF
    from scoring.tasks.planetscapes_semantic import packed
    assert pack_command.main([SEM_REF, str(tmp_path / "pk")]) == 0

    def raise_it(*args, **kwargs):
        raise ValueError("a bug of ours")
    monkeypatch.setattr(packed, "read_fast", raise_it)
    code, out, err = run_main(cli.main, ["--ref", str(tmp_path / "pk"), "--res",
                                         os.path.join(SEM_KIT, "sample_submission"),
                                         "--workers", "1"])
    assert code == 4, err


def test_a_bug_while_reading_the_packed_vqa_payload_is_exit_4(monkeypatch, tmp_path):
    from scoring.tasks.planetscapes_vqa import packed
    assert pack_command.main([VQA_REF, str(tmp_path / "pk")]) == 0
    def attribute_bug(data, manifest):
        # KeyError and TypeError are what a foreign payload raises there (PAYLOAD_ERRORS).
        raise AttributeError("a bug of ours")
    monkeypatch.setattr(packed, "decode", attribute_bug)
    code, out, err = run_main(cli.main, ["--ref", str(tmp_path / "pk"), "--res", VQA_RES])
    assert code == 4, err


def test_a_damaged_payload_is_still_the_organizers(tmp_path):
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
