"""A competition the bundle builder can build, as its source.json describes it.

Every competition of the repository has a folder competitions/<name>/ holding its source.json:
its base definition (a CodaLab v1.5 competition.yaml) and track overlays, the bundle names'
prefix, each track's scoring program, sample reference and submission, its starting kit's
files, the open-ended phase added after the deadline, the merged Codabench bundle's texts and
the organizer's settings' defaults (docs/bundle.md, "Another competition"). Paths in it are
relative to its own folder.
"""
import json
import os
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

SOURCE_FILE = "source.json"


class KitSpec(NamedTuple):
    """What a track's starting kit holds besides a copy of the scoring program, dry_run.py,
    phase.json and the sample submission (source.json "starting_kit")."""
    files: List[Tuple[str, str]]    # (name in the kit, absolute path)
    manifest: str                   # name of the task's manifest (the task's Manifest.make) in the
                                    # kit, "" = none
    from_reference: List[str]       # public files copied from the reference's root (e.g. the
                                    # VQA questions.json): the organizer's, not the sample's


class TrackData(NamedTuple):
    """What scores one track: its program, sample reference and submission, starting kit."""
    scoring_program: str            # absolute path of the scoring program folder
    sample_reference: str           # absolute path of the sample reference
    sample_submission: str          # absolute path of the sample submission ("" = none)
    kit: KitSpec
    columns_from_reference: bool    # add a leaderboard column per key the reference's task
                                    # writes (keys that depend on the organizer's label table)
    task_name: str                  # the Codabench task's name (a merged bundle's column group)
    task: str = ""                  # the task that scores the track, "" = the reference's
                                    # config.yaml's (the base track's default): tracks of tasks
                                    # that read one reference share the organizer's folder


class Source(NamedTuple):
    """One competition the tools can build, as described by its source.json (whose paths are
    relative to its own folder). The bundle's root mirrors `root`, the folder the definition's
    own paths (pages, logo) are relative to."""
    name: str                   # e.g. "agriculture-vision", chosen by bundle.sh --competition
    prefix: str                 # bundle file names: <prefix>-<track>-<platform>.zip
    root: str                   # absolute: the definition's paths are relative to it
    definition: str             # the v1.5 competition.yaml of the base track, relative to root
    tracks: str                 # folder of track overlays, relative to root ("" = none)
    base_track: str             # the name of the track the definition itself describes
    scoring_program: str        # absolute path of the scoring program folder (base track)
    sample_reference: str       # absolute path of the sample reference (base track)
    sample_submission: str      # absolute path of the sample submission ("" = none)
    post_challenge: Dict[str, Any]  # the added open-ended phase: label, description, color...
    path: str                   # the source.json itself
    track_data: Dict[str, TrackData] = {}   # per track; data(track) falls back to the base's
    # The merged Codabench bundle (one competition, one task per track, every phase running
    # them all; built with bundle.sh --merged): its title, description, kit README. {} = none.
    merged: Dict[str, Any] = {}
    repo_manifest: str = ""       # the repository's kit manifest, refreshed from the sample
    # The organizer's platform settings' defaults (leaderboard rule, registration, fact sheet,
    # contact, queue), as written: settings.from_source reads them.
    settings: Dict[str, Any] = {}

    def data(self, track: str) -> TrackData:
        return self.track_data.get(track) or self.track_data[self.base_track]


def _kit_spec(raw: Any, here: str, where: str) -> KitSpec:
    raw = raw or {}
    if not isinstance(raw, dict):
        raise ValueError("{}: starting_kit must be a mapping".format(where))
    files = []
    for entry in raw.get("files", []):
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(e, str)
                                                                    for e in entry)):
            raise ValueError("{}: starting_kit files are [name in the kit, path] pairs, not "
                             "{!r}".format(where, entry))
        files.append((entry[0], os.path.normpath(os.path.join(here, entry[1]))))
    return KitSpec(files, str(raw.get("manifest", "")), list(raw.get("from_reference", [])))


def _track_data(raw: Dict[str, Any], here: str, fallback: Optional[TrackData],
                where: str) -> TrackData:
    def repo_path(key: str, default: str) -> str:
        if key not in raw:
            return default
        return os.path.normpath(os.path.join(here, raw[key])) if raw[key] else ""

    base = fallback or TrackData("", "", "", KitSpec([], "", []), False, "")
    kit = _kit_spec(raw["starting_kit"], here, where) if "starting_kit" in raw else base.kit
    return TrackData(repo_path("scoring_program", base.scoring_program),
                     repo_path("sample_reference", base.sample_reference),
                     repo_path("sample_submission", base.sample_submission), kit,
                     bool(raw.get("columns_from_reference", base.columns_from_reference)),
                     str(raw.get("task_name", base.task_name)), str(raw.get("task", base.task)))


def _source_from(path: str) -> Source:
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    here = os.path.dirname(os.path.abspath(path))

    def repo_path(key: str) -> str:
        value = raw.get(key, "")
        return os.path.normpath(os.path.join(here, value)) if value else ""

    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) and raw.get(k)
                                            for k in ("name", "prefix")):
        raise ValueError("{}: a source needs \"name\" and \"prefix\"".format(path))
    raw.pop("_comment", None)
    base_track = raw.get("base_track", "main")
    base = _track_data(raw, here, None, path)
    per_track = {base_track: base}
    for track, entry in sorted((raw.get("track_data") or {}).items()):
        if not isinstance(entry, dict):
            raise ValueError("{}: track_data.{} must be a mapping".format(path, track))
        if track != base_track:
            # What a track does not say is the base track's (not its generated columns).
            per_track[track] = _track_data(entry, here, base._replace(
                columns_from_reference=False, task_name="", task=""), path)
    if "codabench" in raw:
        # It built the merged Codabench bundle by default; that bundle ranks a submission with
        # a failed task first, so it is built only when asked.
        raise ValueError("{}: \"codabench\" is no longer read: every track gets its Codabench "
                         "bundle, and bundle.sh --merged adds the merged one (\"merged\")"
                         .format(path))
    merged = dict(raw.get("merged") or {})
    if merged.get("kit_readme"):
        merged["kit_readme"] = os.path.normpath(os.path.join(here, merged["kit_readme"]))
    return Source(name=raw["name"], prefix=raw["prefix"], root=repo_path("root"),
                  definition=raw.get("definition", "competition.yaml"),
                  tracks=raw.get("tracks", ""), base_track=base_track,
                  scoring_program=base.scoring_program,
                  sample_reference=base.sample_reference,
                  sample_submission=base.sample_submission,
                  post_challenge=dict(raw.get("post_challenge") or {}), path=path,
                  track_data=per_track, merged=merged,
                  repo_manifest=repo_path("repo_manifest"),
                  settings=dict(raw.get("settings") or {}))


def find_sources(repo: str) -> Dict[str, Source]:
    """Every competition of the repository: competitions/<name>/source.json, one folder each,
    Agriculture-Vision (the flagship) included."""
    extra = os.path.join(repo, "competitions")
    paths = ([os.path.join(extra, d, SOURCE_FILE) for d in sorted(os.listdir(extra))]
             if os.path.isdir(extra) else [])
    sources: Dict[str, Source] = {}
    for path in paths:
        if os.path.isfile(path):
            source = _source_from(path)
            if source.name in sources:
                raise ValueError("two sources are named {}: {} and {}".format(
                    source.name, sources[source.name].path, path))
            sources[source.name] = source
    return sources
