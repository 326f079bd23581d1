"""The merged Codabench bundle of a competition whose tracks are tasks (bundle.sh --merged): one
competition, one task per track, every phase running them all on each upload; its starting kit
holds every track's.
"""
import os
import shutil
from typing import Any, Callable, Dict, List, Optional, Tuple

from platforms import codabench_definition
from platforms.codalab import CODALAB
from platforms.dates import utcnow
from platforms.leaderboard import rule_text

from . import pages
from .kit import phase_json
from .parts import Built, TrackParts, bundle_files, page_context
from .refusal import Refused, human
from .reproducible_zip import collect, write_zip
from .source import Source
from .to_codabench import PAGE_TITLES, codabench_rule, merge_v2, merged_v2_text

Say = Callable[[str], None]


def combined_submission(build: str, parts: List[TrackParts],
                        folders: Optional[Dict[str, str]] = None) -> str:
    """The tracks' sample submissions in one folder: what a participant uploads to a phase
    that runs every task (each task's scorer ignores the other's files). folders: track ->
    the folder of the zip its sample goes in (source.json merged.folders: the instance task's
    .txt files with their masks), else at the root."""
    out = os.path.join(build, "sample-submission-all")
    seen: Dict[str, str] = {}
    for part in parts:
        if not (part.data.sample_submission and os.path.isdir(part.data.sample_submission)):
            return ""
        folder = (folders or {}).get(part.track.name, "")
        for name, path in collect(part.data.sample_submission,
                                  prefix=folder + "/" if folder else ""):
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


def can_merge(source: Source, tracks: List[str]) -> bool:
    """A source whose tracks are tasks may also be built as one Codabench competition running
    them all (source.json "merged"); only when asked (--merged)."""
    return len(tracks) > 1 and bool(source.merged)


def merged_parts(source: Source, parts: List[TrackParts]) -> List[TrackParts]:
    """The tracks the merged bundle runs: source.json's merged "tracks" (in that order), else
    every track."""
    names = source.merged.get("tracks")
    if not names:
        return parts
    return [p for name in names for p in parts if p.track.name == name]


def build_merged(build: str, source: Source, parts: List[TrackParts], sample: bool,
                 prefix: str, say: Say) -> Built:
    """One Codabench bundle, one task per track (those merged_parts names), every phase running
    all of them."""
    parts = merged_parts(source, parts)
    files = [{"scoring_program": "scoring_program_{}.zip".format(p.track.name),
              "reference_data": "reference_data_{}.zip".format(p.track.name),
              "starting_kit": "starting_kit.zip"} for p in parts]
    ctx = page_context(parts[0].track, [p.test_set for p in parts], parts[0].max_params)
    merged_rule = codabench_definition.RULE_NAMES[codabench_definition.SEVERAL_TASKS_RULE]
    ctx = ctx._replace(rule=rule_text(merged_rule, CODALAB.phase_info(
        parts[0].track.v15, utcnow())["ranking"]))
    doc = merged_definition(source, parts, files, ctx)
    both = combined_submission(build, parts, source.merged.get("folders"))  # in the kit too
    zips = [("starting_kit.zip", merged_kit(build, source, parts, both, say))]
    for part, names in zip(parts, files):
        zips += [(names["scoring_program"], part.program_zip),
                 (names["reference_data"], part.reference_zip)]
    # Its own pages where the source says (they describe every task), else the base track's.
    html = dict(parts[0].track.v15["html"], **(source.merged.get("html") or {}))
    doc["terms"] = html["terms"]
    doc["pages"] = [{"title": PAGE_TITLES.get(k, k.replace("_", " ").title()),
                     "file": path} for k, path in html.items() if k != "terms"]
    shared, filled = bundle_files(source, dict(parts[0].track.v15, html=html), zips,
                                  "merged bundle", ctx)
    name = "{}-codabench.zip".format(prefix)
    path = os.path.join(build, name)
    text = merged_v2_text([p.track for p in parts], doc)
    write_zip(path, shared, dict(filled, **{"competition.yaml": text.encode("utf-8")}))
    say_hazards(parts, merged_rule, say)
    return Built(name, path, "Codabench v2, tracks {} in one competition".format(
        " + ".join(p.track.name for p in parts)), "codabench", both if sample else "",
        tuple(p.track.name for p in parts))


def merged_definition(source: Source, parts: List[TrackParts], files: List[Dict[str, str]],
                      ctx: pages.PageContext) -> Dict[str, Any]:
    """The merged v2 definition, its title and description's tokens filled in."""
    try:
        return merge_v2([p.track for p in parts], [p.data.task_name for p in parts], files,
                        pages.render(source.merged.get("title") or parts[0].track.v15["title"],
                                     ctx, source.path),
                        pages.render(source.merged.get("description", ""), ctx, source.path),
                        column_prefixes(source, parts))
    except ValueError as exc:
        raise Refused("{}: {}".format(source.name, exc)) from None


def column_prefixes(source: Source, parts: List[TrackParts]) -> List[str]:
    """Each task's name at the start of its columns' titles (source.json merged.column_prefix,
    short as a column title is at most 36 characters; else the task's name)."""
    short = source.merged.get("column_prefix") or {}
    return [short.get(p.track.name) or p.data.task_name or p.track.name for p in parts]


def merged_kit(build: str, source: Source, parts: List[TrackParts], both: str,
               say: Say) -> str:
    """The merged bundle's starting kit: every track's kit in a folder of its name, the
    merged README and the combined sample submission; returns the zip's path."""
    kit_entries: List[Tuple[str, str]] = []
    kit_data: Dict[str, bytes] = {}
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
    return kit_zip


def say_hazards(parts: List[TrackParts], merged_rule: str, say: Say) -> None:
    """What the merged bundle does that the per-track bundles do not."""
    say("WARNING (merged bundle): " + MERGED_HAZARD + ".")
    rule = codabench_definition.RULE_NAMES[codabench_rule(parts[0].track.v15)]
    if rule != merged_rule:
        say("WARNING (merged bundle): its leaderboard rule is {} (Add), not {}: Codabench "
            "applies a forced rule to each task's part of a submission as its scores arrive "
            "and puts that part alone on the leaderboard, a row of one task's scores "
            "(api/views/submissions.py:594, leaderboards/strategies.py). Participants add "
            "their submission to the leaderboard themselves.".format(merged_rule, rule))
