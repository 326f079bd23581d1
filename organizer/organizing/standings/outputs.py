"""standings.json, standings.csv and the console lines, from the decided rows; no time and no
absolute path in them: the same inputs give the same bytes."""
import csv
import io
import json
from typing import Any, Dict, List

from scoring.problems import shown

FILES = ("standings.json", "standings.csv", "standings.html")
SEPARATION = {"separated": "separated from {} by the test set (Holm-adjusted p <= 0.05)",
              "tied": "statistically tied with {} (the test set does not separate them)",
              None: "not tested against {}"}


def passed_over(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The ineligible teams a prize place went past: those ranked above the last winner, or
    every ineligible team when a place is left unawarded."""
    teams = doc["teams"]
    winners = [t for t in teams if t["prize_place"]]
    if len(winners) < doc["places"]:
        return [t for t in teams if not t["eligible"]]
    last = teams.index(winners[-1])
    return [t for t in teams[:last] if not t["eligible"]]


def reasons_line(t: Dict[str, Any]) -> str:
    return "; ".join("{}: {}".format(r["check"], r["reason"]) for r in t["reasons"])


def score_text(t: Dict[str, Any]) -> str:
    return t["row"]["shown"] or "no score"


def moved_up(t: Dict[str, Any]) -> str:
    over = t.get("passed_over") or []
    if not over:
        return ""
    return "moved up over {}".format(", ".join("{} ({})".format(
        o["team"], ", ".join(o["reasons"])) for o in over))


def separation(t: Dict[str, Any]) -> str:
    if "next_eligible" not in t or "separation_from_next" not in t:
        return ""
    return SEPARATION[t["separation_from_next"]].format(t["next_eligible"])


def part_score_text(t: Dict[str, Any]) -> str:
    value = t.get("part_score")
    return "no score" if value is None else "{:.4f}".format(value)


def ranks_text(doc: Dict[str, Any], t: Dict[str, Any]) -> str:
    """"leaderboard rank 2, miou 0.5987" and, with --split, "; private rank 1, miou 0.6012"."""
    text = "leaderboard rank {}, {} {}".format(t["leaderboard_rank"], doc["column"],
                                               score_text(t))
    if doc.get("split"):
        text += "; {} rank {}, {} {}".format(doc["split"]["part"], t["part_rank"],
                                             doc["column"], part_score_text(t))
    return text


def split_line(doc: Dict[str, Any]) -> str:
    """What the places are ranked on, with --split."""
    split = doc["split"]
    tau = split.get("kendall_tau")
    return ("Ranked on the {} part of the test set ({} {}, {}), each team's leaderboard "
            "submission as compare.py scored it; Kendall's tau between the public and private "
            "rankings: {}".format(split["part"], split.get("units", "?"),
                                  split.get("unit_noun", "units"), split["file"],
                                  "n/a" if tau is None else "{:.3f}".format(tau)))


def tie_line(doc: Dict[str, Any], tie: Dict[str, Any]) -> str:
    """A tie at a prize boundary: the places it decides follow the leaderboard file's order."""
    rank = "leaderboard rank" if tie["ranked_by"] == "leaderboard_rank" else \
        "{} rank".format(doc["split"]["part"] if doc.get("split") else "")
    places = ", ".join("{} {}".format(team, "place {}".format(p) if p else "no place")
                       for team, p in zip(tie["teams"], tie["places"]))
    return ("Tie at a prize boundary: {} share {} {} ({} {}); only the leaderboard file's "
            "order gives {}: the jury decides".format(
                " and ".join(tie["teams"]), rank, tie["rank"], doc["column"], tie["score"],
                places))


def console_lines(doc: Dict[str, Any]) -> List[str]:
    lines = ["{} standings{}: {} teams on the leaderboard, {} prize place{}".format(
        doc["task_title"], " ({})".format(doc["track"]) if doc["track"] else "",
        len(doc["teams"]), doc["places"], "s" * (doc["places"] > 1))]
    if doc.get("split"):
        lines.append(split_line(doc))
    winners = {t["prize_place"]: t for t in doc["teams"] if t["prize_place"]}
    for place in range(1, doc["places"] + 1):
        t = winners.get(place)
        if t is None:
            lines.append("Place {}: not awarded (no further eligible team)".format(place))
            continue
        extra = "; ".join(x for x in (moved_up(t), separation(t) if doc["compared"] else "")
                          if x)
        lines.append("Place {}: {} ({}){}".format(place, t["team"], ranks_text(doc, t),
                                                  ": " + extra if extra else ""))
    for tie in doc.get("ties") or []:
        lines.append(tie_line(doc, tie))
    for t in passed_over(doc):
        lines.append("Passed over: {} ({}): {}".format(
            t["team"], ranks_text(doc, t) if doc.get("split") else
            "leaderboard rank {}".format(t["leaderboard_rank"]), reasons_line(t)))
    if doc["accounts_not_on_roster"]:
        lines.append("Accounts not on the roster: {}".format(
            ", ".join(doc["accounts_not_on_roster"])))
    for p in doc["near_identical"]["pairs"]:
        lines.append(copy_line(p))
    if doc["not_checked"]:
        lines.append("Not checked: {}".format("; ".join(doc["not_checked"])))
    return [shown(line) for line in lines]


def copy_line(p: Dict[str, Any]) -> str:
    return ("Near-identical predictions (evidence for the jury, not a verdict): {} and {}, "
            "{:.2%} identical ({:,} of {:,})".format(p["teams"][0], p["teams"][1], p["share"],
                                                     p["identical"], p["compared"]))


def standings_json(doc: Dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def standings_csv(doc: Dict[str, Any]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    part = doc["split"]["part"] if doc.get("split") else None
    w.writerow(["leaderboard_rank", "team", "accounts", "score", "eligible", "prize_place",
                "reasons", "evidence", "moved_up", "separation", "tied_with"] +
               (["{}_rank".format(part), "{}_score".format(part)] if part else []))
    for t in doc["teams"]:
        w.writerow([t["leaderboard_rank"], t["team"], " ".join(t["accounts"]), score_text(t),
                    "yes" if t["eligible"] else "no", t["prize_place"] or "",
                    reasons_line(t), " | ".join(e for r in t["reasons"] for e in r["evidence"]),
                    moved_up(t), separation(t) if doc["compared"] else "",
                    " ".join(t.get("tied_with") or [])] +
                   ([t["part_rank"], part_score_text(t)] if part else []))
    return out.getvalue()
