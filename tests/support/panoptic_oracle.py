"""A deliberately naive panoptic quality, from the definition (Kirillov et al., "Panoptic
Segmentation", and docs/planetscapes-panoptic.md's rules), pixel by pixel in plain Python with
exact fractions: slow, obvious, and independent of the program's histograms.

images: [(instance image, predicted segment ids, {segment id: category id})].
Returns {key: float} with undefined values absent.
"""
from fractions import Fraction


def _key(name):
    import re
    return re.sub("[^a-z0-9]+", "_", name.lower())


def oracle(rows, images):
    return scores(rows, [image_counts(rows, image) for image in images])


def image_counts(rows, image):
    """{class id: [TP, FP, FN, summed IoU (a Fraction)]} of one image."""
    by_id = {r["id"]: r for r in rows if r["id"] >= 0}
    evaluated = [r for r in rows if r["id"] >= 0 and not r["ignore_in_eval"]]
    tp = {r["id"]: 0 for r in evaluated}
    fp = dict(tp)
    fn = dict(tp)
    iou = {r["id"]: Fraction(0) for r in evaluated}
    for inst, seg, cats in [image]:
        h, w = len(inst), len(inst[0])
        gt = {}      # value -> set of pixels
        void = set()
        for y in range(h):
            for x in range(w):
                v = int(inst[y][x])
                label = v if v < 1000 else v // 1000
                if by_id[label]["ignore_in_eval"]:
                    void.add((y, x))
                else:
                    gt.setdefault(v, set()).add((y, x))
        pred = {}
        for y in range(h):
            for x in range(w):
                s = int(seg[y][x])
                if s:
                    pred.setdefault(s, set()).add((y, x))
        assert set(pred) == set(cats)

        def label_of(v):
            return v if v < 1000 else v // 1000

        def is_crowd(v):
            return v < 1000 and by_id[v]["has_instances"]

        matched_g, matched_p = set(), set()
        for v, gp in gt.items():
            if is_crowd(v):
                continue
            for s, pp in pred.items():
                if cats[s] != label_of(v):
                    continue
                inter = len(gp & pp)
                union = len(gp | pp) - len(pp & void)
                if inter and Fraction(inter, union) > Fraction(1, 2):
                    tp[label_of(v)] += 1
                    iou[label_of(v)] += Fraction(inter, union)
                    matched_g.add(v)
                    matched_p.add(s)
        for v in gt:
            if v not in matched_g and not is_crowd(v):
                fn[label_of(v)] += 1
        for s, pp in pred.items():
            if s in matched_p:
                continue
            crowd = gt.get(cats[s], set()) if by_id[cats[s]]["has_instances"] else set()
            ignored = len(pp & void) + len(pp & crowd)
            if Fraction(ignored, len(pp)) > Fraction(1, 2):
                continue
            fp[cats[s]] += 1
    return {c: [tp[c], fp[c], fn[c], iou[c]] for c in tp}


def scores(rows, per_image):
    """The scores of a list of image_counts (an image may be there many times)."""
    evaluated = [r for r in rows if r["id"] >= 0 and not r["ignore_in_eval"]]
    tp = {r["id"]: sum(one[r["id"]][0] for one in per_image) for r in evaluated}
    fp = {r["id"]: sum(one[r["id"]][1] for one in per_image) for r in evaluated}
    fn = {r["id"]: sum(one[r["id"]][2] for one in per_image) for r in evaluated}
    iou = {r["id"]: sum((one[r["id"]][3] for one in per_image), Fraction(0)) for r in evaluated}
    out = {}
    groups = {"": [], "_things": [], "_stuff": []}
    for r in evaluated:
        c = r["id"]
        if tp[c] + fp[c] + fn[c] == 0:
            continue
        den = tp[c] + Fraction(fp[c] + fn[c], 2)
        vals = {"pq": iou[c] / den, "sq": iou[c] / tp[c] if tp[c] else Fraction(0),
                "rq": tp[c] / den}
        for m, v in vals.items():
            out[m + "_" + _key(r["name"])] = float(v)
        groups[""].append(vals)
        groups["_things" if r["has_instances"] else "_stuff"].append(vals)
    for suffix, members in groups.items():
        if members:
            for m in ("pq", "sq", "rq"):
                out[m + suffix] = float(sum(v[m] for v in members) / len(members))
    return out
