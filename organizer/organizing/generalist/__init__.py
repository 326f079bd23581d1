"""Generalist ranking across leaderboards (the MaCVi consistency score): an organizer's command.

config -> boards (plain CSV, CodaLab and Codabench exports) -> consistency -> output / page.
Independent of the per-submission scorer: it reads final leaderboards, not submissions.
"""
