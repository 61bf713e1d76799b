#!/usr/bin/env python3
"""Checks a ktune HTML report: it parses, it is self-contained, every SVG
parses, and its plots carry the data they should.

    check_report.py REPORT.html [--winner-fastest] [--expect SUMMARY] [--heading TEXT]...

Always: the HTML's tags balance (html.parser), there is no script, no
external reference (src, href, @import, url() other than url(#...)), every
<svg> parses as XML; in each key's section the counts by status add up to the
section's total, and the histogram's bins to the ok count.
--winner-fastest: in every plot with a time axis the winner's star is the
fastest point (the lowest, or the leftmost bin).
--expect SUMMARY: gen_results.py's lines (sizes, device, counts, winner):
each key's section shows exactly those counts and that winner.
--heading TEXT: a heading (h1, h2, h3) with this text must exist.
Prints one line of figures; exit status 1 naming the first failures.
"""
import html.parser
import json
import re
import sys
import xml.etree.ElementTree as ET

VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "base", "source"}
SVG = "{http://www.w3.org/2000/svg}"
failures = []


def fail(msg):
    failures.append(msg)


class Page(html.parser.HTMLParser):
    """Balances tags and collects headings, sections and their texts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.headings, self.sections = [], [], []
        self.text_of = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            fail("a <script> element")
        for name, value in attrs:
            if name in ("src", "href") or (value and re.search(r"https?://", value) and name != "xmlns"):
                fail("an external reference: %s=%r" % (name, value))
        if tag == "section" and "key" in a.get("class", ""):
            self.sections.append({"h2": "", "text": "", "counts_total": None})
        if tag == "p" and "counts" in a.get("class", "") and self.sections:
            self.sections[-1]["counts_total"] = int(a["data-total"])
        if tag in ("h1", "h2", "h3"):
            self.text_of = [tag, ""]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            fail("</%s> closes <%s> at line %d" % (tag, self.stack[-1] if self.stack else "nothing", self.getpos()[0]))
            return
        self.stack.pop()
        if self.text_of and tag == self.text_of[0]:
            self.headings.append(self.text_of[1].strip())
            if tag == "h2" and self.sections and not self.sections[-1]["h2"]:
                self.sections[-1]["h2"] = self.text_of[1].strip()
            self.text_of = None

    def handle_data(self, data):
        if self.text_of:
            self.text_of[1] += data
        if self.sections:
            self.sections[-1]["text"] += data


def attr_float(e, name):
    return float(e.get(name))


def check_svg_winner(svg, title):
    star = [e for e in svg.iter(SVG + "path") if "winner" in e.get("class", "")]
    if not star:
        return 0
    sx, sy = attr_float(star[0], "data-x"), attr_float(star[0], "data-y")
    if title.startswith("Distribution"):
        bars = [e for e in svg.iter(SVG + "rect") if e.get("class") == "bar"]
        left = min(bars, key=lambda e: attr_float(e, "x"))
        if sx > attr_float(left, "x") + attr_float(left, "width") + 0.2:
            fail("%s: the winner (x %.1f) is not in the fastest bin (x %s)" % (title, sx, left.get("x")))
        return 1
    if title.startswith("Time against") or title.startswith("Best time"):
        ys = [attr_float(c, "cy") for g in svg.iter(SVG + "g") if g.get("class") == "pt" for c in g.iter(SVG + "circle")]
        if ys and max(ys) > sy + 0.15:  # pixels grow downwards: the fastest is the lowest
            fail("%s: a point (y %.1f) is faster than the winner (y %.1f)" % (title, max(ys), sy))
        return 1
    return 0


def check_svgs(text, winner_fastest):
    """Parses every <svg>; returns (svgs, section index -> (status counts, ok bins sum)), winner checks."""
    per_section, nsvg, nwinner = [], 0, 0
    for part in re.split(r"<section class='key'", text)[1:]:
        counts, bins = {}, 0
        for m in re.finditer(r"<svg.*?</svg>", part, re.S):
            nsvg += 1
            try:
                svg = ET.fromstring(m.group(0))
            except ET.ParseError as e:
                fail("an SVG does not parse: %s" % e)
                continue
            title = svg.find(SVG + "title").text or ""
            for r in svg.iter(SVG + "rect"):
                if r.get("data-status"):
                    counts[r.get("data-status")] = int(r.get("data-count"))
                elif title.startswith("Distribution") and r.get("data-count"):
                    bins += int(r.get("data-count"))
            if winner_fastest:
                nwinner += check_svg_winner(svg, title)
        per_section.append((counts, bins))
    return nsvg, per_section, nwinner


def check_expected(sections, per_section, path):
    for line in open(path):
        want = json.loads(line)
        found = [i for i, s in enumerate(sections) if want["device"] in s["h2"] and s["h2"].endswith(want["sizes"])]
        if len(found) != 1:
            fail("no single section for %s %s" % (want["device"], want["sizes"]))
            continue
        counts = per_section[found[0]][0]
        if counts != want["counts"]:
            fail("%s %s: counts %s, expected %s" % (want["device"], want["sizes"], counts, want["counts"]))
        if "Winner: " + want["winner"] + ";" not in sections[found[0]]["text"]:
            fail("%s %s: the winner %s is not the one named" % (want["device"], want["sizes"], want["winner"]))


def main(argv):
    path, winner_fastest, expect, headings = argv[1], False, None, []
    i = 2
    while i < len(argv):
        if argv[i] == "--winner-fastest":
            winner_fastest = True
        elif argv[i] == "--expect":
            expect, i = argv[i + 1], i + 1
        elif argv[i] == "--heading":
            headings.append(argv[i + 1])
            i += 1
        i += 1
    text = open(path, encoding="utf-8").read()
    if re.search(r"@import|url\((?!#)", text):
        fail("CSS that fetches something (@import or url() not within the page)")
    page = Page()
    page.feed(text)
    page.close()
    if page.stack:
        fail("unclosed tags at the end: %s" % page.stack)
    nsvg, per_section, nwinner = check_svgs(text, winner_fastest)
    if len(per_section) != len(page.sections) or not page.sections:
        fail("%d key sections, %d seen by the SVG pass" % (len(page.sections), len(per_section)))
    for s, (counts, bins) in zip(page.sections, per_section):
        if s["counts_total"] is None or sum(counts.values()) != s["counts_total"]:
            fail("%s: the counts by status %s do not add up to %s" % (s["h2"], counts, s["counts_total"]))
        if counts.get("ok", 0) != bins:
            fail("%s: the histogram holds %d configurations, %d are ok" % (s["h2"], bins, counts.get("ok", 0)))
    if winner_fastest and nwinner == 0:
        fail("no plot with a winner to check")
    if expect:
        check_expected(page.sections, per_section, expect)
    for h in headings:
        if h not in page.headings:
            fail("no heading %r (headings: %s)" % (h, page.headings[:12]))
    print("%s: %d bytes, %d sections, %d svgs, %d winner checks, %d failures" % (path, len(text.encode()),
          len(page.sections), nsvg, nwinner, len(failures)))
    for f in failures[:20]:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
