"""A reference opened as every command opens it (score, compare, verify, pack, the bundle): its
zip unpacked, its config.yaml read, its task picked (the command line's --task, else config.yaml's
`task:`, else the default) and configured (the command's task options as plain data over
config.yaml), the interval's settings read, the reference opened. One owner, so the five give
the same task the same settings and refuse a broken reference with the same message.

Opening is a second step (Setup.open): a command may refuse its task before the reference is
read (pack.py: a task without a packed layout; verify.py: a task that is not scored image by
image).
"""
from typing import Any, Callable, Dict, List, NamedTuple, Optional

from . import public_part, zips
from .config import read_config
from .confidence import IntervalSettings, read_settings
from .registry import task_of
from .task_api import Options, Reference


class Setup(NamedTuple):
    ref_dir: str                 # the reference's folder (unpacked)
    ref_config: Dict[str, Any]   # its config.yaml ({} if none)
    task: Any                    # task_api.Task
    settings: Any                # what the task's configure() returned
    intervals: IntervalSettings  # `confidence:` and `resample_by:`

    def open(self) -> Reference:
        """The reference, opened (and cheaply checked) by the task: BrokenReference if it is
        unusable, or if it holds the labels of a part of the test set without saying so
        correctly (public_part.py: every command refuses it alike). A public part's reference
        expects predictions for the whole test set (Reference.covering)."""
        reference = self.task.open_reference(self.ref_dir, self.settings)
        part = public_part.read(self, reference)
        # A public part's predictions are checked against the whole test set (the manifest's).
        return reference if part is None else reference.covering(part.stand_in)


def configure(ref_dir: str, task_name: Optional[str] = None,
              options: Optional[Options] = None) -> Setup:
    """The reference folder's task and settings; BrokenReference (exit 3) for a config.yaml
    that cannot be read or holds a bad value."""
    ref_config = read_config(ref_dir)
    task = task_of(ref_config, task_name)
    settings = task.configure(dict(options or {}), ref_config)
    return Setup(ref_dir, ref_config, task, settings, read_settings(ref_config, task.intervals))


def unpack(path: str, cleanups: List[Callable[[], None]],
           show_as: Optional[Callable[[str, str], None]] = None,
           task_name: Optional[str] = None, options: Optional[Options] = None) -> Setup:
    """configure() of a reference given as a folder or a zip (zips.unpack_reference); the
    unpacked copy's cleanup is appended to cleanups, and show_as(unpacked, given) lets messages
    name the path the user gave."""
    ref_dir, cleanup = zips.unpack_reference(path)
    cleanups.append(cleanup)
    if show_as is not None:
        show_as(ref_dir, path)
    return configure(ref_dir, task_name, options)
