#!/usr/bin/env python3
"""Build the competition bundles: for every track, a Codabench v2 zip and a CodaLab v1.5 zip
(for self-hosted CodaLab servers: CodaLab Competitions takes no new challenges since the end
of 2025).

    bash bundle.sh --leaderboard best --registration approval --contact EMAIL --queue VHOST
    bash bundle.sh --dev-reference VALIDATION_DIR      # a Development phase before Test

    bash bundle.sh                      # the sample reference, into dist/
    bash bundle.sh --reference DIR      # the organizer's real test labels (packed by default)
    bash bundle.sh --out DIR            # somewhere else than dist/
    bash bundle.sh --start 2027-03-01 --end '2027-05-31 23:59:59'   # the organizer's dates
    bash bundle.sh --competition NAME   # another competition's source (competitions/NAME/)
    bash bundle.sh --competition planetscapes --reference semantic=DIR --reference vqa=DIR2
                                        # a reference per track when the tracks are tasks

By default the definition's own dates are kept (the 2021 challenge, as history) and an
open-ended post-challenge phase is added after the deadline, so the bundle accepts submissions
on the day it is built, on both platforms. A bundle whose challenge starts later is built too
(organizers upload before the start); one whose phases have all ended is refused.

Each bundle holds the track's competition.yaml, its pages and logo, scoring_program.zip (the
program's files at the zip's root), reference_data.zip and starting_kit.zip. The pages, titles
and bundle names get their dated and counted parts (the year, the timeline, the test set's
size) from the phases and the bundled reference (tools/bundle_pages.py). With --merged, a
competition whose tracks are tasks also gets a merged Codabench bundle: every track's program
and reference, one task each, and phases that run them all. The same tree (and the same dates)
gives byte-identical zips (tools/bundle_zip.py). Nothing is written unless every bundle passes
tools/bundle_check.py, i.e. nothing a platform would refuse or silently get wrong; with the sample
reference, the sample submission is also dry-run through every bundle as its worker would run it.
At the end, a plan: which zip to upload where, and when each phase takes submissions.
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
import zipfile
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
sys.path.insert(0, os.path.join(ROOT, "scoring_program"))
sys.path.insert(0, os.path.join(ROOT, "kit"))   # final_package: the final package's rules

import bundle_check  # noqa: E402
import bundle_dates  # noqa: E402
import bundle_pages  # noqa: E402
import bundle_sample  # noqa: E402
import bundle_settings  # noqa: E402
import bundle_yaml  # noqa: E402
import dry_run  # noqa: E402  (kit/dry_run.py)
from platforms.codabench_definition import RULE_NAMES  # noqa: E402
from platforms.leaderboard import rule_text  # noqa: E402
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
    tracks: Tuple[str, ...] = ()    # the tracks it holds (a merged bundle: several)


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
        task.pack(reference, out, engine.default_workers(total, task.unit_seconds),
                  engine.Progress(total, sys.stdout, 10.0, "packed", noun))
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None
    return collect(out)


def open_reference(ref_dir: str):
    """(task, reference, task's configuration) as the scorer opens them; Refused with the
    scorer's own message if the reference is broken: better now than on the first
    participant's submission."""
    from scoring.config import read_config, task_name
    from scoring.problems import ScoringError
    from scoring.registry import DEFAULT, TASKS
    try:
        config = read_config(ref_dir)
        name = task_name(config, DEFAULT, TASKS)
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


def final_rules(ref_dir: str):
    """The final-submission rules the reference's config.yaml states (`final_submission:`,
    kit/final_package/rules.py), as verify.py and the kit's check_final.py will apply them: the
    terms page says the same limit ({{max_params}}), and a broken block is refused now rather
    than when the winners are verified."""
    from scoring.config import read_config
    from scoring.problems import ScoringError
    from final_package import rules
    try:
        return rules.read(read_config(ref_dir))
    except ScoringError as exc:
        raise Refused(exc.message().strip()) from None


def worker_program(root: str) -> List[Tuple[str, str]]:
    """The worker's program: the scoring_program folder, whole. What only organizers run lives
    in organizer/ and never reaches it (tests/core/test_import_layers.py holds score.py to it)."""
    return collect(root)


def reference_manifest(task, reference) -> Dict[str, Any]:
    """The task's manifest of the reference (names, sizes, ids; no labels)."""
    from scoring.formats.label_png.png import NotPNG
    try:
        return task.make_manifest(reference)
    except NotPNG as exc:   # read before the packing checks every file: a broken one, named
        raise Refused("the reference {} is broken: {}".format(shown(reference.root), exc)) \
            from None


def manifest_bytes(task, reference) -> bytes:
    """Test image names and sizes (no labels) for the kit's check_submission.py."""
    manifest = reference_manifest(task, reference)
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
    track: bundle_yaml.Track        # columns generated from the reference, if the source says;
                                    # its texts' template tokens filled in (bundle_pages.py)
    data: bundle_yaml.TrackData
    program_zip: str
    reference_zip: str
    kit_entries: List[Tuple[str, str]]   # starting kit files on disk
    kit_data: Dict[str, bytes]           # ... and generated (manifest.json, phase.json)
    manifest: Optional[bytes]
    test_set: Tuple[int, str, str]       # the bundled reference: (units, noun, task name)
    dev_reference_zip: str = ""          # the Development phase's (--dev-reference), or ""
    max_params: int = 150000000          # the final submission's limit (final_rules)


def reference_config_file(ref_dir: str) -> Optional[str]:
    """The reference's config.yaml where the scorer reads it (scoring/config.py): in the folder,
    else in its only sub-folder; None without one."""
    from scoring.config import CONFIG_FILE
    from scoring.folders import sole_subfolder
    for folder in (ref_dir, sole_subfolder(ref_dir)):
        if folder and os.path.isfile(os.path.join(folder, CONFIG_FILE)):
            return os.path.join(folder, CONFIG_FILE)
    return None


DEV_MANIFEST_PREFIX = "dev_"   # dev_manifest.json beside manifest.json (--dev-reference)


def kit_contents(data: bundle_yaml.TrackData, track: bundle_yaml.Track, reference: str,
                 reference_root: str, manifest: Optional[bytes],
                 dev_manifest: Optional[bytes] = None
                 ) -> Tuple[List[Tuple[str, str]], Dict[str, bytes]]:
    """The track's starting kit (source.json "starting_kit"): its files, a copy of the
    scoring program (so the kit's checks are the scorer's), the sample submission, the
    reference's public files it names, the task's manifest, phase.json and the reference's
    config.yaml as reference_config.yaml (task, label table, options; no labels): the dry run
    scores validation labels in the dataset's layout, which have none, with it."""
    entries = []  # type: List[Tuple[str, str]]
    for name, path in data.kit.files:   # a folder (the kit's final_package/) goes in whole
        entries += (collect(path, prefix=name.rstrip("/") + "/") if os.path.isdir(path)
                    else [(name, path)])
    config = reference_config_file(reference)
    if config:
        entries.append((dry_run.REFERENCE_CONFIG, config))
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
    if data.kit.manifest and dev_manifest is not None:
        # The Development phase is scored on the validation images: the kit's check and zip
        # tools take their names and sizes with --manifest (the test manifest refuses them).
        generated[DEV_MANIFEST_PREFIX + data.kit.manifest] = dev_manifest
    return entries, generated


def phase_json(track: bundle_yaml.Track,
               other_tasks: Optional[List[Dict[str, str]]] = None) -> bytes:
    """The kit's phase.json: the track's time limit and leaderboard (dry_run.py); in a merged
    kit, also the other tasks every submission is scored on (make_submission.py says what the
    zip still lacks)."""
    info = dry_run.phase_info_from_yaml(track.v15)
    kept = {k: info[k] for k in ("title", "phase", "execution_time_limit", "columns",
                                 "enable_detailed_results", "leaderboard_rule", "ranking")}
    if other_tasks:
        kept["other_tasks"] = other_tasks
        # The merged bundle's leaderboard rule (bundle_yaml.merge_v2), whatever the track's.
        kept["leaderboard_rule"] = RULE_NAMES[bundle_yaml.MERGED_RULE]
    return (json.dumps(kept, indent=1, sort_keys=True) + "\n").encode("utf-8")


def with_interval_columns(track: bundle_yaml.Track, task, reference: str) -> bundle_yaml.Track:
    """--confidence-columns: columns for the ranking score's confidence interval
    (<key>_ci_low, <key>_ci_high), unless the reference turns the intervals off."""
    from scoring.confidence import CONFIG_KEY, interval_score_keys
    from scoring.config import read_config
    keys = interval_score_keys(task)
    if not keys:
        raise Refused("--confidence-columns: task {} gives no confidence interval".format(
            task.name))
    if read_config(reference).get(CONFIG_KEY, True) is False:
        raise Refused("--confidence-columns: {}/config.yaml says {}: false, so these columns "
                      "would stay empty".format(shown(reference), CONFIG_KEY))
    try:
        return bundle_yaml.with_columns(track, keys, "--confidence-columns")
    except ValueError as exc:
        raise Refused(str(exc)) from None


def build_track(build: str, source: bundle_yaml.Source, track: bundle_yaml.Track,
                reference: str, layout: str, say, made: Dict[Any, str],
                confidence_columns: bool = False, dev_reference: str = "") -> TrackParts:
    """made: zips already built for an earlier track (tracks sharing a program or reference
    share its zip); dev_reference: the Development phase's labels (--dev-reference)."""
    data = source.data(track.name)
    task, ref, config = open_reference(reference)
    max_params = final_rules(reference).max_params
    count, noun = task.pack_units(ref)   # images, or a VQA reference's questions
    test_set = (count, noun, data.task_name or track.name)
    if data.sample_submission and not same_folder(reference, data.sample_reference):
        # The repository's sample fits the sample reference only: the kit gets a placeholder
        # of the test set's names and sizes instead, so its first check passes.
        folder = os.path.join(build, "sample-submission-{}".format(track.name))
        try:
            made_count, what = bundle_sample.write_placeholder(reference_manifest(task, ref),
                                                               folder)
        except ValueError as exc:
            raise Refused("{} track: {}".format(track.name, exc)) from None
        say("  sample_submission/ for the kit: a placeholder, {:,} {} (the repository's "
            "sample fits the sample reference only)".format(made_count, what))
        data = data._replace(sample_submission=folder)
    track = fill_in(track, page_context(track, [test_set], max_params))
    if ("reference", reference) not in made:
        say("Reference: {} ({:,} {}, task {}), bundled in the {} layout".format(
            shown(reference), count, noun, task.name,
            "raw" if task.packed_layout is None else layout))
    if data.columns_from_reference:
        keys = task.keys(config)
        try:
            track = bundle_yaml.with_columns(track, keys, "the reference's config.yaml")
        except ValueError as exc:
            raise Refused(str(exc)) from None
    if confidence_columns:
        track = with_interval_columns(track, task, reference)
    manifest = manifest_bytes(task, ref) if data.kit.manifest else None
    program_zip = made.get(("program", data.scoring_program))
    if program_zip is None:
        program_zip = os.path.join(build, "scoring_program-{}.zip".format(track.name))
        size = write_zip(program_zip, worker_program(data.scoring_program))
        say("  scoring_program.zip   {:>9}".format(human(size)))
        made[("program", data.scoring_program)] = program_zip
    reference_zip = made.get(("reference", reference))
    if reference_zip is None:
        reference_zip = os.path.join(build, "reference_data-{}.zip".format(track.name))
        size = write_zip(reference_zip, reference_entries(task, ref, layout, build, say))
        say("  reference_data.zip    {:>9}  ({} track)".format(human(size), track.name))
        made[("reference", reference)] = reference_zip
    dev_zip = ""
    dev_manifest = None   # the validation images' names and sizes, for the kit's tools
    if dev_reference:
        dev_task, dev_ref, _ = open_reference(dev_reference)
        if dev_task.name != task.name:
            raise Refused("--dev-reference {}: its task is {}, the test reference's {}: the "
                          "Development phase is scored like the Test phase".format(
                              shown(dev_reference), dev_task.name, task.name))
        dev_zip = made.get(("reference", dev_reference), "")
        if not dev_zip:
            dev_count, dev_noun = dev_task.pack_units(dev_ref)
            say("Development reference: {} ({:,} {})".format(shown(dev_reference), dev_count,
                                                            dev_noun))
            dev_zip = os.path.join(build, "dev_reference_data-{}.zip".format(track.name))
            size = write_zip(dev_zip, reference_entries(dev_task, dev_ref, layout, build, say))
            say("  {:<21} {:>9}  ({} track)".format(bundle_yaml.DEV_REFERENCE_ZIP, human(size),
                                                     track.name))
            made[("reference", dev_reference)] = dev_zip
        if data.kit.manifest:
            dev_manifest = manifest_bytes(dev_task, dev_ref)
    entries, generated = kit_contents(data, track, reference, ref.root, manifest, dev_manifest)
    return TrackParts(track, data, program_zip, reference_zip, entries, generated, manifest,
                      test_set, dev_zip, max_params)


def page_context(track: bundle_yaml.Track, test_sets: List[Tuple[int, str, str]],
                 max_params: int = 150000000) -> bundle_pages.PageContext:
    """What the template tokens of a bundle's pages and texts say: its phases as dated, its
    deadline, its bundled test set(s) and the final submission's parameter limit."""
    doc = track.v15
    phases = sorted(doc["phases"].values(), key=lambda ph: ph["phasenumber"])
    limits = [bundle_pages.Limits(str(ph.get("label", ph["phasenumber"])),
                                  ph.get("max_submissions_per_day"), ph.get("max_submissions"),
                                  ph.get("execution_time_limit")) for ph in phases]
    info = dry_run.phase_info_from_yaml(doc)
    rule = rule_text(info["leaderboard_rule"], info["ranking"])
    return bundle_pages.context(bundle_dates.spans(doc, False), track.deadline, test_sets,
                                limits, rule,
                                bundle_settings.fact_sheet_items(track.codabench.get("fact_sheet")),
                                bool(track.codabench.get("queue")), max_params)


def fill_in(track: bundle_yaml.Track, ctx: bundle_pages.PageContext) -> bundle_yaml.Track:
    """The track's yaml with its texts' tokens ({{year}}, {{test_set}}...) filled in."""
    try:
        return bundle_yaml.with_doc(track, bundle_pages.render_doc(track.v15, ctx, track.sources))
    except ValueError as exc:
        raise Refused(str(exc)) from None


def bundle_files(source: bundle_yaml.Source, doc: Dict[str, Any],
                 zips: List[Tuple[str, str]], what: str,
                 ctx: bundle_pages.PageContext) -> Tuple[List[Tuple[str, str]], Dict[str, bytes]]:
    """The data zips and logo of one bundle (files), and its pages with their tokens filled in
    (generated); Refused if the definition names a page or logo that does not exist."""
    pages = list(doc.get("html", {}).values())
    shared = list(zips) + [(p, os.path.join(source.root, p))
                           for p in bundle_yaml.files_referenced(doc)]
    missing = [p for p, src in shared if not os.path.isfile(src)]
    if missing:
        raise Refused("{}: competition.yaml refers to files that do not exist: {}".format(
            what, ", ".join(missing)))
    generated = {}  # type: Dict[str, bytes]
    for page in pages:
        with open(os.path.join(source.root, page), encoding="utf-8") as f:
            text = f.read()
        try:
            generated[page] = bundle_pages.render(text, ctx, page).encode("utf-8")
        except ValueError as exc:
            raise Refused(str(exc)) from None
    return [(p, src) for p, src in shared if p not in generated], generated


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


# What a merged Codabench bundle does to a submission whose task fails (docs/bundle.md,
# "Codabench: the merged form"): said whenever one is built.
MERGED_HAZARD = (
    "the merged Codabench bundle ranks a submission with a failed task FIRST. On Codabench a "
    "submission whose task fails is still marked Finished once every task is done "
    "(competitions/models.py, Submission.check_child_submission_statuses), and on the "
    "leaderboard its empty score sorts before every score (PostgreSQL puts NULL first in the "
    "descending order of api/serializers/leaderboards.py, "
    "LeaderboardPhaseSerializer.get_submissions): a submission with one task failed ranks "
    "above every fully scored one, one with every task failed ranks first with no scores. "
    "Read its leaderboard by column, or upload the per-task bundles")


def build_merged(build: str, source: bundle_yaml.Source, parts: List[TrackParts],
                 sample: bool, prefix: str, say) -> Built:
    """One Codabench bundle, one task per track, every phase running all of them."""
    files = [{"scoring_program": "scoring_program_{}.zip".format(p.track.name),
              "reference_data": "reference_data_{}.zip".format(p.track.name),
              "starting_kit": "starting_kit.zip"} for p in parts]
    ctx = page_context(parts[0].track, [p.test_set for p in parts], parts[0].max_params)
    merged_rule = RULE_NAMES[bundle_yaml.MERGED_RULE]
    ctx = ctx._replace(rule=rule_text(merged_rule, dry_run.phase_info_from_yaml(
        parts[0].track.v15)["ranking"]))
    try:
        doc = bundle_yaml.merge_v2([p.track for p in parts],
                                   [p.data.task_name for p in parts], files,
                                   bundle_pages.render(source.merged.get("title") or
                                                       parts[0].track.v15["title"], ctx,
                                                       source.path),
                                   bundle_pages.render(source.merged.get("description", ""),
                                                       ctx, source.path))
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
        # One upload is scored by every task: each kit's tools know the others (their name and
        # kit folder), so make_submission.py does not say "Upload it." before they are in.
        kit_data[part.track.name + "/phase.json"] = phase_json(part.track, [
            {"name": p.data.task_name or p.track.name, "kit": p.track.name}
            for p in parts if p is not part])
    if both:
        kit_entries += collect(both, prefix="sample_submission/")
    kit_zip = os.path.join(build, "starting_kit-merged.zip")
    size = write_zip(kit_zip, kit_entries, kit_data)
    say("  starting_kit.zip      {:>9}  (all tracks, Codabench)".format(human(size)))
    zips = [("starting_kit.zip", kit_zip)]
    for part, names in zip(parts, files):
        zips += [(names["scoring_program"], part.program_zip),
                 (names["reference_data"], part.reference_zip)]
    # Its own pages where the source says (they describe every task), else the base track's.
    html = dict(parts[0].track.v15["html"], **(source.merged.get("html") or {}))
    doc["terms"] = html["terms"]
    doc["pages"] = [{"title": bundle_yaml.PAGE_TITLES.get(k, k.replace("_", " ").title()),
                     "file": path} for k, path in html.items() if k != "terms"]
    shared, pages = bundle_files(source, dict(parts[0].track.v15, html=html), zips,
                                 "merged bundle", ctx)
    name = "{}-codabench.zip".format(prefix)
    path = os.path.join(build, name)
    text = bundle_yaml.merged_v2_text([p.track for p in parts], doc)
    write_zip(path, shared, dict(pages, **{"competition.yaml": text.encode("utf-8")}))
    say("WARNING (merged bundle): " + MERGED_HAZARD + ".")
    rule = RULE_NAMES[bundle_yaml.codabench_rule(parts[0].track.v15)]
    if rule != merged_rule:
        say("WARNING (merged bundle): its leaderboard rule is {} (Add), not {}: Codabench "
            "applies a forced rule to each task's part of a submission as its scores arrive "
            "and puts that part alone on the leaderboard, a row of one task's scores "
            "(api/views/submissions.py:594, leaderboards/strategies.py). Participants add "
            "their submission to the leaderboard themselves.".format(merged_rule, rule))
    return Built(name, path, "Codabench v2, tracks {} in one competition".format(
        " + ".join(p.track.name for p in parts)), "codabench", submission,
        tuple(p.track.name for p in parts))


def can_merge(source: bundle_yaml.Source, tracks: List[str]) -> bool:
    """A source whose tracks are tasks may also be built as one Codabench competition running
    them all (source.json "merged"); only when asked (--merged)."""
    return len(tracks) > 1 and bool(source.merged)


class BuildResult(NamedTuple):
    built: List[Built]
    manifest: Optional[bytes]       # the base track's kit manifest
    parts: List[TrackParts]         # the tracks as built
    prefix: str                     # the bundle names' prefix, its {{year}} filled in
    settings: bundle_settings.Settings = bundle_settings.Settings()
    defaults: bundle_settings.Settings = bundle_settings.Settings()   # the source's


def build_bundles(build: str, source: bundle_yaml.Source, schedule: bundle_yaml.Schedule,
                  references: Any, layout: str, say, sample: bool = True,
                  merged: bool = False, confidence_columns: bool = False,
                  settings: Optional[bundle_settings.Settings] = None,
                  dev_references: Optional[Dict[str, str]] = None,
                  development: Optional[bundle_yaml.Development] = None) -> BuildResult:
    """Every bundle of the source (with merged, also the merged Codabench bundle); references
    maps each track to its reference folder (one folder: every track's)."""
    try:
        tracks = bundle_yaml.load_tracks(source, schedule)
    except (ValueError, KeyError, TypeError) as exc:
        raise Refused("{}: {}".format(source.name, exc)) from None
    if isinstance(references, str):
        references = {t.name: references for t in tracks}
    try:
        defaults = bundle_settings.from_source(source.settings, source.path)
    except (ValueError, TypeError) as exc:
        raise Refused(str(exc)) from None
    if settings is None:
        settings = defaults
    try:
        # The names carry the challenge's year ({{year}} in source.json's prefix).
        prefix = bundle_pages.render(source.prefix, page_context(tracks[0], []), source.path)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    dev_references = dev_references or {}
    if dev_references:
        try:
            tracks = [bundle_yaml.with_doc(t, bundle_yaml.with_development(
                t.v15, development or bundle_yaml.Development()))
                      for t in tracks]
        except ValueError as exc:
            raise Refused(str(exc)) from None
    settings = bundle_settings.with_definition(settings, tracks[0].v15)
    tracks = [bundle_yaml.with_doc(t, bundle_settings.apply_v15(t.v15, settings))._replace(
        codabench=bundle_settings.v2_extras(settings)) for t in tracks]
    made = {}  # type: Dict[Any, str]
    parts = [build_track(build, source, track, references[track.name], layout, say, made,
                         confidence_columns, dev_references.get(track.name, ""))
             for track in tracks]
    built = []
    for part in parts:
        track = part.track
        kit_zip = os.path.join(build, "starting_kit-{}.zip".format(track.name))
        size = write_zip(kit_zip, part.kit_entries, part.kit_data)
        say("  starting_kit.zip      {:>9}  ({} track)".format(human(size), track.name))
        zips = [("scoring_program.zip", part.program_zip),
                ("reference_data.zip", part.reference_zip), ("starting_kit.zip", kit_zip)]
        if part.dev_reference_zip:
            zips.append((bundle_yaml.DEV_REFERENCE_ZIP, part.dev_reference_zip))
        ctx = page_context(track, [part.test_set], part.max_params)
        what = "{} track".format(track.name)
        shared, pages = bundle_files(source, track.v15, zips, what, ctx)
        # CodaLab asks no fact sheet: its pages must not say that it does.
        pages_of = {"codabench": pages, "codalab": bundle_files(
            source, track.v15, zips, what, ctx._replace(fact_sheet=[]))[1]}
        submission = part.data.sample_submission if sample else ""
        texts = {"codalab": track.v15_text, "codabench": bundle_yaml.v2_text(track)}
        for platform, label in PLATFORMS:
            name = "{}-{}-{}.zip".format(prefix, track.name, platform)
            path = os.path.join(build, name)
            write_zip(path, shared, dict(pages_of[platform], **{
                "competition.yaml": texts[platform].encode("utf-8")}))
            built.append(Built(name, path, "{}, {} track".format(label, track.name), platform,
                               submission, (track.name,)))
    if merged:
        built.append(build_merged(build, source, parts, sample, prefix, say))
    base = next((p for p in parts if p.track.name == source.base_track), parts[0])
    return BuildResult(built, base.manifest, parts, prefix, settings, defaults)


def build_all(build: str, source: bundle_yaml.Source, schedule: bundle_yaml.Schedule,
              references: Any, layout: str, say, sample: bool = True,
              merged: bool = False,
              confidence_columns: bool = False) -> Tuple[List[Built], Optional[bytes]]:
    """build_bundles: the bundles and the base track's kit manifest only."""
    result = build_bundles(build, source, schedule, references, layout, say, sample, merged,
                           confidence_columns)
    return result.built, result.manifest


def check_all(built: List[Built], say, now: datetime.datetime,
              open_on: Optional[datetime.datetime] = None,
              allow_closed: bool = False) -> List[bundle_check.Report]:
    """Every bundle through tools/bundle_check.py; Refused with every error. Notes (platform
    differences, e.g. a v1.5 bundle imported into Codabench) are left to the plan."""
    errors = []  # type: List[str]
    reports = []
    for b in built:
        report = bundle_check.check_bundle(b.path, now=now, allow_closed=allow_closed,
                                           open_on=open_on)
        for problem in report.warnings:
            say(report.line(problem))
        errors += [report.line(problem) for problem in report.errors]
        reports.append(report)
    if errors:
        raise Refused("\n".join(errors))
    say("Checked: {} bundles, nothing CodaLab or Codabench would refuse or mis-read "
        "(tools/bundle_check.py).".format(len(built)))
    if open_on is not None:
        say("Open on {} UTC (--open-on): {}.".format(bundle_dates.shown_date(open_on), ", ".join(
            sorted(set(p for r in reports for p in r.open_phases))) or "no phase (--allow-closed)"))
    return reports


def phase_state(span: bundle_dates.Span, now: datetime.datetime) -> str:
    if span.start is not None and span.start > now:
        days = (span.start - now).days
        return "opens in {} day{}".format(days, "" if days == 1 else "s") if days else \
            "opens in less than a day"
    if span.last is None or now <= span.last:
        return "open now"
    return "closed"


def plan(result: BuildResult, reports: List[bundle_check.Report], now: datetime.datetime,
         mergeable: bool, say) -> None:
    """What to upload where, and when each phase takes submissions (all UTC)."""
    say("Plan (times UTC; now {}):".format(bundle_dates.shown_date(now)))
    if not mergeable:
        say("  Codabench (Benchmarks > Upload), one competition per track:")
        for b in result.built:
            if b.platform == "codabench":
                say("    {:<44} {} track".format(b.name, b.tracks[0]))
    else:
        say("  Codabench (Benchmarks > Upload), by purpose:")
        parts = {p.track.name: p for p in result.parts}
        merged = [b for b in result.built if len(b.tracks) > 1]
        for b in result.built:
            if b.platform == "codabench" and len(b.tracks) == 1:
                part = parts[b.tracks[0]]
                board = bundle_yaml.to_v2(part.track.v15)["leaderboards"][0]
                say("    {:<44} {} alone, ranked by {}: with the other task's zip, a ranking per "
                    "task, as on CodaLab".format(b.name, part.test_set[2],
                                                 board["columns"][board["primary_index"]]["title"]))
        say("    {:<44} {}: one competition scoring every task on each upload (a benchmark "
            "suite); a submission with a failed task ranks first; participants add their "
            "submissions to its leaderboard (Add, whatever --leaderboard)".format(
                merged[0].name if merged else "{}-codabench.zip".format(result.prefix),
                "built" if merged else "not built (--merged)"))
    say("  CodaLab v1.5, for a self-hosted CodaLab server only (Create competition), one "
        "competition per track:")
    for b in result.built:
        if b.platform == "codalab":
            say("    {:<44} {} track".format(b.name, b.tracks[0]))
    plan_settings(result, say)
    tables = [(p.track.name, list(zip(bundle_dates.spans(p.track.v15, False),
                                      phase_limits(p.track.v15)))) for p in result.parts]
    same = all(rows == tables[0][1] for _, rows in tables)
    for track, rows in tables[:1] if same else tables:
        say("  Phases (every bundle):" if same and len(tables) > 1 else
            "  Phases ({} track):".format(track))
        for span, limits in rows:
            say("    {:<16} {} {:<25} {:<18} {}".format(
                span.label, bundle_dates.shown_date(span.start) if span.start else "?",
                "to " + bundle_dates.shown_date(span.last) if span.last else "(no end)",
                phase_state(span, now), limits))
    # The check's notes on the v1.5 bundles (their phases are the same in every track's).
    early = next((bundle_dates.codabench_early_ends(r.doc) for r in reports
                  if not r.v2 and r.notes and r.doc is not None), [])
    if early:
        say("  Do not upload a -codalab.zip to Codabench: its importer of v1.5 bundles ends each "
            "phase one day early ({}).".format(bundle_dates.early_end_text(early)))


def phase_limits(doc: Dict[str, Any]) -> List[str]:
    """Each phase's submission limits (phasenumber order, as bundle_dates.spans), as the plan
    shows them: a Development phase has its own (--dev-max-submissions, --dev-max-per-day)."""
    out = []
    for phase in sorted(doc["phases"].values(), key=lambda ph: ph["phasenumber"]):
        per_day, total = phase.get("max_submissions_per_day"), phase.get("max_submissions")
        counts = [c for c in ("{} a day".format(per_day) if per_day else "",
                              "{} in all".format(total) if total else "") if c]
        # A limit left out is each platform's default (Codabench 5 and 100: v2.py:197-198).
        out.append("at most " + ", ".join(counts) if counts else "the platforms' default limits")
    return out


def plan_settings(result: BuildResult, say) -> None:
    """What participants meet: the leaderboard rule, registration, the fact sheet, the contact
    and the queue (bundle_settings; the pages say the same)."""
    settings = result.settings
    rankings = [(p.track.name, dry_run.phase_info_from_yaml(p.track.v15)["ranking"])
                for p in result.parts]
    same = len(set(r for _, r in rankings)) == 1
    for track, ranking in rankings[:1] if same else rankings:
        say("  Leaderboard (--leaderboard {}, Codabench {}){}: {}.{}".format(
            settings.leaderboard, bundle_settings.CODABENCH_RULE[settings.leaderboard],
            "" if same else ", {} track".format(track),
            bundle_settings.rule_sentence(settings.leaderboard, ranking),
            bundle_settings.why_sentence("leaderboard", settings.leaderboard, result.defaults)))
    say("  Registration (--registration {}): {}.{}".format(
        settings.registration, bundle_settings.registration_sentence(settings.registration),
        bundle_settings.why_sentence("registration", settings.registration, result.defaults)))
    items = bundle_settings.fact_sheet_items(settings.fact_sheet)
    say("  Fact sheet (Codabench asks it at every submission): {}.".format(
        "; ".join(items) if items else "none"))
    say("  Contact (--contact, Codabench): {}.".format(settings.contact or "none"))
    say("  Queue (--queue, Codabench): {}.".format(
        "{}: your workers, each phase's own time limit".format(settings.queue)
        if settings.queue else "the default queue, at most {} s a submission".format(
            bundle_check.CODABENCH_QUEUE_CAP)))


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
            "kit/dry_run.py SUBMISSION --bundle BUNDLE).".format(", ".join(skipped)))
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


def write_kits(built: List[Built], out: str, folder: str, say) -> None:
    """Each track's starting kit as participants unpack it from the built bundle: folder/<track>/
    (a merged bundle's kit, which holds every track's: folder/merged/)."""
    written = []  # type: List[str]
    for b in built:
        name = b.tracks[0] if len(b.tracks) == 1 else "merged"
        if name in written:
            continue
        with zipfile.ZipFile(os.path.join(out, b.name)) as bundle_zip:
            kit = io.BytesIO(bundle_zip.read("starting_kit.zip"))
        with zipfile.ZipFile(kit) as kit_zip:
            kit_zip.extractall(os.path.join(folder, name))
        written.append(name)
    say("Starting kits in {}: {} (each as participants unpack its starting_kit.zip)".format(
        shown(os.path.abspath(folder)), ", ".join(n + "/" for n in written)))


def positive_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("{!r} is not a whole number".format(text)) from None
    if value < 1:
        raise argparse.ArgumentTypeError("{} is no limit: give 1 or more".format(value))
    return value


def track_folders(values: List[str], option: str, source: bundle_yaml.Source,
                  tracks: List[str], parser: argparse.ArgumentParser) -> Dict[str, str]:
    """[TRACK=]DIR values: a bare DIR is the base track's, and every track's scored on the
    same sample reference (Agriculture-Vision's two tracks)."""
    folders = {}  # type: Dict[str, str]
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


def same_folder(a: str, b: str) -> bool:
    return bool(a and b) and os.path.realpath(a) == os.path.realpath(b)


def other_bundles(out: str, built: List[str]) -> List[str]:
    """Bundle zips in `out` that this build did not write (another edition's, another
    competition's): easy to upload by mistake beside the new ones."""
    return sorted(n for n in os.listdir(out) if n.endswith(("-codalab.zip", "-codabench.zip"))
                  and n not in built)


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
    p.add_argument("--competition", metavar="NAME", default=DEFAULT_COMPETITION,
                   help="which competition to build, by the name in its source.json "
                        "(competitions/NAME/source.json; default "
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
    p.add_argument("--kits", metavar="DIR",
                   help="also write each track's starting kit, unpacked, into DIR/<track>/ "
                        "(DIR/merged/ with --merged): what participants download, to try its "
                        "commands; none of them may exist yet")
    p.add_argument("--confidence-columns", action="store_true",
                   help="add leaderboard columns for the ranking score's 95%% confidence "
                        "interval (<key>_ci_low, <key>_ci_high; off by default: the scorer "
                        "writes them, the leaderboard shows them only with this option)")
    p.add_argument("--merged", action="store_true",
                   help="also build the merged Codabench bundle of a competition whose tracks "
                        "are tasks (one competition running every task on each upload); it "
                        "ranks a submission with a failed task first (docs/bundle.md)")
    platform = p.add_argument_group(
        "what participants meet (defaults: the source's \"settings\"; docs/bundle.md, "
        "\"What the organizer chooses\")")
    platform.add_argument("--leaderboard", choices=bundle_settings.RULES,
                          help="which submission of each participant the leaderboard shows: "
                               "best (Codabench Force_Best), last (Force_Last) or the one "
                               "they choose (Add, Codabench's default); Agriculture-Vision: "
                               "best")
    platform.add_argument("--registration", choices=bundle_settings.REGISTRATIONS,
                          help="approval: every participant waits for the organizers' "
                               "approval; auto: anyone who accepts the terms takes part")
    platform.add_argument("--contact", metavar="EMAIL",
                          help="the organizers' address, shown on Codabench (contact_email)")
    platform.add_argument("--queue", metavar="VHOST",
                          help="run the Codabench bundles' submissions on your own compute "
                               "queue (its vhost, a UUID): your workers, and your phases' "
                               "time limits without the default queue's 600 s cap")
    dev = p.add_argument_group(
        "a Development phase before the challenge (docs/bundle.md, \"The Development phase\")")
    dev.add_argument("--dev-reference", metavar="[TRACK=]DIR", action="append",
                     help="validation labels (raw layout): adds a Development phase before "
                          "the first phase, scored against them, so participants try the "
                          "whole upload path without spending test submissions; TRACK=DIR "
                          "per track as for --reference")
    dev.add_argument("--dev-start", metavar="DATE",
                     help="when the Development phase opens (default: {} days before the "
                          "first phase); it closes when that phase opens".format(
                              bundle_yaml.DEV_DAYS))
    dev.add_argument("--dev-max-submissions", metavar="N", type=positive_count, default=100,
                     help="the Development phase's submissions in total (default %(default)s)")
    dev.add_argument("--dev-max-per-day", metavar="N", type=positive_count, default=5,
                     help="the Development phase's submissions a day (default %(default)s)")
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
        now = bundle_dates.utcnow()
    except ValueError as exc:
        parser.error(str(exc))
    if schedule.start is not None and schedule.end is not None and schedule.end < schedule.start:
        parser.error("--end is before --start ({} < {})".format(
            bundle_dates.shown_date(schedule.end), bundle_dates.shown_date(schedule.start)))
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
        tracks = [t.name for t in bundle_yaml.load_tracks(source)]
        defaults = bundle_settings.from_source(source.settings, source.path)
    except (ValueError, KeyError, TypeError) as exc:
        sys.stderr.write("bundle.sh: REFUSED, nothing written:\n{}: {}\n".format(source.name, exc))
        return 1
    chosen = {k: v for k, v in (("leaderboard", args.leaderboard),
                                ("registration", args.registration),
                                ("contact", args.contact), ("queue", args.queue))
              if v is not None}
    try:
        settings = bundle_settings.validated(defaults._replace(**chosen), "bundle.sh")
    except ValueError as exc:
        parser.error(str(exc))
    sample = not args.reference
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
        development = bundle_yaml.Development(
            bundle_yaml.parse_date(args.dev_start) if args.dev_start else None,
            args.dev_max_submissions, args.dev_max_per_day)
    except ValueError as exc:
        parser.error(str(exc))
    if dev_references:
        try:   # the Development phase's dates, before anything is built
            first = bundle_yaml.load_tracks(source, schedule)[0]
            bundle_yaml.with_development(first.v15, development)
        except (ValueError, KeyError, TypeError) as exc:
            parser.error(str(exc))
    mergeable = can_merge(source, tracks)
    if args.merged and not mergeable:
        parser.error("--merged: {} has no merged Codabench form (it needs several tracks and "
                     "\"merged\" in its source.json)".format(source.name))
    taken = [n for n in tracks + (["merged"] if args.merged else [])
             if args.kits and os.path.lexists(os.path.join(args.kits, n))]
    if taken:
        parser.error("--kits {}: {} exists already: remove it or give another folder".format(
            args.kits, os.path.join(args.kits, taken[0])))
    if sample:
        references = {t: source.data(t).sample_reference for t in tracks}
    elif sorted(references) != sorted(tracks):
        parser.error("give every track's reference: --reference TRACK=DIR for {}".format(
            ", ".join(t for t in tracks if t not in references)))

    def say(line: str) -> None:
        print(line)
        sys.stdout.flush()

    for track in tracks:
        for folder in (references[track], dev_references.get(track)):
            if folder and not os.path.isdir(folder):
                sys.stderr.write("bundle.sh: error: no reference folder {}\n".format(folder))
                return 2
    os.makedirs(args.out, exist_ok=True)
    build = tempfile.mkdtemp(prefix=".build-", dir=args.out)
    try:
        layout = args.layout or ("raw" if sample else "packed")
        # The sample submission fits every track whose reference is the source's sample, given
        # or not (--reference reference_data): it is dry-run there.
        samples = all(same_folder(references[t], source.data(t).sample_reference)
                      for t in tracks)
        result = build_bundles(build, source, schedule, references, layout, say, samples,
                               args.merged, args.confidence_columns, settings, dev_references,
                               development)
        reports = check_all(result.built, say, now, open_on, args.allow_closed)
        if args.no_smoke:
            say("Dry run: skipped (--no-smoke).")
        else:
            smoke(result.built, args.smoke, say)
        if sample and source.repo_manifest and result.manifest is not None:
            update_kit_manifest(source.repo_manifest, result.manifest, say)
        say("Built in {}:".format(shown(os.path.abspath(args.out))))
        for b in result.built:
            os.replace(b.path, os.path.join(args.out, b.name))
            say("  {:<44} {:>9}  {}".format(b.name, human(os.path.getsize(
                os.path.join(args.out, b.name))), b.what))
        others = other_bundles(args.out, [b.name for b in result.built])
        if others:
            say("WARNING: {} also holds bundles this build did not write: {}. Upload only the "
                "ones listed above (or remove the others).".format(
                    shown(os.path.abspath(args.out)), ", ".join(others)))
        if args.kits:
            write_kits(result.built, args.out, args.kits, say)
        plan(result, reports, now, mergeable, say)
        return 0
    except Refused as exc:
        sys.stderr.write("bundle.sh: REFUSED, nothing written:\n{}\n".format(exc))
        return 1
    finally:
        shutil.rmtree(build, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
