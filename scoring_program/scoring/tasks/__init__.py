"""Task registry: each challenge is one module that plugs into the shared engine."""
from .agrivision import AgricultureVision
from .planetscapes_semantic.task import PlanetscapesSemantic

TASKS = {t.name: t for t in (AgricultureVision(), PlanetscapesSemantic())}
DEFAULT = AgricultureVision.name
