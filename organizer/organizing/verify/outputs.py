"""verdict.json, verdict.html and the terminal summary, from one document. No time, no
temporary path, no absolute path: identical inputs give byte-identical files.

Every string of the document is shown escaped (problems.shown: a file name's escape sequence,
newline or non-UTF-8 byte becomes \\x1b, \\n, \\xff) before it is written or printed: a
participant's name can neither forge a line nor fail to encode, and a file that cannot be
written leaves no .part behind.
"""
import json
import os
from typing import Any, Dict

from scoring.problems import shown
from . import page

FILES = ("verdict.json", "verdict.html")
EVIDENCE_LINES = 8    # evidence lines printed under a check in the terminal summary
MARKS = {"pass": "pass", "fail": "FAIL", "warn": "warn", "not-checked": "  - "}


def clear(out: str) -> None:
    """An earlier run's verdict must not survive a failed run."""
    for name in FILES:
        path = os.path.join(out, name)
        if os.path.islink(path) or os.path.isfile(path):
            os.remove(path)


def _write(out: str, name: str, text: str) -> None:
    tmp = os.path.join(out, name + ".part")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, os.path.join(out, name))
    except BaseException:
        if os.path.lexists(tmp):
            os.remove(tmp)
        raise


def escaped(value: Any) -> Any:
    """The document with every string shown escaped (a copy; keys are ours)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {k: escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [escaped(v) for v in value]
    return value


def write(out: str, doc: Dict[str, Any]) -> None:
    _write(out, "verdict.json", json.dumps(doc, indent=1, sort_keys=True, allow_nan=False,
                                           ensure_ascii=True) + "\n")
    _write(out, "verdict.html", page.render(doc, headline(doc)))


def headline(doc: Dict[str, Any]) -> str:
    checks = doc["checks"]
    failed = [c for c in checks if c["status"] == "fail"]
    if failed:
        return "INVALID: {} of {} checks failed ({})".format(
            len(failed), len(checks), ", ".join(c["name"] for c in failed))
    notes = []
    p = doc["parameters"]
    if p["counted"] is not None and not p["complete"]:
        # Not a broken rule (nothing counted exceeds the limit), but the jury must know the
        # total may be larger: said in the verdict itself, not only among the checks.
        missing = [f for f in p["files"] if f["status"] == "not counted"]
        notes.append("the parameter count is incomplete: {} file{} not counted".format(
            len(missing), "" if len(missing) == 1 else "s"))
    if doc["warnings"]:
        notes.append("warnings: " + ", ".join(doc["warnings"]))
    if doc["not_checked"]:
        notes.append("not checked: " + ", ".join(doc["not_checked"]))
    return "VALID: no rule is broken{}".format(" ({})".format("; ".join(notes)) if notes
                                               else "")


def summary(doc: Dict[str, Any]) -> str:
    width = max(len(c["name"]) for c in doc["checks"])
    lines = ["", "Verdict for {}: {}".format(doc["package"], headline(doc)), ""]
    rule = doc["parameters"]["rule"]
    for c in doc["checks"]:
        lines.append("  {:<4}  {:<{}}  {}".format(MARKS[c["status"]], c["name"], width,
                                                   c["summary"]))
        # The rule and both values of the score comparison, and why a check failed.
        if c["name"] == "leaderboard match" or c["status"] == "fail":
            listed = [e for e in c["evidence"] if e != rule]
            for e in listed[:EVIDENCE_LINES]:
                lines.append("  {}  {:<{}}    {}".format(" " * 4, "", width, e))
            if len(listed) > EVIDENCE_LINES:
                lines.append("  {}  {:<{}}    ... ({} more lines in verdict.json)".format(
                    " " * 4, "", width, len(listed) - EVIDENCE_LINES))
    p = doc["parameters"]
    if p["counted"] is not None:
        lines += ["", "Parameters: {:,} counted (limit {:,}){}; not counted by the rule: {:,} "
                  "buffers, {:,} optimizer state, {:,} EMA.".format(
                      p["counted"], p["limit"], "" if p["complete"] else ", INCOMPLETE",
                      p["buffers"], p["optimizer_state"], p["ema"]),
                  p["rule"]]
    lines.append("")
    return "\n".join(shown(line) for line in lines) + "\n"
