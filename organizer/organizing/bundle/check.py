"""Check a competition bundle zip before upload: what CodaLab's and Codabench's unpackers refuse,
and what they accept but silently get wrong. bundle.sh checks every bundle it builds; alone:

    python3 organizer/bundle_check.py dist/*.zip             # a phase open now or later
    python3 organizer/bundle_check.py --open-on 2027-03-01 dist/*.zip    # open at that moment
    python3 organizer/bundle_check.py --allow-closed dist/*.zip          # an archive on purpose

The definition is checked by the model of the platform it is written for (kit/platforms/:
codalab_definition.py for v1.5, codabench_definition.py for v2); here, what crosses the bundle's
parts: its member zips (member_zips.py), the leaderboard against the keys the bundled scoring
program writes, asked from that program itself (its registry's task's score keys, the task from
the reference's config.yaml), never from a copy; the phases open on the check's date; the
dates the pages write. Errors make a bundle refused; warnings and notes (platform differences)
are printed only. Each rule cites the platform behaviour it guards against
(/shared/spec/codalab.md and the platforms' code).
"""
import argparse
import datetime
import os
import re
import zipfile
from typing import Any, Callable, Dict, List, Optional, Tuple

from platforms import codabench_definition, registry
from platforms.dates import Span, as_datetime, shown_date, shown_span, utcnow
from platforms.definition import Bundle, Found, Report
from platforms.model import Platform
from scoring.confidence import SUFFIXES as INTERVAL_SUFFIXES

from .member_zips import (check_hygiene, check_kit_zip, check_program_zip, load_yaml,
                          reference_task, scorer_keys)

# A token of the page template (pages.py) that was never filled in.
TEMPLATE_TOKEN = re.compile(r"\{\{\s*[A-Za-z_]+\s*\}\}")
# A date as pages write it: 2027-03-01, optionally with a time of day (minutes or seconds).
PAGE_DATE = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})(?:[ T](\d{1,2}:\d{2}(?::\d{2})?))?(?![\d-])")


def check_bundle(path: str, now: Optional[datetime.datetime] = None,
                 allow_closed: bool = False,
                 open_on: Optional[datetime.datetime] = None) -> Report:
    """Every rule on one bundle zip. Unless allow_closed, a phase must take submissions at
    `now` (UTC, default: now, or BUNDLE_NOW) or later, or, given open_on, at that moment."""
    report = Report(os.path.basename(path))
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        report.error("bundle", "not a readable zip file ({})".format(exc))
        return report
    with zf:
        bundle = Bundle(zf)
        doc = read_definition(bundle, report)
        if doc is None:
            return report
        model = registry.of_definition(doc)
        report.doc, report.platform = doc, model.name
        found = check_definition(model, doc, bundle, report)
        check_open(model, doc, now or utcnow(), allow_closed, report, open_on)
        check_page_dates(model, bundle, doc, report)
        check_parts(model, doc, bundle, found, report)
    return report


def read_definition(bundle: Bundle, report: Report) -> Optional[Dict[str, Any]]:
    """The bundle's competition.yaml, parsed; None (and the errors) if there is none to read."""
    check_hygiene(bundle.names, "bundle", report)
    # CodaLab takes the first entry of namelist() with ".yaml" in its name, folders included.
    yamls = [n for n in bundle.zf.namelist() if ".yaml" in n]
    if "competition.yaml" not in bundle.name_set:
        report.error("bundle", "no competition.yaml at the root of the bundle")
        return None
    if yamls[0] != "competition.yaml" or len(yamls) > 1:
        report.error("bundle", "other entries with '.yaml' in their name ({}): CodaLab reads "
                               "the first such entry as the competition definition".format(
                                   ", ".join(n for n in yamls if n != "competition.yaml")))
    doc = load_yaml(bundle.read("competition.yaml"), "competition.yaml", report)
    if not isinstance(doc, dict):
        report.error("competition.yaml", "must be a YAML mapping")
        return None
    return doc


def check_definition(model: Platform, doc: Dict[str, Any], bundle: Bundle,
                     report: Report) -> Found:
    """The definition by its platform's model; a v1.5 one also as Codabench's importer of v1.5
    bundles would read it."""
    version = doc.get("version")
    if model.version is None and version is not None:
        report.error("competition.yaml", "version {!r}: write `version: 2` for Codabench "
                                         "v2, or no version for v1.5".format(version))
    found = model.check_definition(doc, bundle, report)
    if model.version is None:
        check_dates_of_codabench_import(doc, report)
    return found


def check_parts(model: Platform, doc: Dict[str, Any], bundle: Bundle, found: Found,
                report: Report) -> None:
    """The member zips the definition names, and its leaderboard against the keys the bundled
    programs write."""
    programs = sorted(set(name for _, name in found.programs))
    references = sorted(set(name for _, name in found.references))
    for name in programs:
        check_program_zip(bundle.read_zip(name), name, report)
    tasks = {}
    for name in references:
        with bundle.open_zip(name) as member:
            tasks[name] = reference_task(member, name, report)
    for name in sorted(set(n for _, n in found.kits)):
        check_kit_zip(bundle.read(name), name, report)
    if found.columns or programs:
        keys, scorer = expected_keys(bundle, model.scoring_runs(doc), programs, tasks, report)
        check_columns(found.columns, found.primary, keys, scorer, "leaderboard", report)


# --- dates ---------------------------------------------------------------------------------

def check_open(model: Platform, doc: Dict[str, Any], now: datetime.datetime,
               allow_closed: bool, report: Report,
               open_on: Optional[datetime.datetime] = None) -> None:
    """A bundle must take submissions now or later: one whose phases have all ended accepts
    nothing after upload. A bundle uploaded before its challenge starts is the usual case: it
    passes, and the report says when it opens. With open_on, a phase must be open at that
    moment instead (a phase opening at its start second counts, on both platforms)."""
    at = open_on or now
    report.open_phases = [model.phase_label(p) for p in model.open_phases(doc, at)]
    later = None if report.open_phases else model.opens_later(doc, at)
    report.opens_later = (model.phase_label(later[0]), later[1]) if later else None
    if report.open_phases or allow_closed:
        return
    rule = "Codabench marks no phase Current" if model.version is not None else \
        "CodaLab finds no active phase"
    if open_on is not None:
        report.error("phases", "no phase accepts submissions on {} UTC ({}; --open-on){}. Give "
                               "a date inside a phase, or other dates (bundle.sh --start/--end)"
                     .format(shown_date(open_on), rule, ": {} opens on {}".format(
                         report.opens_later[0], shown_date(report.opens_later[1]))
                         if report.opens_later else ""))
    elif report.opens_later is None:
        report.error("phases", "no phase accepts submissions on {} UTC or later ({}): every "
                               "phase has ended, so every upload would be refused. Give the "
                               "dates (bundle.sh --start/--end), keep the post-challenge phase "
                               "(no --no-post-challenge), or say it is intended "
                               "(--allow-closed)".format(shown_date(now), rule))


def check_dates_of_codabench_import(doc: Dict[str, Any], report: Report) -> None:
    """A v1.5 bundle imported into Codabench: its importer ends each phase a day before the
    next one starts (unpackers/v1.py, V15Unpacker._unpack_phases), CodaLab the second before."""
    early = codabench_definition.v15_import_early_ends(doc)
    if early:
        report.note("phases", "imported into Codabench, this CodaLab v1.5 bundle ends each phase "
                              "one day early (Codabench's v1.5 importer ends a phase at the "
                              "next phase's start minus one day): {}. Upload the Codabench v2 "
                              "bundle to Codabench".format(
                                  codabench_definition.early_end_text(early)))


def stray_dates(text: str, phases: List[Span]) -> List[str]:
    """The dates written in a page that are no phase's start or last second (a bare date: no
    such day; with a time: not that moment, to the precision written), in order, once each."""
    moments = [m for s in phases for m in (s.start, s.last) if m is not None]
    days = {m.date() for m in moments}
    stray: List[str] = []
    for match in PAGE_DATE.finditer(text):
        day, clock = match.group(1), match.group(2)
        when = as_datetime(day + (" " + clock if clock else ""))
        if when is None:
            ok = False
        elif clock is None:
            ok = when.date() in days
        elif clock.count(":") == 1:
            ok = when in {m.replace(second=0) for m in moments}
        else:
            ok = when in moments
        if not ok and match.group(0) not in stray:
            stray.append(match.group(0))
    return stray


def check_page_dates(model: Platform, bundle: Bundle, doc: Dict[str, Any],
                     report: Report) -> None:
    """Pages must give the phases' dates: a date written in a page that is no phase's start or
    end tells participants a wrong timeline (e.g. a page written for other dates)."""
    phases = model.spans(doc)
    seen = set()
    for where, path in model.pages(doc):
        if not (isinstance(path, str) and bundle.has(path)) or path in seen:
            continue  # a missing page is reported with the pages
        seen.add(path)
        text = bundle.read(path).decode("utf-8", "replace")
        tokens = sorted(set(TEMPLATE_TOKEN.findall(text)))
        if tokens:
            report.error(where, "{} holds the template tokens {}, never filled in: build the "
                                "bundle with bundle.sh".format(path, ", ".join(tokens)))
        stray = stray_dates(text, phases)
        if stray:
            report.error(where, "{} gives the dates {}, which are no phase's start or end "
                                "(phases: {}): participants would read a wrong timeline. "
                                "Correct the page (bundle.sh writes the phases' dates into "
                                "{{{{timeline}}}} and {{{{challenge_period}}}})".format(
                                    path, ", ".join(stray),
                                    "; ".join(shown_span(s) for s in phases)))


# --- the leaderboard against the program ---------------------------------------------------

def check_columns(columns: List[Dict[str, Any]], primary: Optional[str],
                  expected: Optional[List[str]], scorer: str, where: str,
                  report: Report) -> None:
    """Leaderboard columns against the keys the scoring program writes. A score key without a
    column is dropped silently; a column without a score key shows n/a forever."""
    keys = [c["key"] for c in columns]
    if expected is None:
        report.error(where, "cannot compare the leaderboard with the scoring program: " + scorer)
        return
    missing = [k for k in expected if k not in keys]
    # The scorer also writes its ranking score's confidence interval (<key>_ci_low/_ci_high):
    # columns for them are optional (bundle.sh --confidence-columns).
    unknown = [k for k in keys if k not in expected and not (
        k.endswith(INTERVAL_SUFFIXES) and k.rsplit("_ci_", 1)[0] in expected)]
    if missing:
        report.error(where, "no column for the score keys {} that the scoring program writes "
                            "(they would be dropped silently)".format(", ".join(missing)))
    if unknown:
        report.error(where, "columns {} are not keys the scoring program writes ({}); they would "
                            "show n/a forever".format(", ".join(unknown), ", ".join(expected)))
    if expected and primary != expected[0]:
        report.error(where, "the leaderboard is ranked by {!r}, not by the scoring program's "
                            "first key {!r}".format(primary, expected[0]))
    for c in columns:
        if c["key"] not in unknown and c.get("sort") != "desc":
            report.error(where, "column {} sorts {!r}: the scores (IoU, accuracy) are better "
                                "when higher, sort desc".format(c["key"], c.get("sort")))


def expected_keys(bundle: Bundle, runs: List[List[Tuple[Any, Any]]], programs: List[str],
                  tasks: Dict[str, Tuple[str, str]],
                  report: Report) -> Tuple[Optional[List[str]], str]:
    """Every key the bundle's scoring runs write, in order (the first run's ranking key
    first), asked from each bundled program with its reference's task and config; an error if
    two tasks of one phase write the same key (one column cannot hold both)."""
    if not programs:
        return None, "no scoring program zip in the bundle"
    keys: List[str] = []
    scorers: List[str] = []
    for run in runs:
        in_phase: List[str] = []
        for program, reference in run:
            if program not in programs:
                continue  # reported with the phase or task that names it
            task, config = tasks.get(reference, ("", ""))
            found, scorer = scorer_keys(bundle.read_zip(program), task, config)
            if found is None:
                return None, scorer
            shared = [k for k in found if k in in_phase]
            if shared:
                report.error("leaderboard", "two tasks of one phase write the keys {}: a "
                                            "leaderboard column holds one of them".format(
                                                ", ".join(shared)))
            in_phase += found
            keys += [k for k in found if k not in keys]
            if scorer not in scorers:
                scorers.append(scorer)
    return keys, ", ".join(scorers)


# --- the reports ---------------------------------------------------------------------------

def open_state(report: Report) -> str:
    """What the report says of submissions: the phases open on the check's date, or the first
    to open later."""
    if report.open_phases:
        return "open for submissions: " + ", ".join(report.open_phases)
    if report.opens_later:
        return "no phase open yet: {} opens on {} UTC".format(
            report.opens_later[0], shown_date(report.opens_later[1]))
    return ""


def check_all(paths: List[str], say: Callable[[str], None], now: datetime.datetime,
              open_on: Optional[datetime.datetime] = None,
              allow_closed: bool = False) -> Tuple[List[Report], List[str]]:
    """Every bundle checked: (the reports, every error's line). Warnings are said; notes
    (platform differences, e.g. a v1.5 bundle imported into Codabench) are left to the
    caller."""
    errors: List[str] = []
    reports = []
    for path in paths:
        report = check_bundle(path, now=now, allow_closed=allow_closed, open_on=open_on)
        for problem in report.warnings:
            say(report.line(problem))
        errors += [report.line(problem) for problem in report.errors]
        reports.append(report)
    return reports, errors


# --- the command line (organizer/bundle_check.py) ------------------------------------------

def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="bundle_check.py",
                                     description="Check competition bundle zips (CodaLab v1.5, "
                                                 "Codabench v2) before upload.",
                                     epilog="Dates are UTC; BUNDLE_NOW=DATE in the environment "
                                            "stands for now.")
    parser.add_argument("bundles", nargs="+", metavar="BUNDLE.zip")
    parser.add_argument("--open-on", metavar="DATE",
                        help="require a phase open on this date, UTC (default: a phase open now "
                             "or later)")
    parser.add_argument("--allow-closed", action="store_true",
                        help="do not require a phase open for submissions")
    args = parser.parse_args(argv)
    open_on = None
    if args.open_on:
        open_on = as_datetime(args.open_on)
        if open_on is None:
            parser.error("--open-on {!r}: give YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS'".format(
                args.open_on))
    try:
        now = utcnow()
    except ValueError as exc:
        parser.error(str(exc))
    failed = 0
    for path in args.bundles:
        report = check_bundle(path, now=now, allow_closed=args.allow_closed, open_on=open_on)
        for line in report.lines():
            print(line)
        if report.errors:
            failed += 1
        else:
            state = open_state(report)
            print("{}: OK ({} warning{}){}".format(
                report.name, len(report.warnings), "" if len(report.warnings) == 1 else "s",
                "; " + state if state else ""))
    return 1 if failed else 0
