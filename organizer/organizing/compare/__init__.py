"""compare.py: many submissions on one test set, with paired bootstrap comparisons."""
