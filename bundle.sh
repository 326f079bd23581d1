#!/usr/bin/env bash
# Build and check the competition bundles (CodaLab v1.5 and Codabench v2, every track) in dist/.
#   bash bundle.sh [--reference DIR] [--out DIR] [--no-smoke]     (see --help, docs/bundle.md)
# A thin wrapper: the work is tools/bundle.py, so it can be tested and run on any OS.
# Set PYTHON to choose the interpreter (it needs numpy, Pillow and PyYAML).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "${PYTHON:-python3}" "$here/tools/bundle.py" "$@"
