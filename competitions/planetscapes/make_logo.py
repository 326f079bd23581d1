#!/usr/bin/env python3
"""Draw the Planetscapes logo, competitions/planetscapes/logo.png: a planet's horizon.

A dark sky with a small sun, a ridge line, regolith with a crater and two rocks: the scenes the
benchmark labels. Shapes only (no text, so no font is needed); the same Pillow gives the same
bytes (PNG written without optimisation flags that vary by zlib build).

    python3 competitions/planetscapes/make_logo.py
"""
import os

from PIL import Image, ImageDraw

SIZE = 256
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "logo.png")


def draw() -> Image.Image:
    img = Image.new("RGB", (SIZE, SIZE), (24, 22, 40))           # sky
    d = ImageDraw.Draw(img)
    d.ellipse((176, 36, 212, 72), fill=(250, 226, 160))          # sun
    # ridge: a polygon from the horizon up to the peaks and down again
    d.polygon([(0, 150), (40, 118), (78, 136), (120, 96), (168, 138), (210, 112), (256, 140),
               (256, 256), (0, 256)], fill=(138, 84, 60))
    d.rectangle((0, 160, SIZE, SIZE), fill=(196, 128, 88))       # regolith
    d.ellipse((36, 186, 132, 222), fill=(150, 92, 64))           # crater
    d.ellipse((48, 192, 120, 216), fill=(176, 110, 76))
    for cx, cy, r in ((188, 204, 16), (214, 222, 9)):            # rocks
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(92, 70, 64))
    return img


if __name__ == "__main__":
    draw().save(OUT)
    print("wrote", OUT)
