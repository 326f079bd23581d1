"""The problems of a label-PNG prediction (prediction.py): one kind each, in the shared order
(problems.ORDER_FILE: after finding the files, before what is only noted)."""
from ...problems import ORDER_FILE, Kind

NOT_PNG = Kind(
    "not_png", "files that are not readable PNG images",
    "save each prediction with a PNG encoder, e.g. "
    "PIL.Image.fromarray(pred.astype(numpy.uint8)).save('<image id>.png').",
    order=ORDER_FILE + 0)
NOT_REGULAR = Kind(
    "not_regular", "predictions that are links or special files, not regular files",
    "put the PNG files themselves in the submission: links, FIFOs and device files are never "
    "followed or read.",
    order=ORDER_FILE + 1)
TOO_LARGE = Kind(
    "too_large", "prediction files larger than any label PNG of their size",
    "save plain PNGs (a 512 x 512 label PNG is tens of KB): no padding or extra chunks.",
    order=ORDER_FILE + 2)
WRONG_SIZE = Kind(
    "wrong_size", "predictions whose width or height differs from the test image",
    "predict at the test image's full resolution (do not resize or crop).",
    order=ORDER_FILE + 3)
TRANSPOSED = Kind(
    "transposed", "predictions whose width and height are swapped",
    "write the array with shape (height, width) = (rows, columns), as the test image: a "
    "transposed array (arr.T, or width and height swapped when creating it) gives this.",
    order=ORDER_FILE + 4)
NOT_SINGLE_CHANNEL = Kind(
    "not_single_channel", "predictions that are not single-channel images",
    "write an 8-bit grayscale ('L') or palette ('P') PNG whose pixel values are the class ids, "
    "not a colour visualisation.",
    order=ORDER_FILE + 5)
BAD_VALUES = Kind(
    "bad_values", "predictions with pixel values outside the class ids",
    "every pixel must hold {allowed_values}.",
    order=ORDER_FILE + 6)
