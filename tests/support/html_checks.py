"""Checks of generated HTML pages: balanced tags, self-contained (no script, no external
resource)."""
import re
from html.parser import HTMLParser

# Sample page data: the Agriculture-Vision class names and a 9 x 9 confusion matrix.
CLASSES = [
    "background", "double_plant", "drydown", "endrow", "nutrient_deficiency",
    "planter_skip", "water", "waterway", "weed_cluster",
]


def confusion_9():
    m = [[0] * 9 for _ in range(9)]
    for x in range(9):
        for y in range(9):
            m[x][y] = (1000 + 37 * x * y) * (50 if x == y else 1)
    m[0][0] = 5000000000  # very large cell
    return m


VOID = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
    "param", "source", "track", "wbr",
}


class TagBalanceChecker(HTMLParser):
    """Records tags; checks that every non-void element is closed in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.starttags = []
        self.attrs = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.starttags.append(tag)
        self.attrs.extend(attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):  # <rect ... /> in SVG
        self.starttags.append(tag)
        self.attrs.extend(attrs)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack:
            self.errors.append("unexpected </%s>" % tag)
        elif self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1]))
            self.stack.pop()
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(doc):
    checker = TagBalanceChecker()
    checker.feed(doc)
    checker.close()
    return checker


def assert_balanced(doc):
    checker = parse(doc)
    assert checker.errors == []
    assert checker.stack == [], "unclosed: %r" % checker.stack
    return checker


def assert_self_contained(doc):
    low = doc.lower()
    assert "<script" not in low
    assert re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//|file:|[\w./-]+\.\w+)""", low) is None
    assert "@import" not in low
    assert "url(" not in low
