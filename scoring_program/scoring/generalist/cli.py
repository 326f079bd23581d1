"""generalist.py CONFIG.yaml --out DIR: the MaCVi generalist ranking across leaderboards.

Exit status follows score.py: 0 done; 2 bad command line; 3 the configuration or a leaderboard
file is broken (the organizer's inputs: every problem listed with file and line, nothing
written); 4 internal error.
"""
import argparse
import os
import sys
import traceback
from typing import List, Optional

from .. import __version__
from . import boards as boards_mod
from . import config as config_mod
from . import consistency, output, page
from .problems import Collector, InputProblems

EXIT_OK, EXIT_USAGE, EXIT_INPUT, EXIT_INTERNAL = 0, 2, 3, 4

EPILOG = """\
exit status: 0 written; 2 bad command line; 3 the configuration or a leaderboard file is broken
(each problem named with its file and line; nothing is written); 4 internal error.

The configuration (YAML; files relative to it):
  eps: 1e-12                     # optional
  min_leaderboards: 2            # optional: models on fewer boards are listed, not ranked
  aliases: {"Team A (v2)": "Team A"}     # optional
  leaderboards:
    - name: Thermal Object Detection
      file: thermal.csv          # plain CSV, CodaLab or Codabench export (detected, or format:)
      model_column: Team         # default User (CodaLab), Username (Codabench)
      score_column: mAP
      higher_is_better: true
    - name: LaRS Panoptic
      file: lars.csv
      model_column: Team
      rank_column: Rank          # used as it stands

example:
  generalist.py samples/generalist/config.yaml --out ranking
"""


class UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="generalist.py", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Rank methods across several challenges' final leaderboards by the MaCVi "
                    "consistency score and write ranking.json, ranking.csv and ranking.html.")
    p.add_argument("config", metavar="CONFIG.yaml", help="the configuration")
    p.add_argument("--out", metavar="DIR",
                   help="write ranking.json, ranking.csv and ranking.html here "
                        "(default: only print the ranking)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    return p


def run(args, stdout, stderr) -> int:
    if not os.path.isfile(args.config):
        raise UsageError("no configuration file {}".format(args.config))
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError("--out {} exists and is not a folder".format(args.out))
    config = config_mod.load(args.config)
    problems = Collector()
    read = [boards_mod.read(spec, config.aliases, problems, config.path)
            for spec in config.boards]
    problems.raise_if_any()
    boards = [b for b in read if b is not None]

    warnings = []
    seen = set().union(*(b.raw_names for b in boards))
    for name in sorted(set(config.aliases) - seen):
        warnings.append("alias {!r} matches no model on any leaderboard".format(name))
    for b in boards:
        if b.spec.rank_column:
            over = sorted(m for m, r in b.board.ranks.items() if r > b.board.n)
            if over:
                warnings.append("{}: rank above the {} entries for {} (counted as s = 0)".format(
                    b.spec.name, b.board.n, ", ".join(over)))

    results = consistency.rank_models([b.board for b in boards], config.eps,
                                      config.min_leaderboards)
    say = (lambda s: None) if args.quiet else (lambda s: stdout.write(s + "\n"))
    for w in warnings:
        stderr.write("WARNING: {}\n".format(w))
    say("Generalist ranking: {} models on {} leaderboards (eps {!r}; ranked: models on at least {} "
        "leaderboards)".format(len(results), len(boards), config.eps, config.min_leaderboards))
    say("")
    for line in output.table_lines(config, boards, results):
        say(line)
    if args.out:
        output.write_atomically(args.out, {
            "ranking.json": output.ranking_json(config, boards, results, warnings),
            "ranking.csv": output.ranking_csv(boards, results),
            "ranking.html": page.render(config, boards, results, warnings),
        })
        say("")
        say("Wrote ranking.json, ranking.csv and ranking.html to {}".format(args.out))
    return EXIT_OK


def main(argv: Optional[List[str]] = None, stdout=None, stderr=None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return run(args, stdout, stderr)
    except InputProblems as exc:
        stderr.write(exc.message())
        return EXIT_INPUT
    except UsageError as exc:
        stderr.write("ERROR: {}\n".format(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        stderr.write("Interrupted.\n")
        return 130
    except Exception:
        stderr.write("INTERNAL ERROR in generalist.py (not a problem with the inputs). "
                     "Set SCORING_DEBUG=1 to see the traceback.\n")
        if os.environ.get("SCORING_DEBUG"):
            traceback.print_exc(file=stderr)
        return EXIT_INTERNAL
