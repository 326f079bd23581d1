"""Checks of generated HTML pages: balanced tags, self-contained (no script, no external
resource)."""
import functools
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
    """Records tags; checks that every non-void element is closed in order. Also keeps every
    element as (tag, attrs dict, the classes of the elements around it), and the text outside
    <title> (tooltips) and <style>: what a reader sees without hovering."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.starttags = []
        self.attrs = []
        self.text = []
        self.elements = []
        self.visible = []
        self.titles = []
        self._classes = []  # the classes of each element on the stack

    def _record(self, tag, attrs):
        self.starttags.append(tag)
        self.attrs.extend(attrs)
        attrs = dict(attrs)
        self.elements.append((tag, attrs, [c for cs in self._classes for c in cs]))
        return (attrs.get("class") or "").split()

    def handle_starttag(self, tag, attrs):
        classes = self._record(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)
            self._classes.append(classes)

    def handle_startendtag(self, tag, attrs):  # <rect ... /> in SVG
        self._record(tag, attrs)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack:
            self.errors.append("unexpected </%s>" % tag)
            return
        if self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1]))
        self.stack.pop()
        self._classes.pop()

    def handle_data(self, data):
        self.text.append(data)
        if "title" in self.stack:
            self.titles.append(data)
        elif "style" not in self.stack:
            self.visible.append(data)


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


@functools.lru_cache(maxsize=4)
def elements(doc):
    """The parsed page: .elements, .visible, .titles (see TagBalanceChecker); read-only, since
    the checks of one page share its parse (parsing a 45 x 45 heat map takes 0.5 s)."""
    return parse(doc)


MIN_FONT = 11.0


def _px(value):
    return float(re.match(r"\s*([0-9.]+)", value).group(1))


def assert_chart_text_at_least(doc, px=MIN_FONT):
    """No SVG text is drawn smaller than px CSS pixels at any page width: every font size in an
    SVG is at least px, and an SVG may shrink with the page only as far as its smallest text
    stays at px (its min-width)."""
    parsed = elements(doc)
    svgs = 0
    sizes = []
    for tag, attrs, _ in parsed.elements:
        if tag == "svg":
            svgs += 1
        if "font-size" in attrs:
            sizes.append(_px(attrs["font-size"]))
        style = attrs.get("style") or ""
        sizes += [_px(v) for v in re.findall(r"font-size\s*:\s*([^;]+)", style)]
    assert sizes or not svgs
    assert all(s >= px for s in sizes), sorted(sizes)[:5]
    for svg in re.findall(r"<svg[^>]*>.*?</svg>", doc, re.S):
        head = re.match(r"<svg[^>]*>", svg).group(0)
        width = float(re.search(r' width="([0-9.]+)"', head).group(1))
        min_width = float(re.search(r'min-width:([0-9.]+)px', head).group(1))
        smallest = min(float(v) for v in re.findall(r'font-size="([0-9.]+)"', svg))
        # Rendered at min_width, a font of size s is drawn at s * min_width / width px.
        assert smallest * min_width / width >= px - 1e-9, (smallest, min_width, width)
    return sizes


def assert_every_table_and_chart_scrolls(doc):
    """Every table and SVG chart sits in one scroll box, whose hint is there once."""
    parsed = elements(doc)
    for tag, _, above in parsed.elements:
        if tag in ("table", "svg"):
            assert above.count("scroll") == 1, (tag, above)
    boxes = sum(1 for tag, attrs, _ in parsed.elements
                if "scroll" in (attrs.get("class") or "").split())
    hints = sum(1 for tag, attrs, above in parsed.elements
                if "scroll-edge" in (attrs.get("class") or "").split() and "scroll" in above)
    assert boxes == hints >= 1
    if "<style>" in doc:  # a whole page: the hint's rules are in its stylesheet
        assert re.search(r"\.scroll-edge\{[^}]*position:sticky;right:0", doc)
        assert re.search(r"\.scroll-cover\{[^}]*z-index:2", doc)
