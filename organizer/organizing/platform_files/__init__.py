"""What the platforms give the organizer after the deadline, read as it comes (docs/standings.md)."""
