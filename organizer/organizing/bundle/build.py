"""Every bundle of a competition: for every track, a Codabench v2 zip and a CodaLab v1.5 zip
(for self-hosted CodaLab servers: CodaLab Competitions takes no new challenges since the end of
2025), and on demand the merged Codabench bundle (merged.py).

Each bundle holds the track's competition.yaml, its pages and logo, scoring_program.zip (the
program's files at the zip's root), reference_data.zip and starting_kit.zip (parts.py). The
pages, titles and bundle names get their dated and counted parts (the year, the timeline, the
test set's size) from the phases and the bundled reference (pages.py). The same tree (and the
same dates) gives byte-identical zips (reproducible_zip.py).
"""
import os
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from . import pages, settings as organizer_settings
from .merged import build_merged
from .private_part import PrivateShare
from .parts import Built, TrackParts, build_track, bundle_files, page_context
from .refusal import Refused, human
from .reproducible_zip import write_zip
from .schedule import DEV_REFERENCE_ZIP, Development, Schedule, with_development
from .settings import Settings
from .source import Source
from .to_codabench import v2_text
from .tracks import Track, load_tracks, with_doc

PLATFORMS = (("codalab", "CodaLab v1.5"), ("codabench", "Codabench v2"))
Say = Callable[[str], None]


class BuildResult(NamedTuple):
    built: List[Built]
    manifest: Optional[bytes]       # the base track's kit manifest
    parts: List[TrackParts]         # the tracks as built
    prefix: str                     # the bundle names' prefix, its {{year}} filled in
    settings: Settings = Settings()
    defaults: Settings = Settings()   # the source's


def build_bundles(build: str, source: Source, schedule: Schedule, references: Any, layout: str,
                  say: Say, sample: bool = True, merged: bool = False,
                  confidence_columns: bool = False, settings: Optional[Settings] = None,
                  dev_references: Optional[Dict[str, str]] = None,
                  development: Optional[Development] = None,
                  private: Optional[PrivateShare] = None) -> BuildResult:
    """Every bundle of the source (with merged, also the merged Codabench bundle); references
    maps each track to its reference folder (one folder: every track's); private:
    --private-share (private_part.py)."""
    dev_references = dev_references or {}
    tracks, settings, defaults, prefix = prepared_tracks(source, schedule, settings,
                                                         bool(dev_references), development)
    if isinstance(references, str):
        references = {t.name: references for t in tracks}
    made: Dict[Any, str] = {}
    parts = [build_track(build, source, track, references[track.name], layout, say, made,
                         confidence_columns, dev_references.get(track.name, ""), private)
             for track in tracks]
    built: List[Built] = []
    for part in parts:
        built += track_bundles(build, source, part, prefix, sample, say)
    if merged:
        built.append(build_merged(build, source, parts, sample, prefix, say))
    base = next((p for p in parts if p.track.name == source.base_track), parts[0])
    return BuildResult(built, base.manifest, parts, prefix, settings, defaults)


def prepared_tracks(source: Source, schedule: Schedule, settings: Optional[Settings],
                    development_phase: bool, development: Optional[Development]
                    ) -> Tuple[List[Track], Settings, Settings, str]:
    """(the tracks with the organizer's dates, Development phase and settings written in; the
    settings; the source's defaults; the bundle names' prefix)."""
    try:
        tracks = load_tracks(source, schedule)
    except (ValueError, KeyError, TypeError) as exc:
        raise Refused("{}: {}".format(source.name, exc)) from None
    try:
        defaults = organizer_settings.from_source(source.settings, source.path)
    except (ValueError, TypeError) as exc:
        raise Refused(str(exc)) from None
    if settings is None:
        settings = defaults
    try:
        # The names carry the challenge's year ({{year}} in source.json's prefix).
        prefix = pages.render(source.prefix, page_context(tracks[0], []), source.path)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    if development_phase:
        try:
            tracks = [with_doc(t, with_development(t.v15, development or Development()))
                      for t in tracks]
        except ValueError as exc:
            raise Refused(str(exc)) from None
    settings = organizer_settings.with_definition(settings, tracks[0].v15)
    tracks = [with_doc(t, organizer_settings.apply_v15(t.v15, settings))._replace(
        codabench=organizer_settings.v2_extras(settings)) for t in tracks]
    return tracks, settings, defaults, prefix


def track_bundles(build: str, source: Source, part: TrackParts, prefix: str, sample: bool,
                  say: Say) -> List[Built]:
    """The track's starting kit zip, and its bundle for each platform."""
    track = part.track
    kit_zip = os.path.join(build, "starting_kit-{}.zip".format(track.name))
    size = write_zip(kit_zip, part.kit_entries, part.kit_data)
    say("  starting_kit.zip      {:>9}  ({} track)".format(human(size), track.name))
    zips = [("scoring_program.zip", part.program_zip),
            ("reference_data.zip", part.reference_zip), ("starting_kit.zip", kit_zip)]
    if part.dev_reference_zip:
        zips.append((DEV_REFERENCE_ZIP, part.dev_reference_zip))
    ctx = page_context(track, [part.test_set], part.max_params)
    what = "{} track".format(track.name)
    shared, filled = bundle_files(source, track.v15, zips, what, ctx)
    # CodaLab asks no fact sheet: its pages must not say that it does.
    pages_of = {"codabench": filled, "codalab": bundle_files(
        source, track.v15, zips, what, ctx._replace(fact_sheet=[]))[1]}
    submission = part.data.sample_submission if sample else ""
    texts = {"codalab": track.v15_text, "codabench": v2_text(track)}
    built = []
    for platform, label in PLATFORMS:
        name = "{}-{}-{}.zip".format(prefix, track.name, platform)
        path = os.path.join(build, name)
        write_zip(path, shared, dict(pages_of[platform], **{
            "competition.yaml": texts[platform].encode("utf-8")}))
        built.append(Built(name, path, "{}, {} track".format(label, track.name), platform,
                           submission, (track.name,)))
    return built
