"""The method's report: present, a PDF (the `%PDF-` signature within its first 1,024 bytes, as
readers accept it, and an `%%EOF` marker near its end), and its page count where it can be read
without a PDF library: the largest `/Count` of a `/Type /Pages` dictionary, else the number of
`/Type /Page` objects. Compressed object streams (PDF 1.5+) can hide both: the count is then
"not readable", never guessed. The declared-datasets rule is the jury's.
"""
import os
import re
from typing import Optional

from .checks import FAIL, PASS, WARN, Check

MAX_SCAN = 64 << 20
_PAGES = re.compile(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b",
                    re.S)
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def page_count(data: bytes) -> Optional[int]:
    counts = [int(a or b) for a, b in _PAGES.findall(data)]
    if counts:
        return max(counts)
    pages = len(_PAGE.findall(data))
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
    version = head[head.index(b"%PDF-") + 5:][:3].decode("ascii", "replace")
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
