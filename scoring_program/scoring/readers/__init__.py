"""Readers of the files a run meets: PNG headers and data, label-PNG predictions with their
checks, JSON under caps, a packed reference's manifest, the reference's files (never a FIFO or a
device). No ground-truth logic: the tasks build on these."""
