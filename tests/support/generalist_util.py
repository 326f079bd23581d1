"""Helpers for the generalist-ranking tests: write a case to disk, run the real command."""
import csv
import io
import json
import os
import subprocess
import sys
import textwrap

from conftest import ROOT  # noqa: E402
COMMAND = os.path.join(ROOT, "organizer", "generalist.py")
SAMPLE = os.path.join(ROOT, "samples", "generalist")


# Two small boards (a score board and a rank board) and their configuration, for the tests of
# broken and hostile inputs: each test changes one thing in them.
GOOD = {"a.csv": "team,score\nA,3\nB,2\nC,1\n", "b.csv": "team,rank\nA,2\nB,1\nC,3\n"}
CONFIG = textwrap.dedent("""
    leaderboards:
      - name: one
        file: a.csv
        model_column: team
        score_column: score
        higher_is_better: true
      - name: two
        file: b.csv
        model_column: team
        rank_column: rank
""").lstrip()


def run_generalist(*args, cwd=None):
    return subprocess.run([sys.executable, COMMAND] + [str(a) for a in args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def generalist_either(*args, real=True):
    """The command on args as a CompletedProcess: the real one (a subprocess) if real, else its
    main in this process (the same parsing, messages and exit codes; for tests that loop over
    cases, one of them real). Not for argparse's own errors, which exit the process."""
    if real:
        return run_generalist(*args)
    from conftest import run_main
    from organizing.commands import generalist as cli
    argv = [str(a) for a in args]
    code, out, err = run_main(cli.main, argv)
    return subprocess.CompletedProcess([sys.executable, COMMAND] + argv, code, out, err)


def write_case(folder, config, files):
    """config: YAML text (dedented); files: name -> text (str, written as UTF-8) or bytes."""
    os.makedirs(str(folder), exist_ok=True)
    path = os.path.join(str(folder), "config.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(config).lstrip("\n"))
    for name, content in files.items():
        mode = "wb" if isinstance(content, bytes) else "w"
        kw = {} if isinstance(content, bytes) else {"encoding": "utf-8", "newline": ""}
        with open(os.path.join(str(folder), name), mode, **kw) as f:
            f.write(content if isinstance(content, bytes) else textwrap.dedent(content).lstrip("\n"))
    return path


def rank_case(tmp_path, config, files, real=True):
    """Run the command on a case (the real one, or its main in this process if not real);
    returns (process, ranking.json as a dict)."""
    path = write_case(tmp_path / "case", config, files)
    out = tmp_path / "out"
    proc = generalist_either(path, "--out", out, real=real)
    assert proc.returncode == 0, proc.stderr
    with open(str(out / "ranking.json"), encoding="utf-8") as f:
        return proc, json.load(f)


def by_model(doc):
    return {m["model"]: m for m in doc["models"]}


# Leaderboard exports written the way the platforms' own code writes them (facts read from
# their source; see docs/generalist.md for the functions followed).

def codalab_export(labels, rows):
    """CodaLab Competitions' "Download CSV" (Competition.get_results_csv, Python 3): csv.writer
    with its default dialect (CRLF), header `submission_pk,User,<label>...` with each label
    passed as bytes (written `b'...'`), then per submission its id, the username, one
    `<value> (<rank>)` cell per column and one empty cell more than the header.
    rows: (submission id, username, [(value text, rank text), ...])."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(["submission_pk", "User"] + [label.encode("utf-8") for label in labels])
    for pk, user, cells in rows:
        w.writerow([pk, user] + ["%s (%s)" % cell for cell in cells] + [""])
    return buf.getvalue()


def codabench_export(task, columns, rows):
    """Codabench's results.csv (CompetitionViewSet.results): csv.DictWriter (CRLF), fields
    `Username`, `fact_sheet_answers`, then `<task name>(<task id>)-<column title>`; one row per
    submission, `<owner>-<submission id>`, scores as stored (DecimalField, 10 decimals), an
    empty cell where a column has no score (a failed run).
    rows: (owner, submission id, [score or None per column])."""
    name, task_id = task
    fields = ["{}({})-{}".format(name, task_id, c) for c in columns]
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=["Username", "fact_sheet_answers"] + fields)
    w.writeheader()
    for owner, sid, scores in rows:
        row = {"Username": "{}-{}".format(owner, sid)}
        row.update({f: "" if v is None else "{:.10f}".format(v) for f, v in zip(fields, scores)})
        w.writerow(row)
    return buf.getvalue()
