"""scoring/deps.py: a missing package is one line with the command that installs it."""
import sys

import pytest

from scoring import deps

# Can differ with numpy / Pillow / PyYAML / Python versions: CI runs it on the oldest too.
pytestmark = pytest.mark.compat


@pytest.mark.parametrize("name, pip_name, minimum", [
    ("yaml", "PyYAML", "5.1"), ("numpy", "numpy", "1.16"), ("PIL", "Pillow", "6.1"),
    ("PIL.Image", "Pillow", "6.1"), ("yaml.cyaml", "PyYAML", "5.1")])
def test_missing_message(name, pip_name, minimum):
    message = deps.missing_message(ModuleNotFoundError("No module named x", name=name),
                                   python="/opt/py/bin/python3")
    assert message == (
        "ERROR: this command needs {0} >= {1} (import {2}), which is not installed for "
        "/opt/py/bin/python3. Install it with: /opt/py/bin/python3 -m pip install "
        "'{0}>={1}'".format(pip_name, minimum, name.partition(".")[0]))
    assert "\n" not in message


def test_not_a_missing_required_package():
    assert deps.missing_message(ModuleNotFoundError("x", name="requests")) is None
    assert deps.missing_message(ModuleNotFoundError("x")) is None
    # An installed package that lacks a name is broken or too old, not missing.
    assert deps.missing_message(ImportError("cannot import name 'X'", name="yaml")) is None
    assert deps.missing_message(ValueError("yaml")) is None


def test_install_command_is_quoted_for_a_shell():
    assert deps.install_command("yaml", "/my pythons/python3") == \
        "'/my pythons/python3' -m pip install 'PyYAML>=5.1'"
    assert deps.install_command("numpy").startswith(sys.executable + " -m pip")


def test_exit_if_missing(capsys):
    with pytest.raises(SystemExit) as info:
        deps.exit_if_missing(ModuleNotFoundError("x", name="yaml"))
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'PyYAML>=5.1'" in err
    other = ModuleNotFoundError("x", name="somethingelse")
    with pytest.raises(ModuleNotFoundError) as info:
        deps.exit_if_missing(other)
    assert info.value is other
