"""compare.py's files: leaderboard.csv (a final leaderboard that generalist.py reads by itself)
and comparison.json.

leaderboard.csv: UTF-8; header `model`, `rank`, the task's ranking score key (higher is better),
the further score keys, then <key>_ci_low and <key>_ci_high of the keys with an interval; one row
per valid submission, by rank; `rank` is standard competition ranking (1-2-2-4). A cell starting
with =, +, -, @, a tab or a carriage return gets a leading single quote (OWASP CSV injection):
model names come from file names. Numbers as in scores.txt (plain decimals, 10 places); an
undefined score is an empty cell.
"""
import csv
import io
import json
import os
from typing import Any, Dict, List, Optional

from scoring.quoting import spreadsheet_safe
from scoring.report.scores_file import DECIMALS

def _number(value: Optional[float]) -> str:
    return "" if value is None else "{:.{}f}".format(value, DECIMALS)


def leaderboard_csv(keys: List[str], rows: List[Dict[str, Any]]) -> str:
    """rows: {"model", "rank", "scores": {key: value or None}} in rank order; keys: every score
    column in order, the ranking key first."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["model", "rank"] + keys)
    for row in rows:
        writer.writerow([spreadsheet_safe(row["model"]), str(row["rank"])] +
                        [_number(row["scores"].get(k)) for k in keys])
    return buf.getvalue()


def write_text(out_dir: str, name: str, text: str) -> None:
    """Under a temporary name, then renamed: never a half-written file."""
    os.makedirs(out_dir, exist_ok=True)
    tmp = os.path.join(out_dir, name + ".part")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, os.path.join(out_dir, name))


def comparison_json(doc: Dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, allow_nan=False, ensure_ascii=False) + "\n"
