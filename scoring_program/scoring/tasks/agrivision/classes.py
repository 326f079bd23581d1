"""Agriculture-Vision 2021 label ids. The order is the challenge's and is strict."""

CLASSES = (
    "background",           # 0: a valid pixel with no scored pattern
    "double_plant",         # 1
    "drydown",              # 2
    "endrow",               # 3
    "nutrient_deficiency",  # 4
    "planter_skip",         # 5
    "water",                # 6
    "waterway",             # 7
    "weed_cluster",         # 8
)
# Pattern folders under labels/, in class-id order (class id = index + 1).
PATTERNS = CLASSES[1:]
# Present in the dataset, "will not be evaluated".
STORM = "storm_damage"
N_CLASSES = len(CLASSES)
MAX_ID = N_CLASSES - 1

# Reference code per pixel (uint16): bit k-1 = pattern class k (k = 1..8), STORM_BIT = storm_damage,
# VALID_BIT = inside the field boundary and not masked. Packs everything both storm policies need.
STORM_BIT = 1 << 8
VALID_BIT = 1 << 9
SET_BITS = 9           # label-set bits kept in the metric state (8 patterns + storm)
N_SETS = 1 << SET_BITS

STORM_POLICIES = ("background", "ignore")
