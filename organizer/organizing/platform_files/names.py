"""The names the platforms give downloaded submissions (docs/standings.md has the code).

Codabench, bulk download (src/apps/api/views/submissions.py, download_many):
`{submission id}_{owner}_PhaseId{phase id}_{created_when:%Y-%m-%d:%M-%S}_{file name}`, then the
browser's zip replaces every `:`, `/` and `\\` by `_` (submission_manager.tag), so
`48611_alpha_seg_PhaseId12_2027-05-10_05-07_submission.zip`. The time holds minutes and seconds
but no hour. Usernames match ^[a-z0-9_-]+$ and so never hold `PhaseId`: the owner is whatever lies
between the id and the first `_PhaseId<digits>_`.

CodaLab, "download the leaderboard's submissions" (codalab/apps/web/views.py,
download_leaderboard_results): `{username} - {number} submission.zip`, or `Team {team name}  -
{number} submission.zip` (two spaces: "Team %s " then " - ") when the account set a team name;
the number is the participant's own count, not the submission id; beside each, `output.zip`,
`profile.txt` and `method.txt` of the same stem, which are not submissions.
"""
import re
from typing import NamedTuple, Optional

_CODABENCH = re.compile(r"^(\d{1,18})_(.+?)_PhaseId(\d{1,18})_(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})_"
                        r"(.+)$", re.S | re.A)
_CODALAB = re.compile(r"^(.+) - (\d{1,18}) (submission\.zip|output\.zip|profile\.txt|"
                      r"method\.txt)$", re.S | re.A)


class Downloaded(NamedTuple):
    platform: str            # "codabench" or "codalab"
    owner: str               # the account (CodaLab: the username or "Team <name>")
    submission_id: Optional[int]   # Codabench's id (the results export's); None on CodaLab
    number: Optional[int]    # CodaLab's per-participant number; None on Codabench
    phase_id: Optional[int]
    date: str                # "YYYY-MM-DD" (UTC) on Codabench, "" on CodaLab
    minute_second: str       # "MM-SS" (no hour: the platform writes none)
    file_name: str           # the uploaded file's own name
    is_submission: bool      # False for CodaLab's output.zip, profile.txt, method.txt


def codabench(name: str) -> Optional[Downloaded]:
    m = _CODABENCH.match(name)
    if not m:
        return None
    sid, owner, phase, date, minutes, seconds, rest = m.groups()
    return Downloaded("codabench", owner, int(sid), None, int(phase), date,
                      "{}-{}".format(minutes, seconds), rest, True)


def codalab(name: str) -> Optional[Downloaded]:
    m = _CODALAB.match(name)
    if not m:
        return None
    who, number, kind = m.groups()
    if who.startswith("Team ") and who.endswith(" "):
        who = "Team " + who[5:-1]
    return Downloaded("codalab", who, None, int(number), None, "", "", kind,
                      kind == "submission.zip")


def parse(name: str) -> Optional[Downloaded]:
    """The platform's facts from a downloaded file's name, or None for any other name."""
    return codabench(name) or codalab(name)
