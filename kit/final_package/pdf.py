"""The method's report: present, a PDF (the `%PDF-` signature within its first 1,024 bytes, as
readers accept it, and an `%%EOF` marker near its end), and its page count where it can be read
without a PDF library: the largest `/Count` of a `/Type /Pages` dictionary, else the number of
`/Type /Page` objects. Compressed object streams (PDF 1.5+) can hide both: the count is then
"not readable", never guessed. The declared-datasets rule is the jury's.

Bounded: at most bounds.MAX_PDF_SCAN bytes are read, in one pass of each pattern (time linear
in the file: a dictionary is the bytes between two `>`, found token by token, never by a
pattern that runs ahead from each `/Type`); a `/Count` of more than bounds.MAX_PAGE_DIGITS
digits is no page count.
"""
import os
import re
from typing import List, Optional

from scoring.problems import shown
from .checks import FAIL, PASS, WARN, Check
from .params import bounds

MAX_SCAN = bounds.MAX_PDF_SCAN
_TOKENS = re.compile(rb"/Type\s*/Pages\b|/Count\s+(\d+)")
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def _page_tree_counts(data: bytes) -> List[int]:
    """The /Count of every dictionary (the bytes between two '>') that says /Type /Pages."""
    counts: List[int] = []
    in_pages, reach = False, 0
    seen: List[int] = []
    for m in _TOKENS.finditer(data):
        if data.find(b">", reach, m.start()) >= 0:        # a new dictionary begins
            if in_pages:
                counts.extend(seen)
            in_pages, seen = False, []
        reach = m.end()
        digits = m.group(1)
        if digits is None:
            in_pages = True
        elif len(digits) <= bounds.MAX_PAGE_DIGITS:
            seen.append(int(digits))
    if in_pages:
        counts.extend(seen)
    return counts


def page_count(data: bytes) -> Optional[int]:
    counts = _page_tree_counts(data)
    if counts:
        return max(counts)
    pages = sum(1 for _ in _PAGE.finditer(data))
    return pages or None


def check(path: Optional[str], name: str) -> Check:
    if path is None:
        return Check("report", FAIL, "{} is missing".format(name))
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(1024)
        if b"%PDF-" not in head:
            return Check("report", FAIL, "{} is not a PDF (no %PDF- signature in its first "
                         "1,024 bytes)".format(name), figures={"bytes": size})
        f.seek(max(0, size - 1024))
        tail = f.read()
        f.seek(0)
        data = f.read(MAX_SCAN) if size <= MAX_SCAN else b""
    version = shown(head[head.index(b"%PDF-") + 5:][:3].decode("ascii", "replace"))
    figures = {"bytes": size, "pdf_version": version, "pages": None}
    evidence = ["PDF {}, {:,} bytes".format(version, size)]
    if b"%%EOF" not in tail:
        return Check("report", WARN, "{} has no %%EOF marker at its end: it may be "
                     "truncated".format(name), evidence, figures)
    pages = page_count(data) if data else None
    figures["pages"] = pages
    if pages is None:
        evidence.append("page count not readable without a PDF library (compressed object "
                        "streams)")
        return Check("report", PASS, "{} is a PDF (page count not readable)".format(name),
                     evidence, figures)
    evidence.append("{} page{}".format(pages, "" if pages == 1 else "s"))
    return Check("report", PASS, "{} is a PDF of {} page{}".format(name, pages,
                                                                  "" if pages == 1 else "s"),
                 evidence, figures)
