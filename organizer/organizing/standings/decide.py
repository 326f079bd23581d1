"""Who wins, as the Agriculture-Vision rules decide it: "the prize award will be granted to the
top 3 teams for each challenge track on the leaderboard that provide a valid final submission",
teams being registered once ("Each team can only register once per challenge track"; the
account's email among the form's members) and keeping "2 submissions per day and 20 submissions
in total" over all their accounts.

Pure: the inputs as read (leaderboard rows best first, roster, verdicts, limit counts, the
comparison) -> one row per team in leaderboard order (with --split, final_part.py: in the order
of each team's leaderboard submission's score on the part, the leaderboard rank beside it). A
team's row is its best leaderboard row over its accounts; its rank the standard competition
ranking of the teams' best scores. A team is eligible when no check fails; the prize places go
to the eligible teams in leaderboard order. Each check that fails is a reason with its evidence.
Near-identical predictions are evidence for the jury only and never a reason.
"""
from typing import Any, Dict, List, NamedTuple, Optional

from ..platform_files.results_export import Row
from ..ranks import competition_ranks
from ..teams.limits import TeamCount
from ..teams.roster import Roster

REGISTRATION, ONE_TEAM, LIMITS, PACKAGE = ("registration", "one team per account",
                                           "submission limits", "final package")
PART_SCORE = "score on the part"


class Verdict(NamedTuple):
    team: str
    folder: str
    valid: bool
    failed: List[str]       # "check: summary" of each failed check
    task: str
    claimed: Optional[str] = None        # the leaderboard score verify.py checked against
    claimed_from: Optional[str] = None


class Inputs(NamedTuple):
    rows: List[Row]                       # leaderboard rows, best first
    roster: Optional[Roster]
    verdicts: Dict[str, Verdict]          # team -> its verify.py verdict
    counts: Optional[Dict[str, TeamCount]]   # team -> its limits count (None: not given)
    per_day: Optional[int]
    total: Optional[int]
    places: int
    pairs: Optional[Dict[Any, Dict[str, Any]]]   # (model a, model b) -> comparison.json pair
    # --split/--part (final_part.py): model -> its score on the part the places are ranked on
    final: Optional[Dict[str, Optional[float]]] = None
    part: str = ""


def team_of(owner: str, roster: Optional[Roster]) -> str:
    """The account's team (its first on the roster), or the account itself."""
    if roster is None:
        return owner
    teams = roster.teams_of(owner)
    return teams[0] if teams else owner


def _reason(check: str, text: str, evidence: List[str]) -> Dict[str, Any]:
    return {"check": check, "reason": text, "evidence": evidence}


def _team_rows(inputs: Inputs) -> List[Dict[str, Any]]:
    rows: Dict[str, Dict[str, Any]] = {}
    for r in inputs.rows:
        team = team_of(r.owner, inputs.roster)
        if team not in rows:
            rows[team] = {"team": team, "score": r.score, "row": {
                "owner": r.owner, "submission_id": r.submission_id, "line": r.line,
                "shown": r.shown}, "other_rows": [], "leaderboard_accounts": []}
        else:
            rows[team]["other_rows"].append({"owner": r.owner, "submission_id":
                                             r.submission_id, "line": r.line, "shown": r.shown})
        if r.owner not in rows[team]["leaderboard_accounts"]:
            rows[team]["leaderboard_accounts"].append(r.owner)
    out = list(rows.values())
    ranks = competition_ranks([t["score"] for t in out])
    for t, rank in zip(out, ranks):
        t["leaderboard_rank"] = rank
    return out


def _checks(t: Dict[str, Any], inputs: Inputs) -> List[Dict[str, Any]]:
    roster, reasons = inputs.roster, []
    team = t["team"]
    if roster is not None:
        t["accounts"] = list(roster.teams.get(team, [])) or list(t["leaderboard_accounts"])
        strangers = [a for a in t["leaderboard_accounts"] if not roster.teams_of(a)]
        if strangers:
            reasons.append(_reason(REGISTRATION, "account{} {} not on the roster".format(
                "s" * (len(strangers) > 1), ", ".join(strangers)),
                ["leaderboard line {}: {}".format(t["row"]["line"], a) for a in strangers]))
        shared = {a: roster.teams_of(a) for a in t["accounts"] if len(roster.teams_of(a)) > 1}
        if shared:
            reasons.append(_reason(ONE_TEAM, "; ".join(
                "account {} is on the teams {}".format(a, ", ".join(ts))
                for a, ts in shared.items()), ["roster {}".format(roster.path)]))
    else:
        t["accounts"] = list(t["leaderboard_accounts"])
    count = inputs.counts.get(team) if inputs.counts is not None else None
    if count is not None:
        t["submissions"] = {"counted": count.counted, "per_day": count.per_day,
                            "accounts": count.accounts, "status_unknown": count.status_unknown}
        if count.broken:
            parts = ["{} submissions on {} (limit {} a day)".format(
                count.per_day[d], d, inputs.per_day) for d in sorted(count.over_days)]
            if count.over_total:
                parts.append("{} submissions in total (limit {})".format(count.counted,
                                                                          inputs.total))
            evidence = ["{}: beyond the daily limit: submission{} {}".format(
                d, "s" * (len(ids) > 1), ", ".join(str(i) for i in ids))
                for d, ids in sorted(count.over_days.items())]
            if count.over_total:
                evidence.append("beyond the total: {}".format(
                    ", ".join(str(i) for i in count.over_total)))
            evidence.append("counted over the accounts {} (Failed not counted, days in UTC)"
                            .format(", ".join(count.accounts)))
            reasons.append(_reason(LIMITS, "; ".join(parts) + " over {} account{}".format(
                len(count.accounts), "s" * (len(count.accounts) > 1)), evidence))
    verdict = inputs.verdicts.get(team)
    if verdict is None:
        reasons.append(_reason(PACKAGE, "no final package verified", [
            "no --verdict {}=DIR given".format(team)]))
    elif not verdict.valid:
        reasons.append(_reason(PACKAGE, "invalid ({})".format("; ".join(verdict.failed)),
                               ["verify.py verdict in {}".format(verdict.folder)]))
    return reasons


def _separation(a: str, b: str, pairs) -> Optional[str]:
    """'separated' (the test set supports the order), 'tied', or None (not tested)."""
    if pairs is None:
        return None
    pair = pairs.get((a, b)) or pairs.get((b, a))
    if pair is None:
        return None
    return "separated" if pair.get("significant") else "tied"


def _on_part(teams: List[Dict[str, Any]], inputs: Inputs, model_of) -> List[Dict[str, Any]]:
    """With --split: each team's leaderboard submission's score on the part and its rank
    there; the teams in that rank's order (ties in leaderboard order)."""
    final = inputs.final or {}
    for t in teams:
        t["part_score"] = final.get(model_of(t))
    for t, rank in zip(teams, competition_ranks([t["part_score"] for t in teams])):
        t["part_rank"] = rank
    return sorted(teams, key=lambda t: (t["part_rank"], t["leaderboard_rank"]))


def _part_reason(t: Dict[str, Any], inputs: Inputs) -> List[Dict[str, Any]]:
    if inputs.final is None or t["part_score"] is not None:
        return []
    return [_reason(PART_SCORE, "its leaderboard submission has no score on the {} part".format(
        inputs.part), ["not in the comparison, or invalid there (compare.py's "
                       "comparison.json, \"invalid\")"])]


def rank_key(inputs: Inputs) -> str:
    """The rank the places follow: the leaderboard's, or the part's with --split."""
    return "leaderboard_rank" if inputs.final is None else "part_rank"


def ties(teams: List[Dict[str, Any]], key: str) -> List[Dict[str, Any]]:
    """Eligible teams sharing a rank where a prize place is decided: two winners of one rank
    (their places follow the leaderboard file's order only), or a winner and an eligible team
    left without a place. Each is marked with the teams it is tied with."""
    groups: Dict[int, List[Dict[str, Any]]] = {}
    for t in teams:
        if t["eligible"]:
            groups.setdefault(t[key], []).append(t)
    out = []
    for rank, group in sorted(groups.items()):
        if len(group) > 1 and any(t["prize_place"] for t in group):
            for t in group:
                t["tied_with"] = [o["team"] for o in group if o is not t]
            first = group[0]
            out.append({"rank": rank, "ranked_by": key, "teams": [t["team"] for t in group],
                        "places": [t["prize_place"] for t in group],
                        "score": (first["row"]["shown"] or "no score")
                        if key == "leaderboard_rank" else "{:.4f}".format(first["part_score"])})
    return out


def decide(inputs: Inputs, model_of) -> List[Dict[str, Any]]:
    """The teams in leaderboard order (with --split: in the part's rank order), each with its
    checks and place. model_of(team row) -> its model's name in the comparison."""
    teams = _team_rows(inputs)
    if inputs.final is not None:
        teams = _on_part(teams, inputs, model_of)
    place = 0
    winners: List[Dict[str, Any]] = []
    for k, t in enumerate(teams):
        t["reasons"] = _checks(t, inputs) + _part_reason(t, inputs)
        t["eligible"] = not t["reasons"]
        t["prize_place"] = None
        if t["eligible"] and place < inputs.places:
            place += 1
            t["prize_place"] = place
            t["passed_over"] = [{"team": o["team"], "leaderboard_rank": o["leaderboard_rank"],
                                 "reasons": [r["check"] for r in o["reasons"]]}
                                for o in teams[:k] if not o["eligible"]]
            winners.append(t)
    eligible = [t for t in teams if t["eligible"]]
    for t in winners:
        nxt = eligible.index(t) + 1
        if nxt < len(eligible):
            t["next_eligible"] = eligible[nxt]["team"]
            t["separation_from_next"] = _separation(model_of(t), model_of(eligible[nxt]),
                                                    inputs.pairs)
    return teams
