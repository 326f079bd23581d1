"""What reading a broken file raises, and nothing else: a file's fault is one of these, any other
exception is a bug of the scoring program (exit 4), never blamed on a participant or an
organizer.

Pillow reports damaged or foreign image data with OSError (UnidentifiedImageError is one),
SyntaxError ("broken PNG file"), ValueError, EOFError, struct.error or zlib.error, and a
decompression bomb with DecompressionBombError; MemoryError is what an absurd size costs.
"""
import struct
import zlib

from PIL import Image

IMAGE_ERRORS = (OSError, SyntaxError, ValueError, EOFError, struct.error, zlib.error,
                Image.DecompressionBombError, MemoryError)
