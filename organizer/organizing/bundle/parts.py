"""One track's parts, built: its scoring program, reference and starting kit zips (build_track),
with its texts' template tokens filled in and the columns its reference decides; and the files
and page tokens of a bundle made of parts (page_context, bundle_files).
"""
import os
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from platforms.codalab import CODALAB
from platforms.dates import utcnow
from platforms.leaderboard import rule_text
from scoring.confidence import CONFIG_KEY, interval_score_keys

from . import pages, placeholder, settings
from .kit import kit_contents
from .private_part import PrivateShare, PublicReference, make_public_reference, open_public, \
    packed_extra, with_public_columns
from .reference import (config_for_task, final_rules, manifest_bytes, open_reference,
                        reference_entries, reference_manifest, worker_program)
from .refusal import Refused, human, same_folder, shown
from .reproducible_zip import write_zip
from .schedule import DEV_REFERENCE_ZIP
from .source import Source, TrackData
from .tracks import Track, files_referenced, with_columns, with_doc

Say = Callable[[str], None]


class Built(NamedTuple):
    """A bundle zip, as built."""
    name: str       # file name under the output folder
    path: str       # where it was built
    what: str       # e.g. "CodaLab v1.5, supervised track"
    platform: str   # "codalab" or "codabench"
    submission: str = ""  # the sample submission the dry run scores through it ("" = none)
    tracks: Tuple[str, ...] = ()    # the tracks it holds (a merged bundle: several)


class TrackParts(NamedTuple):
    """One track's zips, as built, and what the dry run scores through its bundles."""
    track: Track                    # columns generated from the reference, if the source says;
                                    # its texts' template tokens filled in (pages.py)
    data: TrackData
    program_zip: str
    reference_zip: str
    kit_entries: List[Tuple[str, str]]   # starting kit files on disk
    kit_data: Dict[str, bytes]           # ... and generated (manifest.json, phase.json)
    manifest: Optional[bytes]
    test_set: Tuple                      # the test set: (units, noun, task name, public part)
    dev_reference_zip: str = ""          # the Development phase's (--dev-reference), or ""
    max_params: int = 150000000          # the final submission's limit (final_rules)
    public: Optional[PublicReference] = None   # --private-share: the split, the public part


def build_track(build: str, source: Source, track: Track, reference: str, layout: str,
                say: Say, made: Dict[Any, Any], confidence_columns: bool = False,
                dev_reference: str = "", private: Optional[PrivateShare] = None
                ) -> TrackParts:
    """made: zips already built for an earlier track (tracks sharing a program or reference
    share its zip); dev_reference: the Development phase's labels (--dev-reference); private:
    --private-share (private_part.py): the bundled reference holds the public part only."""
    data = source.data(track.name)
    setup, ref = open_reference(reference, data.task,
                                "the {} track's reference".format(track.name))
    task = setup.task
    max_params = final_rules(setup.ref_config).max_params
    count, noun = ref.size()   # images, or a VQA reference's questions
    public: Optional[PublicReference] = None
    if private:   # tracks that share the reference share its split (made: key -> its split)
        public = made.get(("public", reference, task.name))
        if public is None:
            public = make_public_reference(build, track.name, setup, ref, reference, private,
                                           say)
            made[("public", reference, task.name)] = public
    test_set = (count, noun, data.task_name or track.name,
                public.line if public else "")
    data = with_sample_submission(build, data, track, reference, task, ref, say)
    track = fill_in(track, page_context(track, [test_set], max_params))
    if ("reference", reference, task.name) not in made:
        say("Reference: {} ({:,} {}, task {}), bundled in the {} layout".format(
            shown(reference), count, noun, task.name,
            "raw" if task.packing is None else layout))
    track = with_reference_columns(track, data, setup, reference, confidence_columns)
    if public:
        track = with_public_columns(track)
    manifest = manifest_bytes(task, ref) if data.kit.manifest else None
    program_zip = program_zip_of(build, data, track, made, say)
    bundled = open_public(public)[1] if public else ref
    reference_zip = reference_zip_of(build, track, task, bundled, reference, layout, made, say,
                                     packed_extra(public))
    dev_zip, dev_manifest = development_zip_of(build, data, track, task, dev_reference, layout,
                                               made, say)
    entries, generated = kit_contents(data, track, reference, ref.root, manifest, dev_manifest,
                                      config_for_task(reference, task.name))
    return TrackParts(track, data, program_zip, reference_zip, entries, generated, manifest,
                      test_set, dev_zip, max_params, public)


def with_sample_submission(build: str, data: TrackData, track: Track, reference: str, task: Any,
                           ref: Any, say: Say) -> TrackData:
    """The track's data with the kit's sample submission: the repository's fits the sample
    reference only; with another reference, the kit gets a placeholder of the test set's names
    and sizes instead (placeholder.py), so its first check passes."""
    if not data.sample_submission or same_folder(reference, data.sample_reference):
        return data
    folder = os.path.join(build, "sample-submission-{}".format(track.name))
    try:
        made_count, what = placeholder.write_placeholder(reference_manifest(task, ref), folder)
    except ValueError as exc:
        raise Refused("{} track: {}".format(track.name, exc)) from None
    say("  sample_submission/ for the kit: a placeholder, {:,} {} (the repository's "
        "sample fits the sample reference only)".format(made_count, what))
    return data._replace(sample_submission=folder)


def with_reference_columns(track: Track, data: TrackData, setup: Any, reference: str,
                           confidence_columns: bool) -> Track:
    """The track with the leaderboard columns its reference decides: a column per key the
    task writes for the organizer's label table (if the source says), and with
    --confidence-columns the ranking score's interval."""
    if data.columns_from_reference:
        keys = setup.task.keys(setup.settings)
        try:
            track = with_columns(track, keys, "the reference's config.yaml")
        except ValueError as exc:
            raise Refused(str(exc)) from None
    if confidence_columns:
        track = with_interval_columns(track, setup, reference)
    return track


def with_interval_columns(track: Track, setup: Any, reference: str) -> Track:
    """--confidence-columns: columns for the ranking score's confidence interval
    (<key>_ci_low, <key>_ci_high), unless the reference turns the intervals off."""
    keys = interval_score_keys(setup.task)
    if not keys:
        raise Refused("--confidence-columns: task {} gives no confidence interval".format(
            setup.task.name))
    if not setup.intervals.enabled:
        raise Refused("--confidence-columns: {}/config.yaml says {}: false, so these columns "
                      "would stay empty".format(shown(reference), CONFIG_KEY))
    try:
        return with_columns(track, keys, "--confidence-columns")
    except ValueError as exc:
        raise Refused(str(exc)) from None


def program_zip_of(build: str, data: TrackData, track: Track, made: Dict[Any, str],
                   say: Say) -> str:
    """scoring_program.zip: the program's folder, whole (one zip for tracks that share it)."""
    program_zip = made.get(("program", data.scoring_program))
    if program_zip is None:
        program_zip = os.path.join(build, "scoring_program-{}.zip".format(track.name))
        size = write_zip(program_zip, worker_program(data.scoring_program))
        say("  scoring_program.zip   {:>9}".format(human(size)))
        made[("program", data.scoring_program)] = program_zip
    return program_zip


def reference_zip_of(build: str, track: Track, task: Any, ref: Any, reference: str,
                     layout: str, made: Dict[Any, str], say: Say,
                     extra: Optional[List[Tuple[str, str]]] = None) -> str:
    """reference_data.zip (one zip for tracks that share the reference and the task: tracks of
    different tasks on one reference each get theirs, whose config.yaml names their task);
    extra: files the packer does not carry (a public part's manifest)."""
    reference_zip = made.get(("reference", reference, task.name))
    if reference_zip is None:
        reference_zip = os.path.join(build, "reference_data-{}.zip".format(track.name))
        entries, generated = reference_entries(task, ref, layout, build, say)
        entries += [e for e in extra or [] if e[0] not in dict(entries)]
        size = write_zip(reference_zip, sorted(entries), generated)
        say("  reference_data.zip    {:>9}  ({} track)".format(human(size), track.name))
        made[("reference", reference, task.name)] = reference_zip
    return reference_zip


def development_zip_of(build: str, data: TrackData, track: Track, task: Any,
                       dev_reference: str, layout: str, made: Dict[Any, str],
                       say: Say) -> Tuple[str, Optional[bytes]]:
    """The Development phase's reference zip and its manifest (the validation images' names
    and sizes, for the kit's tools): ("", None) without --dev-reference."""
    if not dev_reference:
        return "", None
    dev_setup, dev_ref = open_reference(dev_reference, data.task,
                                        "the {} track's --dev-reference".format(track.name))
    dev_task = dev_setup.task
    if dev_task.name != task.name:
        raise Refused("--dev-reference {}: its task is {}, the test reference's {}: the "
                      "Development phase is scored like the Test phase".format(
                          shown(dev_reference), dev_task.name, task.name))
    dev_zip = made.get(("reference", dev_reference, task.name), "")
    if not dev_zip:
        dev_count, dev_noun = dev_ref.size()
        say("Development reference: {} ({:,} {})".format(shown(dev_reference), dev_count,
                                                        dev_noun))
        dev_zip = os.path.join(build, "dev_reference_data-{}.zip".format(track.name))
        size = write_zip(dev_zip, *reference_entries(dev_task, dev_ref, layout, build, say))
        say("  {:<21} {:>9}  ({} track)".format(DEV_REFERENCE_ZIP, human(size), track.name))
        made[("reference", dev_reference, task.name)] = dev_zip
    return dev_zip, manifest_bytes(dev_task, dev_ref) if data.kit.manifest else None


# --- a bundle made of parts -------------------------------------------------------------------

def page_context(track: Track, test_sets: List[Tuple],
                 max_params: int = 150000000) -> pages.PageContext:
    """What the template tokens of a bundle's pages and texts say: its phases as dated, its
    deadline, its bundled test set(s) and the final submission's parameter limit."""
    doc = track.v15
    limits = [pages.Limits(CODALAB.phase_label(ph), ph.get("max_submissions_per_day"),
                           ph.get("max_submissions"), ph.get("execution_time_limit"))
              for ph in CODALAB.phases(doc)]
    info = CODALAB.phase_info(doc, utcnow())
    rule = rule_text(info["leaderboard_rule"], info["ranking"])
    return pages.context(CODALAB.spans(doc), track.deadline, test_sets, limits, rule,
                         settings.fact_sheet_items(track.codabench.get("fact_sheet")),
                         bool(track.codabench.get("queue")), max_params)


def fill_in(track: Track, ctx: pages.PageContext) -> Track:
    """The track's yaml with its texts' tokens ({{year}}, {{test_set}}...) filled in."""
    try:
        return with_doc(track, pages.render_doc(track.v15, ctx, track.sources))
    except ValueError as exc:
        raise Refused(str(exc)) from None


def bundle_files(source: Source, doc: Dict[str, Any], zips: List[Tuple[str, str]], what: str,
                 ctx: pages.PageContext) -> Tuple[List[Tuple[str, str]], Dict[str, bytes]]:
    """The data zips and logo of one bundle (files), and its pages with their tokens filled in
    (generated); Refused if the definition names a page or logo that does not exist."""
    html = list(doc.get("html", {}).values())
    shared = list(zips) + [(p, os.path.join(source.root, p)) for p in files_referenced(doc)]
    missing = [p for p, src in shared if not os.path.isfile(src)]
    if missing:
        raise Refused("{}: competition.yaml refers to files that do not exist: {}".format(
            what, ", ".join(missing)))
    generated: Dict[str, bytes] = {}
    for page in html:
        with open(os.path.join(source.root, page), encoding="utf-8") as f:
            text = f.read()
        try:
            generated[page] = pages.render(text, ctx, page).encode("utf-8")
        except ValueError as exc:
            raise Refused(str(exc)) from None
    return [(p, src) for p, src in shared if p not in generated], generated
