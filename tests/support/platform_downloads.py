"""The sample's end-of-challenge downloads (competitions/agriculture-vision/
make_platform_downloads.py, as the README runs it), made once per test run."""
import os
import pathlib
import subprocess
import sys

from conftest import AGRIVISION, built_once

GENERATOR = os.path.join(AGRIVISION, "make_platform_downloads.py")


def _build(folder):
    subprocess.run([sys.executable, GENERATOR, "--out", folder], check=True,
                   capture_output=True, timeout=300)
    return folder


def made(tmp_path_factory) -> pathlib.Path:
    """The folder (shared: copy before changing anything in it)."""
    return pathlib.Path(built_once(tmp_path_factory, "platform-downloads", _build))
