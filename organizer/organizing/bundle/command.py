"""`bash bundle.sh` (organizer/bundle.py): build the competition bundles and check them. Not one
of organizing/commands/ (the frame's commands): its log and plan print as bundle.sh always has.

    bash bundle.sh --leaderboard best --registration approval --contact EMAIL --queue VHOST
    bash bundle.sh --dev-reference VALIDATION_DIR      # a Development phase before Test

    bash bundle.sh                      # the sample reference, into dist/
    bash bundle.sh --reference DIR      # the organizer's real test labels (packed by default)
    bash bundle.sh --out DIR            # somewhere else than dist/
    bash bundle.sh --start 2027-03-01 --end '2027-05-31 23:59:59'   # the organizer's dates
    bash bundle.sh --competition NAME   # another competition's source (competitions/NAME/)
    bash bundle.sh --competition planetscapes --reference semantic=DIR --reference vqa=DIR2
                                        # a reference per track when the tracks are tasks
    bash bundle.sh --competition planetscapes --reference DIR --reference vqa=DIR2
                                        # DIR: the semantic, instance and panoptic tracks'

By default the definition's own dates are kept (the 2021 challenge, as history) and an
open-ended post-challenge phase is added after the deadline, so the bundle accepts submissions
on the day it is built, on both platforms. A bundle whose challenge starts later is built too
(organizers upload before the start); one whose phases have all ended is refused.

Nothing is written unless every bundle passes the bundle check (check.py), i.e. nothing
a platform would refuse or silently get wrong; with the sample reference, the sample submission
is also dry-run through every bundle as its worker would run it (smoke.py). At the end, a
plan: which zip to upload where, and when each phase takes submissions (plan.py).
See docs/bundle.md.
"""
import argparse
import datetime
import os
import shutil
import sys
import tempfile
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from platforms.dates import shown_date, utcnow

from . import settings as organizer_settings
from .build import build_bundles
from .check import check_all
from .dev_overlap import holds_test_labels
from .merged import can_merge
from .outputs import move_bundles, update_kit_manifest, write_kits
from .plan import plan
from .private_part import PrivateShare, plan_split, write_splits
from .refusal import Refused, same_folder, shown
from .schedule import DEV_DAYS, Development, Schedule, parse_date, with_development
from .settings import Settings
from .smoke import smoke
from .source import Source, find_sources
from .tracks import load_tracks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))   # the repository: organizer/organizing/bundle/command.py
DEFAULT_COMPETITION = "agriculture-vision"
Say = Callable[[str], None]


# --- the command line -------------------------------------------------------------------------

def positive_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("{!r} is not a whole number".format(text)) from None
    if value < 1:
        raise argparse.ArgumentTypeError("{} is no limit: give 1 or more".format(value))
    return value


def private_share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("{!r} is not a number".format(text)) from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError("{} is no share: give a number between 0 and 1 "
                                         "(e.g. 0.5), both excluded".format(text))
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bundle.sh", description="Build and check the Codabench v2 and CodaLab v1.5 "
                                      "competition bundles of every track (the CodaLab ones "
                                      "serve self-hosted CodaLab servers).",
        epilog="Dates are UTC: YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS'. By default the "
               "definition's dates are kept and an open-ended post-challenge phase follows the "
               "deadline, so the bundle accepts submissions today. A bundle that opens later "
               "builds (the plan says when it opens); one whose phases have all ended is "
               "refused. BUNDLE_NOW=DATE in the environment stands for now.")
    add_build_options(p)
    add_platform_options(p)
    add_development_options(p)
    add_date_options(p)
    return p


def add_build_options(p: argparse.ArgumentParser) -> None:
    """What to build, from what, and where."""
    p.add_argument("--competition", metavar="NAME", default=DEFAULT_COMPETITION,
                   help="which competition to build, by the name in its source.json "
                        "(competitions/NAME/source.json; default "
                        "%(default)s)")
    p.add_argument("--reference", metavar="[TRACK=]DIR", action="append",
                   help="the test labels to pack, raw layout (default: the source's sample); "
                        "a competition whose tracks score different tasks takes one per "
                        "track: --reference semantic=DIR --reference vqa=DIR2 (a bare DIR is "
                        "the base track's and that of every track sharing its sample "
                        "reference: Planetscapes' semantic, instance and panoptic tracks read "
                        "one folder, each bundled with its own task)")
    p.add_argument("--out", metavar="DIR", default=os.path.join(ROOT, "dist"),
                   help="where to write the bundles (default: dist/)")
    p.add_argument("--layout", choices=("packed", "raw"), default=None,
                   help="layout of reference_data.zip: 'packed' (one small PNG per image, about "
                        "5x smaller and 3x faster to score; the default with --reference) or "
                        "'raw' (the dataset's own files; the default for the sample)")
    p.add_argument("--smoke", metavar="SUBMISSION",
                   help="dry-run this submission through every bundle (default with the sample "
                        "references: each track's sample submission, all of them together "
                        "for a merged Codabench bundle)")
    p.add_argument("--no-smoke", action="store_true", help="skip the dry run")
    p.add_argument("--kits", metavar="DIR",
                   help="also write each track's starting kit, unpacked, into DIR/<track>/ "
                        "(DIR/merged/ with --merged): what participants download, to try its "
                        "commands; none of them may exist yet")
    p.add_argument("--confidence-columns", action="store_true",
                   help="add leaderboard columns for the ranking score's 95%% confidence "
                        "interval (<key>_ci_low, <key>_ci_high; off by default: the scorer "
                        "writes them, the leaderboard shows them only with this option)")
    p.add_argument("--private-share", metavar="X", type=private_share, default=None,
                   help="keep a share X (0 < X < 1) of the test set's groups (Agriculture-"
                        "Vision: fields) private: the bundles hold the labels of the public "
                        "part only, the leaderboard ranks it, and split.json beside the "
                        "bundles lists both parts for the final ranking (compare.py --split); "
                        "off by default (docs/bundle.md, \"A private part\")")
    p.add_argument("--split-seed", metavar="N", type=int, default=0,
                   help="the seed of the split's rule (default %(default)s)")
    p.add_argument("--merged", action="store_true",
                   help="also build the merged Codabench bundle of a competition whose tracks "
                        "are tasks (one competition running every task on each upload); it "
                        "ranks a submission with a failed task first (docs/bundle.md)")


def add_platform_options(p: argparse.ArgumentParser) -> None:
    platform = p.add_argument_group(
        "what participants meet (defaults: the source's \"settings\"; docs/bundle.md, "
        "\"What the organizer chooses\")")
    platform.add_argument("--leaderboard", choices=organizer_settings.RULES,
                          help="which submission of each participant the leaderboard shows: "
                               "best (Codabench Force_Best), last (Force_Last) or the one "
                               "they choose (Add, Codabench's default); Agriculture-Vision: "
                               "best")
    platform.add_argument("--registration", choices=organizer_settings.REGISTRATIONS,
                          help="approval: every participant waits for the organizers' "
                               "approval; auto: anyone who accepts the terms takes part")
    platform.add_argument("--contact", metavar="EMAIL",
                          help="the organizers' address, shown on Codabench (contact_email)")
    platform.add_argument("--queue", metavar="VHOST",
                          help="run the Codabench bundles' submissions on your own compute "
                               "queue (its vhost, a UUID): your workers, and your phases' "
                               "time limits without the default queue's 600 s cap")


def add_development_options(p: argparse.ArgumentParser) -> None:
    dev = p.add_argument_group(
        "a Development phase before the challenge (docs/bundle.md, \"The Development phase\")")
    dev.add_argument("--dev-reference", metavar="[TRACK=]DIR", action="append",
                     help="validation labels (raw layout): adds a Development phase before "
                          "the first phase, scored against them, so participants try the "
                          "whole upload path without spending test submissions; TRACK=DIR "
                          "per track as for --reference")
    dev.add_argument("--dev-start", metavar="DATE",
                     help="when the Development phase opens (default: {} days before the "
                          "first phase); it closes when that phase opens".format(DEV_DAYS))
    dev.add_argument("--dev-max-submissions", metavar="N", type=positive_count, default=100,
                     help="the Development phase's submissions in total (default %(default)s)")
    dev.add_argument("--dev-max-per-day", metavar="N", type=positive_count, default=5,
                     help="the Development phase's submissions a day (default %(default)s)")


def add_date_options(p: argparse.ArgumentParser) -> None:
    dates = p.add_argument_group("dates (UTC)")
    dates.add_argument("--start", metavar="DATE",
                       help="the first phase starts then; later phases and the deadline move "
                            "by the same amount (default: the definition's)")
    dates.add_argument("--end", metavar="DATE",
                       help="the deadline: the last challenge phase ends then; a bare date "
                            "means the end of that day, 23:59:59 (default: the definition's "
                            "end_date)")
    dates.add_argument("--no-post-challenge", action="store_true",
                       help="do not add the open-ended post-challenge phase after the deadline")
    dates.add_argument("--open-on", metavar="DATE",
                       help="the check requires a phase open at this moment (a bare date: its "
                            "00:00:00; a phase's start counts); default: a phase open now or "
                            "later")
    dates.add_argument("--allow-closed", action="store_true",
                       help="build even if every phase has ended (or none is open on the "
                            "--open-on date)")


# --- what the command line asks, checked before anything is built -----------------------------

class Request(NamedTuple):
    """What to build, every option checked."""
    source: Source
    tracks: List[str]
    schedule: Schedule
    now: datetime.datetime
    open_on: Optional[datetime.datetime]
    settings: Settings
    sample: bool                        # the source's sample references
    references: Dict[str, str]          # per track
    dev_references: Dict[str, str]      # per track, or none
    development: Development
    mergeable: bool


def track_folders(values: List[str], option: str, source: Source, tracks: List[str],
                  parser: argparse.ArgumentParser) -> Dict[str, str]:
    """[TRACK=]DIR values: a bare DIR is the base track's, and that of every track scored on
    the same sample reference (Agriculture-Vision's two tracks; the Planetscapes pixel tracks,
    each bundled with its own task); TRACK=DIR wins over it in any order."""
    folders: Dict[str, str] = {}
    for value in values:
        track, _, folder = value.rpartition("=")
        if not track:
            base_sample = source.data(source.base_track).sample_reference
            for t in tracks:
                if source.data(t).sample_reference == base_sample:
                    folders.setdefault(t, os.path.abspath(folder))
            continue
        if track not in tracks:
            parser.error("{} {}: no track {!r} (tracks: {})".format(
                option, value, track, ", ".join(tracks)))
        folders[track] = os.path.abspath(folder)
    return folders


def output_folder_problem(folder: str) -> str:
    """Why `folder` cannot be (made) a folder to write into ("" if it can)."""
    path = os.path.abspath(folder)
    if os.path.lexists(path) and not os.path.isdir(path):
        return "is a file, not a folder"
    parent = path
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return "{} is a file, not a folder".format(shown(parent))
    if not os.access(parent, os.W_OK | os.X_OK):
        return "{} is not writable".format(shown(parent))
    return ""


def read_request(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Request:
    """Every option checked (parser.error on a bad one, Refused on a broken definition)."""
    try:
        sources = find_sources(ROOT)
        schedule = Schedule(
            start=parse_date(args.start) if args.start else None,
            end=parse_date(args.end, end_of_day=True) if args.end else None,
            post_challenge=not args.no_post_challenge)
        open_on = parse_date(args.open_on) if args.open_on else None
        now = utcnow()
    except ValueError as exc:
        parser.error(str(exc))
    if schedule.start is not None and schedule.end is not None and schedule.end < schedule.start:
        parser.error("--end is before --start ({} < {})".format(
            shown_date(schedule.end), shown_date(schedule.start)))
    # Every output path before anything is built: a file where a folder goes would fail after
    # the build (and after the bundles were moved into place).
    for option, folder in (("--out", args.out), ("--kits", args.kits)):
        problem = output_folder_problem(folder) if folder else ""
        if problem:
            parser.error("{} {}: {}".format(option, folder, problem))
    if args.competition not in sources:
        parser.error("no competition {!r} (known: {})".format(
            args.competition, ", ".join(sorted(sources)) or "none"))
    source = sources[args.competition]
    try:
        tracks = [t.name for t in load_tracks(source)]
        defaults = organizer_settings.from_source(source.settings, source.path)
    except (ValueError, KeyError, TypeError) as exc:
        raise Refused("{}: {}".format(source.name, exc)) from None
    return Request(source, tracks, schedule, now, open_on,
                   chosen_settings(args, parser, defaults), not args.reference,
                   *references_asked(args, parser, source, tracks, schedule),
                   mergeable=can_merge(source, tracks))


def chosen_settings(args: argparse.Namespace, parser: argparse.ArgumentParser,
                    defaults: Settings) -> Settings:
    chosen = {k: v for k, v in (("leaderboard", args.leaderboard),
                                ("registration", args.registration),
                                ("contact", args.contact), ("queue", args.queue))
              if v is not None}
    try:
        return organizer_settings.validated(defaults._replace(**chosen), "bundle.sh")
    except ValueError as exc:
        parser.error(str(exc))


def references_asked(args: argparse.Namespace, parser: argparse.ArgumentParser, source: Source,
                     tracks: List[str], schedule: Schedule
                     ) -> Tuple[Dict[str, str], Dict[str, str], Development]:
    """(every track's reference, the Development phase's references and settings): every
    combination the build cannot honour is a usage error, before anything is built."""
    references = track_folders(args.reference or [], "--reference", source, tracks, parser)
    dev_references = track_folders(args.dev_reference or [], "--dev-reference", source, tracks,
                                   parser)
    if dev_references and sorted(dev_references) != sorted(tracks):
        parser.error("give every track's validation labels: --dev-reference TRACK=DIR for "
                     "{}".format(", ".join(t for t in tracks if t not in dev_references)))
    if args.dev_start and not dev_references:
        parser.error("--dev-start: the Development phase comes with --dev-reference DIR")
    if args.merged and dev_references:
        parser.error("--merged and --dev-reference: the merged bundle runs one task per track "
                     "in every phase; build the per-track bundles for a Development phase")
    try:
        development = Development(parse_date(args.dev_start) if args.dev_start else None,
                                  args.dev_max_submissions, args.dev_max_per_day)
    except ValueError as exc:
        parser.error(str(exc))
    if dev_references:
        try:   # the Development phase's dates, before anything is built
            with_development(load_tracks(source, schedule)[0].v15, development)
        except (ValueError, KeyError, TypeError) as exc:
            parser.error(str(exc))
    if args.merged and not can_merge(source, tracks):
        parser.error("--merged: {} has no merged Codabench form (it needs several tracks and "
                     "\"merged\" in its source.json)".format(source.name))
    taken = [n for n in tracks + (["merged"] if args.merged else [])
             if args.kits and os.path.lexists(os.path.join(args.kits, n))]
    if taken:
        parser.error("--kits {}: {} exists already: remove it or give another folder".format(
            args.kits, os.path.join(args.kits, taken[0])))
    if not args.reference:
        references = {t: source.data(t).sample_reference for t in tracks}
    elif sorted(references) != sorted(tracks):
        parser.error("give every track's reference: --reference TRACK=DIR for {}".format(
            ", ".join(t for t in tracks if t not in references)))
    return references, dev_references, development


# --- building, checking, writing --------------------------------------------------------------

def say_line(line: str) -> None:
    print(line)
    sys.stdout.flush()


def build_check_and_write(args: argparse.Namespace, request: Request, build: str,
                          say: Say) -> None:
    """Every bundle built, checked and dry-run, then (only then) written: Refused otherwise."""
    source, tracks = request.source, request.tracks
    layout = args.layout or ("raw" if request.sample else "packed")
    # The sample submission fits every track whose reference is the source's sample, given
    # or not (--reference reference_data): it is dry-run there.
    samples = all(same_folder(request.references[t], source.data(t).sample_reference)
                  for t in tracks)
    result = build_bundles(build, source, request.schedule, request.references, layout, say,
                           samples, args.merged, args.confidence_columns, request.settings,
                           request.dev_references, request.development,
                           PrivateShare(args.private_share, args.split_seed)
                           if args.private_share is not None else None)
    reports, errors = check_all([b.path for b in result.built], say, request.now,
                                request.open_on, args.allow_closed)
    if errors:
        raise Refused("\n".join(errors))
    say("Checked: {} bundles, nothing CodaLab or Codabench would refuse or mis-read "
        "(organizer/bundle_check.py).".format(len(result.built)))
    if request.open_on is not None:
        say("Open on {} UTC (--open-on): {}.".format(shown_date(request.open_on), ", ".join(
            sorted(set(p for r in reports for p in r.open_phases))) or
            "no phase (--allow-closed)"))
    if args.no_smoke:
        say("Dry run: skipped (--no-smoke).")
    else:
        smoke(result.built, args.smoke, say)
    if request.sample and source.repo_manifest and result.manifest is not None:
        update_kit_manifest(source.repo_manifest, result.manifest, say)
    move_bundles(result.built, args.out, say)
    written = write_splits(result.parts, args.out, say)
    if args.kits:
        write_kits(result.built, args.out, args.kits, say)
    plan(result, reports, request.now, request.mergeable, say)
    plan_split(result.parts, written, say)


def development_leak(request: Request) -> str:
    """Why a --dev-reference holds test labels ("" if none does): a usage error, before
    anything is built."""
    for track in request.tracks:
        dev = request.dev_references.get(track)
        why = holds_test_labels(request.references[track], dev) if dev else None
        if dev and why:
            return ("--dev-reference {}: it holds test labels: {}. The Development phase "
                    "shows every participant's scores on it, so these labels would leak "
                    "through its leaderboard. Give validation labels of other images (or "
                    "questions) than the test set's.".format(shown(dev), why))
    return ""


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        request = read_request(args, parser)
    except Refused as exc:
        sys.stderr.write("bundle.sh: REFUSED, nothing written:\n{}\n".format(exc))
        return 1
    for track in request.tracks:
        for folder in (request.references[track], request.dev_references.get(track)):
            if folder and not os.path.isdir(folder):
                sys.stderr.write("bundle.sh: error: no reference folder {}\n".format(folder))
                return 2
    try:
        leak = development_leak(request)
    except Refused as exc:
        sys.stderr.write("bundle.sh: REFUSED, nothing written:\n{}\n".format(exc))
        return 1
    if leak:
        sys.stderr.write("bundle.sh: error: {}\n".format(leak))
        return 2
    os.makedirs(args.out, exist_ok=True)
    build = tempfile.mkdtemp(prefix=".build-", dir=args.out)
    try:
        build_check_and_write(args, request, build, say_line)
        return 0
    except Refused as exc:
        sys.stderr.write("bundle.sh: REFUSED, nothing written:\n{}\n".format(exc))
        return 1
    finally:
        shutil.rmtree(build, ignore_errors=True)
