"""Task registry: each challenge is one module that plugs into the shared engine."""
from .agrivision import AgricultureVision
from .planetscapes_semantic.task import PlanetscapesSemantic
from .planetscapes_vqa.task import PlanetscapesVQA

TASKS = {t.name: t for t in (AgricultureVision(), PlanetscapesSemantic(), PlanetscapesVQA())}
DEFAULT = AgricultureVision.name
