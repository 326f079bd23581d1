"""Planetscapes instance-level semantic labeling: Cityscapes-style AP over the instance images
of the semantic reference (docs/planetscapes-instance.md)."""
