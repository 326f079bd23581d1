"""standings.html: the decision as the jury reads it. The prize places first, then every team in
leaderboard order with each failed check and its evidence, the submissions counted per team,
and the inputs the decision was made from. Built from the shared report blocks."""
from typing import Any, Dict, List

from scoring.report import html
from . import outputs


def render(doc: Dict[str, Any]) -> str:
    winners = {t["prize_place"]: t for t in doc["teams"] if t["prize_place"]}
    places: List[List[Any]] = []
    for place in range(1, doc["places"] + 1):
        t = winners.get(place)
        places.append([place, t["team"] if t else "not awarded",
                       t["leaderboard_rank"] if t else "", outputs.score_text(t) if t else "",
                       "; ".join(x for x in (outputs.moved_up(t), outputs.separation(t)
                                             if doc["compared"] else "") if x) if t else
                       "no further eligible team"])
    teams = [[t["leaderboard_rank"], t["team"], ", ".join(t["accounts"]),
              outputs.score_text(t), "yes" if t["eligible"] else "no",
              t["prize_place"] or "", outputs.reasons_line(t) or "none"]
             for t in doc["teams"]]
    sections = [("Prize places", html.scroll(html.counts_table(
        ["Place", "Team", "Leaderboard rank", doc["column"], "How"], places))),
        ("Teams in leaderboard order", html.scroll(html.counts_table(
            ["Rank", "Team", "Accounts", doc["column"], "Eligible", "Place",
             "Checks failed"], teams)))]
    for t in doc["teams"]:
        if t["reasons"]:
            notes = []
            for r in t["reasons"]:
                notes.append("{}: {}".format(r["check"], r["reason"]))
                notes += ["evidence: " + e for e in r["evidence"]]
            sections.append(("Passed over: " + t["team"] if t in outputs.passed_over(doc)
                             else "Not eligible: " + t["team"], html.notes_list(notes)))
    counted = [[t["team"], ", ".join(t["submissions"]["accounts"]), t["submissions"]["counted"],
                ", ".join("{}: {}".format(d, n) for d, n in
                          sorted(t["submissions"]["per_day"].items()))]
               for t in doc["teams"] if "submissions" in t]
    if counted:
        sections.append(("Submissions counted per team", html.scroll(html.counts_table(
            ["Team", "Accounts", "Counted", "Per UTC day"], counted)) + html.notes_list(
            [doc["limits"]["rule"]])))
    if doc["accounts_not_on_roster"]:
        sections.append(("Accounts not on the roster", html.notes_list(
            doc["accounts_not_on_roster"])))
    sections.append(("Inputs", html.scroll(html.counts_table(
        ["Input", "File", "SHA-256"], [[i["role"], i["path"], i["sha256"]]
                                       for i in doc["inputs"]]))))
    return html.page("Standings: {}{}".format(doc["task_title"], " - " + doc["track"]
                                              if doc["track"] else ""), sections,
                     "For the jury. Near-identical predictions are evidence, never a verdict; "
                     "docs/standings.md says what each check reads and from which platform "
                     "code.")
