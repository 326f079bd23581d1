"""One kind of failure for every organizer's file read here: exit 3, str() names file and fix."""
from scoring.problems import Refusal


class PlatformFileProblem(Refusal):
    """An organizer's input (export, download, listing, roster) is unusable."""

    exit_code = 3

    def message(self) -> str:
        return ("ERROR: an organizer's input is unusable: {}\nNothing was written.\n"
                .format(self))
