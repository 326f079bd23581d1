"""A deliberately naive oracle of the Planetscapes / Cityscapes semantic scores.

Written from the definitions in shared/spec/planetscapes.md, with per-pixel and per-instance
Python loops and exact fractions, sharing no code with the scoring program. Slow on purpose: use
it on small images only.

rows: label table rows (dicts with name, id, category, has_instances, ignore_in_eval).
images: list of (labels, instances, prediction), each a 2-D sequence of ints.
sizes: configured average instance sizes {class name: pixels}; a class with instances that is
not in it gets the mean size of its instances over all images.
Returns {key: exact Fraction} with undefined values absent.
"""
import re
from fractions import Fraction


def key(name):
    return re.sub("[^a-z0-9]+", "_", name.lower())


_WALKED = {}  # id(image) -> (image, its content, its pixel pairs, its instances)


def _content(image):
    """What the image holds, to tell a cached walk from an image changed in place since."""
    return tuple(a.tobytes() if hasattr(a, "tobytes") else repr(a) for a in image)


def _walk(image):
    content = _content(image)
    cached = _WALKED.get(id(image))
    if cached is None or cached[1] != content:
        lab_img, inst_img, pred_img = image
        pairs, pixels = {}, {}
        for y in range(len(lab_img)):
            for x in range(len(lab_img[y])):
                pair = (int(lab_img[y][x]), int(pred_img[y][x]))
                pairs[pair] = pairs.get(pair, 0) + 1
        for y in range(len(inst_img)):
            for x in range(len(inst_img[y])):
                v = int(inst_img[y][x])
                if v > 1000:
                    pixels.setdefault(v, []).append(int(pred_img[y][x]))
        _WALKED[id(image)] = (image, content, pairs, pixels)  # the image kept: its id stays
    return _WALKED[id(image)]


def _image_pairs(image):
    return _walk(image)[2]


def _image_instances(image):
    return _walk(image)[3]


def scores(rows, images, sizes=None):
    sizes = dict(sizes or {})
    label = {r["id"]: r for r in rows if r["id"] >= 0}
    valid = [r["id"] for r in rows if r["id"] >= 0 and not r["ignore_in_eval"]]
    categories = []
    for r in rows:
        if r["category"] not in categories:
            categories.append(r["category"])

    # confusion counts, one pixel at a time: conf[(reference, prediction)] (each image walked
    # once, however often a bootstrap resample holds it)
    conf = {}
    for image in images:
        for pair, count in _image_pairs(image).items():
            conf[pair] = conf.get(pair, 0) + count

    def m(r, p):
        return conf.get((r, p), 0)

    all_ids = sorted(label)
    out = {}

    # class IoU
    class_iou, class_fp = {}, {}
    for c in valid:
        tp = m(c, c)
        fn = sum(m(c, p) for p in all_ids) - tp
        fp = sum(m(r, c) for r in valid if r != c)
        class_fp[c] = fp
        if tp + fp + fn:
            class_iou[c] = Fraction(tp, tp + fp + fn)
            out["iou_class_" + key(label[c]["name"])] = class_iou[c]

    # category IoU
    cat_iou = {}
    for cat in categories:
        members = [c for c in valid if label[c]["category"] == cat]
        if not members:
            continue
        outside = [r for r in valid if label[r]["category"] != cat]
        tp = sum(m(r, p) for r in members for p in members)
        fn = sum(m(r, p) for r in members for p in all_ids) - tp
        fp = sum(m(r, p) for r in outside for p in members)
        if tp + fp + fn:
            cat_iou[cat] = Fraction(tp, tp + fp + fn)
            out["iou_category_" + key(cat)] = cat_iou[cat]

    # instances: every value > 1000 of every instance image, one at a time
    instances = []  # (class id, size, pixels predicted as the class, predicted values)
    for image in images:
        for v, preds in _image_instances(image).items():
            c = v // 1000
            if label[c]["ignore_in_eval"]:
                continue
            instances.append((c, len(preds), preds))
    for r in rows:
        if r["id"] >= 0 and r["has_instances"] and r["name"] not in sizes:
            found = [s for c, s, _ in instances if c == r["id"]]
            if found:
                sizes[r["name"]] = Fraction(sum(found), len(found))
    sizes = {n: Fraction(v) for n, v in sizes.items()}

    # class iIoU
    class_iiou = {}
    for c in valid:
        if not label[c]["has_instances"]:
            continue
        itp = ifn = Fraction(0)
        for ic, size, preds in instances:
            if ic != c:
                continue
            tp = sum(1 for p in preds if p == c)
            weight = sizes[label[c]["name"]] / size
            itp += tp * weight
            ifn += (size - tp) * weight
        den = itp + class_fp[c] + ifn
        if den:
            class_iiou[c] = itp / den
            out["iiou_class_" + key(label[c]["name"])] = class_iiou[c]

    # category iIoU: categories whose classes (ids >= 0) all have instances
    cat_iiou = {}
    for cat in categories:
        members = [r for r in rows if r["category"] == cat and r["id"] >= 0]
        if not all(r["has_instances"] for r in members):
            continue
        ids = [r["id"] for r in members]  # ignored classes included
        outside = [r for r in valid if label[r]["category"] != cat]
        fp = sum(m(r, p) for r in outside for p in ids)
        itp = ifn = Fraction(0)
        for ic, size, preds in instances:
            if label[ic]["category"] != cat:
                continue
            tp = sum(1 for p in preds if p in ids)
            weight = sizes[label[ic]["name"]] / size
            itp += tp * weight
            ifn += (size - tp) * weight
        den = itp + fp + ifn
        if den:
            cat_iiou[cat] = itp / den
            out["iiou_category_" + key(cat)] = cat_iiou[cat]

    for name, values in (("iou_class", class_iou), ("iiou_class", class_iiou),
                         ("iou_category", cat_iou), ("iiou_category", cat_iiou)):
        if values:
            out[name] = sum(values.values(), Fraction(0)) / len(values)
    return out
