"""Helpers for the generalist-ranking tests: write a case to disk, run the real command."""
import json
import os
import subprocess
import sys
import textwrap

from conftest import ROOT  # noqa: E402
COMMAND = os.path.join(ROOT, "scoring_program", "generalist.py")
SAMPLE = os.path.join(ROOT, "samples", "generalist")


def run_generalist(*args, cwd=None):
    return subprocess.run([sys.executable, COMMAND] + [str(a) for a in args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def write_case(folder, config, files):
    """config: YAML text (dedented); files: name -> text (str, written as UTF-8) or bytes."""
    os.makedirs(str(folder), exist_ok=True)
    path = os.path.join(str(folder), "config.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(config).lstrip("\n"))
    for name, content in files.items():
        mode = "wb" if isinstance(content, bytes) else "w"
        kw = {} if isinstance(content, bytes) else {"encoding": "utf-8", "newline": ""}
        with open(os.path.join(str(folder), name), mode, **kw) as f:
            f.write(content if isinstance(content, bytes) else textwrap.dedent(content).lstrip("\n"))
    return path


def rank_case(tmp_path, config, files):
    """Run the command on a case; returns (process, ranking.json as a dict)."""
    path = write_case(tmp_path / "case", config, files)
    out = tmp_path / "out"
    proc = run_generalist(path, "--out", out)
    assert proc.returncode == 0, proc.stderr
    with open(str(out / "ranking.json"), encoding="utf-8") as f:
        return proc, json.load(f)


def by_model(doc):
    return {m["model"]: m for m in doc["models"]}
