"""The commands, each over one frame (frame.py): score.py, pack.py, compare.py, generalist.py."""
