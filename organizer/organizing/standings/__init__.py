"""standings.py's parts: its inputs read, the prize decided, the decision written."""
