"""A track's starting kit: the files its source names, a copy of the scoring program, the
sample submission, the task's manifest, phase.json (the phase's time limit and leaderboard) and
the reference's config.yaml, as the kit's tools and dry run find them.
"""
import json
import os
from typing import Dict, List, Optional, Tuple

import dry_run  # the kit's (kit/dry_run.py): the names of the files it reads beside it
from platforms import codabench_definition
from platforms.codalab import CODALAB
from platforms.dates import utcnow

from .reference import reference_config_file
from .refusal import Refused, shown
from .reproducible_zip import collect
from .source import TrackData
from .tracks import Track

DEV_MANIFEST_PREFIX = "dev_"   # dev_manifest.json beside manifest.json (--dev-reference)


def kit_contents(data: TrackData, track: Track, reference: str,
                 reference_root: str, manifest: Optional[bytes],
                 dev_manifest: Optional[bytes] = None, config: Optional[bytes] = None
                 ) -> Tuple[List[Tuple[str, str]], Dict[str, bytes]]:
    """The track's starting kit (source.json "starting_kit"): its files, a copy of the
    scoring program (so the kit's checks are the scorer's), the sample submission, the
    reference's public files it names, the task's manifest, phase.json and the reference's
    config.yaml as reference_config.yaml (task, label table, options; no labels): the dry run
    scores validation labels in the dataset's layout, which have none, with it. config: that
    config.yaml as the track bundles it (another task than the organizer's folder names), or
    None: the folder's."""
    entries: List[Tuple[str, str]] = []
    for name, path in data.kit.files:   # a folder (the kit's final_package/) goes in whole
        entries += (collect(path, prefix=name.rstrip("/") + "/") if os.path.isdir(path)
                    else [(name, path)])
    config_file = reference_config_file(reference)
    if config_file and config is None:
        entries.append((dry_run.REFERENCE_CONFIG, config_file))
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
    generated = {dry_run.PHASE_FILE: phase_json(track)}
    if config is not None:
        generated[dry_run.REFERENCE_CONFIG] = config
    if data.kit.manifest and manifest is not None:
        generated[data.kit.manifest] = manifest
    if data.kit.manifest and dev_manifest is not None:
        # The Development phase is scored on the validation images: the kit's check and zip
        # tools take their names and sizes with --manifest (the test manifest refuses them).
        generated[DEV_MANIFEST_PREFIX + data.kit.manifest] = dev_manifest
    return entries, generated


def phase_json(track: Track,
               other_tasks: Optional[List[Dict[str, str]]] = None) -> bytes:
    """The kit's phase.json: the track's time limit and leaderboard, as CodaLab's model reads
    its v1.5 definition (the kit's dry_run.py reads it); in a merged
    kit, also the other tasks every submission is scored on (make_submission.py says what the
    zip still lacks)."""
    info = CODALAB.phase_info(track.v15, utcnow())
    kept = {k: info[k] for k in ("title", "phase", "execution_time_limit", "columns",
                                 "enable_detailed_results", "leaderboard_rule", "ranking")}
    if other_tasks:
        kept["other_tasks"] = other_tasks
        # The merged bundle's leaderboard rule (to_codabench.merge_v2), whatever the track's.
        kept["leaderboard_rule"] = codabench_definition.RULE_NAMES[
            codabench_definition.SEVERAL_TASKS_RULE]
    return (json.dumps(kept, indent=1, sort_keys=True) + "\n").encode("utf-8")


