#!/usr/bin/env python3
"""A screenshot of a merged trace (`ovb-trace merge`) as a real trace viewer draws it, offline.

Perfetto's UI needs a web page or an npm build; Chromium's own trace viewer (catapult's, the one
behind chrome://tracing) does not: catapult's `tracing/bin/trace2html` writes one standalone HTML
page holding the viewer and the trace, which headless Chromium opens. This script does that, then
drives the page over the DevTools protocol on a pipe (no network, no websocket package): it waits
for the import, reads the viewer's own model (its import warnings, the processes in the order shown,
their threads and slice counts), hides the ranks not asked for, zooms onto the iteration where the
predicted one was aligned (the file's `alignment`) or shows the whole trace, and saves a PNG.

Needs: Python 3 (its standard library and the repository's analysis/ovb_analysis), Chromium
(Debian's `chromium`) and a checkout of catapult (github.com/catapult-project/catapult, whose
tracing/bin/trace2html runs under this Python). Not run in CI.

Usage:
  trace_screenshot.py MERGED.trace.json|SUITE_DIR --catapult DIR -o OUT.png
                      [--view iteration|all] [--ranks all|R[,R...]] [--width PX] [--height PX]
SUITE_DIR: a folder of `slurm/ovb-suite run` with one model/timeline-vs-measured-TAG.trace.json.
Bad input: one line on stderr, exit status 2.
"""

import argparse
import base64
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# The analysis part's atomic writer (standard library only).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..",
                                "analysis"))
from ovb_analysis import io_util  # noqa: E402
from ovb_analysis.errors import AnalysisError  # noqa: E402

LOAD_TIMEOUT_S = 120
RANK_NAME = re.compile(r"^(?:measured |predicted )?rank (\d+): ")


class ScreenshotError(Exception):
    """Bad input or a viewer that failed; main() prints it as one line and exits 2."""


class Chromium:
    """Headless Chromium spoken to over --remote-debugging-pipe: commands on its fd 3, answers on
    its fd 4, each message JSON ended by a NUL byte."""

    def __init__(self, binary, width, height, profile_dir):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire():  # in the child: the two pipe ends become fds 3 and 4
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        try:
            self.proc = subprocess.Popen(
                [binary, "--headless=new", "--no-sandbox", "--disable-gpu",
                 "--remote-debugging-pipe", f"--window-size={width},{height}",
                 f"--user-data-dir={profile_dir}", "about:blank"],
                preexec_fn=wire, close_fds=False, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as e:
            raise ScreenshotError(f"cannot start {binary}: {e.strerror}") from None
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.session = None

    def _message(self):
        while b"\0" not in self._buf:
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise ScreenshotError("chromium closed its DevTools pipe (did it start?)")
            self._buf += chunk
        text, self._buf = self._buf.split(b"\0", 1)
        return json.loads(text)

    def call(self, method, params=None, browser=False):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._message()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise ScreenshotError(f"chromium: {method}: {reply['error'].get('message')}")
                return reply["result"]

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            detail = r["exceptionDetails"].get("exception", {}).get("description", "")
            raise ScreenshotError(f"the viewer page failed: {detail.splitlines()[0]}")
        return r["result"].get("value")

    def open_page(self, url, width, height):
        pages = [t for t in self.call("Target.getTargets", browser=True)["targetInfos"]
                 if t["type"] == "page"]
        if not pages:
            raise ScreenshotError("chromium opened no page")
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": pages[0]["targetId"], "flatten": True},
                                 browser=True)["sessionId"]
        self.resize(width, height)
        self.call("Page.navigate", {"url": url})

    def resize(self, width, height):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def close(self):
        try:
            self.call("Browser.close", browser=True)
        except ScreenshotError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)


# In the page: g_timelineViewEl is trace2html's viewer; its model is set once the import is done,
# and its track view sets the first viewport on a timer after that.
JS_READY = ("typeof g_timelineViewEl !== 'undefined' && !!g_timelineViewEl.model && "
            "g_timelineViewEl.trackView.pollIfViewportAttachedInterval_ === undefined")

JS_DESCRIBE = """(() => {
  const m = g_timelineViewEl.model;
  const shown = Array.from(document.querySelectorAll('.process-track-base'));
  return {
    warnings: m.importWarnings.map(w => w.type + ': ' + w.message),
    processes: shown.map(el => {
      const p = el.processBase;
      return {pid: p.pid, name: p.name, sortIndex: p.sortIndex,
              threads: Object.values(p.threads).sort(tr.model.Thread.compare).map(
                  t => ({tid: t.tid, name: t.name, slices: t.sliceGroup.length}))};
    }),
  };
})()"""

# Hide the processes whose pid is not listed, drop the bottom analysis panel and the floating
# mouse-mode buttons, zoom to [a, b] ms
# when given; returns the height the tracks need (px).
JS_ARRANGE = """((keep, window) => {
  const tv = g_timelineViewEl.trackView;
  for (const el of Array.from(document.querySelectorAll('.process-track-base')))
    el.visible = keep === null || keep.includes(el.processBase.pid);
  for (const sel of ['tr-ui-a-analysis-view', 'tr-ui-b-drag-handle.horizontal-drag-handle',
                     'tr-ui-b-mouse-mode-selector'])
    for (const el of Array.from(document.querySelectorAll(sel))) el.style.display = 'none';
  if (window !== null) {
    const dt = new tr.ui.TimelineDisplayTransform();
    dt.set(tv.viewport.currentDisplayTransform);
    dt.xSetWorldBounds(window[0], window[1], tv.modelTrackContainer_.canvas.width);
    tv.viewport.setDisplayTransformImmediately(dt);
  }
  return tv.modelTrackContainer_.scrollHeight;
})"""

# The predicted iteration's start (ms) on the viewer's axis: its `iteration` range.
JS_PREDICTED_START = """(() => {
  for (const p of Object.values(g_timelineViewEl.model.processes)) {
    if (!/^predicted rank \\d+: /.test(p.name)) continue;
    for (const t of Object.values(p.threads))
      for (const s of t.sliceGroup.slices)
        if (s.category === 'gpu_user_annotation' && s.title === 'iteration') return s.start;
  }
  return null;
})()"""


def find_trace(path):
    """The merged trace file: `path` itself, or the one merged trace of a suite folder."""
    if not os.path.isdir(path):
        if not os.path.isfile(path):
            raise ScreenshotError(f"{path}: no such file or folder")
        return path
    found = sorted(glob.glob(os.path.join(path, "model", "timeline-vs-measured-*.trace.json")))
    if len(found) != 1:
        raise ScreenshotError(f"{path}: {len(found)} merged traces in model/ "
                              "(timeline-vs-measured-*.trace.json), name one file instead")
    return found[0]


def read_trace(path):
    """The merged trace's header (everything but its events) and its complete (X) events per
    (pid, tid); refuses a file that is no merge."""
    try:
        doc = io_util.load_json(path)
    except AnalysisError as e:
        raise ScreenshotError(str(e)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ScreenshotError(f"{path}: no traceEvents array, not a trace")
    if doc.get("distributedInfo", {}).get("backend") != "merged":
        raise ScreenshotError(f"{path}: not written by ovb-trace merge "
                              "(distributedInfo.backend is not \"merged\")")
    spans = {}
    for e in doc["traceEvents"]:
        if isinstance(e, dict) and e.get("ph") == "X":
            spans.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    return {k: v for k, v in doc.items() if k != "traceEvents"}, spans


def perfetto_spills(spans):
    """How many complete events Perfetto's JSON importer would move off their thread's track: it
    rounds ts and dur (us) to whole ns and spills an event that partially overlaps an open slice
    of its track onto an overflow track (stat slice_spill_overlapping_complete_event)."""
    spilled = 0
    for events in spans.values():
        times = sorted(((round(e["ts"] * 1000), -round(e.get("dur", 0) * 1000)) for e in events
                        if isinstance(e.get("ts"), (int, float))))
        open_ends = []
        for begin, neg_dur in times:
            end = begin - neg_dur
            while open_ends and open_ends[-1] <= begin:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                spilled += 1
                continue
            open_ends.append(end)
    return spilled


def parse_ranks(text):
    if text == "all":
        return None
    try:
        ranks = sorted({int(x) for x in text.split(",")})
    except ValueError:
        raise ScreenshotError(f"--ranks {text}: expected all or rank numbers such as 0,1") from None
    if any(r < 0 for r in ranks):
        raise ScreenshotError(f"--ranks {text}: ranks are not negative")
    return ranks


def trace2html(catapult, trace, html):
    tool = os.path.join(catapult, "tracing", "bin", "trace2html")
    if not os.path.isfile(tool):
        raise ScreenshotError(f"--catapult {catapult}: no tracing/bin/trace2html there")
    r = subprocess.run([sys.executable, tool, trace, "--output", html,
                        "--title", os.path.basename(trace)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise ScreenshotError(f"trace2html failed on {trace}: {last}")


def wait_for_viewer(browser):
    start = time.monotonic()
    while not browser.evaluate(JS_READY):
        if time.monotonic() - start > LOAD_TIMEOUT_S:
            raise ScreenshotError(f"the viewer did not finish importing in {LOAD_TIMEOUT_S} s")
        time.sleep(0.25)


def describe(view, spans):
    """Lines saying what the viewer made of the file: its warnings, the processes and threads in
    the order shown, and whether every complete event of the file became one of its slices."""
    lines = [f"viewer import warnings: {len(view['warnings'])}"]
    lines += [f"  {w}" for w in view["warnings"]]
    shown = {(p["pid"], t["tid"]): t["slices"] for p in view["processes"] for t in p["threads"]}
    differ = sorted((k, len(e), shown.get(k, 0)) for k, e in spans.items()
                    if shown.get(k, 0) != len(e))
    if differ:
        lines.append("tracks whose slice count differs from the file's X events (pid, tid):")
        lines += [f"  {k}: file {n}, viewer {v}" for k, n, v in differ]
    else:
        lines.append(f"every X event of the file is a slice of the viewer "
                     f"({sum(map(len, spans.values()))} on {len(spans)} tracks)")
    lines.append(f"events Perfetto's importer would spill off their track (partial overlaps at "
                 f"ns precision): {perfetto_spills(spans)}")
    lines.append("processes as shown (top to bottom):")
    for p in view["processes"]:
        lines.append(f"  {p['name']} (pid {p['pid']}, sort index {p['sortIndex']})")
        lines += [f"    {t['name']} (tid {t['tid']}): {t['slices']} slices" for t in p["threads"]]
    return lines


def shot(args):
    trace = find_trace(args.trace)
    header, spans = read_trace(trace)
    ranks = parse_ranks(args.ranks)
    alignment = header.get("alignment")
    if args.view == "iteration" and not alignment:
        raise ScreenshotError(f"{trace}: no alignment (no predicted and measured ranks "
                              "together), use --view all")
    binary = shutil.which(args.chromium)
    if not binary:
        raise ScreenshotError(f"--chromium {args.chromium}: not found")
    with tempfile.TemporaryDirectory(prefix="ovb-trace-shot-") as tmp:
        html = os.path.join(tmp, "trace.html")
        trace2html(args.catapult, trace, html)
        browser = Chromium(binary, args.width, args.height, os.path.join(tmp, "profile"))
        try:
            browser.open_page("file://" + html, args.width, args.height)
            wait_for_viewer(browser)
            view = browser.evaluate(JS_DESCRIBE)
            keep = None
            if ranks is not None:
                keep = [p["pid"] for p in view["processes"]
                        if RANK_NAME.match(p["name"])
                        and int(RANK_NAME.match(p["name"]).group(1)) in ranks]
                if not keep:
                    raise ScreenshotError(f"--ranks {args.ranks}: no such rank in {trace}")
            window = None
            if args.view == "iteration":
                start = browser.evaluate(JS_PREDICTED_START)
                if start is None:
                    raise ScreenshotError(f"{trace}: the viewer shows no predicted iteration range")
                span = max(alignment["measured_ns"], alignment["predicted_ns"]) / 1e6
                window = [start - 0.03 * span, start + 1.03 * span]
            needed = browser.evaluate(f"{JS_ARRANGE}({json.dumps(keep)}, {json.dumps(window)})")
            height = args.height or min(4000, int(needed) + 60)  # + the viewer's toolbar
            browser.resize(args.width, height)
            time.sleep(1.0)  # the viewer redraws on the next animation frames
            png = browser.call("Page.captureScreenshot", {"format": "png"})["data"]
        finally:
            browser.close()
    try:
        io_util.atomic_write(args.out, base64.b64decode(png))
    except AnalysisError as e:
        raise ScreenshotError(str(e)) from None
    for line in describe(view, spans):
        print(line)
    shown = "all ranks" if ranks is None else "ranks " + ",".join(map(str, ranks))
    where = ("whole trace" if window is None else
             f"{window[0]:.3f}-{window[1]:.3f} ms on the viewer's axis (the aligned iteration: "
             f"measured {alignment['measured_ns'] / 1e6:.3f} ms, "
             f"predicted {alignment['predicted_ns'] / 1e6:.3f} ms)")
    print(f"wrote {args.out} ({args.width}x{height} px; {shown}; {where})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", metavar="MERGED.trace.json|SUITE_DIR")
    ap.add_argument("--catapult", required=True, metavar="DIR", help="a catapult checkout")
    ap.add_argument("-o", "--out", required=True, metavar="OUT.png")
    ap.add_argument("--view", choices=("iteration", "all"), default="iteration",
                    help="the aligned iteration (default) or the whole trace")
    ap.add_argument("--ranks", default="all", help="all (default) or a list such as 0 or 0,1")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=0, help="default: as tall as the tracks need")
    ap.add_argument("--chromium", default="chromium", help="the browser (default: chromium)")
    args = ap.parse_args(argv)
    if args.width < 200 or args.height < 0:
        ap.error("--width must be at least 200 px and --height not negative")
    try:
        shot(args)
    except ScreenshotError as e:
        print(f"trace_screenshot.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
