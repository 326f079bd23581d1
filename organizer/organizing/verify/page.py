"""verdict.html: the page the jury reads. The verdict first, then each check with its evidence,
the model files and the counting rule. Built from the shared report blocks."""
import html as html_lib
from typing import Any, Dict, List

from scoring.report import html

COLOURS = {"pass": ("#1a7f37", "#dafbe1"), "fail": ("#cf222e", "#ffebe9"),
           "warn": ("#9a6700", "#fff8c5"), "not-checked": ("#59636e", "#f6f8fa")}
LABELS = {"pass": "pass", "fail": "FAIL", "warn": "warning", "not-checked": "not checked"}


def _esc(text: Any) -> str:
    return html_lib.escape(str(text), quote=True)


def _banner(doc: Dict[str, Any], headline: str) -> str:
    fg, bg = COLOURS["fail" if doc["verdict"] == "invalid" else "pass"]
    return ('<div style="padding:16px 20px;border:1px solid {fg};border-left:8px solid {fg};'
            'border-radius:6px;background:{bg}"><div style="font-size:1.9em;font-weight:700;'
            'color:{fg}">{verdict}</div><div>{text}</div></div>'.format(
                fg=fg, bg=bg, verdict=_esc(doc["verdict"].upper()),
                text=_esc(headline.split(": ", 1)[-1])))


def _status(status: str) -> str:
    fg, bg = COLOURS[status]
    return ('<span style="display:inline-block;min-width:6.5em;text-align:center;padding:1px '
            '8px;border-radius:10px;font-weight:600;color:{};background:{}">{}</span>'.format(
                fg, bg, _esc(LABELS[status])))


def _table(checks: List[Dict[str, Any]]) -> str:
    """The checks at a glance, each status as its coloured label."""
    rows = "".join('<tr><td>{}</td><td style="white-space:nowrap">{}</td><td>{}</td></tr>'.format(
        _esc(c["name"]), _status(c["status"]), _esc(c["summary"])) for c in checks)
    return html.scroll('<table class="counts"><thead><tr><th>Check</th><th>Status</th>'
                       '<th>Result</th></tr></thead><tbody>{}</tbody></table>'.format(rows))


def _check(c: Dict[str, Any]) -> str:
    parts = ['<p>{} <strong>{}</strong></p>'.format(_status(c["status"]), _esc(c["summary"]))]
    if c["evidence"]:
        parts.append('<ul class="notes" style="overflow-wrap:anywhere">{}</ul>'.format(
            "".join("<li>{}</li>".format(_esc(e)) for e in c["evidence"])))
    return "".join(parts)


def render(doc: Dict[str, Any], headline: str) -> str:
    """The page of the document whose verdict line (outputs.headline) is headline."""
    sections = [("", _banner(doc, headline)),
                ("Checks", _table(doc["checks"]))]
    for c in doc["checks"]:
        sections.append(("Check: " + c["name"], _check(c)))
    p = doc["parameters"]
    rows: List[List[Any]] = []
    for f in p["files"]:
        rows.append([f["path"], f["format"], f["status"], f["parameters"], f["buffers"],
                     f["optimizer_state"], f["ema"],
                     # both: a counted file's note (an EMA copy counted) and that it is a
                     # duplicate, counted once
                     "; ".join(n for n in (f["reason"], "same file as " + f["duplicate_of"]
                                           if f["duplicate_of"] else "") if n)])
    if rows:
        sections.append(("Model files", html.counts_table(
            ["File", "Format", "Status", "Parameters", "Buffers", "Optimizer state", "EMA",
             "Note"], rows)))
    sections.append(("Counting rule", html.notes_list([p["rule"]])))
    r = doc["rules"]
    sections.append(("Rules applied", html.counts_table(["Rule", "Value"], [
        ["Parameter limit", r["max_params"]], ["Reproduction tolerance", str(r["tolerance"])],
        ["Package layout", "{}/ with {}/, {}/, {}/, {}".format(
            r["root"], r["results"], r["code"], r["models"], r["report"])],
        ["Task", doc["task"]], ["Scorer version", doc["scorer_version"]]])))
    return html.page("Final submission verification: {}".format(doc["package"]), sections,
                     "For the organizers and the jury. Checks marked 'not checked' are the "
                     "jury's; docs/verify.md lists every rule and message.")
