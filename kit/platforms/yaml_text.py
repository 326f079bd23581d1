"""Small YAML files as the platforms read them (a program's or a submission's `metadata`, a
scores.txt), with PyYAML when it is installed: the starting kit promises numpy and Pillow only,
so without it the few forms these files use are read by hand, as PyYAML would read them.

Every reader takes `yaml` from this module when it is called (a test sets it to None).
"""
import re
from typing import Any, Dict, Optional

try:
    import yaml  # optional: only to read YAML exactly as the platforms do
except ImportError:  # pragma: no cover - the starting kit promises numpy and Pillow only
    yaml = None

# PyYAML's (YAML 1.1) int and float forms, for when PyYAML is not installed: `1e-3` and `nan`
# are strings there, which is exactly why the scorer writes plain decimals.
_YAML_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$")
_YAML_FLOAT = re.compile(r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?"
                         r"|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")


def simple_yaml(text: str) -> Dict[str, Any]:
    """`key: value` lines read as PyYAML reads them (ints, floats, strings); ValueError on a
    line of another form."""
    out: Dict[str, Any] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if ": " not in line + " ":
            raise ValueError("line {!r} is not `key: value`".format(line))
        key, value = line.split(":", 1)
        value = value.strip()
        if _YAML_INT.match(value):
            out[key.strip()] = int(value.replace("_", ""))
        elif _YAML_FLOAT.match(value):
            low = value.lower()
            out[key.strip()] = (float("nan") if low.endswith("nan") else
                                float(low.replace(".inf", "inf").replace("_", "")))
        else:
            out[key.strip()] = value
    return out


def read_mapping(path: str) -> Optional[Dict[str, Any]]:
    """A small YAML file as the workers read it, if it is a mapping (None otherwise)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    if yaml is not None:
        try:
            doc = yaml.safe_load(text)
        except Exception:  # a YAML error: the workers see no mapping either
            return None
        return doc if isinstance(doc, dict) else None
    found: Dict[str, Any] = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found or None


def command_of(text: str) -> Optional[str]:
    """The `command:` of a program's metadata file (None without one)."""
    if yaml is not None:
        meta = yaml.safe_load(text)
        command = meta.get("command") if isinstance(meta, dict) else None
    else:
        match = re.search(r"^command:[ \t]*(.+?)[ \t]*$", text, re.M)
        command = match.group(1) if match else None
    return command if isinstance(command, str) else None
