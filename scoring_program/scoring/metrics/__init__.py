"""Metric building blocks shared by the tasks (counting kernels, resampling)."""
