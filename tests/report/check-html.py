#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Structural checks of a `scsitune report --html` file, no golden:

  - well-formed: every element closed in order (void elements excepted), one
    <html>, a doctype, a UTF-8 charset;
  - self-contained: no <script>, <link>, <img>, <iframe>, <object>, <embed>,
    <base>, <form>; no src/href/action attribute (an in-page #anchor
    excepted), no on* handler, no url( or @import in CSS, no http(s):// in an
    attribute or the CSS but the SVG namespace; the Content-Security-Policy
    default-src 'none';
  - the numbers are the JSON's: every element with data-k (a JSON path) has
    data-v equal to the number at that path of the -o json document (or of
    the --compare reference's saved document, data-doc="ref"), and its text,
    if it has text, is that number divided by data-div and formatted as the
    text output does (1,234.5; "-" for null);
  - runs or a comparison that are not comparable (the JSON's not_comparable)
    are said in a warning box, each reason a list item;
  - the headline numbers are all there: summary, compare, per-run KIOPS and
    latency percentiles (when the JSON has them);
  - the charts draw those numbers: in a linear chart every bar's height is
    proportional to its value; in a log chart heights rise with the value.

Usage: check-html.py HTML JSON [REF_JSON]   (exit 0 ok, 1 with FAIL lines)
"""
import json
import math
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
FORBIDDEN = {"script", "link", "img", "iframe", "object", "embed", "base", "form", "frame", "audio", "video",
             "image", "use", "foreignobject", "source"}

fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL " + msg)


class Doc(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.doctype = None
        self.elements = []  # dicts: tag, attrs, text, parents (svg attrs)
        self.open_el = []  # element dicts of the stack (None for ones we do not track)
        self.svgs = []
        self.style = ""
        self.tags = []

    def handle_decl(self, decl):
        self.doctype = decl

    def _start(self, tag, attrs, closed):
        a = dict(attrs)
        self.tags.append((tag, a))
        el = {"tag": tag, "attrs": a, "text": "", "svg": self.svgs[-1] if self.svgs else None}
        self.elements.append(el)
        if tag == "svg":
            svg = {"attrs": a, "bars": []}
            self.svgs.append(svg)
            el["svg_obj"] = svg
        if tag == "rect" and "data-k" in a and self.svgs:
            self.svgs[-1]["bars"].append(a)
        if closed or tag in VOID:
            if tag == "svg":
                self.svgs.pop()
            return
        self.stack.append(tag)
        self.open_el.append(el)

    def handle_starttag(self, tag, attrs):
        self._start(tag, attrs, False)

    def handle_startendtag(self, tag, attrs):
        self._start(tag, attrs, True)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            fail(f"</{tag}> at line {self.getpos()[0]} closes <{self.stack[-1] if self.stack else 'nothing'}>")
            return
        self.stack.pop()
        el = self.open_el.pop()
        if tag == "svg":
            self.svgs.pop()
        del el

    def handle_data(self, data):
        for el in self.open_el:
            el["text"] += data
        if self.stack and self.stack[-1] == "style":
            self.style += data


def fmt(v, decimals):
    return f"{v:,.{decimals}f}"


def lookup(doc, path):
    cur = doc
    for part in path.split("."):
        if isinstance(cur, list):
            cur = cur[int(part)]
        elif isinstance(cur, dict):
            if part not in cur:
                raise KeyError(path)
            cur = cur[part]
        else:
            raise KeyError(path)
    return cur


def main():
    html_path, json_path = sys.argv[1], sys.argv[2]
    raw = open(html_path, "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"not UTF-8: {e}")
        text = raw.decode("utf-8", "replace")
    data = json.load(open(json_path))
    ref = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None

    p = Doc()
    p.feed(text)
    p.close()
    if p.stack:
        fail(f"unclosed elements at the end: {p.stack}")
    if (p.doctype or "").lower() != "doctype html":
        fail(f"doctype: {p.doctype!r}")
    if [t for t, _ in p.tags].count("html") != 1:
        fail("not exactly one <html>")
    if not any(t == "meta" and a.get("charset", "").lower() == "utf-8" for t, a in p.tags):
        fail("no <meta charset=utf-8>")
    csp = [a.get("content", "") for t, a in p.tags
           if t == "meta" and a.get("http-equiv", "").lower() == "content-security-policy"]
    if not csp or "default-src 'none'" not in csp[0]:
        fail(f"no Content-Security-Policy default-src 'none': {csp}")

    # Self-contained: nothing that loads or runs.
    for t, a in p.tags:
        if t in FORBIDDEN:
            fail(f"<{t}> element")
        for k, v in a.items():
            if k.startswith("on"):
                fail(f"<{t} {k}=...> event handler")
            if k in ("src", "href", "xlink:href", "action", "srcset", "poster", "data") and not (v or "").startswith("#"):
                fail(f"<{t} {k}={v!r}>")
            if k == "style" and "url(" in (v or ""):
                fail(f"<{t} style> with url(")
    if "url(" in p.style or "@import" in p.style:
        fail("CSS with url( or @import")
    # A URL in text is text; in an attribute or the CSS it could be loaded.
    for t, a in p.tags:
        for k, v in a.items():
            for m in re.finditer(r"https?://", v or ""):
                if not (t == "svg" and k == "xmlns" and v == "http://www.w3.org/2000/svg"):
                    fail(f"URL in <{t} {k}={v!r}>")
    if re.search(r"https?://", p.style):
        fail("URL in the CSS")

    # Numbers: data-v is the JSON's, the text shows it.
    keys = set()
    n_checked = 0
    for el in p.elements:
        a = el["attrs"]
        if "data-k" not in a:
            continue
        k, v = a["data-k"], a.get("data-v")
        src = ref if a.get("data-doc") == "ref" else data
        if src is None:
            fail(f"{k}: data-doc=ref but no reference document given")
            continue
        if a.get("data-doc") != "ref":
            keys.add(k)
        try:
            want = lookup(src, k)
        except (KeyError, IndexError, ValueError):
            fail(f"data-k={k}: no such number in the JSON")
            continue
        got = None if v == "null" else float(v)
        if want is None or got is None:
            if want is not got:
                fail(f"{k}: HTML {v}, JSON {want}")
                continue
        elif isinstance(want, bool) or not isinstance(want, (int, float)) or float(want) != got:
            fail(f"{k}: HTML {v}, JSON {want!r}")
            continue
        n_checked += 1
        shown = el["text"].strip()
        if el["tag"] == "rect" or not shown:
            continue
        if got is None:
            if shown != "-":
                fail(f"{k}: null shown as {shown!r}")
            continue
        div = float(a.get("data-div", "1"))
        decimals = len(shown.split(".")[1]) if "." in shown else 0
        if shown != fmt(got / div, decimals) or decimals > 1:
            fail(f"{k}: shown {shown!r}, JSON {want} / {div:g} is {fmt(got / div, 1)}")

    # "Not comparable" is said as loudly as the text output says it: each reason a list item of a warning box.
    if "summary" in data:
        reasons = list(data["summary"].get("not_comparable") or []) + list((data.get("compare") or {}).get("not_comparable") or [])
        items = [el["text"] for el in p.elements if el["tag"] == "li"]
        boxes = [el for el in p.elements if el["tag"] == "div" and el["attrs"].get("class") == "warnbox"]
        for r in reasons:
            if r not in items:
                fail(f"not comparable, not said: {r!r}")
        want = bool(data["summary"].get("not_comparable")) + bool((data.get("compare") or {}).get("not_comparable"))
        if len(boxes) != want:
            fail(f"{len(boxes)} warning boxes, the JSON has {want} not-comparable lists")

    # The headline numbers are all shown.
    if "selection" in data:  # the fleet view (report --query)
        need, n_want = fleet_need(data)
    else:
        need, n_want = report_need(data)
    for k in sorted(need - keys):
        fail(f"{k}: not in the HTML")

    # The charts draw the numbers.
    n_bars = 0
    for el in p.elements:
        svg = el.get("svg_obj")
        if not svg:
            continue
        scale = svg["attrs"].get("data-scale")
        size = "width" if scale == "signed" else "height"
        # A bar beyond a signed chart's scale is clipped at its edge (data-clipped): it must be as long as
        # the longest bar drawn to scale could be, and its value beyond what the others' scale shows.
        clipped = [(float(b["data-v"]) / float(b.get("data-div", "1")), float(b[size])) for b in svg["bars"]
                   if b.get("data-clipped")]
        bars = [(float(b["data-v"]) / float(b.get("data-div", "1")), float(b[size])) for b in svg["bars"]
                if not b.get("data-clipped")]
        n_bars += len(bars) + len(clipped)
        if clipped and scale != "signed":
            fail(f"{scale} chart: a clipped bar: {clipped}")
        if clipped and bars:
            unit = max(h / abs(v) for v, h in bars if v)
            for v, h in clipped:
                if not (abs(v) * unit > h * 1.0001):
                    fail(f"signed chart: bar {v} marked clipped but it fits the scale ({h} long)")
        if scale in ("linear", "signed"):
            if scale == "signed":
                bars = [(abs(v), h) for v, h in bars]
            ratios = [h / v for v, h in bars if v > 0]
            if ratios and max(ratios) - min(ratios) > 0.002 * max(ratios) + 0.15 / max(1e-9, min(v for v, _ in bars if v > 0)):
                fail(f"{scale} chart: bar {size}s not proportional to the values: {bars}")
        elif scale == "log":
            s = sorted(bars)
            for (v1, h1), (v2, h2) in zip(s, s[1:]):
                if v2 > v1 * 1.0001 and not h2 > h1:
                    fail(f"log chart: {v2} not drawn taller than {v1}")
        else:
            fail(f"chart without data-scale: {svg['attrs']}")
    if n_bars < n_want:
        fail(f"charts: {n_bars} bars, want at least {n_want}")

    if fails:
        return 1
    print(f"ok   {html_path}: well-formed, self-contained, {n_checked} numbers equal the JSON's, {n_bars} bars drawn")
    return 0


def fleet_need(data):
    need = {f"counts.{c}" for c in ("compared", "apart", "drifted", "missing")}
    stats = ("runs", "avg_kiops", "min_kiops", "max_kiops", "spread_pct")
    for side in ("reference", "current"):
        if data["selection"][side] is not None:
            need |= {f"selection.{side}.{s}" for s in stats}
        for k, c in enumerate(data["cohorts"]):
            if c[side] is not None:
                need |= {f"cohorts.{k}.{side}.{s}" for s in stats}
    if data["selection"]["compare"] is not None:
        need |= {"selection.compare.avg_change_pct", "selection.compare.spread_change_points"}
    n_bars = 0
    for i, h in enumerate(data["hosts"]):
        if h["compare"] is not None:
            need.add(f"hosts.{i}.compare.avg_change_pct")
            n_bars += 1
        if h["current"] is not None:
            need.add(f"hosts.{i}.current.summary.avg_kiops")
    # The gate: every change test's estimate, bound (unless too few) and confidence reached.
    for k, c in enumerate((data.get("gate") or {}).get("conditions") or []):
        for j, t in enumerate(c["tests"]):
            need |= {f"gate.conditions.{k}.tests.{j}.{x}" for x in ("estimate_pct", "reached_pct")}
            if t["bound_pct"] is not None:
                need.add(f"gate.conditions.{k}.tests.{j}.bound_pct")
    return need, n_bars


def report_need(data):
    need = {"summary." + s for s in ("runs", "avg_kiops", "min_kiops", "max_kiops", "spread_pct", "stddev_kiops",
                                     "cov_pct")}
    for i, run in enumerate(data["runs"]):
        need |= {f"runs.{i}.kiops", f"runs.{i}.iops", f"runs.{i}.bw_mib_s"}
        for d in ("read", "write"):
            lat = run[d]["clat_ns"]
            if lat["samples"]:
                need |= {f"runs.{i}.{d}.clat_ns.{q}" for q in ("mean", "p50", "p99", "p99_9") if lat[q] is not None}
    if "compare" in data:
        for side in ("reference", "current"):
            need |= {f"compare.{side}.{s}" for s in ("runs", "avg_kiops", "min_kiops", "max_kiops", "spread_pct")}
        need |= {"compare.avg_change_pct", "compare.spread_change_points", "compare.median_change.estimate_pct"}
        need |= {f"compare.median_change.{e}" for e in ("low_pct", "high_pct") if data["compare"]["median_change"][e] is not None}
    return need, len(data["runs"])


if __name__ == "__main__":
    sys.exit(main())
