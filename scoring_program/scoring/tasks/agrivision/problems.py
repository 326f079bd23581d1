"""Agriculture-Vision's reference problems (the organizers' data), in its dataset's words."""
from ...problems import Kind

REF_MISSING = Kind(
    "ref_missing", "reference files missing",
    "the reference data is incomplete: every image id in boundaries/ needs its mask and its "
    "label files.")
REF_UNREADABLE = Kind(
    "ref_unreadable", "reference files that are not readable 8-bit PNG images",
    "re-export the reference files as single-channel PNGs.")
REF_WRONG_SIZE = Kind(
    "ref_wrong_size", "reference files whose size differs from the image's boundary file",
    "every layer of one image must have the same width and height.")
REF_EMPTY = Kind(
    "ref_empty", "reference without a single valid pixel in the images scored",
    "every boundary or mask is empty: check that the reference holds the test labels.")
REF_LAYOUT = Kind(
    "ref_layout", "reference data layout not recognised",
    "the reference folder must hold boundaries/, masks/ and labels/<class>/ "
    "(or a packed reference).")
