"""scores.txt and scores.json, in the forms both platforms parse.

CodaLab v1 reads scores.txt with `key, value = line.split(":")` and float(value); Codabench reads
it as YAML (so `key: value` with a space) and prefers scores.json. Only finite plain decimals are
written: a NaN breaks the v1 leaderboard database and `1e-3` is a string in YAML. A score that has
no value (None) is left out, so the leaderboard shows it as missing rather than as a made-up 0.
"""
import json
import math
import os
from typing import List, Tuple

from ..task_api import Scores

DECIMALS = 10


def finite_scores(scores: Scores) -> List[Tuple[str, float]]:
    return [(k, round(float(v), DECIMALS)) for k, v in scores
            if v is not None and math.isfinite(v)]


def format_txt(scores: Scores) -> str:
    return "".join("{}: {:.{}f}\n".format(k, v, DECIMALS) for k, v in finite_scores(scores))


def write(out_dir: str, scores: Scores) -> None:
    """Both files, each written under a temporary name and renamed, so a platform never reads a
    half-written score file. The caller writes them once everything is computed, before the
    detailed page (commands/score.py, HTML_SETTLE_SECONDS: CodaLab v1's upload watcher)."""
    os.makedirs(out_dir, exist_ok=True)
    texts = (("scores.json", json.dumps(dict(finite_scores(scores)), indent=1,
                                        allow_nan=False) + "\n"),
             ("scores.txt", format_txt(scores)))
    for name, text in texts:
        tmp = os.path.join(out_dir, name + ".part")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(out_dir, name))
