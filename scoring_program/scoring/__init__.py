"""Scoring program for image-understanding challenges on CodaLab and Codabench."""
__version__ = "1.0.0"
