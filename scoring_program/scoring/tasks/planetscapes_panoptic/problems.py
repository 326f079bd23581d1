"""The problems of a panoptic submission (predictions.json and its folder of RGB PNGs) and of
the panoptic task's reference. Messages name image ids and segment ids, which the participant
already has; never a reference segment."""
from ...problems import Kind

# Fixes go through str.format (ProblemLog.describe): literal braces are doubled.
LAYOUT = ("predictions.json (COCO panoptic results: {{\"annotations\": [{{\"image_id\": "
          "\"<id>\", \"file_name\": \"<id>.png\", \"segments_info\": [{{\"id\": <int>, "
          "\"category_id\": <label id>}}, ...]}}, ...]}}) and beside it the folder predictions/ "
          "holding <id>.png per test image")

# Finding the files.
NO_JSON = Kind(
    "pan_no_json", "no .json file of segments found in the submission",
    "put in the zip " + LAYOUT + ".")
TWO_JSON = Kind(
    "pan_two_json", ".json files that each could be the segments file",
    "keep exactly one .json file: " + LAYOUT + ".")
NO_FOLDER = Kind(
    "pan_no_folder", "no folder of PNGs named after the .json file",
    "the PNGs go into a folder named as the .json file without its extension (COCO's "
    "convention, as cityscapesScripts reads it): predictions.json and predictions/<id>.png.")

# The JSON file.
NOT_JSON = Kind(
    "pan_not_json", "segments file that is not valid JSON, or too large",
    "write it with json.dump(results, f) (UTF-8); look at the line and column given.")
BAD_JSON = Kind(
    "pan_bad_json", "segments file entries of the wrong shape",
    "the file is an object with \"annotations\": a list of {{\"image_id\": \"<id>\", "
    "\"file_name\": \"<id>.png\", \"segments_info\": [{{\"id\": <int>, \"category_id\": "
    "<int>}}, ...]}}; the place named is where the shape breaks.")
NO_ANNOTATION = Kind(
    "pan_no_annotation", "test images whose PNG has no entry in the segments file",
    "add one entry to \"annotations\" per test image, with its image_id (the image id as a "
    "string) and its segments_info.")
TWICE = Kind(
    "pan_image_twice", "images with two entries in the segments file",
    "keep one entry per image_id (cityscapesScripts would silently keep the last one).")
FILE_NAME = Kind(
    "pan_file_name", "entries whose file_name is not <image_id>.png",
    "set file_name to the image id followed by .png, the PNG's name in the folder.")
UNKNOWN_IMAGE = Kind(
    "pan_unknown_image", "entries of the segments file for images not in the test set "
    "(ignored)",
    "nothing to do if they are intended; check the image ids otherwise.", fatal=False)
SEGMENT_ID = Kind(
    "pan_segment_id", "segments whose id is not an integer from 1 to 16,777,215",
    "a segment id is R + 256 G + 256^2 B of its colour in the PNG; 0 (black) is void, "
    "unlabeled pixels, and is never listed.")
SEGMENT_TWICE = Kind(
    "pan_segment_twice", "segment ids listed twice for one image",
    "list each segment of an image once in its segments_info.")
CATEGORY = Kind(
    "pan_category", "segments whose category_id is not an evaluated label id",
    "category_id is the `id` of a label of the label table that is evaluated (not ignored in "
    "evaluation): {allowed_values}.")
TOO_MANY = Kind(
    "pan_too_many_segments", "images with more segments than the limit",
    "merge or drop small segments: an image may have at most {max_segments} segments.")

# Each PNG against its entry.
NOT_RGB = Kind(
    "pan_not_rgb", "PNGs that are not 8-bit RGB images",
    "save each PNG as 8-bit RGB (mode 'RGB', no alpha, no palette) whose colour encodes the "
    "segment id: R + 256 G + 256^2 B (panopticapi's id2rgb).")
UNLISTED = Kind(
    "pan_unlisted_segment", "PNGs holding segment ids absent from their segments_info",
    "list every colour of the PNG other than black (void) in the image's segments_info, or "
    "paint those pixels black: cityscapesScripts stops on this.")
UNUSED = Kind(
    "pan_unused_segment", "segments_info ids that no pixel of the PNG holds",
    "drop the segments that have no pixel from segments_info: cityscapesScripts stops on this.")

# The reference (the organizers').
REF_ZERO = Kind(
    "pan_ref_evaluated_zero", "a label table whose label id 0 is evaluated",
    "in the panoptic format id 0 is void: createPanopticImgs would write the segment of label 0 "
    "as void. Give the evaluated label another id, or mark label 0 ignore_in_eval: true.")
REF_PACKED = Kind(
    "pan_ref_packed", "a packed reference given to the panoptic task",
    "the panoptic task reads the raw layout (labels/ and instances/ PNGs): give it the "
    "unpacked reference.")
REF_EMPTY = Kind(
    "pan_ref_empty", "reference without a single segment to match",
    "every image holds only void, ignored labels or crowd regions: check that the reference "
    "holds the test labels and that the label table marks the right labels ignored.")
