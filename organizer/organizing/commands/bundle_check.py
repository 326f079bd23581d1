"""`organizer/bundle_check.py BUNDLE.zip...`: check competition bundle zips before upload, as
bundle.sh checks every bundle it builds (bundle/check.py).

    python3 organizer/bundle_check.py dist/*.zip             # a phase open now or later
    python3 organizer/bundle_check.py --open-on 2027-03-01 dist/*.zip    # open at that moment
    python3 organizer/bundle_check.py --allow-closed dist/*.zip          # an archive on purpose

Errors make the exit status 1; warnings and notes (platform differences) are printed only.
"""
import argparse
from typing import List, Optional

from platforms.dates import as_datetime, utcnow

from ..bundle.check import check_bundle, open_state


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="bundle_check.py",
                                     description="Check competition bundle zips (CodaLab v1.5, "
                                                 "Codabench v2) before upload.",
                                     epilog="Dates are UTC; BUNDLE_NOW=DATE in the environment "
                                            "stands for now.")
    parser.add_argument("bundles", nargs="+", metavar="BUNDLE.zip")
    parser.add_argument("--open-on", metavar="DATE",
                        help="require a phase open on this date, UTC (default: a phase open now "
                             "or later)")
    parser.add_argument("--allow-closed", action="store_true",
                        help="do not require a phase open for submissions")
    args = parser.parse_args(argv)
    open_on = None
    if args.open_on:
        open_on = as_datetime(args.open_on)
        if open_on is None:
            parser.error("--open-on {!r}: give YYYY-MM-DD or 'YYYY-MM-DD HH:MM:SS'".format(
                args.open_on))
    try:
        now = utcnow()
    except ValueError as exc:
        parser.error(str(exc))
    failed = 0
    for path in args.bundles:
        report = check_bundle(path, now=now, allow_closed=args.allow_closed, open_on=open_on)
        for line in report.lines():
            print(line)
        if report.errors:
            failed += 1
        else:
            state = open_state(report)
            print("{}: OK ({} warning{}){}".format(
                report.name, len(report.warnings), "" if len(report.warnings) == 1 else "s",
                "; " + state if state else ""))
    return 1 if failed else 0
