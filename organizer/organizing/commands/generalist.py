"""generalist.py CONFIG.yaml --out DIR: the MaCVi generalist ranking across leaderboards.

Exit status follows score.py: 0 done; 2 bad command line; 3 the configuration or a leaderboard
file is broken (the organizer's inputs: every problem listed with file and line, nothing
written); 4 internal error.
"""
import argparse
import os
from typing import List, Optional

from scoring import __version__
from ..generalist import boards as boards_mod
from ..generalist import config as config_mod
from ..generalist import consistency, output, page
from ..generalist.problems import Collector
from scoring.problems import UsageError, shown
from scoring.quoting import brief
from scoring.commands import frame

EXIT_OK = frame.EXIT_OK

EPILOG = """\
exit status: 0 written; 2 bad command line (also: --out cannot be written, PyYAML missing); 3 the
configuration or a leaderboard file is broken (each problem named with its file and line;
nothing is written); 4 internal error.

The configuration (YAML; files relative to it):
  eps: 1e-12                     # optional
  min_leaderboards: 2            # optional: models on fewer boards are listed, not ranked
  aliases: {"Team A (v2)": "Team A"}     # optional
  leaderboards:
    - name: Thermal Object Detection
      file: thermal.csv          # plain CSV, CodaLab/Codabench export, compare.py (detected)
      model_column: Team         # default User (CodaLab), Username (Codabench)
      score_column: mAP
      higher_is_better: true
    - name: LaRS Panoptic
      file: lars.csv
      model_column: Team
      rank_column: Rank          # used as it stands
    - name: Tracking
      file: results.csv          # a Codabench export with every submission of each user
      score_column: HOTA
      higher_is_better: true
      duplicates: best           # keep each model's best row (default: error)
      missing: absent            # a failed run's empty cell: absent there (default: error)
    - name: Segmentation
      file: leaderboard.csv      # compare.py's file: name and file are enough

Caps (YAML size and nesting, file sizes, regular files only...): docs/generalist.md.

example:
  generalist.py samples/generalist/config.yaml --out ranking
"""


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


def _check_paths(args) -> None:
    if not os.path.lexists(args.config):
        raise UsageError("no configuration file {}".format(shown(args.config)))
    if args.out and os.path.lexists(args.out) and not os.path.isdir(args.out):
        raise UsageError("--out {} exists and is not a folder".format(shown(args.out)))


def _out_folder(out: str) -> output.OutFolder:
    """The temporary output folder, made first: an --out that cannot be written is a bad
    command line, found before any work."""
    try:
        return output.OutFolder(out)
    except OSError as exc:
        raise UsageError("cannot write into --out {} ({})".format(
            shown(out), exc.strerror or type(exc).__name__)) from None


def run(args: argparse.Namespace, io: frame.Io) -> int:
    stdout, stderr = io.stdout, io.stderr
    _check_paths(args)
    folder = _out_folder(args.out) if args.out else None
    try:
        return _run(args, stdout, stderr, folder)
    finally:
        if folder is not None:
            folder.discard()


def _run(args, stdout, stderr, folder: Optional[output.OutFolder]) -> int:
    problems = Collector()  # the configuration's and every file's problems, reported at once
    config = config_mod.load(args.config, problems)
    read = [boards_mod.read(spec, config.aliases, problems, config.path)
            for spec in sorted(list(config.boards) + list(config.broken_boards),
                               key=lambda spec: spec.line)]
    problems.raise_if_any()
    boards = [b for b in read if b is not None]
    del read

    warnings = []
    seen = set().union(*(b.aliases_used for b in boards))
    for name in sorted(set(config.aliases) - seen):
        warnings.append("alias {} matches no model on any leaderboard".format(brief(name)))
    for b in boards:
        if b.spec.rank_column:
            over = sorted(m for m, r in b.board.ranks.items() if r > b.board.n)
            if over:
                warnings.append("{}: rank above the {} entries for {} (counted as s = 0)".format(
                    b.spec.name, b.board.n, brief(", ".join(over), 200)))

    loo = consistency.leave_one_out_defined(len(boards), config.min_leaderboards)
    results = consistency.rank_models([b.board for b in boards], config.eps,
                                      config.min_leaderboards, leave_one_out=loo)
    if folder is not None:
        try:
            folder.write("ranking.json", lambda f: output.write_json(
                f, config, boards, results, warnings, loo))
            folder.write("ranking.csv", lambda f: output.write_csv(f, boards, results))
            folder.write("ranking.html", page.render(config, boards, results, warnings, loo))
            folder.commit()
        except OSError as exc:
            raise UsageError("cannot write the outputs into --out {} ({})".format(
                shown(args.out), exc.strerror or type(exc).__name__)) from None
    # Printed after the files are written: a reader who stops early (| head) loses nothing.
    for w in warnings:
        stderr.write("WARNING: {}\n".format(shown(w)))
    if args.quiet:
        return EXIT_OK
    say = stdout.write
    say("Generalist ranking: {} models on {} leaderboards (eps {!r}; ranked: models on at least "
        "{} leaderboards)\n\n".format(len(results), len(boards), config.eps,
                                       config.min_leaderboards))
    for line in output.table_lines(config, boards, results, loo):
        say(line + "\n")
    if args.out:
        say("\nWrote ranking.json, ranking.csv and ranking.html to {}\n".format(shown(args.out)))
    return EXIT_OK


COMMAND = frame.Command("generalist.py", build_parser, run, not_blamed="the inputs")


def main(argv: Optional[List[str]] = None, stdout=None, stderr=None) -> int:
    return frame.run(COMMAND, argv, stdout, stderr)
