"""Write small raw-layout references and submissions from arrays, for tests."""
import os

import numpy as np
from PIL import Image

PATTERNS = ["double_plant", "drydown", "endrow", "nutrient_deficiency", "planter_skip", "water",
            "waterway", "weed_cluster"]


def save(path, arr, mode="L"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(np.asarray(arr, dtype=np.uint8), mode).save(path)


def write_reference(root, image_id, boundary, mask, labels, storm=None):
    """labels: dict class -> 0/1 array (missing classes are all zero); storm: array or None."""
    shape = np.asarray(boundary).shape
    save(os.path.join(root, "boundaries", image_id + ".png"), np.asarray(boundary) * 255)
    save(os.path.join(root, "masks", image_id + ".png"), np.asarray(mask) * 255)
    for c in PATTERNS:
        arr = np.asarray(labels.get(c, np.zeros(shape)))
        save(os.path.join(root, "labels", c, image_id + ".png"), arr * 255)
    if storm is not None:
        save(os.path.join(root, "labels", "storm_damage", image_id + ".png"),
             np.asarray(storm) * 255)


def random_image(rng, h, w, p_valid=0.8, density=0.3, with_storm=True):
    """Random layers (0/1 arrays) and a random prediction 0..8."""
    boundary = (rng.random_sample((h, w)) < p_valid + (1 - p_valid) / 2).astype(np.uint8)
    mask = (rng.random_sample((h, w)) < p_valid + (1 - p_valid) / 2).astype(np.uint8)
    labels = {c: (rng.random_sample((h, w)) < density / 3).astype(np.uint8) for c in PATTERNS}
    storm = (rng.random_sample((h, w)) < density).astype(np.uint8) if with_storm else None
    pred = rng.randint(0, 9, size=(h, w)).astype(np.uint8)
    return boundary, mask, labels, storm, pred


def layered_image(rng, h, w, with_storm=True):
    """Like random_image, but each layer is independently empty, full or random, so that every
    combination of uniform and varying layers (hence every reader path) gets exercised."""
    def layer(p_random):
        kind = rng.randint(3)
        if kind == 0:
            return np.zeros((h, w), np.uint8)
        if kind == 1:
            return np.ones((h, w), np.uint8)
        return (rng.random_sample((h, w)) < p_random).astype(np.uint8)
    boundary, mask = layer(0.8), layer(0.8)
    labels = {c: layer(0.3) if rng.randint(2) else np.zeros((h, w), np.uint8) for c in PATTERNS}
    storm = (layer(0.4) if rng.randint(2) else np.zeros((h, w), np.uint8)) if with_storm else None
    pred = rng.randint(0, 9, size=(h, w)).astype(np.uint8)
    return boundary, mask, labels, storm, pred


# A small reference shared by the check and hostile-input tests: three images of 16 x 20.
SMALL_IDS = ["FIELD0001_0-0-20-16", "FIELD0001_20-0-40-16", "FIELD0002_0-0-20-16"]
SMALL_SIZE = (16, 20)


def write_small_reference(root, seed=7):
    rng = np.random.RandomState(seed)
    for i in SMALL_IDS:
        b, m, labels, storm, _ = random_image(rng, *SMALL_SIZE)
        write_reference(root, i, b, m, labels, storm)
    return root
