"""How a value from an input is quoted in a message or written into a spreadsheet cell.

brief(): a message that quotes a value must stay short whatever the value is (a 280-byte YAML
alias bomb once produced a 226 MB error message through one `{!r}`), must not fail on it (an int
of 5,000 digits has no repr on Python 3.11+) and must not let it forge a log line (repr escapes
control characters).

spreadsheet_safe(): a CSV cell that a spreadsheet would run as a formula, neutralised the way
the OWASP "CSV Injection" guidance says.
"""
import reprlib
from typing import Any

_LIMIT = 80
# An int this long (in bits) is not repr'd: Python 3.11+ refuses str() above 4,300 digits and
# older versions take quadratic time on it.
_INT_BITS = 4000

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class _Repr(reprlib.Repr):
    """reprlib with room for a message: bounded per level, never recursing into a big structure."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxstring = self.maxother = self.maxlong = max(limit, 12)
        self.maxlevel = 3

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > _INT_BITS:
            return "<an integer of about {:,} digits>".format(_digits(x))
        return super().repr_int(x, level)

    def repr_str(self, x: str, level: int) -> str:
        if len(x) <= self.maxstring:
            return repr(x)
        return repr(x[:self.maxstring - 12]) + "... ({:,} characters)".format(len(x))


def _digits(x: int) -> int:
    """Decimal digits of x without str(x) (refused above 4,300 digits by Python 3.11+)."""
    x = abs(x)
    digits = int((x.bit_length() - 1) * 0.30102999566398120) + 1
    if x >= 10 ** digits:
        digits += 1
    elif digits > 1 and x < 10 ** (digits - 1):
        digits -= 1
    return digits


def brief(value: Any, limit: int = _LIMIT) -> str:
    """A repr of value of at most about `limit` characters, safe for any value: strings are
    quoted and escaped as repr does, long ones cut with their length, structures cut per level,
    huge integers described instead of written."""
    try:
        text = _Repr(limit).repr(value)
    except Exception:               # a hostile __repr__ or anything else: never fail a message
        text = "<{}>".format(type(value).__name__)
    if len(text) > limit + 24:      # reprlib can exceed its per-item limits across items
        text = text[:limit] + "..."
    return text


def spreadsheet_safe(cell: str) -> str:
    """The cell, prefixed with a single quote when it starts with =, +, -, @, a tab or a carriage
    return (OWASP, "CSV Injection": such a cell is read as a formula by Excel, LibreOffice and
    Google Sheets). Numbers are written by the program itself and never pass through here."""
    if cell.startswith(_FORMULA_START):
        return "'" + cell
    return cell
