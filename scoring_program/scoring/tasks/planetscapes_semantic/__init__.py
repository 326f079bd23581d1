"""Planetscapes pixel-level semantic labeling: Cityscapes-style IoU and iIoU over a configured
label table (docs/planetscapes.md)."""
