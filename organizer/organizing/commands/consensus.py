"""consensus.py: one ranking across the tasks of a competition (the merged Planetscapes
competition: semantic labeling and VQA) from compare.py's comparison.json of each task, as
challengeR's consensus(method = "euclidean"): the submissions ranked in every task, by their
mean rank (compare/challenger.py). Writes consensus.json and consensus.html (the page, as every
organizer command writes one: compare/page_consensus.py) into --out and prints the table.

exit status: 0 written; 2 bad command line or an input that is not a comparison.json; 4
internal error.
"""
import argparse
import datetime
import json
import os
from typing import Any, Dict, List, Optional

from scoring import __version__, regular_file
from ..compare import challenger, outputs, page_consensus
from scoring.problems import UsageError, shown
from scoring.report.text_table import print_table
from scoring.commands import frame

# A comparison.json holds a few lines per submission and per pair: 64 MiB is far above any.
MAX_COMPARISON_BYTES = 64 << 20

EPILOG = """example:
  consensus.py --out consensus semantic-comparison/ vqa-comparison/comparison.json
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="consensus.py", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A consensus ranking across tasks from compare.py's comparison.json files "
                    "(challengeR's Euclidean consensus: the order of the mean ranks).")
    p.add_argument("comparisons", nargs="+", metavar="COMPARISON",
                   help="a comparison.json, or the compare.py --out folder holding it")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="folder for consensus.json and consensus.html")
    return p


def _read(path: str) -> Dict[str, Any]:
    if os.path.isdir(path):
        path = os.path.join(path, "comparison.json")
    try:   # the organizer's own file, yet never a FIFO or a device (regular_file.py)
        doc = json.loads(regular_file.read_bytes(path, MAX_COMPARISON_BYTES, follow_links=True))
        ranks = {str(m["model"]): int(m["rank"]) for m in doc["models"]}
        task = str(doc["task"])
    except (OSError, ValueError, KeyError, TypeError, regular_file.Refused) as exc:
        raise UsageError("{} is not a comparison.json written by compare.py ({})".format(
            shown(path), type(exc).__name__)) from None
    return {"task": task, "key": doc.get("key"), "ranks": ranks, "path": path}


def run(args: argparse.Namespace, io: frame.Io) -> int:
    stdout = io.stdout
    docs = [_read(p) for p in args.comparisons]
    names = [d["task"] for d in docs]
    # two comparisons of one task (two splits...) are told apart by their folder's name
    labels = [n if names.count(n) == 1 else "{} ({})".format(
        n, os.path.basename(os.path.dirname(os.path.abspath(d["path"])))) for n, d in
        zip(names, docs)]
    if len(set(labels)) != len(labels):
        raise UsageError("the same comparison was given twice")
    result = challenger.consensus({lab: d["ranks"] for lab, d in zip(labels, docs)})
    if os.path.lexists(args.out) and not os.path.isdir(args.out):
        raise UsageError("the output {} exists and is not a folder".format(args.out))
    inputs = [dict(d, label=lab) for lab, d in zip(labels, docs)]
    facts = [["Tasks", len(result["tasks"])], ["Submissions ranked", len(result["ranking"])],
             ["Left out", len(result["left_out"])], ["Method", result["method"]],
             ["Scorer version", __version__],
             ["Finished", datetime.datetime.now(datetime.timezone.utc).strftime(
                 "%Y-%m-%d %H:%M:%S UTC")]]
    outputs.write_text(args.out, "consensus.json", outputs.comparison_json(result))
    outputs.write_text(args.out, "consensus.html", page_consensus.render(result, inputs, facts))
    # Names come from comparison.json files (file names): shown escaped, as on the page.
    rows = [[shown(r["model"]), str(r["rank"]), "{:.2f}".format(r["mean_rank"])] +
            [str(r["ranks"][t]) for t in result["tasks"]] for r in result["ranking"]]
    print_table(["model", "rank", "mean rank"] + [shown(t) for t in result["tasks"]], rows,
                stdout)
    if result["left_out"]:
        stdout.write("\nNot ranked in every task, left out: {}\n".format(
            ", ".join(shown(m) for m in result["left_out"])))
    stdout.write("\nWrote consensus.json and consensus.html to {}\n".format(shown(args.out)))
    return frame.EXIT_OK


COMMAND = frame.Command("consensus.py", build_parser, run, not_blamed="the comparisons")


def main(argv: Optional[List[str]] = None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)
