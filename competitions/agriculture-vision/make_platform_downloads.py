#!/usr/bin/env python3
"""What the organizer downloads from Codabench at the end of the challenge, for the sample: five
teams whose predictions are the sample submission, degraded by each team's own amount, so that
the README's end-of-challenge block (download -> compare -> verify -> standings) runs as written.

Writes into --out DIR (every name and format as the platform writes it, docs/standings.md):
    bulk_submissions.zip   the leaderboard's submissions, named as Codabench's bulk download names
                           them (`{id}_{owner}_PhaseId{phase}_{%Y-%m-%d_%M-%S}_submission.zip`)
    results.csv            the phase's results CSV (`Username` = `{owner}-{id}`, the fact sheet's
                           column twice, `{task}({id})-{column}`), scores by score.py
    submissions.json       the organizer's /api/submissions/?phase=ID listing (every submission)
    participants.json      the organizer's /api/participants/?competition=ID listing
    roster.csv             the registration form's export: team,member (username or email)
    packages/<team>/       the final packages the invited teams sent (samples/final_submission
                           with the team's results/)

The case, worked by hand in tests/standings/test_standings.py: Alpha (best; registered by
email), Bravo (its package's results/ are not its leaderboard submission), charlie-c (an account
on no team), Delta (two accounts, three submissions on 2027-05-10 between them: over "2 a day"),
Echo (valid). With 3 prizes: Alpha first, Echo second, no third.

Needs the repository (it scores with scoring_program/score.py), numpy and Pillow.
Usage: python3 competitions/agriculture-vision/make_platform_downloads.py --out end_of_challenge
"""
import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(HERE, "starting_kit", "sample_submission")
REF = os.path.join(HERE, "reference_data")
PACKAGE = os.path.join(ROOT, "samples", "final_submission")
PHASE, TASK_ID, TASK = 12, 7, "Agriculture-Vision"
FIXED_TIME = (2027, 5, 10, 12, 0, 0)        # zip entries' time: the same bytes on every run

# (team or None, account, email, share of pixels set to background, leaderboard submission id)
ACCOUNTS = [("Alpha", "alpha", "alpha@lab.example", 0.00, 48601),
            ("Bravo", "bravo_x", "bravo@uni.example", 0.04, 48602),
            (None, "charlie-c", "charlie@mail.example", 0.08, 48603),
            ("Delta", "delta1", "d1@corp.example", 0.12, 48604),
            ("Delta", "delta2", "d2@corp.example", 0.16, 48605),
            ("Echo", "echo-5", "echo@lab.example", 0.20, 48606)]
# Every submission of the phase: (id, owner, created_when, status). Delta's accounts make
# three on 2027-05-10 between them (each account alone stays within 2 a day); Alpha's Failed
# one is not counted, as the platform does not count it.
SUBMITTED = [(48590, "alpha", "2027-05-10T08:00:00Z", "Finished"),
             (48591, "alpha", "2027-05-10T09:00:00Z", "Failed"),
             (48601, "alpha", "2027-05-10T10:00:00Z", "Finished"),
             (48602, "bravo_x", "2027-05-10T11:00:00Z", "Finished"),
             (48603, "charlie-c", "2027-05-10T12:00:00Z", "Finished"),
             (48592, "delta1", "2027-05-10T07:30:00Z", "Finished"),
             (48604, "delta1", "2027-05-10T13:15:00Z", "Finished"),
             (48605, "delta2", "2027-05-10T14:05:07Z", "Finished"),
             (48606, "echo-5", "2027-05-11T09:00:00Z", "Finished")]
BRAVO_SENT = 0.30          # Bravo's package: results/ from another, worse, model


def degraded(share: float, folder: str) -> None:
    """The sample submission with the first `share` of each image's rows set to background."""
    os.makedirs(folder)
    for name in sorted(os.listdir(SAMPLE)):
        labels = np.array(Image.open(os.path.join(SAMPLE, name)))
        labels[:int(round(share * labels.shape[0]))] = 0
        Image.fromarray(labels.astype(np.uint8)).save(os.path.join(folder, name))


def zipped(folder: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(os.listdir(folder)):
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(os.path.join(folder, name), "rb") as f:
                z.writestr(info, f.read())
    return buf.getvalue()


def miou(folder: str, tmp: str) -> float:
    out = os.path.join(tmp, "scored-" + os.path.basename(folder))
    subprocess.run([sys.executable, os.path.join(ROOT, "scoring_program", "score.py"), "--ref",
                    REF, "--res", folder, "--out", out, "-q"], check=True)
    with open(os.path.join(out, "scores.json"), encoding="utf-8") as f:
        return json.load(f)["miou"]


def bulk_name(sid: int, owner: str, when: str) -> str:
    # download_many's f-string (%Y-%m-%d:%M-%S: no hour), then the browser's ':' -> '_'
    date, minutes, seconds = when[:10], when[14:16], when[17:19]
    return "{}_{}_PhaseId{}_{}:{}-{}_submission.zip".format(
        sid, owner, PHASE, date, minutes, seconds).replace(":", "_")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    out = p.parse_args().out
    os.makedirs(out, exist_ok=True)
    when = {sid: w for sid, _, w, _ in SUBMITTED}
    tmp = tempfile.mkdtemp(prefix="downloads-")
    try:
        rows, bulk = [], io.BytesIO()
        with zipfile.ZipFile(bulk, "w", zipfile.ZIP_STORED) as z:
            for team, account, _, share, sid in ACCOUNTS:
                folder = os.path.join(tmp, account)
                degraded(share, folder)
                z.writestr(zipfile.ZipInfo(bulk_name(sid, account, when[sid]), FIXED_TIME),
                           zipped(folder))
                rows.append((account, sid, miou(folder, tmp)))
                if team is not None and account != "delta2":
                    package = os.path.join(out, "packages", team)
                    shutil.rmtree(package, ignore_errors=True)
                    shutil.copytree(PACKAGE, package)
                    results = os.path.join(package, "submission", "results")
                    if team == "Bravo":
                        degraded(BRAVO_SENT, results)
                    else:
                        shutil.copytree(folder, results)
        with open(os.path.join(out, "bulk_submissions.zip"), "wb") as f:
            f.write(bulk.getvalue())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows.sort(key=lambda r: -r[2])             # the leaderboard's order
    column = "{}({})-mIoU".format(TASK, TASK_ID)
    with open(os.path.join(out, "results.csv"), "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)     # CRLF, as Django's csv.DictWriter writes it
        w.writerow(["Username", "fact_sheet_answers", "fact_sheet_answers", column])
        for account, sid, value in rows:
            answers = str({"method": "unet"})
            w.writerow(["{}-{}".format(account, sid), answers, answers, "{:.10f}".format(value)])
    listing = [{"id": sid, "pk": sid, "owner": owner, "created_when": w, "status": status,
                "parent": None, "phase": PHASE} for sid, owner, w, status in SUBMITTED]
    with open(os.path.join(out, "submissions.json"), "w", encoding="utf-8") as f:
        json.dump(listing, f, indent=1)
    with open(os.path.join(out, "participants.json"), "w", encoding="utf-8") as f:
        json.dump([{"id": k + 1, "username": a, "email": e, "status": "approved",
                    "is_bot": False, "is_deleted": False}
                   for k, (_, a, e, _, _) in enumerate(ACCOUNTS)], f, indent=1)
    with open(os.path.join(out, "roster.csv"), "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["team", "member"])
        for team, account, email, _, _ in ACCOUNTS:
            if team is not None:    # charlie-c never registered
                w.writerow([team, email if team == "Alpha" else account])
    print("Wrote bulk_submissions.zip, results.csv, submissions.json, participants.json, "
          "roster.csv and packages/ to {}".format(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
