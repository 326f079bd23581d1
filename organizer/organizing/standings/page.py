"""standings.html: the decision as the jury reads it. The prize places first (who moved up over
whom, whether the test set separates each place from the next), then every team in leaderboard
order with the checks it failed, each failed check with its evidence, the submissions counted
per team, and the inputs the decision was made from. Narrow tables, the long texts as notes
below them, so that a phone's 500 px shows every column. Built from the shared report blocks."""
from typing import Any, Dict, List

from scoring.report import html
from . import outputs

SHORT_HASH = 16      # hex digits of an input's SHA-256 shown (standings.json has all 64)


def _places(doc: Dict[str, Any]) -> str:
    winners = {t["prize_place"]: t for t in doc["teams"] if t["prize_place"]}
    part = bool(doc.get("split"))
    rows: List[List[Any]] = []
    notes: List[str] = []
    for place in range(1, doc["places"] + 1):
        t = winners.get(place)
        if t is None:
            rows.append([place, "not awarded", "", ""] + ["", ""] * part)
            notes.append("Place {}: not awarded, no further eligible team.".format(place))
            continue
        rows.append([place, t["team"], t["leaderboard_rank"], outputs.score_text(t)] +
                    ([t["part_rank"], outputs.part_score_text(t)] if part else []))
        for text in (outputs.moved_up(t), outputs.separation(t) if doc["compared"] else ""):
            if text:
                notes.append("Place {}, {}: {}.".format(place, t["team"], text))
    notes += [outputs.tie_line(doc, tie) + "." for tie in doc.get("ties") or []]
    if part:
        notes.insert(0, outputs.split_line(doc) + ".")
    return html.counts_table(["Place", "Team", "Leaderboard rank", doc["column"]] +
                             _part_headers(doc), rows) + \
        (html.notes_list(notes) if notes else "")


def _part_headers(doc: Dict[str, Any]) -> List[str]:
    part = doc["split"]["part"].capitalize() if doc.get("split") else ""
    return ["{} rank".format(part), "{} {}".format(part, doc["column"])] if part else []


def render(doc: Dict[str, Any]) -> str:
    part = bool(doc.get("split"))
    teams = [[t["leaderboard_rank"], t["team"], ", ".join(t["accounts"]),
              outputs.score_text(t)] + ([t["part_rank"], outputs.part_score_text(t)] if part
                                        else []) +
             ["yes" if t["eligible"] else "no", t["prize_place"] or "",
              ", ".join(r["check"] for r in t["reasons"]) or "none"]
             for t in doc["teams"]]
    sections = [("Prize places", _places(doc)),
                ("Teams in {} order".format("{} part".format(doc["split"]["part"]) if part
                                            else "leaderboard"), html.counts_table(
                    ["Leaderboard rank" if part else "Rank", "Team", "Accounts",
                     doc["column"]] + _part_headers(doc) +
                    ["Eligible", "Place", "Checks failed"], teams))]
    over = outputs.passed_over(doc)
    for t in doc["teams"]:
        if t["reasons"]:
            notes = []
            for r in t["reasons"]:
                notes.append("{}: {}".format(r["check"], r["reason"]))
                notes += ["evidence: " + e for e in r["evidence"]]
            sections.append((("Passed over: " if t in over else "Not eligible: ") + t["team"],
                             html.notes_list(notes)))
    counted = [[t["team"], ", ".join(t["submissions"]["accounts"]), t["submissions"]["counted"],
                ", ".join("{}: {}".format(d, n) for d, n in
                          sorted(t["submissions"]["per_day"].items()))]
               for t in doc["teams"] if "submissions" in t]
    if counted:
        sections.append(("Submissions counted per team", html.counts_table(
            ["Team", "Accounts", "Counted", "Per UTC day"], counted) + html.notes_list(
            [doc["limits"]["rule"]])))
    near = doc["near_identical"]
    if near["computed"]:
        sections.append(("Near-identical predictions", html.notes_list(
            [outputs.copy_line(p) for p in near["pairs"]] or [
                "No two teams' predictions agree on {:.1%} or more (compare.py's agreement of "
                "every pair); evidence for the jury, never a verdict.".format(
                    near["threshold"])])))
    if doc["accounts_not_on_roster"]:
        sections.append(("Accounts not on the roster", html.notes_list(
            doc["accounts_not_on_roster"])))
    if doc["not_checked"]:
        sections.append(("Not checked", html.notes_list(doc["not_checked"])))
    sections.append(("Inputs", html.counts_table(
        ["Input", "File", "SHA-256 (first {} digits)".format(SHORT_HASH)],
        [[i["role"], i["path"], i["sha256"][:SHORT_HASH]] for i in doc["inputs"]])))
    return html.page("Standings: {}{}".format(doc["task_title"], " - " + doc["track"]
                                              if doc["track"] else ""), sections,
                     "For the jury. Near-identical predictions are evidence, never a verdict; "
                     "docs/standings.md says what each check reads and from which platform "
                     "code.")
