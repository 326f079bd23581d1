"""One package per challenge task (registered in scoring/registry.py)."""
