"""The Cityscapes label table and average instance sizes, as data.

`labels: cityscapes` in a reference's config.yaml selects them, so that Cityscapes itself can be
scored and compared with published numbers. Reproduced (data only) from cityscapesScripts 2.3.0:
the label list of cityscapesscripts/helpers/labels.py and the `args.avgClassSize` table of
cityscapesscripts/evaluation/evalPixelLevelSemanticLabeling.py
(https://github.com/mcordts/cityscapesScripts, MIT licence).
"""

# (name, id, trainId, category, has_instances, ignore_in_eval); the colours are not needed.
# id -1 (license plate) never occurs in label images; it is kept because the anchor keeps it in
# the category "vehicle" (where it changes nothing, as ids < 0 are skipped everywhere).
LABELS = [
    ("unlabeled", 0, 255, "void", False, True),
    ("ego vehicle", 1, 255, "void", False, True),
    ("rectification border", 2, 255, "void", False, True),
    ("out of roi", 3, 255, "void", False, True),
    ("static", 4, 255, "void", False, True),
    ("dynamic", 5, 255, "void", False, True),
    ("ground", 6, 255, "void", False, True),
    ("road", 7, 0, "flat", False, False),
    ("sidewalk", 8, 1, "flat", False, False),
    ("parking", 9, 255, "flat", False, True),
    ("rail track", 10, 255, "flat", False, True),
    ("building", 11, 2, "construction", False, False),
    ("wall", 12, 3, "construction", False, False),
    ("fence", 13, 4, "construction", False, False),
    ("guard rail", 14, 255, "construction", False, True),
    ("bridge", 15, 255, "construction", False, True),
    ("tunnel", 16, 255, "construction", False, True),
    ("pole", 17, 5, "object", False, False),
    ("polegroup", 18, 255, "object", False, True),
    ("traffic light", 19, 6, "object", False, False),
    ("traffic sign", 20, 7, "object", False, False),
    ("vegetation", 21, 8, "nature", False, False),
    ("terrain", 22, 9, "nature", False, False),
    ("sky", 23, 10, "sky", False, False),
    ("person", 24, 11, "human", True, False),
    ("rider", 25, 12, "human", True, False),
    ("car", 26, 13, "vehicle", True, False),
    ("truck", 27, 14, "vehicle", True, False),
    ("bus", 28, 15, "vehicle", True, False),
    ("caravan", 29, 255, "vehicle", True, True),
    ("trailer", 30, 255, "vehicle", True, True),
    ("train", 31, 16, "vehicle", True, False),
    ("motorcycle", 32, 17, "vehicle", True, False),
    ("bicycle", 33, 18, "vehicle", True, False),
    ("license plate", -1, -1, "vehicle", False, True),
]

# Average instance size in pixels per class (evalPixelLevelSemanticLabeling.args.avgClassSize).
AVERAGE_INSTANCE_SIZE = {
    "bicycle": 4672.3249222261,
    "caravan": 36771.8241758242,
    "motorcycle": 6298.7200839748,
    "rider": 3930.4788056518,
    "bus": 35732.1511111111,
    "train": 67583.7075812274,
    "car": 12794.0202738185,
    "person": 3462.4756337644,
    "truck": 27855.1264367816,
    "trailer": 16926.9763313609,
}


def rows():
    """The table in config.yaml's row form."""
    return [{"name": n, "id": i, "trainId": t, "category": c, "has_instances": h,
             "ignore_in_eval": g} for n, i, t, c, h, g in LABELS]
