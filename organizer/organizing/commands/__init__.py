"""The organizer's commands, each over the scoring program's one frame (scoring/commands/frame.py):
compare.py, consensus.py, generalist.py, verify.py, pack.py."""
