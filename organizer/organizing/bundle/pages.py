"""The dated and counted parts of a competition: one template for every competition and track.

A competition's pages (html), its yaml's texts (title, descriptions) and its bundle names'
prefix may hold these tokens; build.py fills them in for each bundle from its phases (with the
organizer's dates) and from the reference it bundles, so no page tells participants another
edition's timeline or test set:

    {{year}}              the challenge's year: the deadline's (the first phase's start's
                          without a deadline); "Planetscapes 2027" starts in November 2026
    {{test_set}}          the bundled test set: "19,708 images", "12 images (Semantic
                          labeling) and 300 questions (VQA)" for a bundle running two tasks
    {{timeline}}          an HTML list: when each phase opens, the deadline, the open-ended
                          phase after it
    {{challenge_period}}  "from 2027-03-01 00:00 UTC to the deadline, 2027-05-31 23:59:59 UTC"
    {{deadline}}          "2027-05-31 23:59:59 UTC"
    {{limits}}            each phase's submission limits and time limit, as the platforms apply
                          them
    {{leaderboard_rule}}  which submission of each participant the leaderboard shows
                          (bundle.sh --leaderboard)
    {{fact_sheet}}        the questions Codabench asks at every submission (the source's
                          fact sheet), an HTML paragraph and list; empty without one
                          and in a CodaLab bundle's pages (CodaLab asks none)
    {{max_params}}        the final submission's parameter limit, as the reference's
                          config.yaml states it (`final_submission: max_params`, 150M by
                          default): "150M", or "123,456,789" when not whole millions
    {{scored_part}}       what a submission is scored on: "the whole test set", or with
                          bundle.sh --private-share "the public part of the test set (20 of 40
                          images (fields 5 of 10)); the final ranking uses the private part..."
    {{scored_images}}     what a score is computed over, inside a sentence: "all test images",
                          or with bundle.sh --private-share "all images of the test set's
                          public part"

Any other {{token}} is refused (a typo would reach participants); the bundle check refuses a
page with a token left in it, or with a date that is no phase's start or end.
"""
import copy
import datetime
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from platforms.codabench_definition import QUEUE_CAP
from platforms.dates import Span

TOKEN = re.compile(r"\{\{\s*([A-Za-z_]+)\s*\}\}")
TOKENS = ("year", "test_set", "timeline", "challenge_period", "deadline", "limits",
          "leaderboard_rule", "fact_sheet", "max_params", "scored_part", "scored_images")


class TestSet(NamedTuple):
    units: int      # in the bundled reference
    noun: str       # "images", "questions"
    task: str       # the task's name, shown when a bundle runs several
    part: str = ""  # --private-share: "public part: N of M images (fields F of G)"


class Limits(NamedTuple):
    phase: str
    per_day: Optional[int]
    total: Optional[int]
    seconds: Optional[int]


class PageContext(NamedTuple):
    phases: List[Span]                      # the spans of the bundle's v1.5 yaml (CodaLab's)
    deadline: Optional[datetime.datetime]   # phases starting after it are post-challenge
    test_sets: List[TestSet]
    limits: List[Limits] = []
    rule: str = ""                          # the leaderboard rule, as participants are told
    fact_sheet: List[str] = []              # one line per question (settings.py)
    queue: bool = False                     # the organizer's own Codabench queue: no cap
    max_params: int = 150000000             # the final submission's limit (verify.py's rules)


def year_of(phases: List[Span], deadline: Optional[datetime.datetime]) -> int:
    """The challenge's year: its deadline's (a challenge is named by the year it ends in, the
    year of the conference it reports to), else its first phase's start's."""
    if deadline is not None:
        return deadline.year
    starts = [s.start for s in phases if s.start is not None]
    if not starts:
        raise ValueError("no phase has a start date: the challenge has no year")
    return min(starts).year


def moment(when: datetime.datetime) -> str:
    """A date as pages show it: to the minute, or to the second when it has seconds."""
    return when.strftime("%Y-%m-%d %H:%M:%S" if when.second else "%Y-%m-%d %H:%M") + " UTC"


def timeline(ctx: PageContext) -> str:
    """When each phase opens, in order, with the deadline after the last challenge phase."""
    phases = [s for s in ctx.phases if s.start is not None]

    def challenge(span: Span) -> bool:
        return ctx.deadline is None or (span.start is not None and span.start <= ctx.deadline)

    items = []
    for i, span in enumerate(phases):
        text = "{}: the {} phase opens".format(moment(span.start), span.label)  # type: ignore
        if i and challenge(span) and challenge(phases[i - 1]):
            text += " (the {} phase closes)".format(phases[i - 1].label)
        if i + 1 == len(phases):
            if span.last is None:
                text += ", with no end"
            elif span.last != ctx.deadline:
                text += "; it closes {}".format(moment(span.last))
        items.append(text + ".")
        if ctx.deadline is not None and challenge(span) and (
                i + 1 == len(phases) or not challenge(phases[i + 1])):
            items.append("{}: final submission deadline; the {} phase closes and its ranking "
                         "is final.".format(moment(ctx.deadline), span.label)
                         if not split(ctx) else
                         "{}: final submission deadline; the {} phase closes. Its leaderboard "
                         "ranks the public part of the test set; the final ranking uses the "
                         "private part, scored by the organizers after the deadline.".format(
                             moment(ctx.deadline), span.label))
    return "<ul>\n" + "".join("  <li>{}</li>\n".format(i) for i in items) + "</ul>"


def challenge_period(ctx: PageContext) -> str:
    starts = [s.start for s in ctx.phases if s.start is not None]
    first = moment(min(starts)) if starts else "?"
    if ctx.deadline is None:
        return "from {}, with no deadline".format(first)
    return "from {} to the deadline, {}".format(first, moment(ctx.deadline))


def test_set(ctx: PageContext) -> str:
    parts = ["{:,} {}".format(t.units, t.noun) + (
        " ({}; the final ranking uses the private part, scored by the organizers after the "
        "deadline)".format(t.part) if t.part else "") for t in ctx.test_sets]
    if len(ctx.test_sets) > 1:
        parts = ["{} ({})".format(p, t.task) for p, t in zip(parts, ctx.test_sets)]
    return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 2 else parts)


def _names(labels: List[str]) -> str:
    return " and ".join([", ".join(labels[:-1]), labels[-1]] if len(labels) > 2 else labels)


def limits(ctx: PageContext) -> str:
    """Each phase's limits, phases with the same ones together (each phase counts its own
    submissions on both platforms), and the time limit each platform applies."""
    groups: List[Tuple[Tuple[Optional[int], Optional[int]], List[str]]] = []
    for lim in ctx.limits:
        for key, names in groups:
            if key == (lim.per_day, lim.total):
                names.append(lim.phase)
                break
        else:
            groups.append(((lim.per_day, lim.total), [lim.phase]))
    parts: List[str] = []
    unset: List[str] = []
    for (per_day, total), names in groups:
        counts = [c for c in ("{} submissions a day".format(per_day) if per_day else "",
                              "{} in total".format(total) if total else "") if c]
        if not counts:
            # Neither given: each platform's own defaults (the bundle check warns: they differ).
            unset += names
            continue
        parts.append("<strong>{}</strong> in the {} phase{}".format(
            " and ".join(counts), _names(names),
            "s (each counts its own)" if len(names) > 1 else ""))
    seconds = sorted(set(lim.seconds for lim in ctx.limits if lim.seconds))
    text = "At most " + "; ".join(parts) + "." if parts else ""
    if unset:
        text = (text + " " if text else "") + "The {} phase{}: the platform's default " \
            "limits.".format(_names(unset), "s" if len(unset) > 1 else "")
    if seconds:
        longest = seconds[-1]
        if longest > QUEUE_CAP and not ctx.queue:
            text += (" A submission's scoring may take {} s on CodaLab, {} s on Codabench "
                     "(its default queue's cap).".format(longest, QUEUE_CAP))
        else:
            text += " A submission's scoring may take up to {} s.".format(longest)
    return text


def split(ctx: PageContext) -> bool:
    """bundle.sh --private-share: the bundled reference is the test set's public part."""
    return any(t.part for t in ctx.test_sets)


def scored_part(ctx: PageContext) -> str:
    if not split(ctx):
        return "the whole test set"
    return "the public part of the test set ({}); the final ranking uses the private part, " \
        "scored by the organizers after the deadline".format(
            "; ".join(t.part[len("public part: "):] if t.part.startswith("public part: ")
                      else t.part for t in ctx.test_sets if t.part))


def scored_images(ctx: PageContext) -> str:
    return "all images of the test set's public part" if split(ctx) else "all test images"


def fact_sheet(ctx: PageContext) -> str:
    if not ctx.fact_sheet:
        return ""
    return ("<p>With every submission, Codabench asks:</p>\n<ul>\n" +
            "".join("  <li>{}</li>\n".format(item) for item in ctx.fact_sheet) + "</ul>")


def values(ctx: PageContext) -> Dict[str, str]:
    rule = ctx.rule[:1].upper() + ctx.rule[1:] + "." if ctx.rule else ""
    return {"year": str(year_of(ctx.phases, ctx.deadline)), "test_set": test_set(ctx),
            "timeline": timeline(ctx), "challenge_period": challenge_period(ctx),
            "deadline": moment(ctx.deadline) if ctx.deadline else "none",
            "limits": limits(ctx), "leaderboard_rule": rule, "fact_sheet": fact_sheet(ctx),
            "max_params": millions(ctx.max_params), "scored_part": scored_part(ctx),
            "scored_images": scored_images(ctx)}


def millions(n: int) -> str:
    """150000000 -> '150M' (as the challenge writes it); other counts in full."""
    return "{:,}M".format(n // 10 ** 6) if n % 10 ** 6 == 0 else "{:,}".format(n)


def render(text: str, ctx: PageContext, where: str) -> str:
    """text with its tokens filled in; ValueError naming `where` for an unknown token."""
    unknown = sorted(set(t for t in TOKEN.findall(text) if t not in TOKENS))
    if unknown:
        raise ValueError("{}: unknown template token{} {} (known: {})".format(
            where, "s" if len(unknown) > 1 else "", ", ".join("{{" + t + "}}" for t in unknown),
            ", ".join("{{" + t + "}}" for t in TOKENS)))
    if not TOKEN.search(text):
        return text
    filled = values(ctx)
    return TOKEN.sub(lambda m: filled[m.group(1)], text)


def render_doc(doc: Any, ctx: PageContext, where: str) -> Any:
    """A parsed yaml with every string filled in (title, descriptions...). A mapping shared by
    several keys (a YAML alias: the columns' `leaderboard: *RESULTS`) stays shared, so the yaml
    is dumped with the same anchors."""
    memo: Dict[int, Any] = {}

    def fill(value: Any) -> Any:
        if id(value) in memo:
            return memo[id(value)]
        if isinstance(value, dict):
            out: Any = {}
            memo[id(value)] = out
            out.update((k, fill(v)) for k, v in value.items())
        elif isinstance(value, list):
            out = memo[id(value)] = []
            out.extend(fill(v) for v in value)
        elif isinstance(value, str):
            out = render(value, ctx, where)
        else:
            out = copy.deepcopy(value)
        return out

    return fill(doc)


def context(phases: List[Span], deadline: Optional[datetime.datetime],
            test_sets: List[Tuple], limits: Optional[List[Limits]] = None,
            rule: str = "", fact_sheet: Optional[List[str]] = None,
            queue: bool = False, max_params: int = 150000000) -> PageContext:
    return PageContext(phases, deadline, [TestSet(*t) for t in test_sets], limits or [], rule,
                       fact_sheet or [], queue, max_params)
