"""The reference's config.yaml: which task scores it and the task's options.

Every layer may read it (the command line, pack.py, a task opening its reference alone), so it
lives here rather than in the command line. A config.yaml that cannot be read as a YAML mapping
is the organizers' problem (BrokenReference, exit 3); its values are the task's to check
(Task.configure).
"""
import os
from typing import Any, Dict

from .folders import sole_subfolder
from .problems import REF_CONFIG, BrokenReference, ProblemLog

CONFIG_FILE = "config.yaml"


def read_config(ref_dir: str) -> Dict[str, Any]:
    """The reference's config.yaml, in ref_dir or in its single sub-folder; {} if none."""
    path = os.path.join(ref_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        sub = sole_subfolder(ref_dir)
        if sub is None or not os.path.isfile(os.path.join(sub, CONFIG_FILE)):
            return {}
        path = os.path.join(sub, CONFIG_FILE)
    try:
        import yaml
        with open(path) as f:
            config = yaml.safe_load(f) or {}
        if not isinstance(config, dict):
            raise ValueError("it is not a mapping")
    except Exception as exc:
        log = ProblemLog()
        # YAML's messages name the file by its full path, which may be a temporary folder.
        log.add(REF_CONFIG, CONFIG_FILE, "unreadable YAML ({})".format(
            str(exc).replace(path, CONFIG_FILE)))
        raise BrokenReference(log) from None
    return config


def task_name(ref_config: Dict[str, Any], default: str, known) -> str:
    """The reference's `task:` (default if none); BrokenReference if it names no known task."""
    name = ref_config.get("task", default)
    if not isinstance(name, str) or name not in known:
        log = ProblemLog()
        log.add(REF_CONFIG, CONFIG_FILE, "unknown task '{}' (known: {})".format(
            name, ", ".join(sorted(known))))
        raise BrokenReference(log)
    return name
