"""The organizer's commands (compare, consensus, generalist, verify, pack, and bundle.sh's
bundle builder and check): run on the organizer's machine, never shipped to a worker or in a
starting kit.

They stand on the very code the worker and the kit run, so importing this package puts both on
sys.path: the worker's program (scoring_program/: the engine, the tasks) and the kit's packages
(kit/: final_package, the label-free checks of a final package; platforms, each platform's
model, and the dry run)."""
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for _folder in (os.path.join(_ROOT, "kit"), os.path.join(_ROOT, "scoring_program")):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)
