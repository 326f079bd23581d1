"""Task registry: each challenge is one module that plugs into the shared engine."""
from .agrivision import AgricultureVision
from .planetscapes_vqa.task import PlanetscapesVQA

TASKS = {t.name: t for t in (AgricultureVision(), PlanetscapesVQA())}
DEFAULT = AgricultureVision.name
