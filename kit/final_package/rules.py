"""The final-submission rules: the Agriculture-Vision rules as defaults, overridden by the
reference's config.yaml under `final_submission:` (one bundle source states them once).

    final_submission:
      max_params: 150000000        # the total model size limit, in parameters
      root: submission             # the package's top folder
      results: results             # the label predictions (inside root)
      code: code
      models: models
      report: challenge_report.pdf
      tolerance: 0.001             # reproduction: |score difference| at most this
      leaderboard_column: mIoU     # the ranking score's column in a leaderboard export
"""
from typing import Any, Dict, NamedTuple, Optional

from scoring.problems import REF_CONFIG, BrokenReference, ProblemLog
from scoring.quoting import brief

KEY = "final_submission"


class Rules(NamedTuple):
    max_params: int = 150000000
    root: str = "submission"
    results: str = "results"
    code: str = "code"
    models: str = "models"
    report: str = "challenge_report.pdf"
    tolerance: float = 0.001
    leaderboard_column: Optional[str] = None


_TYPES = {"max_params": int, "root": str, "results": str, "code": str, "models": str,
          "report": str, "tolerance": float, "leaderboard_column": str}


def broken(detail: str) -> BrokenReference:
    log = ProblemLog()
    log.add(REF_CONFIG, "config.yaml", detail)
    return BrokenReference(log)


def read(ref_config: Dict[str, Any]) -> Rules:
    given = ref_config.get(KEY)
    if given is None:
        return Rules()
    if not isinstance(given, dict):
        raise broken("{}: must be a mapping of the rules, not {}".format(KEY, brief(given)))
    values: Dict[str, Any] = {}
    for key, value in given.items():
        if key not in _TYPES:
            raise broken("{}: unknown key {} (known: {})".format(KEY, brief(key),
                                                                   ", ".join(sorted(_TYPES))))
        want = _TYPES[key]
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
              if want is float else isinstance(value, want) and not isinstance(value, bool))
        if want is int and ok:
            ok = value > 0
        if want is str and ok:     # a name inside the package, never a path out of it
            ok = bool(value.strip()) and (key == "leaderboard_column" or (
                "/" not in value and "\\" not in value and value not in (".", "..")))
        if not ok:
            raise broken("{}: {} must be {}, not {}".format(
                KEY, key, {int: "a positive integer", float: "a non-negative number",
                           str: "a plain name"}[want], brief(value)))
        values[key] = float(value) if want is float else value
    return Rules(**values)
