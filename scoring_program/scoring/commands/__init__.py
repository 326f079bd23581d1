"""The commands the worker and the kit run, each over one frame (frame.py): score.py."""
