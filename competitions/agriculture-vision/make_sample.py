#!/usr/bin/env python3
"""Deterministic synthetic sample of the Agriculture-Vision ground truth (raw layout).

Writes, under --out DIR, for every image id ``<FIELDID>_<x1>-<y1>-<x2>-<y2>``:

    boundaries/<id>.png            8-bit L, 255 inside the field boundary, 0 outside
    masks/<id>.png                 8-bit L, 255 valid, 0 invalid (cloud, missing data)
    labels/<class>/<id>.png        8-bit L, 255 pattern present, 0 absent (9 classes,
                                   storm_damage included; labels overlap)
    config.yaml                    ``storm_damage: background``

and, with --submission DIR, an imperfect "participant prediction" ``DIR/<id>.png``
(8-bit L, values 0..8) made by degrading the ground truth.

Every image is drawn from its own ``numpy.random.RandomState`` seeded from
(seed, index), so image k is the same whatever the number of images or workers.
Geometry uses only exactly rounded operations (+, -, *, /, floor, ceil, comparisons)
on numpy arrays, and trigonometry only through Python's ``math`` on scalars, so the
same seed gives the same arrays with numpy 1.16 and numpy 2.x (numpy's own sin/cos
may differ in the last bit between versions and CPUs).

Needs Python 3.7+, numpy >= 1.16 and Pillow >= 6.1 only.

Usage:
    python3 competitions/agriculture-vision/make_sample.py \\
        --out competitions/agriculture-vision/reference_data --images 40 --seed 2021 \\
        --submission competitions/agriculture-vision/starting_kit/sample_submission
"""

import argparse
import io
import math
import os
import shutil
import sys
import time

import numpy as np
from PIL import Image

# The class list has one source, the scoring program's (the order is the challenge's and strict).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scoring_program"))
from scoring.tasks.agrivision.classes import PATTERNS, STORM  # noqa: E402

# Label folders, in the order of the submission ids (1..8); storm_damage is not scored.
SCORED_CLASSES = PATTERNS
LABEL_CLASSES = SCORED_CLASSES + (STORM,)
CLASS_ID = dict((name, i + 1) for i, name in enumerate(SCORED_CLASSES))
CLASS_ID["storm_damage"] = 9  # internal only, never written in a prediction

CONFIG_YAML = (
    "# storm_damage policy: 'background' scores a valid pixel whose only label is storm_damage "
    "as background; 'ignore' leaves such pixels out of the evaluation.\n"
    "storm_damage: background\n"
)

TILE = 512          # the x2 - x1 and y2 - y1 of an image id (always 512, whatever --size)
TILES_PER_FIELD = 4  # consecutive images share a field id (2 x 2 neighbouring tiles)
EMPTY_PERIOD = 20    # one image in every EMPTY_PERIOD consecutive ones has no valid pixel

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ID_SPACE = 36 ** 9
_ID_MULT = 0x2545F4914F6CDD1D % _ID_SPACE  # coprime with 36: field number -> id is a bijection

# RandomState sub-streams: seeds are [seed, index, stream].
_STREAM_TRUTH = 0
_STREAM_PRED = 1
_STREAM_FIELD = 2
_STREAM_EMPTY = 3

# Probability that a class is present in an image (roughly the real data's ordering).
_PRESENCE = (
    ("drydown", 0.40),
    ("nutrient_deficiency", 0.40),
    ("water", 0.08),
    ("weed_cluster", 0.45),
    ("waterway", 0.10),
    ("double_plant", 0.15),
    ("endrow", 0.12),
    ("planter_skip", 0.09),
    ("storm_damage", 0.18),
)

# Prediction degradation: classes a model mixes up.
_CONFUSION = {
    1: (5, 3, 8),
    2: (4, 4, 8),
    3: (1, 5),
    4: (2, 2, 8),
    5: (1, 3),
    6: (7, 7, 2),
    7: (6, 8),
    8: (4, 4, 2),
    9: (2, 4, 8),
}
_FALSE_POSITIVE_CLASSES = (8, 8, 8, 4, 4, 4, 2, 2, 1, 3, 5, 6, 7)


# --------------------------------------------------------------------------- ids

def _field_number(index):
    return index // TILES_PER_FIELD


def image_id(seed, index):
    """The id of image ``index`` for ``seed`` (unique for a given seed, deterministic)."""
    f = _field_number(index)
    value = ((f + seed * 0x9E3779B97F4A7C15 + 0x5BD1E995) * _ID_MULT) % _ID_SPACE
    chars = []
    for _ in range(9):
        value, r = divmod(value, 36)
        chars.append(_ALPHABET[r])
    field_id = "".join(chars)
    rs = np.random.RandomState([seed, f, _STREAM_FIELD])
    ox = int(rs.randint(0, 20000))
    oy = int(rs.randint(0, 20000))
    j = index % TILES_PER_FIELD
    x1 = ox + (j % 2) * TILE
    y1 = oy + (j // 2) * TILE
    return "%s_%d-%d-%d-%d" % (field_id, x1, y1, x1 + TILE, y1 + TILE)


def _empty_offset(seed):
    return int(np.random.RandomState([seed, 0, _STREAM_EMPTY]).randint(EMPTY_PERIOD))


# ------------------------------------------------------------------ rasterizers
# Every rasterizer returns (y0, x0, bool mask) cropped to the image, or None.
# Pixel (row r, column c) has its centre at (c + 0.5, r + 0.5).

def _bbox(S, xmin, xmax, ymin, ymax):
    x0 = max(0, int(math.floor(xmin)))
    x1 = min(S, int(math.ceil(xmax)) + 1)
    y0 = max(0, int(math.floor(ymin)))
    y1 = min(S, int(math.ceil(ymax)) + 1)
    if x0 >= x1 or y0 >= y1:
        return None
    return x0, x1, y0, y1


def _grid(x0, x1, y0, y1, cx, cy):
    xs = (np.arange(x0, x1, dtype=np.float64) + (0.5 - cx))[None, :]
    ys = (np.arange(y0, y1, dtype=np.float64) + (0.5 - cy))[:, None]
    return xs, ys


class _Shape:
    """A pattern's geometry; ``render`` draws it, optionally scaled and shifted."""

    __slots__ = ("kind", "p")

    def __init__(self, kind, **params):
        self.kind = kind
        self.p = params

    def render(self, S, scale=1.0, dx=0.0, dy=0.0):
        return getattr(self, "_" + self.kind)(S, scale, dx, dy)

    def center(self):
        return self.p["cx"], self.p["cy"]

    def _ellipse(self, S, scale, dx, dy):
        # A rotated ellipse whose radius is modulated by 3 angular harmonics, drawn as a
        # fine polygon (the outline points are exact arithmetic on precomputed cos/sin).
        p = self.p
        cx, cy = p["cx"] + dx, p["cy"] + dy
        a, b = p["a"] * scale, p["b"] * scale
        c, s, harm = p["c"], p["s"], p["harm"]
        cos_k, sin_k = _ANGLES[32 if max(a, b) < 12.0 else 128]
        r = 1.0 + (harm[0] * cos_k[0] + harm[1] * sin_k[0] + harm[2] * cos_k[1]
                   + harm[3] * sin_k[1] + harm[4] * cos_k[2] + harm[5] * sin_k[2])
        X = r * cos_k[0] * a
        Y = r * sin_k[0] * b
        return _fill_polygon(S, cx + X * c - Y * s, cy + X * s + Y * c)

    def _stripes(self, S, scale, dx, dy):
        # n parallel stripes along direction (c, s), spaced by `period`.
        p = self.p
        cx, cy = p["cx"] + dx, p["cy"] + dy
        c, s = p["c"], p["s"]
        lengths = p["lengths"] * math.sqrt(scale)
        offsets = p["offsets"]
        width = max(p["width"] * scale, 0.8)
        period = p["period"]
        n = len(lengths)
        half_len = float(np.max(np.abs(offsets) + lengths * 0.5))
        half_wid = (n - 1) * period * 0.5 + width * 0.5
        ex = half_len * abs(c) + half_wid * abs(s) + 1.0
        ey = half_len * abs(s) + half_wid * abs(c) + 1.0
        box = _bbox(S, cx - ex, cx + ex, cy - ey, cy + ey)
        if box is None:
            return None
        x0, x1, y0, y1 = box
        xs, ys = _grid(x0, x1, y0, y1, cx, cy)
        along = xs * c + ys * s
        across = ys * c - xs * s + (n - 1) * period * 0.5
        k = np.floor(across * (1.0 / period) + 0.5)
        np.clip(k, 0, n - 1, out=k)
        ki = k.astype(np.intp)
        m = np.abs(across - k * period) < width * 0.5
        m &= np.abs(along - offsets[ki]) < lengths[ki] * 0.5
        return (y0, x0, m) if m.any() else None

    def _curve(self, S, scale, dx, dy):
        # A band around t = k2 * a^2 + k3 * a^3 in a frame rotated by (c, s).
        p = self.p
        cx, cy = p["cx"] + dx, p["cy"] + dy
        c, s = p["c"], p["s"]
        L, k2, k3 = p["length"], p["k2"], p["k3"]
        w0, w1 = p["w0"] * scale, p["w1"]
        a = np.linspace(-0.5 * L, 0.5 * L, 33)
        t = (k2 + k3 * a) * a * a
        px = cx + a * c - t * s
        py = cy + a * s + t * c
        e = w0 * (1.0 + abs(w1) * 0.5) * 0.5 + 2.0
        box = _bbox(S, px.min() - e, px.max() + e, py.min() - e, py.max() + e)
        if box is None:
            return None
        x0, x1, y0, y1 = box
        xs, ys = _grid(x0, x1, y0, y1, cx, cy)
        along = xs * c + ys * s
        across = ys * c - xs * s
        center = (k2 + k3 * along) * along * along
        half_w = (1.0 + (w1 / L) * along) * (w0 * 0.5)
        m = np.abs(across - center) < half_w
        m &= np.abs(along) < 0.5 * L
        return (y0, x0, m) if m.any() else None


def _angle_table(n):
    t = [2.0 * math.pi * j / n for j in range(n)]
    cos_k = np.array([[math.cos(k * v) for v in t] for k in (1, 2, 3)])
    sin_k = np.array([[math.sin(k * v) for v in t] for k in (1, 2, 3)])
    return cos_k, sin_k


_ANGLES = dict((n, _angle_table(n)) for n in (32, 128))


def _fill_polygon(S, vx, vy):
    """Even-odd fill of the closed polygon (vx, vy), cropped to the S x S image.

    Scanlines: the crossings of every pixel-row centre with the edges, sorted, give the
    row's inside intervals; no per-pixel arithmetic beyond two comparisons."""
    vx = np.asarray(vx, dtype=np.float64)
    vy = np.asarray(vy, dtype=np.float64)
    box = _bbox(S, vx.min(), vx.max(), vy.min(), vy.max())
    if box is None:
        return None
    x0, x1, y0, y1 = box
    w = x1 - x0
    xb = np.roll(vx, -1)
    yb = np.roll(vy, -1)
    # rows r crossed by an edge: lo <= r + 0.5 < hi (half-open: vertices count once)
    r0 = np.clip(np.ceil(np.minimum(vy, yb) - 0.5), y0, y1).astype(np.intp)
    r1 = np.clip(np.ceil(np.maximum(vy, yb) - 0.5), y0, y1).astype(np.intp)
    cnt = r1 - r0
    keep = np.nonzero(cnt > 0)[0]
    if keep.size == 0:
        return None
    xa, ya, cnt, r0 = vx[keep], vy[keep], cnt[keep], r0[keep]
    slope = (xb[keep] - xa) / (yb[keep] - ya)
    e = np.repeat(np.arange(keep.size), cnt)
    first = np.cumsum(cnt) - cnt
    rows = r0[e] + (np.arange(e.size) - first[e])
    xi = xa[e] + ((rows + 0.5) - ya[e]) * slope[e]
    # pixel column x is right of the crossing iff x + 0.5 > xi
    col = np.clip(np.floor(xi - 0.5) + 1.0, x0, x1).astype(np.intp) - x0
    keys, counts = np.unique((rows - y0) * (w + 1) + col, return_counts=True)
    keys = keys[(counts & 1) == 1]  # two crossings in one place cancel out
    if keys.size == 0:
        return None
    rr = keys[0::2] // (w + 1)
    starts = keys[0::2] % (w + 1)
    ends = keys[1::2] % (w + 1)
    # rank of each interval within its row
    n = rr.size
    idx = np.arange(n)
    new_row = np.ones(n, bool)
    new_row[1:] = rr[1:] != rr[:-1]
    j = idx - np.maximum.accumulate(np.where(new_row, idx, 0))
    h = y1 - y0
    xs = np.arange(w, dtype=np.intp)[None, :]
    m = None
    for k in range(int(j.max()) + 1):
        sel = j == k
        lo = np.zeros((h, 1), np.intp)
        hi = np.zeros((h, 1), np.intp)
        lo[rr[sel], 0] = starts[sel]
        hi[rr[sel], 0] = ends[sel]
        part = (xs >= lo) & (xs < hi)
        if m is None:
            m = part
        else:
            m |= part
    return (y0, x0, m) if m.any() else None


def _paste(canvas, item, value, dx=0, dy=0):
    """canvas[mask at (y0 + dy, x0 + dx)] = value, clipped to the canvas."""
    y0, x0, m = item
    y0 += dy
    x0 += dx
    h, w = m.shape
    H, W = canvas.shape
    ya, xa = max(0, y0), max(0, x0)
    yb, xb = min(H, y0 + h), min(W, x0 + w)
    if ya >= yb or xa >= xb:
        return
    canvas[ya:yb, xa:xb][m[ya - y0:yb - y0, xa - x0:xb - x0]] = value


# ------------------------------------------------------------ pattern drawing

def _harm(rs, amount):
    # amplitudes of the 1st, 2nd and 3rd angular harmonics of the outline
    weights = (1.0, 1.0, 0.7, 0.7, 0.45, 0.45)
    return tuple(float(v) * w for v, w in zip(rs.uniform(-amount, amount, 6), weights))


def _ellipse(rs, cx, cy, a, b, angle, wobble):
    return _Shape("ellipse", cx=float(cx), cy=float(cy), a=float(a), b=float(b),
                  c=math.cos(angle), s=math.sin(angle), harm=_harm(rs, wobble))


def _place(rs, S, anchors, p_near, spread):
    if anchors and rs.rand() < p_near:
        ax, ay = anchors[rs.randint(len(anchors))]
        return ax + rs.normal(0.0, spread * S), ay + rs.normal(0.0, spread * S)
    return rs.uniform(-0.1 * S, 1.1 * S), rs.uniform(-0.1 * S, 1.1 * S)


def _stripes(rs, cx, cy, angle, n, length, width, period, ragged):
    lengths = length * rs.uniform(1.0 - ragged, 1.0, n)
    offsets = length * rs.uniform(-0.5, 0.5, n) * ragged
    return _Shape("stripes", cx=float(cx), cy=float(cy), c=math.cos(angle), s=math.sin(angle),
                  lengths=lengths, offsets=offsets, width=float(width),
                  period=float(max(period, width, 1e-3)))


def _draw_drydown(rs, S, anchors, row_angle):
    """One or two large patches."""
    shapes = []
    for _ in range(1 + int(rs.rand() < 0.4)):
        cx, cy = _place(rs, S, anchors, 0.2, 0.15)
        a = rs.uniform(0.15, 0.6) * S
        shapes.append(_ellipse(rs, cx, cy, a, a * rs.uniform(0.5, 1.2),
                               rs.uniform(0, math.pi), 0.22))
    return shapes


def _draw_nutrient_deficiency(rs, S, anchors, row_angle):
    """One to three smaller patches."""
    shapes = []
    for _ in range(1 + rs.randint(3)):
        cx, cy = _place(rs, S, anchors, 0.35, 0.12)
        a = rs.uniform(0.06, 0.3) * S
        shapes.append(_ellipse(rs, cx, cy, a, a * rs.uniform(0.4, 1.0),
                               rs.uniform(0, math.pi), 0.25))
    return shapes


def _draw_water(rs, S, anchors, row_angle):
    """One patch."""
    shapes = []
    cx, cy = _place(rs, S, anchors, 0.2, 0.1)
    a = rs.uniform(0.05, 0.25) * S
    shapes.append(_ellipse(rs, cx, cy, a, a * rs.uniform(0.5, 1.0),
                           rs.uniform(0, math.pi), 0.15))
    return shapes


def _draw_weed_cluster(rs, S, anchors, row_angle):
    """One to three clusters of 2 to 7 small blobs."""
    shapes = []
    for _ in range(1 + rs.randint(3)):
        ccx, ccy = _place(rs, S, anchors, 0.4, 0.1)
        spread = rs.uniform(0.03, 0.15) * S
        for _ in range(2 + rs.randint(6)):
            a = rs.uniform(0.02, 0.09) * S + 0.8
            shapes.append(_ellipse(rs, ccx + rs.normal(0, spread), ccy + rs.normal(0, spread),
                                   a, a * rs.uniform(0.5, 1.0), rs.uniform(0, math.pi), 0.3))
    return shapes


def _draw_waterway(rs, S, anchors, row_angle):
    """One curved band of varying width."""
    shapes = []
    cx, cy = _place(rs, S, anchors, 0.2, 0.1)
    L = rs.uniform(0.6, 1.6) * S
    angle = rs.uniform(0, math.pi)
    shapes.append(_Shape("curve", cx=float(cx), cy=float(cy), c=math.cos(angle),
                         s=math.sin(angle), length=float(L),
                         k2=float(rs.uniform(-0.8, 0.8) / L),
                         k3=float(rs.uniform(-1.5, 1.5) / (L * L)),
                         w0=float(rs.uniform(0.012, 0.05) * S + 1.2),
                         w1=float(rs.uniform(-0.6, 0.6))))
    return shapes


def _draw_double_plant(rs, S, anchors, row_angle):
    """One to three runs of 2 to 7 rows along the rows' direction."""
    shapes = []
    for _ in range(1 + rs.randint(3)):
        cx, cy = _place(rs, S, anchors, 0.3, 0.1)
        width = rs.uniform(0.006, 0.02) * S + 1.0
        shapes.append(_stripes(rs, cx, cy, row_angle + rs.normal(0, 0.02),
                               2 + rs.randint(6), rs.uniform(0.06, 0.35) * S, width,
                               width * rs.uniform(1.6, 3.0), 0.5))
    return shapes


def _draw_endrow(rs, S, anchors, row_angle):
    """A band of rows across the main row direction, along an image / field edge."""
    shapes = []
    side = rs.randint(4)
    depth = rs.uniform(0.03, 0.15) * S
    along_edge = (side % 2 == 0)
    pos = rs.uniform(0.0, 1.2) * depth
    if side == 0:
        cx, cy = 0.5 * S, pos
    elif side == 1:
        cx, cy = S - pos, 0.5 * S
    elif side == 2:
        cx, cy = 0.5 * S, S - pos
    else:
        cx, cy = pos, 0.5 * S
    angle = (0.0 if along_edge else 0.5 * math.pi) + rs.normal(0, 0.03)
    width = rs.uniform(0.006, 0.02) * S + 1.0
    period = width * rs.uniform(1.0, 2.2)
    n = max(1, int(depth / period))
    slide = rs.uniform(-0.2, 0.2) * S  # along the edge
    if along_edge:
        cx += slide
    else:
        cy += slide
    shapes.append(_stripes(rs, cx, cy, angle, n,
                           rs.uniform(0.4, 1.3) * S, width, period, 0.3))
    return shapes


def _draw_planter_skip(rs, S, anchors, row_angle):
    """One or two runs of 1 to 4 thin stripes along the rows' direction."""
    shapes = []
    for _ in range(1 + rs.randint(2)):
        cx, cy = _place(rs, S, anchors, 0.2, 0.15)
        width = rs.uniform(0.004, 0.012) * S + 1.0
        shapes.append(_stripes(rs, cx, cy, row_angle + rs.normal(0, 0.01),
                               1 + rs.randint(4), rs.uniform(0.15, 0.7) * S, width,
                               rs.uniform(0.02, 0.08) * S, 0.3))
    return shapes


def _draw_storm_damage(rs, S, anchors, row_angle):
    """The first patch usually on another pattern, a second one anywhere."""
    shapes = []
    for k in range(1 + int(rs.rand() < 0.5)):
        cx, cy = _place(rs, S, anchors, 0.85 if k == 0 else 0.2, 0.06)
        a = rs.uniform(0.1, 0.35) * S
        shapes.append(_ellipse(rs, cx, cy, a, a * rs.uniform(0.4, 1.0),
                               rs.uniform(0, math.pi), 0.3))
    return shapes


# One drawer per class (each draws from the image's RandomState in a fixed order: the same seed
# gives the same shapes).
_DRAWERS = {"drydown": _draw_drydown, "nutrient_deficiency": _draw_nutrient_deficiency,
            "water": _draw_water, "weed_cluster": _draw_weed_cluster,
            "waterway": _draw_waterway, "double_plant": _draw_double_plant,
            "endrow": _draw_endrow, "planter_skip": _draw_planter_skip,
            "storm_damage": _draw_storm_damage}


def _draw_class(rs, S, name, anchors, row_angle):
    """Shapes of one class for one image."""
    drawer = _DRAWERS.get(name)
    return drawer(rs, S, anchors, row_angle) if drawer else []


def _boundary(rs, S, empty):
    if empty:
        return np.zeros((S, S), np.uint8)
    kind = rs.rand()
    if kind < 0.6:
        return np.full((S, S), 255, np.uint8)
    for _ in range(10):
        if kind < 0.82:
            # a straight field edge (often close to the image axes)
            if rs.rand() < 0.6:
                theta = 0.5 * math.pi * rs.randint(4) + rs.normal(0, 0.15)
            else:
                theta = rs.uniform(0, 2 * math.pi)
            nx, ny = math.cos(theta), math.sin(theta)
            d = rs.uniform(-0.3, 0.45) * S
            px, py = 0.5 * S + nx * d, 0.5 * S + ny * d
            big = 4.0 * S
            xs = [px - ny * big, px + ny * big, px + ny * big - nx * big, px - ny * big - nx * big]
            ys = [py + nx * big, py - nx * big, py - nx * big - ny * big, py + nx * big - ny * big]
        else:
            # a random star-shaped field polygon
            n = 4 + rs.randint(5)
            ccx, ccy = rs.uniform(-0.2, 1.2, 2) * S
            radius = rs.uniform(0.4, 1.2) * S
            angles = np.sort(rs.uniform(0, 2 * math.pi, n))
            radii = radius * rs.uniform(0.7, 1.3, n)
            xs = [ccx + r * math.cos(t) for r, t in zip(radii, angles)]
            ys = [ccy + r * math.sin(t) for r, t in zip(radii, angles)]
        out = np.zeros((S, S), np.uint8)
        item = _fill_polygon(S, xs, ys)
        if item is not None:
            _paste(out, item, 255)
        if 0.1 <= np.count_nonzero(out) / float(S * S) <= 0.97:
            break
    return out


def _mask(rs, S, empty):
    mask = np.full((S, S), 255, np.uint8)
    clouds = []
    if empty:
        mask[:] = 0
        return mask, clouds
    u = rs.rand()
    if u < 0.2:
        for _ in range(1 + rs.randint(3)):
            a = rs.uniform(0.04, 0.3) * S
            shape = _ellipse(rs, rs.uniform(0, S), rs.uniform(0, S), a, a * rs.uniform(0.5, 1.0),
                             rs.uniform(0, math.pi), 0.3)
            item = shape.render(S)
            if item is not None:
                _paste(mask, item, 0)
                clouds.append(item)
    elif u < 0.26:
        # a band of missing data along one image edge
        w = max(1, int(rs.uniform(0.03, 0.35) * S))
        side = rs.randint(4)
        band = [np.s_[:w, :], np.s_[:, S - w:], np.s_[S - w:, :], np.s_[:, :w]][side]
        mask[band] = 0
    return mask, clouds


# ------------------------------------------------------------------- one image

def generate_image(seed, index, size=512):
    """Ground truth and synthetic prediction of image ``index``.

    Returns ``(image_id, layers, prediction)``: ``layers`` maps 'boundary', 'mask' and the
    9 label folder names to uint8 (size, size) arrays of 0/255; ``prediction`` is a uint8
    (size, size) array of class ids 0..8.
    """
    S = int(size)
    rs = np.random.RandomState([seed, index, _STREAM_TRUTH])
    empty = (index % EMPTY_PERIOD) == _empty_offset(seed)
    empty_by_mask = bool(rs.rand() < 0.5)
    layers = {
        "boundary": _boundary(rs, S, empty and not empty_by_mask),
    }
    layers["mask"], clouds = _mask(rs, S, empty and empty_by_mask)

    row_angle = (0.5 * math.pi * rs.randint(2) + rs.normal(0, 0.05)
                 if rs.rand() < 0.7 else rs.uniform(0, math.pi))
    anchors = []
    blobs = []  # (class id, shape, rendered item)
    for name, prob in _PRESENCE:
        layer = np.zeros((S, S), np.uint8)
        if rs.rand() < prob:
            for shape in _draw_class(rs, S, name, anchors, row_angle):
                item = shape.render(S)
                if item is None:
                    continue
                _paste(layer, item, 255)
                blobs.append((CLASS_ID[name], shape, item))
                cx, cy = shape.center()
                if -0.05 * S < cx < 1.05 * S and -0.05 * S < cy < 1.05 * S:
                    anchors.append((cx, cy))
        layers[name] = layer

    prediction = _predict(np.random.RandomState([seed, index, _STREAM_PRED]), S, blobs, clouds)
    return image_id(seed, index), layers, prediction


def _predict(rs, S, blobs, clouds):
    """An imperfect model: the ground truth, one label a pixel, degraded blob by blob."""
    # painting order of the classes: where patterns overlap, the last painted one stays
    rank = [-1] + [int(r) for r in rs.permutation(8)]
    items = []  # (class id, item, dx, dy)
    for cls, shape, item in blobs:
        u = rs.rand()
        if cls == 9:  # storm_damage is not scored; sometimes a model sees another pattern
            if u < 0.3:
                choices = _CONFUSION[9]
                items.append((choices[rs.randint(len(choices))], item, 0, 0))
            continue
        if u < 0.08:  # missed
            continue
        if u < 0.16:
            choices = _CONFUSION[cls]
            cls = choices[rs.randint(len(choices))]
        # a shift of a few percent of the pattern's size (sqrt of its area)
        shift = 0.035 * math.sqrt(float(np.count_nonzero(item[2]))) + 0.3
        dx = int(round(rs.normal(0, shift)))
        dy = int(round(rs.normal(0, shift)))
        if rs.rand() < 0.5:  # same outline, shifted
            items.append((cls, item, dx, dy))
        else:  # dilated or eroded
            redrawn = shape.render(S, scale=rs.uniform(0.7, 1.3), dx=dx, dy=dy)
            if redrawn is not None:
                items.append((cls, redrawn, 0, 0))
    # false positives
    for _ in range(rs.poisson(0.7)):
        cls = _FALSE_POSITIVE_CLASSES[rs.randint(len(_FALSE_POSITIVE_CLASSES))]
        a = rs.uniform(0.02, 0.15) * S + 1.0
        shape = _ellipse(rs, rs.uniform(0, S), rs.uniform(0, S), a, a * rs.uniform(0.3, 1.0),
                         rs.uniform(0, math.pi), 0.3)
        item = shape.render(S)
        if item is not None:
            items.append((cls, item, 0, 0))
    # something on clouds (invalid pixels)
    for item in clouds:
        if rs.rand() < 0.4:
            items.append(((6, 2, 4)[rs.randint(3)], item, 0, 0))
    pred = np.zeros((S, S), np.uint8)
    order = sorted(range(len(items)), key=lambda i: (rank[items[i][0]], i))
    for i in order:
        cls, item, dx, dy = items[i]
        _paste(pred, item, cls, dx, dy)
    return pred


# --------------------------------------------------------------------- writing

_CONST_PNG = {}


def _save_png(arr, path):
    """Image.fromarray(arr).save(path, optimize=False); constant images come from a cache
    of the bytes that very call produces."""
    lo = int(arr.min())
    if lo == int(arr.max()):
        key = (arr.shape, lo)
        data = _CONST_PNG.get(key)
        if data is None:
            buf = io.BytesIO()
            Image.fromarray(arr).save(buf, format="PNG", optimize=False)
            data = _CONST_PNG[key] = buf.getvalue()
        with open(path, "wb") as f:
            f.write(data)
    else:
        Image.fromarray(arr).save(path, optimize=False)


def _make_dirs(out_dir, submission_dir):
    for sub in ["boundaries", "masks"] + [os.path.join("labels", c) for c in LABEL_CLASSES]:
        os.makedirs(os.path.join(out_dir, sub), exist_ok=True)
    if submission_dir is not None:
        os.makedirs(submission_dir, exist_ok=True)


def _write_range(args):
    out_dir, submission_dir, seed, size, start, stop = args
    for index in range(start, stop):
        iid, layers, pred = generate_image(seed, index, size)
        name = iid + ".png"
        _save_png(layers["boundary"], os.path.join(out_dir, "boundaries", name))
        _save_png(layers["mask"], os.path.join(out_dir, "masks", name))
        for c in LABEL_CLASSES:
            _save_png(layers[c], os.path.join(out_dir, "labels", c, name))
        if submission_dir is not None:
            _save_png(pred, os.path.join(submission_dir, name))
    return stop - start


def usable_cpus():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def write_sample(out_dir, n_images, seed=0, size=512, submission_dir=None, workers=1):
    """Write ``n_images`` images (ground truth under ``out_dir``, predictions under
    ``submission_dir`` if given). Returns the list of image ids, in index order."""
    n_images = int(n_images)
    _make_dirs(out_dir, submission_dir)
    with open(os.path.join(out_dir, "config.yaml"), "w") as f:
        f.write(CONFIG_YAML)
    workers = max(1, int(workers or 1))
    chunk = 8 if n_images >= 16 * workers else max(1, n_images // (2 * workers))
    tasks = [(out_dir, submission_dir, seed, size, i, min(n_images, i + chunk))
             for i in range(0, n_images, chunk)]
    t0 = last = time.time()
    done = 0

    def progress(n):
        nonlocal done, last
        done += n
        now = time.time()
        if now - last >= 5.0 and done < n_images:
            last = now
            rate = done / (now - t0)
            sys.stderr.write("make_sample: %d/%d images (%.0f%%), %.0f s elapsed, ~%.0f s left\n"
                             % (done, n_images, 100.0 * done / n_images, now - t0,
                                (n_images - done) / rate))
            sys.stderr.flush()

    if workers == 1 or len(tasks) == 1:
        for task in tasks:
            progress(_write_range(task))
    else:
        import multiprocessing
        pool = multiprocessing.Pool(min(workers, len(tasks)))
        try:
            for n in pool.imap_unordered(_write_range, tasks):
                progress(n)
            pool.close()
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.join()
    return [image_id(seed, i) for i in range(n_images)]


# ------------------------------------------------------------------------- CLI

def _remove_generated(out_dir, submission_dir):
    for sub in ("boundaries", "masks", "labels"):
        path = os.path.join(out_dir, sub)
        if os.path.islink(path) or os.path.isfile(path):
            os.remove(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
    cfg = os.path.join(out_dir, "config.yaml")
    if os.path.lexists(cfg):
        os.remove(cfg)
    if submission_dir is not None and os.path.isdir(submission_dir):
        for name in os.listdir(submission_dir):
            path = os.path.join(submission_dir, name)
            if name.lower().endswith(".png") and not os.path.isdir(path):
                os.remove(path)


def _fail(msg):
    sys.stderr.write("make_sample.py: error: %s\n" % msg)
    return 2


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Write a deterministic synthetic Agriculture-Vision ground truth "
                    "(raw layout) and, optionally, a matching imperfect submission.")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="reference folder to write (boundaries/, masks/, labels/, config.yaml)")
    parser.add_argument("--images", type=int, default=40, help="number of images (default 40)")
    parser.add_argument("--seed", type=int, default=2021, help="random seed (default 2021)")
    parser.add_argument("--size", type=int, default=512, help="image width and height (default 512)")
    parser.add_argument("--submission", metavar="DIR",
                        help="also write a synthetic prediction DIR/<id>.png for every image")
    parser.add_argument("--workers", type=int, default=usable_cpus(),
                        help="processes (default: usable CPUs, here %(default)s)")
    parser.add_argument("--force", action="store_true",
                        help="replace what an earlier run wrote (only boundaries/, masks/, "
                             "labels/, config.yaml and the submission's *.png are removed)")
    args = parser.parse_args(argv)

    if args.images < 1:
        return _fail("--images must be at least 1")
    if args.size < 8:
        return _fail("--size must be at least 8")
    if not 0 <= args.seed < 2 ** 32:
        return _fail("--seed must be in 0..4294967295")
    if args.workers < 1:
        return _fail("--workers must be at least 1")
    for label, path in (("--out", args.out), ("--submission", args.submission)):
        if path is not None and os.path.exists(path) and not os.path.isdir(path):
            return _fail("%s %r exists and is not a directory" % (label, path))
    if not args.force:
        if os.path.isdir(args.out) and os.listdir(args.out):
            return _fail("output directory %r is not empty; use --force to replace the sample "
                         "(removes only boundaries/, masks/, labels/ and config.yaml there)"
                         % args.out)
        if args.submission is not None and os.path.isdir(args.submission) and any(
                n.lower().endswith(".png") for n in os.listdir(args.submission)):
            return _fail("submission directory %r already holds PNG files; use --force to "
                         "replace them" % args.submission)
    else:
        _remove_generated(args.out, args.submission)

    t0 = time.time()
    write_sample(args.out, args.images, seed=args.seed, size=args.size,
                 submission_dir=args.submission, workers=args.workers)
    dt = time.time() - t0
    print("make_sample: wrote %d images (%dx%d, seed %d) to %s%s in %.2f s (%.1f ms/image, "
          "%d worker%s)" % (args.images, args.size, args.size, args.seed, args.out,
                            " and predictions to %s" % args.submission if args.submission else "",
                            dt, 1000.0 * dt / args.images, args.workers,
                            "" if args.workers == 1 else "s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
