"""One check of the verification: its status, a one-line summary, its figures and evidence."""
from typing import Any, Dict, List, NamedTuple

PASS, FAIL, WARN, NOT_CHECKED = "pass", "fail", "warn", "not-checked"


class Check(NamedTuple):
    name: str
    status: str
    summary: str
    evidence: List[str] = []
    figures: Dict[str, Any] = {}

    def as_json(self) -> Dict[str, Any]:
        return {"name": self.name, "status": self.status, "summary": self.summary,
                "evidence": list(self.evidence), "figures": dict(self.figures)}
