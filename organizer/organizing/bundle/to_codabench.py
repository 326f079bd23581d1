"""A track's Codabench v2 competition yaml, derived from its v1.5 form (tracks.py), and the merged
v2 bundle that runs several tracks' tasks in one competition.
"""
import copy
from typing import Any, Dict, List, Optional

from platforms import codabench_definition, codalab_definition
from platforms.dates import ONE_SECOND, as_datetime

from .private_part import PUBLIC_MARKS
from .schedule import yaml_date
from .tracks import GENERATED_HEADER, Track, dump

# v1.5 html keys -> v2 page titles (terms is separate in v2).
PAGE_TITLES = {"overview": "Overview", "evaluation": "Evaluation", "data": "Data"}


def _v2_date(value: Any) -> Any:
    """A v2 date Codabench reads as meant.

    Codabench's unpacker turns any YAML date or timestamp into midnight of its date (a datetime
    is a date subclass, and it combines it with time 0), so a timestamp with a time of day must
    be written as a string, which it parses with dateutil instead.
    """
    when = as_datetime(value)
    return value if when is None else yaml_date(when)


def _columns_of(v15: Dict[str, Any], label: str) -> List[Any]:
    columns = v15["leaderboard"]["columns"]
    mine = [(key, col) for key, col in columns.items()
            if str(col["leaderboard"]["label"]).strip().lower() == str(label).strip().lower()]
    order = {key: i for i, key in enumerate(columns)}
    # CodaLab orders by rank, then yaml order; Codabench by index: keep CodaLab's order.
    return sorted(mine, key=lambda kc: (kc[1].get("rank", 1), order[kc[0]]))


def _leaderboards(v15: Dict[str, Any]) -> List[Dict[str, Any]]:
    boards = sorted(v15["leaderboard"]["leaderboards"].items(),
                    key=lambda kv: kv[1].get("rank", 1))
    out = []
    for key, board in boards:
        columns = _columns_of(v15, board["label"])
        # CodaLab ranks by the column with the highest selection_default (first one on ties).
        ranking = max(range(len(columns)),
                      key=lambda i: (columns[i][1].get("selection_default", 0), -i)) if columns else 0
        # No `index`: the v2 unpacker passes a leaderboard to LeaderboardSerializer, whose
        # fields are id, primary_index, title, key, columns, hidden, submission_rule
        # (codabench api/serializers/leaderboards.py:50-60): anything else is dropped.
        out.append({
            "title": board["label"],
            "key": key,
            "submission_rule": codabench_rule(v15),
            "primary_index": ranking,
            "columns": [{
                "title": col.get("label", key),
                "key": ckey,
                "index": i,
                "sorting": col.get("sort", "desc"),
                "precision": int(col.get("numeric_format", 2)),
            } for i, (ckey, col) in enumerate(columns)],
        })
    return out


def codabench_rule(v15: Dict[str, Any]) -> str:
    """The v2 submission_rule equivalent to the v1.5 leaderboard keys (CodaLab's force_best per
    phase, force_submission for the competition: codalab_definition.leaderboard_rule).
    Codabench has one rule per leaderboard and every phase shares the first leaderboard, so the
    phases must agree."""
    rules = sorted(set(codalab_definition.leaderboard_rule(v15, p)
                       for p in codalab_definition.phases(v15)))
    if len(rules) > 1:
        raise ValueError("the phases put submissions on the leaderboard by different rules "
                         "({}): a Codabench leaderboard has one".format(", ".join(rules)))
    return codabench_definition.SUBMISSION_RULE[rules[0] if rules else "chosen"]


def to_v2(v15: Dict[str, Any], extras: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The Codabench v2 definition equivalent to a v1.5 one: one task per distinct scoring
    program and data (phases that score alike share it), one phase per phase; extras: the
    keys only v2 has (Track.codabench)."""
    html = v15["html"]
    phases15 = codalab_definition.phases(v15)
    tasks: List[Dict[str, Any]] = []
    phases: List[Dict[str, Any]] = []
    task_of: Dict[Any, int] = {}
    for index, p in enumerate(phases15):
        data = tuple(p.get(k) for k in codabench_definition.DATA_KEYS)
        if data not in task_of:
            task_of[data] = len(tasks)
            task = {"index": len(tasks), "name": "{} scoring".format(p["label"]),
                    "description": p.get("description", "")}
            task.update((k, p[k]) for k in codabench_definition.DATA_KEYS if p.get(k))
            tasks.append(task)
        phase = {
            "index": index,
            "name": p["label"],
            "description": p.get("description", ""),
            "start": _v2_date(p["start_date"]),
        }
        if index + 1 < len(phases15):
            # v1.5 phases end when the next starts; Codabench refuses end == next start, so
            # the phase ends one second before the next one starts.
            nxt = as_datetime(phases15[index + 1]["start_date"])
            if nxt is None:
                raise ValueError("phase {} has no readable start_date".format(
                    phases15[index + 1].get("label")))
            phase["end"] = yaml_date(nxt - ONE_SECOND)
        elif v15.get("end_date") and not p.get("phase_never_ends"):
            phase["end"] = _v2_date(v15["end_date"])
        # else open-ended: no end (Codabench keeps a phase without an end Current)
        for key in ("max_submissions", "max_submissions_per_day", "execution_time_limit",
                    "starting_kit", "public_data"):
            if key in p:
                phase[key] = p[key]
        phase["tasks"] = [task_of[data]]
        phases.append(phase)

    doc = {"version": 2, "title": v15["title"]}
    for key in ("description", "image"):
        if key in v15:
            doc[key] = v15[key]
    doc["registration_auto_approve"] = not v15.get("has_registration", False)
    if v15.get("competition_docker_image"):
        doc["docker_image"] = v15["competition_docker_image"]
    doc["enable_detailed_results"] = bool(v15.get("enable_detailed_results", False))
    doc.update(extras or {})
    doc["terms"] = html["terms"]
    doc["pages"] = [{"title": PAGE_TITLES.get(k, k.replace("_", " ").title()), "file": path}
                    for k, path in html.items() if k != "terms"]
    doc["tasks"] = tasks
    doc["phases"] = phases
    doc["leaderboards"] = _leaderboards(v15)
    return doc


def v2_text(track: Track) -> str:
    header = GENERATED_HEADER.format(
        sources=track.sources,
        what="Codabench competition bundle (v2), {} track.".format(track.name))
    return dump(to_v2(track.v15, track.codabench), header)


# --- one Codabench competition for several tracks ----------------------------------------------

def merge_v2(tracks: List[Track], task_names: List[str], files: List[Dict[str, str]],
             title: str, description: str = "",
             prefixes: Optional[List[str]] = None) -> Dict[str, Any]:
    """One Codabench v2 definition running every track's task in every phase.

    Codabench's phases are sequential (its unpacker refuses overlapping ones), so two tasks
    scored side by side share a phase: `tasks: [0, 1]` makes each submission a parent with one
    child per task, every child scoring the same zip with its own program and reference, and
    writing its keys into the one leaderboard (competitions/tasks.py, _run_submission;
    api/views/submissions.py, upload_submission_scores). The tracks must have the same phases
    (dates, limits): they are one competition. files[i] renames track i's data zips (two
    tracks' reference_data.zip must not collide in one bundle). prefixes[i]: the short name
    of track i's task that starts its columns' titles and names the leaderboard (_named).
    """
    docs = [to_v2(t.v15, t.codabench) for t in tracks]
    _same_phases(tracks, docs)
    out = copy.deepcopy(docs[0])
    out["title"] = title
    if description:
        out["description"] = description
    out["tasks"] = _one_task_per_track(tracks, docs, task_names, files)
    _every_phase_runs_every_task(out, docs, files)
    out["leaderboards"] = [_one_leaderboard(out["leaderboards"][0], docs)]
    if prefixes:
        _named(out["leaderboards"][0], docs, prefixes)
    return out


def _named(board: Dict[str, Any], docs: List[Dict[str, Any]], prefixes: List[str]) -> None:
    """Each task's columns titled with its name: Codabench attaches every phase to the first
    leaderboard (competitions/unpackers/base_unpacker.py, _save_competition: a second one is
    saved but shown nowhere), and its page repeats every column under each task's name
    (api/views/competitions.py, get_leaderboard: colWidth = len(columns); leaderboards.tag), a
    task's cells filled only under its own columns: "Panoptic: PQ" says whose column it is, and
    the page's column filter finds a task's columns by its name. The leaderboard's title, shown
    above the table, names the tasks."""
    index = 0
    public = False
    for doc, prefix in zip(docs, prefixes):
        for _ in doc["leaderboards"][0]["columns"]:
            column = board["columns"][index]
            title = str(column.get("title") or column["key"])
            # A split bundle's "(public part)" goes once into the leaderboard's title: with
            # the task's name as well, a column title would pass Codabench's 36 characters.
            for mark in PUBLIC_MARKS:
                if title.endswith(mark):
                    title, public = title[:-len(mark)], True
                    break
            column["title"] = "{}: {}".format(prefix, title)
            index += 1
    board["title"] = ", ".join(prefixes) + (PUBLIC_MARKS[0] if public else "")


def _same_phases(tracks: List[Track], docs: List[Dict[str, Any]]) -> None:
    """ValueError unless every track has the base track's phases (names and dates)."""
    theirs = [(p["name"], p["start"], p.get("end")) for p in docs[0]["phases"]]
    for t, doc in zip(tracks[1:], docs[1:]):
        mine = [(p["name"], p["start"], p.get("end")) for p in doc["phases"]]
        if mine != theirs:
            raise ValueError("{} track: its phases {} differ from the {} track's {}: one "
                             "Codabench competition runs both tasks in the same phases".format(
                                 t.name, mine, tracks[0].name, theirs))


def _one_task_per_track(tracks: List[Track], docs: List[Dict[str, Any]],
                        task_names: List[str],
                        files: List[Dict[str, str]]) -> List[Dict[str, Any]]:
    """Track i's task, index i, its data zips renamed by files[i]."""
    tasks = []
    for i, (t, doc) in enumerate(zip(tracks, docs)):
        if len(doc["tasks"]) != 1:
            raise ValueError("{} track: its phases score with {} different programs or data; a "
                             "merged bundle takes one task per track".format(
                                 t.name, len(doc["tasks"])))
        task = dict(doc["tasks"][0], index=i, name=task_names[i] or t.v15["title"],
                    description=t.v15.get("description", ""))
        for key, value in files[i].items():
            if key in task:
                task[key] = value
        tasks.append(task)
    return tasks


def _every_phase_runs_every_task(out: Dict[str, Any], docs: List[Dict[str, Any]],
                                 files: List[Dict[str, str]]) -> None:
    limits = [p.get("execution_time_limit") for d in docs for p in d["phases"]]
    for phase in out["phases"]:
        phase["tasks"] = list(range(len(docs)))
        if any(limits):
            # Each child runs under the phase's limit: the slowest task's.
            phase["execution_time_limit"] = max(v for v in limits if v)
        if "starting_kit" in phase and "starting_kit" in files[0]:
            phase["starting_kit"] = files[0]["starting_kit"]


def _one_leaderboard(board: Dict[str, Any], docs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One leaderboard: Codabench attaches every phase to the first one. Columns of the tracks
    in order, each track's ranking column first; Add, whatever the tracks' rule: each child's
    scores run the rule on that child alone (api/views/submissions.py:594), and the forced rules
    put that child, one task's scores, on the leaderboard without its siblings
    (leaderboards/strategies.py:20-27, 53-103; Force_Best picks the child whose ranking score is
    NULL, first in PostgreSQL's DESC). Add puts every child of the submission the participant
    adds (submissions.py:326-327)."""
    columns = []
    for doc in docs:
        first = doc["leaderboards"][0]
        ordered = first["columns"][first["primary_index"]:first["primary_index"] + 1] + [
            c for j, c in enumerate(first["columns"]) if j != first["primary_index"]]
        columns += [dict(c) for c in ordered]
    keys = [c["key"] for c in columns]
    repeated = sorted(set(k for k in keys if keys.count(k) > 1))
    if repeated:
        raise ValueError("the tracks' leaderboards share the keys {}: in one Codabench "
                         "leaderboard a key is one column".format(", ".join(repeated)))
    for index, column in enumerate(columns):
        column["index"] = index
    board["columns"] = columns
    board["primary_index"] = 0
    board["submission_rule"] = codabench_definition.SEVERAL_TASKS_RULE
    return board


def merged_v2_text(tracks: List[Track], doc: Dict[str, Any]) -> str:
    header = GENERATED_HEADER.format(
        sources=", ".join(t.sources for t in tracks),
        what="Codabench competition bundle (v2), one task per track: {}.".format(
            ", ".join(t.name for t in tracks)))
    return dump(doc, header)
