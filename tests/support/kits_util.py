"""The starting kits as participants download them, built once per test run (by one xdist
worker for all: conftest.built_once) by the real `bash bundle.sh ... --kits DIR` from the
repository's samples: <kits>/<track>/ for every track (supervised, semi-supervised, semantic,
vqa) and <kits>/merged/ (Planetscapes, --merged). Shared: a test that writes into a kit copies
it first."""
import os
import subprocess
import sys

from conftest import ROOT, built_once

BUNDLE_SH = os.path.join(ROOT, "bundle.sh")


def bundle_env():
    return dict(os.environ, PYTHON=sys.executable, PYTHONDONTWRITEBYTECODE="1")


def build_kits(folder):
    """Every competition's kits under folder/kits; the bundles under folder/dist-<name>."""
    kits = os.path.join(str(folder), "kits")
    for name, extra in (("agriculture-vision", []), ("planetscapes", ["--merged"])):
        proc = subprocess.run(["bash", BUNDLE_SH, "--competition", name, "--no-smoke",
                               "--out", os.path.join(str(folder), "dist-" + name),
                               "--kits", kits] + extra,
                              env=bundle_env(), cwd=ROOT, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Starting kits in " in proc.stdout
    return kits


def session_kits(tmp_path_factory):
    """The kits folder, built on the first call of the run (a module's fixture calls it)."""
    return built_once(tmp_path_factory, "kits", build_kits)


def built_bundle(kits, competition, name):
    """A bundle built with the kits (bundle.sh --out <kits>/../dist-<competition>)."""
    return os.path.join(os.path.dirname(kits), "dist-" + competition, name)
