"""Planetscapes semantic labeling's reference problems (the organizers' data): the label table
in config.yaml and the label and instance images."""
from ...problems import Kind

REF_CONFIG = Kind(
    "ps_ref_config", "problems in the reference's label table (config.yaml)",
    "fix config.yaml: `labels:` is a list of rows with name (text), id (0-255, or -1 for a label "
    "that never occurs in images), category (text), has_instances and ignore_in_eval (true or "
    "false), or the word `cityscapes`; `average_instance_size:` maps class names to pixels.")

REF_LAYOUT = Kind(
    "ps_ref_layout", "reference data layout not recognised",
    "the reference folder must hold config.yaml, labels/<id>.png and instances/<id>.png.")

REF_MISSING = Kind(
    "ps_ref_missing", "reference files missing",
    "every image needs both labels/<id>.png and instances/<id>.png.")

REF_UNREADABLE = Kind(
    "ps_ref_unreadable", "reference files that are not readable single-channel PNG images",
    "labels/ must hold 8-bit single-channel PNGs of label ids, instances/ 16-bit single-channel "
    "PNGs of class_id * 1000 + k.")

REF_WRONG_SIZE = Kind(
    "ps_ref_wrong_size", "instance images whose size differs from their label image",
    "labels/<id>.png and instances/<id>.png of one image must have the same width and height.")

REF_UNKNOWN_ID = Kind(
    "ps_ref_unknown_id", "label images holding ids that are not in the label table",
    "add the ids to `labels:` in config.yaml, or fix the label images.")

REF_INSTANCE_CLASS = Kind(
    "ps_ref_instance_class", "instance images that disagree with their label image",
    "on every pixel with an instance value v >= 1000, the label image must hold v // 1000; "
    "only classes with has_instances: true (or ignored ones) may have instances; on the other "
    "pixels of an evaluated class with instances (crowd regions) the instance image holds the "
    "label id.")

REF_INSTANCE_DEPTH = Kind(
    "ps_ref_instance_depth", "8-bit instance images",
    "instance images hold class_id * 1000 + k on instance pixels: save them as 16-bit PNGs "
    "(as Cityscapes' *_instanceIds.png), with their values unchanged.")

REF_EMPTY = Kind(
    "ps_ref_empty", "reference without a single evaluated pixel",
    "every pixel of every label image holds an id with ignore_in_eval: true: check that the "
    "reference holds the test labels and that the label table marks the right labels ignored.")
