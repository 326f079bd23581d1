"""What stops a build (Refused: a bundle a platform would refuse or mis-read, or a broken
reference; nothing is written), and how the build's messages name paths and sizes."""
import os


class Refused(Exception):
    """A bundle would be refused (or mis-read) by a platform: nothing is written."""


def shown(path: str) -> str:
    """A path as the user would type it: relative under the current folder, else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def human(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return "{:.0f} {}".format(size, unit) if unit == "B" else "{:.1f} {}".format(size, unit)
        size /= 1024.0
    return str(size)


def same_folder(a: str, b: str) -> bool:
    return bool(a and b) and os.path.realpath(a) == os.path.realpath(b)
