"""Helpers of the instance task's tests: random Cityscapes-format scenes with predicted masks,
and writers of a reference (the semantic layout, task planetscapes-instance) and a submission
(<id>.txt + masks/)."""
import os

import numpy as np
from PIL import Image

from planetscapes_util import save_16bit, write_reference

CS_STUFF = [7, 8, 11, 17, 21, 23, 0, 4, 9]     # some void (0, 4, 9) among them
CS_THINGS = [24, 25, 26, 27, 28, 31, 32, 33]
CS_IGNORED_THINGS = [29, 30]


def scene(rng, h, w, things=CS_THINGS, ignored=CS_IGNORED_THINGS, stuff=CS_STUFF,
          max_instances=10, max_preds=14):
    """(labels, instances, predictions): instances hold class * 1000 + k (some crowd, some under
    100 px, some of ignored classes); predictions are (mask, label id, confidence) with masks
    near the instances (shifted, grown, duplicated), random blobs, empty masks, ignored labels
    and tied confidences."""
    lab = rng.choice(stuff, size=(h, w)).astype(np.uint8)
    for _ in range(4):
        y, x = rng.randint(0, h), rng.randint(0, w)
        lab[y:y + rng.randint(4, h), x:x + rng.randint(4, w)] = rng.choice(stuff)
    inst = lab.astype(np.uint16)
    count = {}
    boxes = []
    for _ in range(rng.randint(0, max_instances + 1)):
        c = int(rng.choice(things + ignored))
        y, x = rng.randint(0, h - 2), rng.randint(0, w - 2)
        hh, ww = rng.randint(2, max(3, h // 3)), rng.randint(2, max(3, w // 3))
        sl = np.s_[y:y + hh, x:x + ww]
        lab[sl] = c
        if rng.rand() < 0.15:
            inst[sl] = c
        else:
            k = count.get(c, 0)
            count[c] = k + 1
            inst[sl] = c * 1000 + k
        boxes.append((c, y, x, hh, ww))
    preds = []
    confs = [0.9, 0.5, 0.5, 0.3]
    for _ in range(rng.randint(0, max_preds + 1)):
        m = np.zeros((h, w), dtype=bool)
        r = rng.rand()
        if boxes and r < 0.7:
            c, y, x, hh, ww = boxes[rng.randint(len(boxes))]
            dy, dx = rng.randint(-2, 3), rng.randint(-2, 3)
            gy, gx = rng.randint(-1, 3), rng.randint(-1, 3)
            m[max(0, y + dy):max(0, y + dy + hh + gy), max(0, x + dx):max(0, x + dx + ww + gx)] = True
            label = c if rng.rand() < 0.85 else int(rng.choice(things + ignored))
        elif r < 0.95:
            y, x = rng.randint(0, h), rng.randint(0, w)
            m[y:y + rng.randint(1, h // 2), x:x + rng.randint(1, w // 2)] = True
            label = int(rng.choice(things + ignored))
        else:
            label = int(rng.choice(things))   # an empty mask
        conf = float(rng.choice(confs)) if rng.rand() < 0.4 else round(float(rng.rand()), 3)
        preds.append((m, label, conf))
    return lab, inst, preds


def write_submission(root, predictions, value=255, shuffle=None):
    """predictions: [(image id, [(mask, label, confidence)])] -> root/<id>.txt and
    root/masks/<id>_<n>.png. shuffle: a RandomState to shuffle each file's lines."""
    os.makedirs(os.path.join(root, "masks"), exist_ok=True)
    for image_id, preds in predictions:
        lines = []
        for n, (mask, label, conf) in enumerate(preds):
            rel = "masks/{}_{}.png".format(image_id, n)
            Image.fromarray(np.asarray(mask, dtype=np.uint8) * value).save(os.path.join(root, rel))
            lines.append("{} {} {!r}\n".format(rel, label, conf))
        if shuffle is not None:
            shuffle.shuffle(lines)
        with open(os.path.join(root, image_id + ".txt"), "w") as f:
            f.writelines(lines)


def write_instance_reference(root, labels, images):
    """images: [(image id, labels, instances)]."""
    write_reference(root, labels, images, task="planetscapes-instance")


def write_cityscapes_gt(folder, images):
    """The same ground truth under Cityscapes names: <id>_gtFine_instanceIds.png; returns them."""
    os.makedirs(folder, exist_ok=True)
    out = []
    for image_id, _, inst in images:
        path = os.path.join(folder, image_id + "_gtFine_instanceIds.png")
        save_16bit(inst, path)
        out.append(path)
    return out
