"""One frame for every command (scoring/commands/frame.py): each command, the organizers' and the
starting kits' tools alike, meets every situation the frame owns the same way. The command's own
work (its body) is replaced by one that provokes the situation; everything else is the command's
real main: its parser, its arguments, its frame."""
import gc
import importlib.util
import io
import os
import sys

import pytest

from conftest import ORGANIZER, ROOT, PROGRAM, VQA_KIT

KIT = os.path.join(ROOT, "kit")


def _kit_module(name, folder):
    """A kit tool imported from its folder (find_scoring.py is the Agriculture-Vision kit's: the
    bundle copies it into every kit)."""
    for path in (KIT, folder):
        if path not in sys.path:
            sys.path.insert(0, path)
    spec = importlib.util.spec_from_file_location("kit_" + name, os.path.join(folder, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module(name):
    if name.startswith("kit:"):
        tool = name[4:]
        return _kit_module(tool, KIT if os.path.isfile(os.path.join(KIT, tool + ".py"))
                           else VQA_KIT)
    package = "scoring" if name == "score" else "organizing"
    return importlib.import_module(package + ".commands." + name)


# command -> arguments its parser accepts (the body never sees them)
COMMANDS = {
    "score": ["--ref", "r", "--res", "s"],
    "pack": ["raw", "out"],
    "compare": ["--ref", "r", "--out", "o", "s"],
    "generalist": ["config.yaml"],
    "verify": ["final.zip", "--ref", "r", "--out", "o"],
    "consensus": ["comparison.json", "--out", "o"],
    "standings": ["--leaderboard", "results.csv", "--out", "o"],
    "kit:check_submission": ["submission"],
    "kit:check_final": ["final.zip"],
    "kit:make_submission": ["predictions"],
    "kit:check_results": ["results.json"],
    "kit:normalize": ["an answer"],
}


class Refused(Exception):
    pass


def _situation(kind, seen):
    """A body that provokes the situation `kind`; seen records what it saw."""
    def body(args, frame_io):
        seen["collector"] = gc.isenabled()
        if kind == "usage":
            from scoring.problems import UsageError
            raise UsageError("the folder nope does not exist")
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind == "missing":
            raise ModuleNotFoundError("No module named 'numpy'", name="numpy")
        if kind == "internal":
            raise ZeroDivisionError("hidden value 0.123456")
        if kind == "refusal":
            from scoring.problems import BrokenReference, ProblemLog, REF_CONFIG
            log = ProblemLog()
            log.add(REF_CONFIG, os.path.join(seen["tmp"], "config.yaml"), "not a mapping")
            frame_io.show_as(seen["tmp"], "given/ref.zip")
            raise BrokenReference(log)
        if kind in ("closed", "unencodable"):
            for _ in range(3):
                frame_io.stdout.write("r\u00e9sultat \u202e\udc80 ok\n")
                frame_io.stdout.flush()
            return 0
        raise AssertionError(kind)
    return body


class ClosedPipe(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("kind", ["usage", "interrupt", "missing", "internal", "refusal",
                                  "closed", "unencodable"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_meets_every_situation_through_the_frame(monkeypatch, tmp_path, name, kind):
    module = _module(name)
    seen = {"tmp": str(tmp_path / "submission-x1y2")}
    monkeypatch.setattr(module, "COMMAND", module.COMMAND._replace(body=_situation(kind, seen)))
    monkeypatch.delenv("SCORING_DEBUG", raising=False)
    if kind == "closed":
        out = ClosedPipe()
    elif kind == "unencodable":
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    else:
        out = io.StringIO()
    err = io.StringIO()
    assert gc.isenabled()
    code = module.main(COMMANDS[name], out, err)
    assert gc.isenabled()                                  # the collector is back on after
    assert seen["collector"] is (not module.COMMAND.batch)
    text = err.getvalue()
    assert "Traceback" not in text
    prog = module.COMMAND.prog
    if kind == "usage":
        assert (code, text) == (2, "ERROR: the folder nope does not exist\n")
    elif kind == "interrupt":
        assert (code, text) == (130, "Interrupted.\n")
    elif kind == "missing":
        assert code == 2 and text.count("\n") == 1
        assert "needs numpy >= 1.16" in text and "-m pip install 'numpy>=1.16'" in text
    elif kind == "internal":
        assert code == 4
        assert text.startswith("INTERNAL ERROR in {}: ZeroDivisionError at ".format(prog))
        assert "This is not a problem with " + module.COMMAND.not_blamed in text
        assert "0.123456" not in text and "SCORING_DEBUG=1" in text
    elif kind == "refusal":
        assert code == 3
        assert text.startswith("ERROR: the REFERENCE data")
        assert "given/ref.zip" in text and seen["tmp"] not in text   # the path as given
    elif kind == "closed":
        assert (code, text) == (0, "")
    else:
        out.flush()
        assert code == 0 and text == ""
        assert raw.getvalue().count(b"r\\xe9sultat \\u202e\\udc80 ok\n") == 3


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_traceback_only_with_scoring_debug(monkeypatch, tmp_path, name):
    module = _module(name)
    monkeypatch.setattr(module, "COMMAND",
                        module.COMMAND._replace(body=_situation("internal", {"tmp": ""})))
    monkeypatch.setenv("SCORING_DEBUG", "1")
    err = io.StringIO()
    assert module.main(COMMANDS[name], io.StringIO(), err) == 4
    assert "Traceback (most recent call last)" in err.getvalue()
    assert "ZeroDivisionError: hidden value 0.123456" in err.getvalue()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_bad_option_is_argparse_s_usage_and_exit_2(name):
    module = _module(name)
    err = io.StringIO()
    old = sys.stderr
    sys.stderr = err              # argparse writes its usage to sys.stderr itself
    try:
        with pytest.raises(SystemExit) as exit_info:
            module.main(COMMANDS[name] + ["--no-such-option"], io.StringIO(), err)
    finally:
        sys.stderr = old
    assert exit_info.value.code == 2
    assert "unrecognized arguments: --no-such-option" in err.getvalue()


def test_every_command_module_is_in_the_table():
    """A new command (verify.py...) joins the table above, so the frame's situations cover it."""
    found = set()
    for folder in (os.path.join(PROGRAM, "scoring", "commands"),
                   os.path.join(ORGANIZER, "organizing", "commands")):
        found |= {n[:-3] for n in os.listdir(folder) if n.endswith(".py")} - {"__init__", "frame"}
    assert found == {n for n in COMMANDS if not n.startswith("kit:")}
