"""The organizer's commands: compare.py, consensus.py, generalist.py, verify.py, pack.py, each over
the scoring program's one frame (scoring/commands/frame.py); and bundle.py (bash bundle.sh) and
bundle_check.py, the bundle builder's, which print a build's log and plan in their own way."""
