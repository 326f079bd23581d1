"""Task registry: each challenge is one module that plugs into the shared engine."""
from .agrivision import AgricultureVision

TASKS = {t.name: t for t in (AgricultureVision(),)}
DEFAULT = AgricultureVision.name
