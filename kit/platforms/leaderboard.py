"""Which submission of each participant a leaderboard shows, in participants' words.

Our names for the platforms' rules (each model maps its own keys to them: CodaLab's
force_best_submission_to_leaderboard / force_submission_to_leaderboard, Codabench's
submission_rule): best, last, chosen (the participant's, both platforms' default), several and
every (Codabench only). The pages, the build's plan and the dry run say the same sentences.
"""

RULES = ("best", "last", "chosen", "several", "every")


def rule_text(rule: str, ranking: str) -> str:
    """What the leaderboard shows under a rule, as participants are told (pages, plan, dry run);
    ranking: the ranking column's title."""
    return {
        "best": "each participant's best scored submission is on the leaderboard, put there "
                "automatically: a new one takes its place only when its {r} is higher (on an "
                "equal {r} Codabench compares the next columns, then keeps the earlier one; "
                "CodaLab takes the newer)",
        "last": "each participant's latest scored submission is on the leaderboard, put there "
                "automatically, even when it scores lower than the one before",
        "chosen": "a scored submission is not on the leaderboard until its participant puts "
                  "it there from their list of submissions; it then replaces the one put there "
                  "before",
        "several": "a scored submission is on the leaderboard only once its participant adds "
                   "it; they may add several and remove them",
        "every": "every scored submission is added to the leaderboard automatically",
    }.get(rule, "rule {!r}".format(rule)).format(r=ranking)


def row_fate(rule: str, ranking: str) -> str:
    """Which row the leaderboard shows after this submission, under the rule."""
    return {
        "best": "this row is on the leaderboard if its {r} beats the participant's earlier "
                "submissions; else their best one stays",
        "last": "this row replaces the participant's earlier one on the leaderboard",
        "chosen": "this row is not on the leaderboard until the participant puts it there",
        "several": "this row is on the leaderboard only once the participant adds it",
        "every": "this row is added to the leaderboard beside the participant's earlier ones",
    }.get(rule, "rule {!r}".format(rule)).format(r=ranking)
