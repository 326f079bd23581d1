"""Readers of the files a run meets: PNG headers and data, label-PNG predictions with their
checks, a packed reference's manifest. No ground-truth logic: the tasks build on these."""
