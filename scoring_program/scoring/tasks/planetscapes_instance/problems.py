"""The participant mistakes of the instance format (per image <id>.txt of `mask label
confidence` lines, binary mask PNGs): one kind each, named by file and line, each with its fix.
The reference's problems are the semantic task's (planetscapes_semantic/problems.py): one
reference folder serves both."""
from ...problems import Kind

BAD_LINE = Kind(
    "inst_bad_line", "prediction lines that do not parse",
    "write one line per predicted instance: `<mask PNG path> <label id> <confidence>`, three "
    "fields separated by spaces, e.g. `masks/img1_0.png 26 0.93` (the path without spaces).")
BAD_LABEL = Kind(
    "inst_bad_label", "label ids that are not classes with instances",
    "give the `id` (not trainId) of a class with has_instances: true in the label table ({classes}).")
BAD_CONFIDENCE = Kind(
    "inst_bad_confidence", "confidences that are not finite numbers",
    "write every confidence as a finite number (no nan, inf).")
DUPLICATE_LINE = Kind(
    "inst_duplicate_line", "masks listed twice in one prediction file",
    "list each mask once per image: two lines naming one mask are one instance predicted twice.")
OUTSIDE = Kind(
    "inst_path_outside", "mask paths that point outside the predictions' folder",
    "give each mask's path relative to the .txt file, at or below the folder of the .txt files "
    "(no absolute path, no '..' leaving it, no link).")
MASK_MISSING = Kind(
    "inst_mask_missing", "masks named in a prediction file but not in the submission",
    "put every mask the .txt files name in the zip, at the path given (relative to the .txt).")
MASK_NOT_BINARY = Kind(
    "inst_mask_not_binary", "masks that are not binary",
    "save each instance as its own binary mask: 0 outside, one non-zero value (1 or 255) on the "
    "instance, in a grayscale PNG (mode 'L' or '1').")
MASK_PALETTE = Kind(
    "inst_mask_palette", "masks saved as palette (colour-indexed) PNGs",
    "save masks as grayscale PNGs (mode 'L' or '1'): "
    "PIL.Image.fromarray(mask.astype(numpy.uint8) * 255).save(path).")
TOO_MANY = Kind(
    "inst_too_many", "prediction files with more instances than the bound",
    "keep at most {max_per_image} instances per image (the most confident ones), and at most "
    "{max_per_image_on_average} per image on average over the test set.")
MASKS_TOO_LARGE = Kind(
    "inst_masks_too_large", "images whose masks together cover too much",
    "the bounding boxes of one image's masks may add up to at most {max_cover} times the image: "
    "drop low-confidence instances.")
TXT_TOO_LARGE = Kind(
    "inst_txt_too_large", "prediction files that are too large",
    "a .txt file holds one short line per instance: at most {max_txt_bytes} bytes.")
