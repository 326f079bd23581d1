#!/usr/bin/env python3
"""Build the competition bundles: for every track, a CodaLab v1.5 zip and a Codabench v2 zip.

    bash bundle.sh                      # the sample reference, into dist/
    bash bundle.sh --reference DIR      # the organizer's real test labels (packed by default)
    bash bundle.sh --out DIR            # somewhere else than dist/
    bash bundle.sh --start 2027-03-01 --end '2027-05-31 23:59:59'   # the organizer's dates
    bash bundle.sh --competition NAME   # another competition's source (competitions/NAME/)
    bash bundle.sh --competition planetscapes --reference semantic=DIR --reference vqa=DIR2
                                        # a reference per track when the tracks are tasks

By default the definition's own dates are kept (the 2021 challenge, as history) and an
open-ended post-challenge phase is added after the deadline, so the bundle accepts submissions
on the day it is built, on both platforms.

Each bundle holds the track's competition.yaml, its pages and logo, scoring_program.zip (the
program's files at the zip's root), reference_data.zip and starting_kit.zip; a merged Codabench
bundle (source.json "codabench": merged or both) holds every track's program and reference, one
task each, and phases that run them all. The same tree gives
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
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
sys.path.insert(0, os.path.join(ROOT, "scoring_program"))

import bundle_check  # noqa: E402
import bundle_yaml  # noqa: E402
import dry_run  # noqa: E402
from bundle_zip import collect, write_zip  # noqa: E402

DEFAULT_COMPETITION = "agriculture-vision"
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
    submission: str = ""  # the sample submission the dry run scores through it ("" = none)


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

def reference_entries(task, reference, layout: str, build: str, say) -> List[Tuple[str, str]]:
    """Files of reference_data.zip: the raw layout as it is, or packed by the scoring program's
    own packer (docs/packed-format.md, docs/vqa-packed-format.md), which checks everything on
    the way. reference: the raw reference, as the scorer opened it."""
    root = reference.root
    if layout == "raw" or task.packed_layout is None:
        return collect(root, exclude_top=REFERENCE_EXCLUDE)
    from scoring import engine
    from scoring.problems import ScoringError
    # A folder of its own per reference: two tracks may each pack theirs (Planetscapes).
    out = tempfile.mkdtemp(prefix="packed-reference-", dir=build)
    total, noun = task.pack_units(reference)
    say("Packing the reference ({:,} {})...".format(total, noun))
    try:
        task.pack(reference, out, engine.default_workers(total),
                  engine.Progress(total, sys.stdout, 10.0, "packed", noun))
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None
    return collect(out)


def open_reference(ref_dir: str):
    """(task, reference, task's configuration) as the scorer opens them; Refused with the
    scorer's own message if the reference is broken: better now than on the first
    participant's submission."""
    from scoring.config import read_config
    from scoring.problems import ScoringError
    from scoring.registry import DEFAULT, TASKS
    try:
        config = read_config(ref_dir)
        name = config.get("task", DEFAULT)
        if name not in TASKS:
            raise Refused("{}/config.yaml names an unknown task {!r}".format(ref_dir, name))
        task = TASKS[name]
        config = task.configure(None, config)
        reference = task.open_reference(ref_dir, config)
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None
    if reference.layout == "packed":
        # The manifest reads image sizes from the raw label images; packing is bundle.sh's job.
        raise Refused("{} is a packed reference: give the raw layout (the dataset's own label "
                      "files)".format(ref_dir))
    return TASKS[name], reference, config


def manifest_bytes(task, reference) -> bytes:
    """Test image names and sizes (no labels) for the kit's check_submission.py."""
    manifest = task.make_manifest(reference)
    if "images" not in manifest:
        return (json.dumps(manifest, sort_keys=True) + "\n").encode("utf-8")
    # One image a line: readable, diffable, and about 50 bytes an image for the real test set.
    head = json.dumps({k: v for k, v in manifest.items() if k != "images"}, sort_keys=True)
    images = ",\n".join(" {}: {}".format(json.dumps(i), json.dumps(manifest["images"][i]))
                        for i in sorted(manifest["images"]))
    return (head[:-1] + ', "images": {\n' + images + "\n}}\n").encode("utf-8")


# --- building -------------------------------------------------------------------------------

class TrackParts(NamedTuple):
    """One track's zips, as built, and what the dry run scores through its bundles."""
    track: bundle_yaml.Track        # columns generated from the reference, if the source says
    data: bundle_yaml.TrackData
    program_zip: str
    reference_zip: str
    kit_entries: List[Tuple[str, str]]   # starting kit files on disk
    kit_data: Dict[str, bytes]           # ... and generated (manifest.json, phase.json)
    manifest: Optional[bytes]


def kit_contents(data: bundle_yaml.TrackData, track: bundle_yaml.Track, reference_root: str,
                 manifest: Optional[bytes]) -> Tuple[List[Tuple[str, str]], Dict[str, bytes]]:
    """The track's starting kit (source.json "starting_kit"): its files, a copy of the
    scoring program (so the kit's checks are the scorer's), the sample submission, the
    reference's public files it names, the task's manifest and phase.json."""
    entries = list(data.kit.files)
    entries += collect(data.scoring_program, prefix="scoring_program/")
    if data.sample_submission and os.path.isdir(data.sample_submission):
        entries += collect(data.sample_submission, prefix="sample_submission/")
    for name in data.kit.from_reference:
        path = os.path.join(reference_root, name)
        if not os.path.isfile(path):
            raise Refused("{} track: the starting kit takes {} from the reference, and {} has "
                          "none".format(track.name, name, shown(reference_root)))
        entries.append((name, path))
    missing = [shown(p) for _, p in entries if not os.path.isfile(p)]
    if missing:
        raise Refused("{} track: starting kit files missing: {}".format(
            track.name, ", ".join(missing)))
    generated = {"phase.json": phase_json(track)}
    if data.kit.manifest and manifest is not None:
        generated[data.kit.manifest] = manifest
    return entries, generated


def phase_json(track: bundle_yaml.Track) -> bytes:
    info = dry_run.phase_info_from_yaml(track.v15)
    kept = {k: info[k] for k in ("title", "phase", "execution_time_limit", "columns",
                                 "enable_detailed_results")}
    return (json.dumps(kept, indent=1, sort_keys=True) + "\n").encode("utf-8")


def build_track(build: str, source: bundle_yaml.Source, track: bundle_yaml.Track,
                reference: str, layout: str, say, made: Dict[Any, str]) -> TrackParts:
    """made: zips already built for an earlier track (tracks sharing a program or reference
    share its zip)."""
    data = source.data(track.name)
    task, ref, config = open_reference(reference)
    if ("reference", reference) not in made:
        words = task.submission_format(config).words
        count = "{:,} {}, ".format(len(ref.ids), words.get("units", "units")) \
            if len(ref.ids) > 1 else ""  # a VQA reference is one unit: its results file
        say("Reference: {} ({}task {}), bundled in the {} layout".format(
            shown(reference), count, task.name, "raw" if task.packed_layout is None else layout))
    if data.columns_from_reference:
        keys = task.keys(config)
        try:
            track = bundle_yaml.with_columns(track, keys, "the reference's config.yaml")
        except ValueError as exc:
            raise Refused(str(exc)) from None
    manifest = manifest_bytes(task, ref) if data.kit.manifest else None
    program_zip = made.get(("program", data.scoring_program))
    if program_zip is None:
        program_zip = os.path.join(build, "scoring_program-{}.zip".format(track.name))
        size = write_zip(program_zip, collect(data.scoring_program))
        say("  scoring_program.zip   {:>9}".format(human(size)))
        made[("program", data.scoring_program)] = program_zip
    reference_zip = made.get(("reference", reference))
    if reference_zip is None:
        reference_zip = os.path.join(build, "reference_data-{}.zip".format(track.name))
        size = write_zip(reference_zip, reference_entries(task, ref, layout, build, say))
        say("  reference_data.zip    {:>9}  ({} track)".format(human(size), track.name))
        made[("reference", reference)] = reference_zip
    entries, generated = kit_contents(data, track, ref.root, manifest)
    return TrackParts(track, data, program_zip, reference_zip, entries, generated, manifest)


def bundle_files(source: bundle_yaml.Source, doc: Dict[str, Any],
                 zips: List[Tuple[str, str]], what: str) -> List[Tuple[str, str]]:
    """The data zips, pages and logo of one bundle; Refused if the definition names a page or
    logo that does not exist."""
    shared = list(zips) + [(p, os.path.join(source.root, p))
                           for p in bundle_yaml.files_referenced(doc)]
    missing = [p for p, src in shared if not os.path.isfile(src)]
    if missing:
        raise Refused("{}: competition.yaml refers to files that do not exist: {}".format(
            what, ", ".join(missing)))
    return shared


def combined_submission(build: str, parts: List[TrackParts]) -> str:
    """The tracks' sample submissions in one folder: what a participant uploads to a phase
    that runs every task (each task's scorer ignores the other's files)."""
    out = os.path.join(build, "sample-submission-all")
    seen = {}  # type: Dict[str, str]
    for part in parts:
        if not (part.data.sample_submission and os.path.isdir(part.data.sample_submission)):
            return ""
        for name, path in collect(part.data.sample_submission):
            if name in seen:
                raise Refused("the {} and {} tracks' sample submissions both hold {}: one "
                              "submission cannot serve both".format(seen[name], part.track.name,
                                                                    name))
            seen[name] = part.track.name
            target = os.path.join(out, *name.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path, target)
    return out


def build_merged(build: str, source: bundle_yaml.Source, parts: List[TrackParts],
                 sample: bool, say) -> Built:
    """One Codabench bundle, one task per track, every phase running all of them."""
    files = [{"scoring_program": "scoring_program_{}.zip".format(p.track.name),
              "reference_data": "reference_data_{}.zip".format(p.track.name),
              "starting_kit": "starting_kit.zip"} for p in parts]
    try:
        doc = bundle_yaml.merge_v2([p.track for p in parts],
                                   [p.data.task_name for p in parts], files,
                                   source.merged.get("title") or parts[0].track.v15["title"],
                                   source.merged.get("description", ""))
    except ValueError as exc:
        raise Refused("{}: {}".format(source.name, exc)) from None
    both = combined_submission(build, parts)  # in the kit, as each track's sample is
    submission = both if sample else ""
    kit_entries = []  # type: List[Tuple[str, str]]
    kit_data = {}  # type: Dict[str, bytes]
    if source.merged.get("kit_readme"):
        kit_entries.append(("README.md", source.merged["kit_readme"]))
    for part in parts:
        kit_entries += [(part.track.name + "/" + n, p) for n, p in part.kit_entries]
        kit_data.update((part.track.name + "/" + n, b) for n, b in part.kit_data.items())
    if both:
        kit_entries += collect(both, prefix="sample_submission/")
    kit_zip = os.path.join(build, "starting_kit-merged.zip")
    size = write_zip(kit_zip, kit_entries, kit_data)
    say("  starting_kit.zip      {:>9}  (all tracks, Codabench)".format(human(size)))
    zips = [("starting_kit.zip", kit_zip)]
    for part, names in zip(parts, files):
        zips += [(names["scoring_program"], part.program_zip),
                 (names["reference_data"], part.reference_zip)]
    shared = bundle_files(source, parts[0].track.v15, zips, "merged bundle")
    name = "{}-codabench.zip".format(source.prefix)
    path = os.path.join(build, name)
    text = bundle_yaml.merged_v2_text([p.track for p in parts], doc)
    write_zip(path, shared, {"competition.yaml": text.encode("utf-8")})
    return Built(name, path, "Codabench v2, tracks {} in one competition".format(
        " + ".join(p.track.name for p in parts)), "codabench", submission)


def build_all(build: str, source: bundle_yaml.Source, schedule: bundle_yaml.Schedule,
              references: Any, layout: str, say,
              sample: bool = True) -> Tuple[List[Built], Optional[bytes]]:
    """Every bundle of the source; references maps each track to its reference folder (one
    folder: every track's). Returns the bundles and the base track's kit manifest."""
    try:
        tracks = bundle_yaml.load_tracks(source, schedule)
    except (ValueError, KeyError, TypeError) as exc:
        raise Refused("{}: {}".format(source.name, exc)) from None
    if isinstance(references, str):
        references = {t.name: references for t in tracks}
    made = {}  # type: Dict[Any, str]
    parts = [build_track(build, source, track, references[track.name], layout, say, made)
             for track in tracks]
    built = []
    per_track = source.codabench in ("per-track", "both") or len(parts) == 1
    for part in parts:
        track = part.track
        kit_zip = os.path.join(build, "starting_kit-{}.zip".format(track.name))
        size = write_zip(kit_zip, part.kit_entries, part.kit_data)
        say("  starting_kit.zip      {:>9}  ({} track)".format(human(size), track.name))
        shared = bundle_files(source, track.v15, [
            ("scoring_program.zip", part.program_zip), ("reference_data.zip",
                                                        part.reference_zip),
            ("starting_kit.zip", kit_zip)], "{} track".format(track.name))
        submission = part.data.sample_submission if sample else ""
        texts = {"codalab": track.v15_text, "codabench": bundle_yaml.v2_text(track)}
        for platform, label in PLATFORMS:
            if platform == "codabench" and not per_track:
                continue
            name = "{}-{}-{}.zip".format(source.prefix, track.name, platform)
            path = os.path.join(build, name)
            write_zip(path, shared, {"competition.yaml": texts[platform].encode("utf-8")})
            built.append(Built(name, path, "{}, {} track".format(label, track.name), platform,
                               submission))
    if len(parts) > 1 and source.codabench in ("merged", "both"):
        built.append(build_merged(build, source, parts, sample, say))
    base = next((p for p in parts if p.track.name == source.base_track), parts[0])
    return built, base.manifest


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


def smoke(built: List[Built], override: Optional[str], say) -> None:
    """Dry-run a sample submission through every bundle, as each bundle's platform would: the
    track's own sample, the tracks' samples together for a merged bundle, or `override`."""
    results, notes, skipped, rows = [], [], [], []  # type: List[str], List[str], List[str], List[str]
    for b in built:
        submission = override or b.submission
        if not submission:
            skipped.append(b.name)
            continue
        captured = io.StringIO()
        outcomes = []  # type: List[Any]
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            code = dry_run.main([submission, "--bundle", b.path, "--quiet"], outcomes)
        if code != dry_run.EXIT_OK:
            raise Refused("{}: the dry run of {} did not score (exit {}):\n{}".format(
                b.name, shown(submission), code, captured.getvalue()))
        results.append(b.name)
        scores = (outcomes[-1].scores if outcomes else None) or {}
        if scores:
            shown_keys = [k for k in RANKING_KEYS if k in scores] or list(scores)[:1]
            rows.append("  {:<44} {}".format(b.name, ", ".join(
                "{} {:.4f}".format(k, scores[k]) for k in shown_keys)))
        notes += [line for line in captured.getvalue().splitlines()
                  if "Detailed results on CodaLab v1: AT RISK" in line and line not in notes]
    if results:
        say("Dry run: {} scores on all {} bundles, every leaderboard column filled.".format(
            "the sample submission" if not override else shown(override), len(results)))
        for row in rows:
            say(row)
    if skipped:
        say("Dry run: skipped for {} (no sample submission for this reference; try "
            "tools/dry_run.py SUBMISSION --bundle BUNDLE).".format(", ".join(skipped)))
    for line in notes:  # a scorer's timing, not the bundle's: said, not refused
        say("WARNING (scoring program): " + line.strip())


# The scores the dry-run summary shows per bundle: the known tasks' ranking keys (a merged
# bundle shows each of its tasks'), else the first score.
RANKING_KEYS = ("miou", "iou_class", "accuracy")


def update_kit_manifest(path: str, manifest: bytes, say) -> None:
    """Keep the repository's kit manifest (source.json "repo_manifest") equal to the sample's
    (the kit's tools use it when run from the repository)."""
    current = None
    if os.path.isfile(path):
        with open(path, "rb") as f:
            current = f.read()
    if current != manifest:
        with open(path, "wb") as f:
            f.write(manifest)
        say("Updated {} from the sample reference.".format(shown(path)))


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
    p.add_argument("--reference", metavar="[TRACK=]DIR", action="append",
                   help="the test labels to pack, raw layout (default: the source's sample); "
                        "a competition whose tracks score different tasks takes one per "
                        "track: --reference semantic=DIR --reference vqa=DIR2 (a bare DIR is "
                        "the base track's)")
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
    try:
        tracks = [t.name for t in bundle_yaml.load_tracks(source)]
    except (ValueError, KeyError, TypeError) as exc:
        sys.stderr.write("bundle.sh: REFUSED, nothing written:\n{}: {}\n".format(source.name, exc))
        return 1
    sample = not args.reference
    references = {}  # type: Dict[str, str]
    for value in args.reference or []:
        track, _, folder = value.rpartition("=")
        if not track:
            # A bare DIR: the base track's, and every track scored on the same reference (the
            # same sample in source.json), e.g. Agriculture-Vision's two tracks.
            base_sample = source.data(source.base_track).sample_reference
            for t in tracks:
                if source.data(t).sample_reference == base_sample:
                    references.setdefault(t, os.path.abspath(folder))
            continue
        if track not in tracks:
            parser.error("--reference {}: no track {!r} (tracks: {})".format(
                value, track, ", ".join(tracks)))
        references[track] = os.path.abspath(folder)
    if sample:
        references = {t: source.data(t).sample_reference for t in tracks}
    elif sorted(references) != sorted(tracks):
        parser.error("give every track's reference: --reference TRACK=DIR for {}".format(
            ", ".join(t for t in tracks if t not in references)))

    def say(line: str) -> None:
        print(line)
        sys.stdout.flush()

    for track in tracks:
        if not os.path.isdir(references[track]):
            sys.stderr.write("bundle.sh: error: no reference folder {}\n".format(
                references[track]))
            return 2
    os.makedirs(args.out, exist_ok=True)
    build = tempfile.mkdtemp(prefix=".build-", dir=args.out)
    try:
        layout = args.layout or ("raw" if sample else "packed")
        built, manifest = build_all(build, source, schedule, references, layout, say, sample)
        check_all(built, say, open_on, args.allow_closed)
        if args.no_smoke:
            say("Dry run: skipped (--no-smoke).")
        else:
            smoke(built, args.smoke, say)
        if sample and source.repo_manifest and manifest is not None:
            update_kit_manifest(source.repo_manifest, manifest, say)
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
