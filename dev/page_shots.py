#!/usr/bin/env python3
"""Look at detailed results pages in headless Chromium, at the widths participants use.

    python3 dev/page_shots.py OUT_DIR PAGE.html [PAGE.html ...] [--widths 1400,500]
    python3 dev/page_shots.py --check PAGE.html [PAGE.html ...] [--widths 1400,500]

The first form writes OUT_DIR/<name>-<width>.png for every page and width, <name> being the page's
folder and file name (score.py --out /tmp/av writes /tmp/av/detailed_results.html: name
"av-detailed_results"), made unique by a number where two pages would share it. The window is
tall (Chromium's --screenshot takes the window, not the page) and the blank rows under the page
are cut off, so each PNG is the whole page. Open them and look.

The second form measures what a reader gets in the browser's own layout, through the DevTools
protocol on a pipe: whether the page is wider than the window, the smallest chart text as drawn
(font size times the SVG's scale), boxes that scroll without the hint, and for every table and
chart box whether its "scroll" hint is the element on top at the hint's place: it must be when
part of the content is out of view, must not be when nothing overflows, and is covered again
once scrolled to the end. It prints one line per page and
width and exits 1 if any check fails.

Needs Debian's chromium (`apt-get install -y chromium`) and Pillow; run as root it passes
--no-sandbox. A developer's tool (docs/pages.md): the pages' tests do not need a browser;
tests/core/test_pages_in_browser.py runs --check's measure() when chromium is installed.
"""
import argparse
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 (type comments)

# --disable-dev-shm-usage: a container's small /dev/shm (CI's) would crash the renderer.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--mute-audio"]
TALL = 9000  # px: taller than any page, so one screenshot (and one viewport) holds it all
MIN_FONT = 11.0


def chromium():
    # type: () -> Optional[str]
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def trim(path):
    # type: (str) -> Tuple[int, int]
    """Cut the white rows under the page; returns the PNG's (width, height)."""
    from PIL import Image, ImageChops
    with Image.open(path) as img:
        rgb = img.convert("RGB")
    box = ImageChops.difference(rgb, Image.new("RGB", rgb.size, (255, 255, 255))).getbbox()
    bottom = min(rgb.size[1], (box[3] if box else 1) + 16)
    rgb.crop((0, 0, rgb.size[0], bottom)).save(path)
    return rgb.size[0], bottom


def shoot(browser, page, png, width):
    # type: (str, str, str, int) -> None
    profile = tempfile.mkdtemp(prefix="page-shots-")
    try:
        subprocess.run([browser] + FLAGS + [
            "--user-data-dir=" + profile, "--window-size=%d,%d" % (width, TALL),
            "--screenshot=" + png, "file://" + os.path.abspath(page)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


# What the reader gets, measured in the page by the browser (no script is added to the page: the
# DevTools protocol evaluates this from outside).
MEASURE_JS = r"""
(() => {
  const out = {pageOverflow: document.documentElement.scrollWidth - window.innerWidth,
               svgText: [], boxes: []};
  for (const t of document.querySelectorAll('svg text')) {
    const m = t.getScreenCTM();
    out.svgText.push(parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b));
  }
  const onTop = (el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return hit === el || el.contains(hit);
  };
  // Boxes that scroll without the hint (other than .scroll): a reader may miss their content.
  out.unhinted = [...document.querySelectorAll('body *')].filter((el) =>
    !el.classList.contains('scroll') && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)
    && el.scrollWidth > el.clientWidth).length;
  for (const box of document.querySelectorAll('.scroll')) {
    const hint = box.querySelector(':scope > .scroll-in > .scroll-edge > span');
    const over = box.scrollWidth - box.clientWidth;
    const b = box.getBoundingClientRect(), h = hint.getBoundingClientRect();
    // How much of the content itself (not the blank gutter after it) is out of view.
    const content = box.querySelector(':scope > .scroll-in > :first-child');
    const item = {what: box.querySelector('svg') ? 'chart' : 'table', overflow: over,
                  hidden: content.getBoundingClientRect().right - b.right,
                  shown: onTop(hint), atEdge: Math.abs(h.right + 2 - b.right) < 20};
    box.scrollLeft = box.scrollWidth;
    item.shownAtEnd = onTop(hint);
    box.scrollLeft = 0;
    out.boxes.push(item);
  }
  return out;
})()
"""


_TRAMPOLINE = ("import os, sys\n"
               "a, b = int(sys.argv[1]), int(sys.argv[2])\n"
               "os.dup2(a, 3)\nos.dup2(b, 4)\nos.close(a)\nos.close(b)\n"
               "os.execv(sys.argv[3], sys.argv[3:])\n")


class DevTools:
    """Chromium driven through --remote-debugging-pipe (JSON messages ending in NUL on fds 3
    and 4): no extra package, no port."""

    def __init__(self, browser):
        # type: (str) -> None
        to_chrome = os.pipe()
        from_chrome = os.pipe()
        # Far from 3 and 4, so that putting one end on 3 cannot overwrite the other.
        child_in = fcntl.fcntl(to_chrome[0], fcntl.F_DUPFD, 20)
        child_out = fcntl.fcntl(from_chrome[1], fcntl.F_DUPFD, 20)
        self.profile = tempfile.mkdtemp(prefix="page-check-")
        # A small Python trampoline puts the pipe's ends on fds 3 and 4 and execs chromium.
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(child_in), str(child_out), browser] + FLAGS
            + ["--remote-debugging-pipe", "--user-data-dir=" + self.profile, "about:blank"],
            pass_fds=(child_in, child_out), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        for fd in (to_chrome[0], from_chrome[1], child_in, child_out):
            os.close(fd)
        self.send_fd, self.recv = to_chrome[1], os.fdopen(from_chrome[0], "rb")
        self.next_id = 0
        self.buffer = b""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)

    def _message(self):
        # type: () -> Dict[str, Any]
        while b"\0" not in self.buffer:
            chunk = self.recv.read1(65536)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(raw.decode("utf-8"))

    def call(self, method, params=None, session=False, wait_for=None):
        # type: (str, Optional[Dict[str, Any]], bool, Optional[str]) -> Dict[str, Any]
        """Send one command; return its result (after the event wait_for, if given)."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.send_fd, json.dumps(message).encode("utf-8") + b"\0")
        result, seen = None, wait_for is None
        while result is None or not seen:
            msg = self._message()
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                result = msg["result"]
            elif msg.get("method") == wait_for:
                seen = True
        return result

    def measure(self, page, width):
        # type: (str, int) -> Dict[str, Any]
        if not os.path.isfile(page):
            raise FileNotFoundError(page)
        self.call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": TALL, "deviceScaleFactor": 1, "mobile": False},
            session=True)
        self.call("Page.navigate", {"url": "file://" + os.path.abspath(page)}, session=True,
                  wait_for="Page.loadEventFired")
        got = self.call("Runtime.evaluate", {"expression": MEASURE_JS, "returnByValue": True},
                        session=True)
        return got["result"]["value"]

    def close(self):
        # type: () -> None
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.send_fd)
        self.recv.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def problems(measured):
    # type: (Dict[str, Any]) -> List[str]
    """What a reader would suffer, from measure()'s numbers; [] if nothing."""
    out = []
    if measured["unhinted"]:
        out.append("%d boxes overflow without a hint" % measured["unhinted"])
    if measured["pageOverflow"] > 0:
        out.append("the page is %d px wider than the window" % measured["pageOverflow"])
    small = [s for s in measured["svgText"] if s < MIN_FONT - 0.01]
    if small:
        out.append("%d chart texts under %g px (smallest %.1f px)" % (len(small), MIN_FONT,
                                                                    min(small)))
    for i, box in enumerate(measured["boxes"]):
        # Content out of view: the hint must show, at the right edge. No overflow at all: it
        # must not. Only part of the blank gutter out of view: either.
        if box["hidden"] > 0.5 and not (box["shown"] and box["atEdge"]):
            out.append("box %d (%s): %d px of it out of view, no hint at its right edge" % (
                i, box["what"], box["hidden"]))
        if box["overflow"] <= 0 and box["shown"]:
            out.append("box %d (%s): hint shown, nothing to scroll" % (i, box["what"]))
        if box["shownAtEnd"]:
            out.append("box %d (%s): hint still shown at the end" % (i, box["what"]))
    return out


def shot_names(pages):
    # type: (List[str]) -> List[str]
    """<folder>-<file name without .html> per page, numbered where two would be the same (two
    pages of one folder, or two folders of one name), so no screenshot overwrites another."""
    names = []  # type: List[str]
    for page in pages:
        path = os.path.abspath(page)
        base = "%s-%s" % (os.path.basename(os.path.dirname(path)) or "page",
                          os.path.splitext(os.path.basename(path))[0])
        name, n = base, 1
        while name in names:
            n += 1
            name = "%s-%d" % (base, n)
        names.append(name)
    return names


def main(argv=None):
    # type: (Optional[List[str]]) -> int
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="measure instead of screenshots")
    ap.add_argument("paths", nargs="+", help="OUT_DIR then pages; with --check, pages only")
    ap.add_argument("--widths", default="1400,500", help="comma-separated CSS px (default 1400,500)")
    args = ap.parse_args(argv)
    pages = args.paths if args.check else args.paths[1:]
    missing = [p for p in pages if not os.path.isfile(p)]
    if missing:
        sys.stderr.write("page_shots.py: no such page: %s\n" % ", ".join(missing))
        return 2
    browser = chromium()
    if browser is None:
        sys.stderr.write("no chromium on PATH: apt-get install -y chromium\n")
        return 2
    widths = [int(w) for w in args.widths.split(",")]
    if args.check:
        tools = DevTools(browser)
        failed = 0
        try:
            for page in args.paths:
                for width in widths:
                    measured = tools.measure(page, width)
                    found = problems(measured)
                    failed += bool(found)
                    print("%s @ %d px: %d boxes (%d scroll), smallest chart text %.1f px: %s" % (
                        page, width, len(measured["boxes"]),
                        sum(1 for b in measured["boxes"] if b["hidden"] > 0.5),
                        min(measured["svgText"] or [0.0]), "; ".join(found) or "ok"))
        finally:
            tools.close()
        return 1 if failed else 0
    if len(args.paths) < 2:
        ap.error("give OUT_DIR and at least one page")
    out_dir = args.paths[0]
    if os.path.isfile(out_dir):
        ap.error("OUT_DIR %s is a file: give the folder for the screenshots first" % out_dir)
    os.makedirs(out_dir, exist_ok=True)
    for page, name in zip(pages, shot_names(pages)):
        for width in widths:
            png = os.path.join(out_dir, "%s-%d.png" % (name, width))
            shoot(browser, page, png, width)
            print("%s  %d x %d" % ((png,) + trim(png)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
