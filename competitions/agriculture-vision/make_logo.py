#!/usr/bin/env python3
"""Draw the competition logo, competitions/agriculture-vision/logo.png: an aerial field seen from above.

Crop rows in greens, a drydown patch, a waterway and a weed cluster: the patterns the challenge
segments. Shapes only (no text, so no font is needed); the same Pillow gives the same bytes.

    python3 competitions/agriculture-vision/make_logo.py
"""
import os

from PIL import Image, ImageDraw

SIZE = 256
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "logo.png")


def draw() -> Image.Image:
    img = Image.new("RGB", (SIZE, SIZE), (246, 244, 236))
    d = ImageDraw.Draw(img)
    margin = 16
    field = (margin, margin, SIZE - margin, SIZE - margin)
    # crop rows: diagonal stripes clipped to the field (a rounded square where Pillow has it)
    rows = Image.new("RGB", (SIZE, SIZE), (118, 176, 84))
    rd = ImageDraw.Draw(rows)
    for x in range(-SIZE, 2 * SIZE, 18):
        rd.line([(x, SIZE), (x + SIZE, 0)], fill=(76, 128, 58), width=7)
    mask = Image.new("L", (SIZE, SIZE), 0)
    md = ImageDraw.Draw(mask)
    if hasattr(md, "rounded_rectangle"):
        md.rounded_rectangle(field, radius=28, fill=255)
    else:
        md.rectangle(field, fill=255)
    img.paste(rows, (0, 0), mask)
    # drydown patch, a waterway and a weed cluster
    d.ellipse((40, 44, 122, 110), fill=(214, 178, 92))
    d.line([(24, 200), (90, 168), (150, 176), (232, 128)], fill=(64, 132, 196), width=14)
    for cx, cy, r in ((176, 62, 14), (196, 80, 10), (164, 86, 9), (188, 52, 7)):
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(38, 84, 40))
    return img


if __name__ == "__main__":
    draw().save(OUT, optimize=True)
    print("wrote", OUT)
