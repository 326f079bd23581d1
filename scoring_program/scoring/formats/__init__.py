"""The submission formats tasks share; the core knows none of them (task_api.py)."""
