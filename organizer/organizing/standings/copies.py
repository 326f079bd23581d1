"""Near-identical predictions between teams: the pairs of compare.py's `agreement` (with
--leaderboard: the share of identical pixels, or answers, of two submissions over what both
predicted) whose submissions belong to different teams and agree at least `threshold`.
Evidence for the jury, never a verdict: two honest teams fine-tuning one public model can agree
on most pixels; the jury reads the methods."""
from typing import Any, Callable, Dict, List


def near_identical(comparison: Dict[str, Any], team_of: Callable[[str], str],
                   threshold: float) -> List[Dict[str, Any]]:
    owners = {r["model"]: r["owner"] for r in comparison.get("rows") or []}
    out = []
    for pair in comparison.get("agreement") or []:
        a, b = pair["a"], pair["b"]
        if a not in owners or b not in owners:
            continue
        ta, tb = team_of(owners[a]), team_of(owners[b])
        if ta == tb or not pair["compared"]:
            continue
        share = pair["identical"] / pair["compared"]
        if share >= threshold:
            out.append({"teams": [ta, tb], "models": [a, b], "identical": pair["identical"],
                        "compared": pair["compared"], "share": round(share, 6)})
    return out
