"""Agriculture-Vision Prize Challenge 2021: overlap-aware mIoU over 9 classes."""
from .task import AgricultureVision

__all__ = ["AgricultureVision"]
