"""A raw reference cut to some units (no split file): what every public- or private-part test
compares the split commands with."""
import os
import shutil


def units_alone(ref, units, folder):
    """A copy of the raw reference `ref` with the .png files of `units` only (every other file
    kept); returns folder."""
    units = set(units)
    for top, _, files in os.walk(str(ref)):
        for name in files:
            stem, ext = os.path.splitext(name)
            if ext == ".png" and stem not in units:
                continue
            rel = os.path.relpath(os.path.join(top, name), str(ref))
            os.makedirs(os.path.dirname(os.path.join(str(folder), rel)), exist_ok=True)
            shutil.copyfile(os.path.join(top, name), os.path.join(str(folder), rel))
    return folder
