"""Agriculture-Vision Prize Challenge 2021: overlap-aware mIoU over 9 classes. The Task class is
in task.py (registered in scoring/registry.py); this module stays light: the command line is
built before any task is imported (task_api.py)."""
from .classes import STORM_POLICIES

# The task's command-line options, as data (registry.py): --storm-damage.
OPTIONS = {
    "storm_damage": dict(
        choices=STORM_POLICIES, default=None,
        help="what a valid pixel whose only label is storm_damage is: 'background' (the "
             "challenge's rule, default) or 'ignore' (not evaluated). Default: the reference's "
             "config.yaml, else background."),
}
