"""The platform models by name, and the model a competition.yaml is written for."""
from typing import Any, Dict

from .codabench import CODABENCH
from .codalab import CODALAB
from .model import Platform

# In the order the dry run runs them.
MODELS: Dict[str, Platform] = {CODALAB.name: CODALAB, CODABENCH.name: CODABENCH}
NAMES = tuple(MODELS)


def of_definition(doc: Dict[str, Any]) -> Platform:
    """The model whose bundles a parsed competition.yaml is: `version: 2` is Codabench's, any
    other (none) CodaLab's v1.5 (which Codabench's importer reads too)."""
    return CODABENCH if doc.get("version") in (2, "2") else CODALAB
