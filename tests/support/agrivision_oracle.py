"""A deliberately naive oracle: the spec's rule applied pixel by pixel, in plain Python.

It shares no code with the scoring program (no label-set bitmasks, no histograms): it reads the
raw layers as nested lists and walks every pixel. Slow on purpose; used on small images only.
"""
from fractions import Fraction

CLASSES = ["background", "double_plant", "drydown", "endrow", "nutrient_deficiency",
           "planter_skip", "water", "waterway", "weed_cluster"]


def confusion_one(boundary, mask, labels, storm, pred, policy="background", m=None):
    """Add one image to the 9x9 matrix m[x][y] (x predicted, y reference); returns m.

    boundary, mask, pred: 2-D sequences; labels: dict class name -> 2-D sequence (the 8 pattern
    classes); storm: 2-D sequence or None.
    """
    if m is None:
        m = [[0] * 9 for _ in range(9)]
    height = len(pred)
    width = len(pred[0])
    for i in range(height):
        for j in range(width):
            if boundary[i][j] == 0 or mask[i][j] == 0:
                continue  # invalid pixel: not evaluated
            ys = []
            for cid in range(1, 9):
                if labels[CLASSES[cid]][i][j] != 0:
                    ys.append(cid)
            if not ys:
                has_storm = storm is not None and storm[i][j] != 0
                if has_storm and policy == "ignore":
                    continue
                ys = [0]
            x = int(pred[i][j])
            if x in ys:
                for y in ys:
                    m[y][y] += 1
            else:
                for y in ys:
                    m[x][y] += 1
    return m


def scores(m):
    """(per-class IoU as Fraction or None, mIoU as Fraction or None) from the matrix."""
    ious = []
    for c in range(9):
        row = sum(m[c][y] for y in range(9))
        col = sum(m[x][c] for x in range(9))
        denom = row + col - m[c][c]
        ious.append(Fraction(m[c][c], denom) if denom else None)
    defined = [v for v in ious if v is not None]
    miou = sum(defined, Fraction(0)) / len(defined) if defined else None
    return ious, miou
