"""A plain-text table for the terminal (score.py's and compare.py's results)."""
from typing import Any, List


def print_table(headers: List[str], rows: List[List[str]], stream: Any) -> None:
    """The first column left-aligned, the others right-aligned."""
    widths = [max(len(r[i]) for r in [headers] + rows) for i in range(len(headers))]
    cells = ["{{:{}{}}}".format("<" if i == 0 else ">", w) for i, w in enumerate(widths)]
    line = "  ".join(cells)
    stream.write(line.format(*headers) + "\n")
    stream.write("  ".join("-" * w for w in widths) + "\n")
    for r in rows:
        stream.write(line.format(*r).rstrip() + "\n")
