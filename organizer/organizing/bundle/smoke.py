"""The sample submission dry-run through every bundle built, as each bundle's platform would run
it (the kit's own dry run, kit/dry_run.py, in this process): a bundle whose sample does not
score is refused."""
import contextlib
import io
from typing import Any, Callable, List, Optional

import dry_run  # the kit's (kit/dry_run.py)

from .parts import Built
from .refusal import Refused, shown

# The scores the dry-run summary shows per bundle: the known tasks' ranking keys (a merged
# bundle shows each of its tasks'), else the first score.
RANKING_KEYS = ("miou", "iou_class", "ap", "pq", "accuracy")


def smoke(built: List[Built], override: Optional[str], say: Callable[[str], None]) -> None:
    """Dry-run a sample submission through every bundle, as each bundle's platform would: the
    track's own sample, the tracks' samples together for a merged bundle, or `override`."""
    results: List[str] = []
    notes: List[str] = []
    skipped: List[str] = []
    rows: List[str] = []
    for b in built:
        submission = override or b.submission
        if not submission:
            skipped.append(b.name)
            continue
        captured = io.StringIO()
        outcomes: List[Any] = []
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            code = dry_run.main([submission, "--bundle", b.path, "--quiet"], outcomes)
        if code != dry_run.EXIT_OK:
            raise Refused("{}: the dry run of {} did not score (exit {}):\n{}".format(
                b.name, shown(submission), code, captured.getvalue()))
        results.append(b.name)
        scores = (outcomes[-1].scores if outcomes else None) or {}
        if scores:
            shown_keys = [k for k in RANKING_KEYS if k in scores] or list(scores)[:1]
            rows.append("  {:<44} {}".format(b.name, ", ".join(
                "{} {:.4f}".format(k, scores[k]) for k in shown_keys)))
        notes += [line for line in captured.getvalue().splitlines()
                  if "Detailed results on CodaLab v1: AT RISK" in line and line not in notes]
    if results:
        say("Dry run: {} scores on all {} bundles, every leaderboard column filled.".format(
            "the sample submission" if not override else shown(override), len(results)))
        for row in rows:
            say(row)
    if skipped:
        say("Dry run: skipped for {} (no sample submission for this reference; try "
            "kit/dry_run.py SUBMISSION --bundle BUNDLE).".format(", ".join(skipped)))
    for line in notes:  # a scorer's timing, not the bundle's: said, not refused
        say("WARNING (scoring program): " + line.strip())
