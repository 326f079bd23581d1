#!/usr/bin/env python3
"""Build the competition bundles: for every track, a CodaLab v1.5 zip and a Codabench v2 zip.

    bash bundle.sh                      # the sample reference, into dist/
    bash bundle.sh --reference DIR      # the organizer's real test labels (packed by default)
    bash bundle.sh --out DIR            # somewhere else than dist/
    bash bundle.sh --start 2027-03-01 --end '2027-05-31 23:59:59'   # the organizer's dates
    bash bundle.sh --competition NAME   # another competition's source (competitions/NAME/)

By default the definition's own dates are kept (the 2021 challenge, as history) and an
open-ended post-challenge phase is added after the deadline, so the bundle accepts submissions
on the day it is built, on both platforms.

Each bundle holds the track's competition.yaml, its pages and logo, scoring_program.zip (the
program's files at the zip's root), reference_data.zip and starting_kit.zip. The same tree gives
byte-identical zips (tools/bundle_zip.py). Nothing is written unless every bundle passes
tools/bundle_check.py, i.e. nothing a platform would refuse or silently get wrong; with the sample
reference, the sample submission is also dry-run through every bundle as its worker would run it.
See docs/bundle.md.
"""
import argparse
import contextlib
import datetime
import io
import json
import os
import shutil
import sys
import tempfile
from typing import List, NamedTuple, Optional, Tuple

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
sys.path.insert(0, os.path.join(ROOT, "scoring_program"))

import bundle_check  # noqa: E402
import bundle_yaml  # noqa: E402
import dry_run  # noqa: E402
from bundle_zip import collect, write_zip  # noqa: E402

DEFAULT_COMPETITION = "agriculture-vision"
KIT_DIR = os.path.join(ROOT, "starting_kit")
KIT_MANIFEST = os.path.join(KIT_DIR, "manifest.json")
# What participants download, besides the generated manifest.json and phase.json, a copy of the
# scoring program (so the kit's checks are the scorer's) and the sample submission.
KIT_FILES = [("README.md", os.path.join(KIT_DIR, "README.md")),
             ("check_submission.py", os.path.join(KIT_DIR, "check_submission.py")),
             ("make_submission.py", os.path.join(KIT_DIR, "make_submission.py")),
             ("find_scoring.py", os.path.join(KIT_DIR, "find_scoring.py")),
             ("dry_run.py", os.path.join(TOOLS, "dry_run.py"))]
# images/ holds the RGB and NIR inputs, not labels: the scorer never reads them, and for the real
# test set they would add gigabytes to every bundle.
REFERENCE_EXCLUDE = ("images",)
PLATFORMS = (("codalab", "CodaLab v1.5"), ("codabench", "Codabench v2"))


class Refused(Exception):
    """A bundle would be refused (or mis-read) by a platform: nothing is written."""


class Built(NamedTuple):
    name: str       # file name under the output folder
    path: str       # where it was built
    what: str       # e.g. "CodaLab v1.5, supervised track"
    platform: str   # "codalab" or "codabench"


def shown(path: str) -> str:
    """A path as the user would type it: relative under the current folder, else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def human(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return "{:.0f} {}".format(size, unit) if unit == "B" else "{:.1f} {}".format(size, unit)
        size /= 1024.0
    return str(size)


# --- the reference --------------------------------------------------------------------------

def reference_entries(task, root: str, layout: str, build: str, say) -> List[Tuple[str, str]]:
    """Files of reference_data.zip: the raw layout as it is, or packed by the scoring program's
    own packer (docs/packed-format.md), which checks every layer on the way."""
    if layout == "raw":
        return collect(root, exclude_top=REFERENCE_EXCLUDE)
    from scoring import engine
    from scoring.problems import ScoringError
    out = os.path.join(build, "packed-reference")
    total = len(task.open_reference(root).ids)
    say("Packing the reference ({:,} images)...".format(total))
    try:
        task.pack(root, out, engine.default_workers(total),
                  engine.Progress(total, sys.stdout, 10.0, "packed"))
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None
    return collect(out)


def open_reference(ref_dir: str):
    """(task, reference) as the scorer opens them; Refused with the scorer's own message if the
    reference is broken: better now than on the first participant's submission."""
    from scoring import cli
    from scoring.problems import ScoringError
    from scoring.tasks import DEFAULT, TASKS
    try:
        config = cli.read_config(ref_dir)
        name = config.get("task", DEFAULT)
        if name not in TASKS:
            raise Refused("{}/config.yaml names an unknown task {!r}".format(ref_dir, name))
        task = TASKS[name]
        reference = task.open_reference(ref_dir, task.configure(None, config))
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None
    if getattr(reference, "layout", "raw") != "raw":
        # The manifest reads image sizes from boundaries/; packing is bundle.sh's job.
        raise Refused("{} is a {} reference: give the raw layout (boundaries/, masks/, labels/)"
                      .format(ref_dir, reference.layout))
    return TASKS[name], reference


def manifest_bytes(task, reference) -> bytes:
    """Test image names and sizes (no labels) for the kit's check_submission.py."""
    manifest = task.make_manifest(reference)
    # One image a line: readable, diffable, and about 50 bytes an image for the real test set.
    head = json.dumps({k: v for k, v in manifest.items() if k != "images"}, sort_keys=True)
    images = ",\n".join(" {}: {}".format(json.dumps(i), json.dumps(manifest["images"][i]))
                        for i in sorted(manifest["images"]))
    return (head[:-1] + ', "images": {\n' + images + "\n}}\n").encode("utf-8")


# --- building -------------------------------------------------------------------------------

def kit_entries(program_dir: str, sample_submission: Optional[str]) -> List[Tuple[str, str]]:
    entries = list(KIT_FILES)
    entries += collect(program_dir, prefix="scoring_program/")
    if sample_submission and os.path.isdir(sample_submission):
        entries += collect(sample_submission, prefix="sample_submission/")
    return entries


def phase_json(track: bundle_yaml.Track) -> bytes:
    info = dry_run.phase_info_from_yaml(track.v15)
    kept = {k: info[k] for k in ("title", "phase", "execution_time_limit", "columns",
                                 "enable_detailed_results")}
    return (json.dumps(kept, indent=1, sort_keys=True) + "\n").encode("utf-8")


def build_all(build: str, source: bundle_yaml.Source, schedule: bundle_yaml.Schedule,
              reference: str, layout: str, say) -> Tuple[List[Built], bytes]:
    try:
        tracks = bundle_yaml.load_tracks(source, schedule)
    except (ValueError, KeyError, TypeError) as exc:
        raise Refused("{}: {}".format(source.name, exc)) from None
    task, ref = open_reference(reference)
    say("Reference: {} ({:,} images, task {}), bundled in the {} layout".format(
        shown(reference), len(ref.ids), task.name, layout))
    manifest = manifest_bytes(task, ref)

    program_zip = os.path.join(build, "scoring_program.zip")
    reference_zip = os.path.join(build, "reference_data.zip")
    size = write_zip(program_zip, collect(source.scoring_program))
    say("  scoring_program.zip   {:>9}".format(human(size)))
    size = write_zip(reference_zip, reference_entries(task, ref.root, layout, build, say))
    say("  reference_data.zip    {:>9}".format(human(size)))

    built = []
    for track in tracks:
        kit_zip = os.path.join(build, "starting_kit-{}.zip".format(track.name))
        size = write_zip(kit_zip, kit_entries(source.scoring_program, source.sample_submission),
                         {"manifest.json": manifest, "phase.json": phase_json(track)})
        say("  starting_kit.zip      {:>9}  ({} track)".format(human(size), track.name))
        shared = [("scoring_program.zip", program_zip), ("reference_data.zip", reference_zip),
                  ("starting_kit.zip", kit_zip)]
        shared += [(p, os.path.join(source.root, p))
                   for p in bundle_yaml.files_referenced(track.v15)]
        missing = [p for p, src in shared if not os.path.isfile(src)]
        if missing:
            raise Refused("{} track: competition.yaml refers to files that do not exist: {}"
                          .format(track.name, ", ".join(missing)))
        texts = {"codalab": track.v15_text, "codabench": bundle_yaml.v2_text(track)}
        for platform, label in PLATFORMS:
            name = "{}-{}-{}.zip".format(source.prefix, track.name, platform)
            path = os.path.join(build, name)
            write_zip(path, shared, {"competition.yaml": texts[platform].encode("utf-8")})
            built.append(Built(name, path, "{}, {} track".format(label, track.name), platform))
    return built, manifest


def check_all(built: List[Built], say, now: Optional[datetime.datetime] = None,
              allow_closed: bool = False) -> None:
    errors = []  # type: List[str]
    now = now or bundle_check.utcnow()
    open_phases = set()
    for b in built:
        report = bundle_check.check_bundle(b.path, now=now, allow_closed=allow_closed)
        for problem in report.warnings:
            say(report.line(problem))
        errors += [report.line(problem) for problem in report.errors]
        open_phases.update(report.open_phases)
    if errors:
        raise Refused("\n".join(errors))
    say("Checked: {} bundles, nothing CodaLab or Codabench would refuse or mis-read "
        "(tools/bundle_check.py).".format(len(built)))
    say("Open for submissions on {} UTC: {}.".format(
        bundle_check.shown_date(now), ", ".join(sorted(open_phases)) or
        "no phase (--allow-closed)"))


def smoke(built: List[Built], submission: str, say) -> None:
    """Dry-run the submission through every bundle, as each bundle's platform would."""
    results, notes = [], []  # type: List[str], List[str]
    for b in built:
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            code = dry_run.main([submission, "--bundle", b.path, "--quiet"])
        if code != dry_run.EXIT_OK:
            raise Refused("{}: the dry run of {} did not score (exit {}):\n{}".format(
                b.name, shown(submission), code, captured.getvalue()))
        results.append(b.name)
        notes += [line for line in captured.getvalue().splitlines()
                  if "Detailed results on CodaLab v1: AT RISK" in line and line not in notes]
    say("Dry run: {} scores on all {} bundles, every leaderboard column filled.".format(
        shown(submission), len(results)))
    for line in notes:  # a scorer's timing, not the bundle's: said, not refused
        say("WARNING (scoring program): " + line.strip())


def update_kit_manifest(manifest: bytes, say) -> None:
    """Keep the repository's starting_kit/manifest.json equal to the sample's (the kit's tools
    use it when run from the repository)."""
    current = None
    if os.path.isfile(KIT_MANIFEST):
        with open(KIT_MANIFEST, "rb") as f:
            current = f.read()
    if current != manifest:
        with open(KIT_MANIFEST, "wb") as f:
            f.write(manifest)
        say("Updated {} from the sample reference.".format(shown(KIT_MANIFEST)))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bundle.sh", description="Build and check the CodaLab v1.5 and Codabench v2 "
                                      "competition bundles of every track.",
        epilog="Dates are UTC: YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS'. By default the "
               "definition's dates are kept and an open-ended post-challenge phase follows the "
               "deadline, so the bundle accepts submissions today.")
    p.add_argument("--competition", metavar="NAME", default=DEFAULT_COMPETITION,
                   help="which competition to build, by the name in its source.json "
                        "(competition/source.json, competitions/NAME/source.json; default "
                        "%(default)s)")
    p.add_argument("--reference", metavar="DIR",
                   help="the test labels to pack, raw layout (default: the sample in "
                        "reference_data/)")
    p.add_argument("--out", metavar="DIR", default=os.path.join(ROOT, "dist"),
                   help="where to write the bundles (default: dist/)")
    p.add_argument("--layout", choices=("packed", "raw"), default=None,
                   help="layout of reference_data.zip: 'packed' (one small PNG per image, about "
                        "5x smaller and 3x faster to score; the default with --reference) or "
                        "'raw' (the dataset's own files; the default for the sample)")
    p.add_argument("--smoke", metavar="SUBMISSION",
                   help="dry-run this submission through every bundle (default with the sample "
                        "reference: the sample submission)")
    p.add_argument("--no-smoke", action="store_true", help="skip the dry run")
    dates = p.add_argument_group("dates (UTC)")
    dates.add_argument("--start", metavar="DATE",
                       help="the first phase starts then; later phases move by the same amount "
                            "(default: the definition's)")
    dates.add_argument("--end", metavar="DATE",
                       help="the deadline: the last challenge phase ends then; a bare date "
                            "means the end of that day, 23:59:59 (default: the definition's "
                            "end_date)")
    dates.add_argument("--no-post-challenge", action="store_true",
                       help="do not add the open-ended post-challenge phase after the deadline")
    dates.add_argument("--open-on", metavar="DATE",
                       help="the check requires a phase open on this date (default: now); for "
                            "a bundle built before its challenge starts")
    dates.add_argument("--allow-closed", action="store_true",
                       help="build even if no phase accepts submissions on that date")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        sources = bundle_yaml.find_sources(ROOT)
        schedule = bundle_yaml.Schedule(
            start=bundle_yaml.parse_date(args.start) if args.start else None,
            end=bundle_yaml.parse_date(args.end, end_of_day=True) if args.end else None,
            post_challenge=not args.no_post_challenge)
        open_on = bundle_yaml.parse_date(args.open_on) if args.open_on else None
    except ValueError as exc:
        parser.error(str(exc))
    if args.competition not in sources:
        parser.error("no competition {!r} (known: {})".format(
            args.competition, ", ".join(sorted(sources)) or "none"))
    source = sources[args.competition]
    reference = os.path.abspath(args.reference or source.sample_reference)
    sample = args.reference is None

    def say(line: str) -> None:
        print(line)
        sys.stdout.flush()

    if not os.path.isdir(reference):
        sys.stderr.write("bundle.sh: error: no reference folder {}\n".format(reference))
        return 2
    os.makedirs(args.out, exist_ok=True)
    build = tempfile.mkdtemp(prefix=".build-", dir=args.out)
    try:
        layout = args.layout or ("raw" if sample else "packed")
        built, manifest = build_all(build, source, schedule, reference, layout, say)
        check_all(built, say, open_on, args.allow_closed)
        submission = args.smoke or (source.sample_submission if sample else None)
        if args.no_smoke:
            say("Dry run: skipped (--no-smoke).")
        elif submission and os.path.exists(submission):
            smoke(built, submission, say)
        else:
            say("Dry run: skipped (no sample submission for this reference; try "
                "tools/dry_run.py SUBMISSION --bundle BUNDLE).")
        if sample and source.name == DEFAULT_COMPETITION:
            update_kit_manifest(manifest, say)
        say("Built in {}:".format(shown(os.path.abspath(args.out))))
        for b in built:
            os.replace(b.path, os.path.join(args.out, b.name))
            say("  {:<44} {:>9}  {}".format(b.name, human(os.path.getsize(
                os.path.join(args.out, b.name))), b.what))
        return 0
    except Refused as exc:
        sys.stderr.write("bundle.sh: REFUSED, nothing written:\n{}\n".format(exc))
        return 1
    finally:
        shutil.rmtree(build, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
