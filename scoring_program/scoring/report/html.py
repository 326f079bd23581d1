"""Building blocks of the self-contained detailed results pages ("detailed_results.html").

Everything here uses only the standard library and runs on Python 3.7.
The output is one HTML document with an inline stylesheet and inline SVG
charts: no JavaScript, no external files, no network access.

Generic building blocks (each returns an HTML fragment as a string):

* :func:`scores_table`     - label / score / note table
* :func:`bar_chart`        - horizontal bar chart of values in [0, 1] (or percentages)
* :func:`heat_map`         - the one heat map of every page: cells coloured by a share, their
                             text, tooltips, outlines, labels, legend (:class:`HeatCell`)
* :func:`confusion_matrix` - an image task's confusion matrix: rows = reference class, each
                             row normalised to its reference pixels; explanation, tooltips,
                             legend
* :func:`counts_table`     - generic table of ints and strings
* :func:`figure`           - an SVG chart in a figure, in a scroll box, shrinking with the page
                             only down to MIN_FONT text
* :func:`scroll`           - a box that scrolls sideways on a narrow page, with a "scroll ->"
                             hint only while it overflows (every table and chart is in one)
* :func:`warnings_list`    - list of warnings ("No warnings." if empty)
* :func:`page`             - wraps sections into a complete document

* :func:`headline`         - the page's main score with its subline
* :func:`notes_list`       - "How the scores are computed" bullet list

Each task's page is its own (scoring/tasks/<task>/report.py); the run information is rendered by
run_info.py.

All text that comes from the input (labels, class names, warnings, notes,
titles) is HTML-escaped.  Only aggregate data is shown (no per-image data).
No chart text is smaller than MIN_FONT (11 px) at any page width: a chart shrinks with the page
only down to that, then scrolls.
"""

from html import escape as _html_escape
import math
import re
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

__all__ = [
    "scores_table",
    "bar_chart",
    "confusion_matrix",
    "heat_map",
    "HeatCell",
    "HeatSide",
    "counts_table",
    "scroll",
    "figure",
    "warnings_list",
    "page",
    "headline",
    "notes_list",
    "escape",
    "format_score",
    "format_int",
]

NA = "n/a"

# Sequential colour scale (ColorBrewer "Blues"), share 0 .. 1.
_BLUES = [
    (0.000, (0xF7, 0xFB, 0xFF)),
    (0.125, (0xDE, 0xEB, 0xF7)),
    (0.250, (0xC6, 0xDB, 0xEF)),
    (0.375, (0x9E, 0xCA, 0xE1)),
    (0.500, (0x6B, 0xAE, 0xD6)),
    (0.625, (0x42, 0x92, 0xC6)),
    (0.750, (0x21, 0x71, 0xB5)),
    (0.875, (0x08, 0x51, 0x9C)),
    (1.000, (0x08, 0x30, 0x6B)),
]

_SVG_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
_TEXT = "#1f2328"
_MUTED = "#59636e"
_GRID = "#d0d7de"
_BAR = "#2f6fbd"


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------

def _esc(value: Any) -> str:
    """HTML-escape any value (quotes included)."""
    return _html_escape(str(value), quote=True)


escape = _esc


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return True
    return False


def format_score(value: Optional[float]) -> str:
    """0.51234 -> '0.5123'; None/NaN -> 'n/a'."""
    if value is None or _is_missing(value):
        return NA
    return "{:.4f}".format(float(value))


def format_int(value: Any) -> str:
    """1234567 -> '1,234,567'."""
    return "{:,}".format(int(value))


def _format_compact(value: int) -> str:
    """1234567 -> '1.2M' (for tight spaces; exact value goes in a tooltip)."""
    value = int(value)
    for limit, suffix in ((10 ** 12, "T"), (10 ** 9, "G"), (10 ** 6, "M"), (10 ** 3, "k")):
        if abs(value) >= limit:
            scaled = value / float(limit)
            if abs(scaled) >= 100:
                return "{:d}{}".format(int(round(scaled)), suffix)
            return "{:.1f}{}".format(scaled, suffix)
    return str(value)


def _format_share(share: float, precise: bool) -> str:
    """Share in [0, 1] as a percentage for a heat-map cell."""
    if share <= 0:
        return "0%"
    if precise:
        if share < 0.0005:
            return "<0.1%"
        return "{:.1f}%".format(share * 100.0)
    if share < 0.005:
        return "<1%"
    return "{:d}%".format(int(round(share * 100.0)))


def _text_width(text: str, font_size: float) -> float:
    """Rough width estimate of sans-serif text (no font metrics available)."""
    return len(text) * font_size * 0.62


def _truncate(text: str, max_chars: int) -> str:
    text = str(text)
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 1] + "\u2026"


def _num(value: float) -> str:
    """Compact number for SVG attributes."""
    out = "{:.1f}".format(value)
    if out.endswith(".0"):
        out = out[:-2]
    return out


def _colour(share: float) -> str:
    share = min(1.0, max(0.0, share))
    for (p0, c0), (p1, c1) in zip(_BLUES, _BLUES[1:]):
        if share <= p1:
            t = 0.0 if p1 == p0 else (share - p0) / (p1 - p0)
            rgb = [int(round(a + (b - a) * t)) for a, b in zip(c0, c1)]
            return "#{:02x}{:02x}{:02x}".format(*rgb)
    return "#{:02x}{:02x}{:02x}".format(*_BLUES[-1][1])


def _svg_open(width: float, height: float, label: str, kind: str) -> str:
    return (
        '<svg class="chart {}" width="{}" height="{}" viewBox="0 0 {} {}" role="img" '
        'aria-label="{}" font-family="{}">'.format(
            kind, _num(width), _num(height), _num(width), _num(height), _esc(label), _esc(_SVG_FONT))
    )


def _text(x: float, y: float, content: str, size: float = 12, anchor: str = "start",
          fill: str = _TEXT, extra: str = "") -> str:
    return '<text x="{}" y="{}" font-size="{}" text-anchor="{}" fill="{}"{}>{}</text>'.format(
        _num(x), _num(y), _num(size), anchor, fill, extra, _esc(content))


# --------------------------------------------------------------------------
# scrolling boxes and figures
# --------------------------------------------------------------------------

MIN_FONT = 11.0  # px: no chart text is ever drawn smaller, at any page width
_FONT_SIZES = re.compile(r'font-size="([0-9.]+)"')


def scroll(fragment: str) -> str:
    """fragment in a box that scrolls sideways when it is wider than the page, with a hint at
    its right edge (a shaded strip reading "scroll ->") only while part of it is out of view.
    Pure CSS: the strip sticks to the box's right edge and, when the content's right end is in
    view (no overflow, or scrolled to the end), rests in a narrow blank gutter after the content
    under a white cover."""
    return ('<div class="scroll"><div class="scroll-in">{}<div class="scroll-edge" '
            'aria-hidden="true"><span>scroll</span><span>\u2192</span></div><div class="scroll-cover"></div>'
            '</div></div>'.format(fragment))


def figure(title: str, kind: str, width: float, height: float, body: Sequence[str]) -> str:
    """An SVG chart in a figure: it may shrink with the page only while its smallest text stays
    at MIN_FONT px or more (its min-width); narrower pages scroll it, with the hint."""
    inner = "".join(body)
    smallest = min([float(v) for v in _FONT_SIZES.findall(inner)] or [MIN_FONT])
    min_width = width * MIN_FONT / smallest
    svg = (_svg_open(width, height, title or kind, kind).replace(
        "<svg ", '<svg style="min-width:{}px" '.format(_num(math.ceil(min_width * 10) / 10.0)), 1)
        + inner + "</svg>")
    caption = "<figcaption>{}</figcaption>".format(_esc(title)) if title else ""
    return '<figure class="figure">{}{}</figure>'.format(caption, scroll(svg))


# --------------------------------------------------------------------------
# generic building blocks
# --------------------------------------------------------------------------

def scores_table(rows: Sequence[Tuple[str, Optional[float], str]]) -> str:
    """Table of (label, value or None, note). Values shown with 4 decimals."""
    show_notes = any(len(r) > 2 and r[2] for r in rows)
    out = ['<table class="scores">']
    out.append("<thead><tr><th>Metric</th><th class=\"num\">Score</th>{}</tr></thead>".format(
        "<th>Note</th>" if show_notes else ""))
    out.append("<tbody>")
    for row in rows:
        label = row[0]
        value = row[1] if len(row) > 1 else None
        note = row[2] if len(row) > 2 and row[2] else ""
        if _is_missing(value):
            cell = '<td class="num na">{}</td>'.format(NA)
        else:
            cell = '<td class="num">{}</td>'.format(_esc(format_score(value)))
        out.append("<tr><td>{}</td>{}{}</tr>".format(
            _esc(label), cell, '<td class="note">{}</td>'.format(_esc(note)) if show_notes else ""))
    out.append("</tbody></table>")
    return scroll("".join(out))


class _Bars(NamedTuple):
    """A bar chart's geometry (px) and scale."""

    left: float      # where the bars start, right of the labels
    top: float
    plot_w: float    # a full bar
    plot_h: float
    row_h: float
    bar_h: float
    font: float
    full_scale: float  # the value of a full bar: 1, or 100 in percent
    percent: bool
    show_values: bool


def bar_chart(labels: Sequence[str], values: Sequence[Optional[float]], title: str,
              percent: bool = False, show_values: bool = True) -> str:
    """Horizontal bar chart (inline SVG); None -> 'n/a'.

    Values in [0, 1], or in [0, 100] with percent=True (the axis then reads 0% to 100%, in the
    unit of the table beside it). show_values=False draws the bars without their numbers, for a
    chart next to a table that already shows each one: a page shows a number once.
    """
    labels = [str(lab) for lab in labels]
    values = list(values) + [None] * max(0, len(labels) - len(values))
    font = 12.0
    shown = [_truncate(lab, 32) for lab in labels]
    label_w = max([_text_width(lab, font) for lab in shown] + [30.0])
    bars = _Bars(left=8.0 + label_w + 10.0, top=10.0, plot_w=300.0,
                 plot_h=24.0 * max(1, len(labels)), row_h=24.0, bar_h=16.0, font=font,
                 full_scale=100.0 if percent else 1.0, percent=percent, show_values=show_values)
    right = 62.0 if show_values else 22.0  # a value after a full bar; else half of the "100%" tick
    bottom = 26.0
    width = bars.left + bars.plot_w + right
    height = bars.top + bars.plot_h + bottom
    out = _bar_axis(bars)
    for idx, (full, label) in enumerate(zip(labels, shown)):
        out += _bar_row(bars, idx, full, label, values[idx])
    return figure(title, "bars", width, height, out)


def _bar_axis(bars: _Bars) -> List[str]:
    """Gridlines and axis labels at 0, 1/4, ..., 1 of the full scale."""
    out = []
    left, top, plot_h = bars.left, bars.top, bars.plot_h
    for i in range(5):
        frac = i / 4.0
        x = left + bars.plot_w * frac
        out.append('<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1"{}/>'.format(
            _num(x), _num(top), _num(x), _num(top + plot_h), _GRID,
            "" if i == 0 else ' stroke-dasharray="3,3"'))
        if bars.percent:
            tick = "{:d}%".format(25 * i)
        else:
            tick = "{:.2f}".format(frac).rstrip("0").rstrip(".") if 0 < frac < 1 else str(int(frac))
        out.append(_text(x, top + plot_h + 18, tick, size=bars.font, anchor="middle", fill=_MUTED))
    return out


def _bar_row(bars: _Bars, idx: int, full: str, label: str, value: Optional[float]) -> List[str]:
    """One row: its label, its bar (n/a for no value) and, if shown, its value; the tooltip
    names it in full."""
    def shown_value(v: float) -> str:
        return "{:.2f}%".format(v) if bars.percent else format_score(v)

    left, font = bars.left, bars.font
    out = []
    y = bars.top + bars.row_h * idx
    cy = y + bars.row_h / 2.0
    if value is None or _is_missing(value):
        tip = "{}: {}".format(full, NA)
    else:
        tip = "{}: {}".format(full, shown_value(value)) if bars.show_values else full
    out.append('<g class="bar-row"><title>{}</title>'.format(_esc(tip)))
    out.append(_text(left - 10, cy + 4, label, size=font, anchor="end"))
    if value is None or _is_missing(value):
        out.append(_text(left + 6, cy + 4, NA, size=font, fill=_MUTED, extra=' font-style="italic"'))
    else:
        v = float(value)
        frac = min(1.0, max(0.0, v / bars.full_scale))
        w = bars.plot_w * frac
        if w > 0:
            out.append('<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}" rx="2"/>'.format(
                _num(left), _num(cy - bars.bar_h / 2.0), _num(max(w, 1.0)), _num(bars.bar_h), _BAR))
        if bars.show_values:
            out.append(_text(left + w + 6, cy + 4, shown_value(v), size=font,
                             extra=' font-variant-numeric="tabular-nums"'))
    out.append("</g>")
    return out


REFERENCE_AXIS = "Reference class"
PREDICTED_AXIS = "Predicted class"
_CELL_MIN = 34.0  # px: "100%" at MIN_FONT fits in a cell
_CELL_MAX = 56.0
_LINE_H = MIN_FONT + 3.0  # px between the lines of a cell's text
_OUTLINE = "#24292f"
_EMPTY = "#ffffff"


class HeatCell(NamedTuple):
    """One cell of a heat map: share (0..1) gives its colour, None an empty cell; lines are drawn
    in it at MIN_FONT, tip is its tooltip ("" none), outlined draws a frame round it."""
    share: Optional[float]
    lines: Sequence[str] = ()
    tip: str = ""
    outlined: bool = False


class HeatSide(NamedTuple):
    """A column beside the grid (a row's total): its header, and per row (text, tooltip)."""
    header: str
    rows: Sequence[Tuple[str, str]]


class _HeatLayout(NamedTuple):
    """A heat map's geometry (px): the cells, the labels as shown, where the grid, the side
    column and the legend go, the figure's size."""

    cell_w: float
    cell_h: float
    r_shown: List[str]   # row labels as shown (cut)
    c_shown: List[str]   # column labels as shown (cut)
    rotate: bool         # column labels at 45 degrees
    left: float          # the grid's left edge
    top: float           # the grid's top edge
    grid_w: float
    grid_h: float
    side_x: float        # the side column's left edge (with a side column)
    ly: float            # the legend's top
    width: float
    height: float


def heat_map(title: str, kind: str, row_labels: Sequence[str], col_labels: Sequence[str],
             cells: Sequence[Sequence[HeatCell]], legend: Tuple[str, str, str],
             axes: Tuple[str, str] = ("", ""), cell_size: Optional[float] = None,
             side: Optional[HeatSide] = None, outline: Tuple[str, str] = (_OUTLINE, "1.5"),
             empty_fill: str = _EMPTY, row_class: str = "", label_chars: int = 28) -> str:
    """The one heat map of every page (inline SVG in a figure, shared font and scroll rule):
    rows x columns of cells coloured by their share on one scale (ColorBrewer Blues), each
    cell's text at MIN_FONT, its tooltip, outlined cells, the labels (columns at 45 degrees when
    wider than a cell, cut at label_chars characters with the full name in a tooltip), optional axis
    titles (rows, columns), an optional side column, and a legend of 10 steps between
    legend[0] and legend[1] that reads legend[2].

    cell_size: square cells of that size; None: as wide as the widest text and as tall as the
    most lines. outline: (colour, width) of an outlined cell. row_class: a class for the row
    labels' text."""
    lay = _heat_layout(row_labels, col_labels, cells, legend, axes, cell_size, side, label_chars)
    out = _heat_headings(lay, col_labels, axes, side)
    out += _heat_rows(lay, row_labels, cells, side, outline, empty_fill, row_class)
    out += _heat_legend(lay, legend)
    return figure(title, kind, lay.width, lay.height, out)


_HEAT_LABEL_FONT = 12.0
_DIAG = math.sqrt(0.5)


def _heat_layout(row_labels: Sequence[str], col_labels: Sequence[str],
                 cells: Sequence[Sequence[HeatCell]], legend: Tuple[str, str, str],
                 axes: Tuple[str, str], cell_size: Optional[float], side: Optional[HeatSide],
                 label_chars: int) -> _HeatLayout:
    """Where everything goes: cells as wide as their widest text (or cell_size), room for the
    labels (rotated when wider than a cell), the axis titles, the side column and the legend."""
    n_rows, n_cols = len(row_labels), len(col_labels)
    label_font = _HEAT_LABEL_FONT
    widest = max([_text_width(t, MIN_FONT) for r in cells for c in r for t in c.lines] + [0.0])
    most = max([len(c.lines) for r in cells for c in r] + [1])
    if cell_size is not None:
        cell_w = cell_h = cell_size
    else:
        cell_w = max(_CELL_MIN, math.ceil(widest + 12.0))
        cell_h = max(_CELL_MIN, most * _LINE_H + 10.0)
    r_shown = [_truncate(lab, label_chars) for lab in row_labels]
    c_shown = [_truncate(lab, label_chars) for lab in col_labels]
    row_label_w = max([_text_width(lab, label_font) for lab in r_shown] + [10.0])
    col_label_w = max([_text_width(lab, label_font) for lab in c_shown] + [10.0])
    rotate = col_label_w > cell_w - 6
    diag = _DIAG
    row_axis, col_axis = axes

    col_band = 22.0 if col_axis else 0.0
    row_band = 22.0 if row_axis else 0.0
    left = 4.0 + row_band + row_label_w + 8.0
    col_label_h = (col_label_w * diag + label_font * 0.7 + 4.0) if rotate else label_font + 8.0
    top = 4.0 + col_band + col_label_h + 4.0
    grid_w, grid_h = cell_w * n_cols, cell_h * n_rows
    grid_r = left + grid_w
    right_edge = grid_r + 8.0
    side_x = 0.0
    if side is not None:
        side_x = grid_r + 8.0
        side_w = max([_text_width(t, MIN_FONT) for t, _ in side.rows] +
                     [_text_width(side.header, MIN_FONT)])
        right_edge = side_x + side_w + 8.0
    if rotate:
        for j, lab in enumerate(c_shown):
            cx = left + cell_w * (j + 0.5)
            right_edge = max(right_edge, cx + _text_width(lab, label_font) * diag + 10.0)
        if side is not None:
            right_edge = max(right_edge, side_x + _text_width(side.header, MIN_FONT) * diag + 10.0)
    low, high, legend_text = legend
    ly = top + grid_h + 14.0
    legend_w = (_text_width(low, MIN_FONT) + 4.0 + _LEGEND_STEP * 10 + 4.0 +
                _text_width(high, MIN_FONT) + 8.0 + _text_width(legend_text, MIN_FONT))
    width = max(right_edge, left + legend_w + 8.0)
    height = ly + 12.0 + 20.0
    return _HeatLayout(cell_w, cell_h, r_shown, c_shown, rotate, left, top, grid_w, grid_h,
                       side_x, ly, width, height)


def _heat_headings(lay: _HeatLayout, col_labels: Sequence[str], axes: Tuple[str, str],
                   side: Optional[HeatSide]) -> List[str]:
    """The axis titles, the column labels (full names in tooltips) and the side column's
    header."""
    label_font, left, top = _HEAT_LABEL_FONT, lay.left, lay.top
    row_axis, col_axis = axes
    out = []
    if col_axis:
        out.append(_text(left + lay.grid_w / 2.0, 4.0 + 14.0, col_axis, size=13, anchor="middle",
                         extra=' font-weight="600"'))
    if row_axis:
        ay = top + lay.grid_h / 2.0
        out.append(_text(4.0 + 14.0, ay, row_axis, size=13, anchor="middle",
                         extra=' font-weight="600" transform="rotate(-90 {} {})"'.format(
                             _num(18.0), _num(ay))))
    for j, (full, lab) in enumerate(zip(col_labels, lay.c_shown)):
        cx = left + lay.cell_w * (j + 0.5)
        if lay.rotate:
            y = top - 6.0
            out.append('<text x="{}" y="{}" font-size="{}" text-anchor="start" fill="{}" '
                       'transform="rotate(-45 {} {})"><title>{}</title>{}</text>'.format(
                           _num(cx), _num(y), _num(label_font), _TEXT, _num(cx), _num(y),
                           _esc(full), _esc(lab)))
        else:
            out.append('<text x="{}" y="{}" font-size="{}" text-anchor="middle" fill="{}">'
                       '<title>{}</title>{}</text>'.format(_num(cx), _num(top - 6.0),
                                                           _num(label_font), _TEXT, _esc(full),
                                                           _esc(lab)))
    if side is not None:
        side_x, y = lay.side_x, top - 6.0
        spin = ' transform="rotate(-45 {} {})"'.format(_num(side_x), _num(y)) if lay.rotate else ""
        out.append('<text x="{}" y="{}" font-size="{}" text-anchor="start" fill="{}" '
                   'font-style="italic"{}>{}</text>'.format(_num(side_x), _num(y), _num(MIN_FONT),
                                                            _MUTED, spin, _esc(side.header)))
    return out


def _heat_rows(lay: _HeatLayout, row_labels: Sequence[str], cells: Sequence[Sequence[HeatCell]],
               side: Optional[HeatSide], outline: Tuple[str, str], empty_fill: str,
               row_class: str) -> List[str]:
    """Each row: its label, its cells (colour, frame, text, tooltip), its side column; then the
    grid's frame."""
    label_font, left, top = _HEAT_LABEL_FONT, lay.left, lay.top
    cell_w, cell_h = lay.cell_w, lay.cell_h
    out = []
    klass = ' class="{}"'.format(row_class) if row_class else ""
    for i in range(len(row_labels)):
        y = top + cell_h * i
        cy = y + cell_h / 2.0
        out.append('<text{} x="{}" y="{}" font-size="{}" text-anchor="end" fill="{}"><title>{}'
                   '</title>{}</text>'.format(klass, _num(left - 8.0), _num(cy + label_font * 0.35),
                                              _num(label_font), _TEXT, _esc(row_labels[i]),
                                              _esc(lay.r_shown[i])))
        for j in range(len(lay.c_shown)):
            c = cells[i][j]
            x = left + cell_w * j
            fill = empty_fill if c.share is None else _colour(c.share)
            out.append('<g><title>{}</title>'.format(_esc(c.tip)) if c.tip else "<g>")
            out.append('<rect class="hm-cell" x="{}" y="{}" width="{}" height="{}" fill="{}" '
                       'stroke="{}" stroke-width="{}"/>'.format(
                           _num(x), _num(y), _num(cell_w), _num(cell_h), fill,
                           outline[0] if c.outlined else "#e1e4e8",
                           outline[1] if c.outlined else "0.5"))
            colour = ("#ffffff" if c.share is not None and c.share >= 0.5 else
                      _MUTED if c.share is None else _TEXT)
            first = cy - (len(c.lines) - 1) * _LINE_H / 2.0 + MIN_FONT * 0.35
            for k, line in enumerate(c.lines):
                out.append(_text(x + cell_w / 2.0, first + k * _LINE_H, line, size=MIN_FONT,
                                 anchor="middle", fill=colour))
            out.append("</g>")
        if side is not None:
            text, tip = side.rows[i]
            out.append('<g><title>{}</title>{}</g>'.format(_esc(tip), _text(
                lay.side_x, cy + MIN_FONT * 0.35, text, size=MIN_FONT, fill=_MUTED)))
    out.append('<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#8c959f" '
               'stroke-width="1"/>'.format(_num(left), _num(top), _num(lay.grid_w),
                                           _num(lay.grid_h)))
    return out


_LEGEND_STEP = 18.0   # px: one of the legend's 10 steps


def _heat_legend(lay: _HeatLayout, legend: Tuple[str, str, str]) -> List[str]:
    """The legend: 10 discrete steps of the scale, then what it is (text last: its width is
    only estimated)."""
    low, high, legend_text = legend
    ly, step_w = lay.ly, _LEGEND_STEP
    out = []
    lx = lay.left
    out.append(_text(lx, ly + 10.0, low, size=MIN_FONT, fill=_MUTED))
    lx += _text_width(low, MIN_FONT) + 4.0
    for k in range(10):
        out.append('<rect class="hm-legend" x="{}" y="{}" width="{}" height="12" fill="{}"/>'.format(
            _num(lx + step_w * k), _num(ly), _num(step_w), _colour((k + 0.5) / 10.0)))
    lx += step_w * 10 + 4.0
    out.append(_text(lx, ly + 10.0, high, size=MIN_FONT, fill=_MUTED))
    lx += _text_width(high, MIN_FONT) + 8.0
    out.append(_text(lx, ly + 10.0, legend_text, size=MIN_FONT, fill=_MUTED))
    return out


def confusion_matrix(matrix: Sequence[Sequence[int]], reference_labels: Sequence[str],
                     predicted_labels: Sequence[str], note_html: str = "",
                     diagonal: Optional[Sequence[Optional[int]]] = None) -> str:
    """The confusion matrix as every image task's page shows it: its explanation in words, then a
    heat map. One orientation for every task, as most tools print it:

    matrix[r][p] = pixels whose reference is reference_labels[r], predicted as
    predicted_labels[p]. Rows are the reference classes, each normalised to 100% of its
    reference pixels (the cell of the class itself is its recall); each cell shows that share,
    its tooltip the raw count; a column gives each row's pixel count; a legend reads the colours.

    note_html: the task's own sentences, already escaped, added to the explanation.
    diagonal[r]: the column of row r's own class (outlined), None if it has none; by default the
    column with the same label.
    """
    rows = [[int(v) for v in r] for r in matrix]
    n_rows = len(rows)
    n_cols = max([len(r) for r in rows] + [len(predicted_labels)])
    rows = [r + [0] * (n_cols - len(r)) for r in rows]
    row_labels = [str(lab) for lab in reference_labels] + [""] * max(0, n_rows - len(reference_labels))
    col_labels = [str(lab) for lab in predicted_labels] + [""] * max(0, n_cols - len(predicted_labels))
    row_labels, col_labels = row_labels[:n_rows], col_labels[:n_cols]
    if diagonal is None:
        diagonal = [col_labels.index(lab) if lab in col_labels else None for lab in row_labels]
    totals = [sum(r) for r in rows]
    cell = max(_CELL_MIN, min(_CELL_MAX, float(int(560 / max(n_rows, n_cols, 1)))))
    precise = cell >= 44  # one decimal in the cells when there is room
    cells = []
    for i in range(n_rows):
        line = []
        for j in range(n_cols):
            count, total = rows[i][j], totals[i]
            share = (count / float(total)) if total > 0 else 0.0
            tip = "{}: {} / {}: {}\n{} pixels = {} of the {} pixels whose reference is {}".format(
                REFERENCE_AXIS, row_labels[i], PREDICTED_AXIS, col_labels[j], format_int(count),
                _format_share(share, True), format_int(total), row_labels[i])
            shown = [_format_share(share, precise)] if count > 0 or precise else []
            line.append(HeatCell(share if count > 0 else None, shown, tip,
                                 i < len(diagonal) and diagonal[i] == j))
        cells.append(line)
    side = HeatSide("pixels", [(_format_compact(t), "{} pixels whose reference is {}".format(
        format_int(t), row_labels[i])) for i, t in enumerate(totals)])
    explain = ('<p class="lead">Rows are the <strong>reference</strong> class, columns the '
               '<strong>predicted</strong> class. Each row is normalised to 100% of the pixels '
               'whose reference is that class, so a row shows where that class\'s pixels went: '
               'its outlined cell is the share predicted as the class itself (its recall), the '
               'other cells its misses. The last column is the row\'s number of pixels; hover a '
               'cell for its own.{}</p>'.format((" " + note_html) if note_html else ""))
    return explain + heat_map(
        "Confusion matrix (rows: reference class, columns: predicted class)", "heatmap",
        row_labels, col_labels, cells, ("0%", "100%", "share of the row's reference pixels"),
        axes=(REFERENCE_AXIS, PREDICTED_AXIS), cell_size=cell, side=side)


# A number as text: "72.23", "23.00%", "1,234", "9.086e-05", or a range of two ("0.5263\u20130.7131",
# "1-2"); numeric columns do not wrap (a break at an exponent's or a range's hyphen misreads).
_ONE_NUMBER = r"[<>]?[-+]?[0-9][0-9,]*(\.[0-9]+)?(e[-+]?[0-9]+)?%?"
_NUMBER_TEXT = re.compile(r"^{0}([-\u2013]{0})?$".format(_ONE_NUMBER))
_NEUTRAL = (NA, "-", "\u2013", "")


def _is_number(v: Any) -> bool:
    """An int or float, or a number already formatted as text ("72.23", "23.00%", "1,234")."""
    if isinstance(v, bool):
        return False
    return isinstance(v, (int, float)) or (isinstance(v, str) and bool(_NUMBER_TEXT.match(v)))


def counts_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Generic table; ints get thousands separators; numeric columns (numbers, formatted
    numbers, and n/a or - where a value is missing) are right-aligned."""
    ncols = max([len(headers)] + [len(r) for r in rows])
    numeric = []
    for j in range(ncols):
        col = [r[j] for r in rows if j < len(r) and r[j] is not None and r[j] not in _NEUTRAL]
        numeric.append(bool(col) and all(_is_number(v) for v in col))

    out = ['<table class="counts"><thead><tr>']
    for j in range(ncols):
        h = headers[j] if j < len(headers) else ""
        out.append('<th{}>{}</th>'.format(' class="num"' if numeric[j] else "", _esc(h)))
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>")
        for j in range(ncols):
            v = r[j] if j < len(r) else ""
            cls = []
            if numeric[j]:
                cls.append("num")
            if isinstance(v, int) and not isinstance(v, bool):
                text = format_int(v)
            elif isinstance(v, float):
                text = format_score(v)
            elif v is None:
                text = NA
            else:
                text = str(v)
            if text == NA:
                cls.append("na")
            out.append("<td{}>{}</td>".format(' class="{}"'.format(" ".join(cls)) if cls else "", _esc(text)))
        out.append("</tr>")
    out.append("</tbody></table>")
    return scroll("".join(out))


def warnings_list(warnings: Optional[Sequence[str]]) -> str:
    """Styled list of warnings, or 'No warnings.'."""
    items = [w for w in (warnings or []) if w is not None and str(w) != ""]
    if not items:
        return '<p class="no-warnings">No warnings.</p>'
    return '<ul class="warnings">{}</ul>'.format("".join("<li>{}</li>".format(_esc(w)) for w in items))


_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--border:#d0d7de;--alt:#f6f8fa;--accent:#2f6fbd}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#fff;color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:980px;margin:0 auto;padding:28px 24px 24px}
h1{font-size:1.65em;line-height:1.25;margin:0 0 .9em}
h2{font-size:1.2em;margin:2em 0 .7em;padding-bottom:.3em;border-bottom:1px solid var(--border)}
p{margin:.5em 0}
.lead{color:var(--muted)}
.headline{display:flex;flex-wrap:wrap;align-items:baseline;gap:.3em 1em;padding:16px 20px;border:1px solid var(--border);border-left:6px solid var(--accent);border-radius:6px;background:var(--alt)}
.headline .label{font-size:1.15em;font-weight:600}
.headline .value{font-size:2.4em;font-weight:700;line-height:1.1;font-variant-numeric:tabular-nums}
.headline .sub{color:var(--muted);flex-basis:100%}
.scroll{overflow-x:auto;margin:.4em 0 1em}
.scroll-in{display:inline-grid;vertical-align:top;min-width:100%;grid-template-columns:minmax(min-content,1fr) 18px}
.scroll-in>*{grid-row:1}
.scroll-edge{grid-column:2;position:sticky;right:0;z-index:1;background:linear-gradient(to right,rgba(31,35,40,.16),rgba(255,255,255,.92) 45%,#fff)}
.scroll-edge span{display:block;padding:6px 0 0 2px;font-size:11px;line-height:14px;font-weight:600;color:var(--accent);white-space:nowrap}
.scroll-edge span:first-child{writing-mode:vertical-rl}
.scroll-edge span+span{padding-top:2px}
.scroll-cover{grid-column:2;position:relative;z-index:2;background:#fff}
table{border-collapse:collapse;width:100%;font-size:.95em}
th,td{padding:6px 12px;text-align:left;vertical-align:top;border-bottom:1px solid var(--border)}
thead th{border-bottom:2px solid var(--border);background:var(--alt)}
th.num{white-space:normal}
tbody tr:nth-child(even){background:#fbfcfd}
td{overflow-wrap:break-word}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.na{color:var(--muted);font-style:italic}
td.note{color:var(--muted)}
table.scores tbody tr:first-child td{font-weight:600}
.figure{margin:.4em 0 1em}
.figure figcaption{font-weight:600;margin-bottom:.4em}
svg.chart{display:block;max-width:100%;height:auto}
ul.warnings{list-style:none;padding:0;margin:.4em 0}
ul.warnings li{background:#fff8c5;border:1px solid #eac54f;border-left-width:5px;border-radius:4px;padding:7px 12px;margin:6px 0;overflow-wrap:anywhere}
.no-warnings{color:#1a7f37}
ul.notes{padding-left:1.3em}
ul.notes li{margin:.25em 0}
footer{margin-top:3em;padding-top:.8em;border-top:1px solid var(--border);color:var(--muted);font-size:.85em;overflow-wrap:anywhere}
@media (max-width:640px){body{font-size:14px}main{padding:16px 12px}th,td{padding:5px 7px}.headline .value{font-size:2em}svg.heatmap{max-width:none}}
@media print{body{font-size:11pt}main{max-width:none;padding:0}.headline{background:none}h2{break-after:avoid}section,.figure,tr,li{break-inside:avoid}.scroll{overflow:visible}.scroll-in{display:block}.scroll-edge,.scroll-cover{display:none}tbody tr:nth-child(even){background:none}}
"""


def page(title: str, sections: Sequence[Tuple[str, str]], footer: str) -> str:
    """Full HTML document. sections: (heading, html_fragment); empty heading -> no <h2>."""
    out = [
        "<!DOCTYPE html>\n",
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        "<title>{}</title>\n".format(_esc(title)),
        "<style>{}</style>\n".format(_CSS),
        "</head>\n<body>\n<main>\n",
        "<h1>{}</h1>\n".format(_esc(title)),
    ]
    for heading, fragment in sections:
        out.append("<section>\n")
        if heading:
            out.append("<h2>{}</h2>\n".format(_esc(heading)))
        out.append(fragment)
        out.append("\n</section>\n")
    if footer:
        out.append("<footer>{}</footer>\n".format(_esc(footer)))
    out.append("</main>\n</body>\n</html>\n")
    return "".join(out)


def headline(label: str, value: Optional[float], subline_html: str) -> str:
    """The page's main score in large type; subline_html is already escaped."""
    value_html = (_esc(format_score(value)) if not _is_missing(value)
                  else '<span class="na">{}</span>'.format(NA))
    return ('<div class="headline"><span class="label">{}</span><span class="value">{}</span>'
            '<span class="sub">{}</span></div>'.format(_esc(label), value_html, subline_html))


def notes_list(notes: Sequence[str]) -> str:
    return '<ul class="notes">{}</ul>'.format("".join("<li>{}</li>".format(_esc(x)) for x in notes))
