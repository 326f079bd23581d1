#!/usr/bin/env bash
# Build and check the competition bundles (Codabench v2 and, for self-hosted CodaLab servers,
# CodaLab v1.5; every track) in dist/.
#   bash bundle.sh [--reference DIR] [--out DIR] [--no-smoke]     (see --help, docs/bundle.md)
#   bash bundle.sh --competition planetscapes [--reference semantic=DIR --reference vqa=DIR2]
#   (a bare --reference DIR: the semantic, instance and panoptic tracks' one folder)
#   bash bundle.sh --start 2027-03-01 --end 2027-05-31     the organizer's dates (UTC); by default
#   the 2021 dates are kept and an open-ended post-challenge phase added, so the bundle accepts
#   submissions on the day it is built (--no-post-challenge, --open-on DATE, --allow-closed).
#   A bundle that opens later builds; one whose phases have all ended is refused. The build ends
#   with a plan: which zip to upload where, and when each phase opens.
#   bash bundle.sh --competition planetscapes --merged     also the merged Codabench bundle
#   bash bundle.sh --kits DIR     also each track's starting kit, unpacked, as participants get it
#   What participants meet (defaults: the source's "settings"): --leaderboard best|last|chosen,
#   --registration approval|auto, --contact EMAIL, --queue VHOST; --dev-reference DIR adds a
#   Development phase before Test (--dev-start, --dev-max-submissions, --dev-max-per-day).
# A thin wrapper: the work is organizer/bundle.py (the bundle builder, organizer/organizing/bundle/),
# so it can be tested and run on any OS.
# The interpreter: $PYTHON if set, else the project's .venv (the README's commands make it),
# else python3. It needs numpy, Pillow and PyYAML.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  if [ -x "$here/.venv/bin/python" ]; then python="$here/.venv/bin/python"; else python=python3; fi
fi
# A missing package: one line naming it and the pip command for this interpreter (scoring/deps.py,
# as score.py says it), exit 2. (Or set up the project's venv: python3 -m venv .venv &&
# .venv/bin/pip install -r requirements.txt.)
"$python" -c 'import sys; sys.path.insert(0, sys.argv[1]); from scoring import deps
for name in ("numpy", "PIL", "yaml"):
    try:
        __import__(name)
    except ModuleNotFoundError as exc:
        deps.exit_if_missing(exc)' "$here/scoring_program" || exit 2
exec "$python" "$here/organizer/bundle.py" "$@"
