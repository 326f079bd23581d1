"""Count a model's parameters without importing torch, TensorFlow or Keras and without
executing anything from the files: headers and pickle opcodes are read, tensor data never.

    census = count_package(folder)     # every file of a final submission, by content
    one = count_file(path, "models/final.pth")

The counting rule is rule.RULE (docs/verify.md); the bounds of every reader are bounds.py's.
Standard library, plus numpy for .npy/.npz headers and h5py (optional) for HDF5.
"""
from .census import Census, count_package
from .detect import count_file
from .result import (BUFFERS, CATEGORIES, COUNTED, EMA, IGNORED, NOT_COUNTED, OPTIMIZER,
                     PARAMETERS, REFUSED, FileCount)
from .rule import RULE

__all__ = ["Census", "count_file", "count_package", "RULE", "COUNTED", "REFUSED",
           "NOT_COUNTED", "IGNORED", "PARAMETERS", "BUFFERS", "OPTIMIZER", "EMA", "CATEGORIES",
           "FileCount"]
