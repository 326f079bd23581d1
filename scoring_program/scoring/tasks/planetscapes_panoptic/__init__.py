"""Planetscapes panoptic segmentation: PQ, SQ and RQ as cityscapesScripts'
evalPanopticSemanticLabeling computes them, from the semantic task's reference
(docs/planetscapes-panoptic.md)."""
