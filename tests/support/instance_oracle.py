"""A deliberately naive oracle of the instance task's AP, written from the rules in
docs/planetscapes-instance.md (not from the task's code): pixel loops, plain dicts, exact
fractions. For small images only."""
from fractions import Fraction

OVERLAP_STEPS = 10


def overlaps():
    """The anchor's thresholds, np.arange(0.5, 1., 0.05): numpy's arange steps by the
    difference of its first two values, (0.5 + 0.05) - 0.5, so its third value is
    0.6000000000000001, not 0.6."""
    step = (0.5 + 0.05) - 0.5
    return [0.5 + i * step for i in range(OVERLAP_STEPS)]


def segments(inst):
    """value -> pixel count, by looking at every pixel."""
    out = {}
    for row in inst:
        for v in row:
            out[int(v)] = out.get(int(v), 0) + 1
    return out


def class_of(value):
    return value if value < 1000 else value // 1000


def prediction_facts(inst, mask, label, void_ids):
    """(pixels, {segment value: intersection} for segments of the label's class, void pixels)."""
    pixels, inter, void = 0, {}, 0
    for y in range(len(inst)):
        for x in range(len(inst[0])):
            if not mask[y][x]:
                continue
            pixels += 1
            v = int(inst[y][x])
            if v < 1000 and v in void_ids:
                void += 1
            if class_of(v) == label:
                inter[v] = inter.get(v, 0) + 1
    return pixels, inter, void


def image_facts(inst, preds, cls, void_ids):
    """(segments, [(confidence, pixels, intersections, void pixels)] of the class's non-empty
    predictions)."""
    facts = []
    for mask, label, conf in preds:
        if label != cls:
            continue
        pixels, inter, void = prediction_facts(inst, mask, label, void_ids)
        if pixels:
            facts.append((conf, pixels, inter, void))
    return segments(inst), facts


def image_examples(seg, facts, cls, t, min_size=100):
    """At overlap t for class cls: (examples [(confidence, is true positive)], hard FNs,
    counted instances, predictions of the class)."""
    real = [v for v in seg if v >= 1000 and class_of(v) == cls and seg[v] >= min_size]
    examples, hard = [], 0
    for g in real:
        hits = sorted([conf for conf, pixels, inter, _ in facts if inter.get(g, 0) and
                       float(inter[g]) / (seg[g] + pixels - inter[g]) > t], reverse=True)
        if not hits:
            hard += 1
            continue
        examples.append((hits[0], True))
        examples += [(c, False) for c in hits[1:]]
    for conf, pixels, inter, void in facts:
        if any(float(n) / (seg[v] + pixels - n) > t for v, n in inter.items()):
            continue   # matched something: a true positive above, a duplicate, or nothing
        ignore = void
        for v, n in inter.items():
            if v < 1000:
                ignore += n
            if seg[v] < min_size:
                ignore += n
        if float(ignore) / pixels <= t:
            examples.append((conf, False))
    return examples, hard, len(real), len(facts)


def curve_ap(examples, hard):
    """The anchor's integration of the precision-recall curve, in fractions."""
    if not examples:
        return 0.0   # the anchor raises IndexError here; the task gives 0
    positives = sum(1 for _, t in examples if t) + hard
    points = []
    for c in sorted(set(conf for conf, _ in examples)):
        above = [t for conf, t in examples if conf >= c]
        tp = sum(1 for t in above if t)
        points.append((Fraction(tp, len(above)), Fraction(tp, positives)))
    points.append((Fraction(1), Fraction(0)))
    total = Fraction(0)
    for j, (p, _) in enumerate(points):
        before = points[j - 1][1] if j > 0 else points[0][1]
        after = points[j + 1][1] if j + 1 < len(points) else Fraction(0)
        total += p * (before - after) / 2
    return float(total)


def scores(images, classes, void_ids, key=lambda name: name):
    """images: [(instances, [(mask, label, confidence)])]; classes: [(id, name)] of the
    evaluated instance classes. Returns {key: value}, undefined values absent."""
    table = {}
    for cls, name in classes:
        per = []
        facts = [image_facts(inst, preds, cls, void_ids) for inst, preds in images]
        for t in overlaps():
            examples, hard, gts, npred = [], 0, 0, 0
            for seg, f in facts:
                e, h, g, p = image_examples(seg, f, cls, t)
                examples += e
                hard += h
                gts += g
                npred += p
            if not gts:
                per.append(None)
            elif not npred:
                per.append(0.0)
            else:
                per.append(curve_ap(examples, hard))
        table[name] = per
    out = {}
    defined = [per for per in table.values() if per[0] is not None]
    for name, per in table.items():
        if per[0] is not None:
            out["ap_" + key(name)] = sum(per) / len(per)
            out["ap50_" + key(name)] = per[0]
    if defined:
        out["ap"] = sum(sum(per) for per in defined) / (len(defined) * OVERLAP_STEPS)
        out["ap50"] = sum(per[0] for per in defined) / len(defined)
    return out
