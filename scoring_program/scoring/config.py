"""The reference's config.yaml: which task scores it and the task's options.

Every layer may read it (the command line, pack.py, the bundle tools, a task opening its
reference alone), so it lives here rather than in the command line. It is read through
safe_yaml (a regular file of at most 1 MiB; no alias bombs, recursive aliases, absurd nesting,
integers beyond 4,300 digits, unknown tags or keys given twice): a config.yaml that cannot be
read as a YAML mapping, or that is a FIFO, a device, a folder or too large, is the organizers'
problem (BrokenReference, exit 3). Its values are the task's to check (Task.configure); every
message that quotes one shortens it with quoting.brief.
"""
import os
from typing import Any, Dict

from .folders import sole_subfolder
from .problems import REF_CONFIG, BrokenReference, ProblemLog
from .quoting import brief

CONFIG_FILE = "config.yaml"


def _refused(detail: str) -> BrokenReference:
    log = ProblemLog()
    log.add(REF_CONFIG, CONFIG_FILE, detail)
    return BrokenReference(log)


def config_path(ref_dir: str) -> str:
    """Where the reference's config.yaml is: in ref_dir or in its single sub-folder; '' if
    neither holds one. Anything of that name counts (a FIFO, a folder, a link): it is refused
    when read, never silently skipped."""
    path = os.path.join(ref_dir, CONFIG_FILE)
    if os.path.lexists(path):
        return path
    sub = sole_subfolder(ref_dir)
    if sub is not None and os.path.lexists(os.path.join(sub, CONFIG_FILE)):
        return os.path.join(sub, CONFIG_FILE)
    return ""


def read_config(ref_dir: str) -> Dict[str, Any]:
    """The reference's config.yaml as a mapping; {} if there is none."""
    from . import safe_yaml   # here: CONFIG_FILE and the rest import without PyYAML (the kits)
    path = config_path(ref_dir)
    if not path:
        return {}
    try:
        # The organizer's own file: a link to a regular file is followed (what it points to is
        # checked on the opened descriptor).
        raw = safe_yaml.read_file(path, follow_links=True)
    except safe_yaml.YamlError as exc:
        raise _refused("it cannot be read: {}".format(exc)) from None
    try:
        config = safe_yaml.load_text(safe_yaml.decode(raw))
    except safe_yaml.YamlError as exc:
        raise _refused("unreadable YAML ({})".format(exc)) from None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise _refused("unreadable YAML (it is not a mapping of `key: value` lines but {})".format(
            brief(config)))
    return config


def task_name(ref_config: Dict[str, Any], default: str, known) -> str:
    """The reference's `task:` (default if none); BrokenReference if it names no known task."""
    name = ref_config.get("task", default)
    if not isinstance(name, str) or name not in known:
        raise _refused("unknown task {} (known: {})".format(brief(name), ", ".join(sorted(known))))
    return name
