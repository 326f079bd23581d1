"""Broken inputs of the organizer: every problem names its file and line, all reported together."""
from typing import List, Optional, Tuple

from scoring.problems import Refusal, shown


class InputProblems(Refusal):
    """The configuration or a leaderboard file is broken (the organizer's inputs: exit 3);
    carries every problem found."""

    exit_code = 3

    def __init__(self, problems: List[Tuple[str, Optional[int], str]]) -> None:
        super().__init__()
        self.problems = problems

    def __reduce__(self):
        return (type(self), (self.problems,))

    def message(self) -> str:
        lines = ["ERROR: the generalist ranking cannot be computed: the configuration or a "
                 "leaderboard file is broken. Nothing was written."]
        for path, line, text in self.problems:
            # A file name from the configuration, or a name quoted in the text, may hold
            # control characters: escaped, so that no input can forge or recolour a line.
            where = shown(path) if line is None else "{}, line {}".format(shown(path), line)
            lines.append("  - {}: {}".format(where, shown(text)))
        return "\n".join(lines) + "\n"


class Collector:
    """Collects problems so that one run reports all of them, not just the first."""

    def __init__(self) -> None:
        self.problems: List[Tuple[str, Optional[int], str]] = []

    def add(self, path: str, line: Optional[int], text: str) -> None:
        self.problems.append((path, line, text))

    def raise_if_any(self) -> None:
        if self.problems:
            raise InputProblems(self.problems)
