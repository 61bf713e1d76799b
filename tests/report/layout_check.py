#!/usr/bin/env python3
"""Reads what layout_check.js left in a DOM that Chromium dumped.

    layout_check.py DUMP.html [--min-legends N]

Prints one line of figures (pictures, legends, their boxes, elements
compared) and each failure: a legend box that covers an element drawn
outside the legend, or anything drawn off its picture. Exit status 1 on a
failure, or when fewer than N legends (default 1) were measured: a page the
script never ran on, or without legends, proves nothing.
"""
import html
import json
import re
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    min_legends = int(argv[argv.index("--min-legends") + 1]) if "--min-legends" in argv else 1
    dom = open(argv[1], encoding="utf-8", errors="replace").read()
    m = re.search(r"<pre id=\"layout-result\">(.*?)</pre>", dom, re.S)
    if not m:
        print("layout_check: no layout-result in %s (did the script run?)" % argv[1], file=sys.stderr)
        return 1
    out = json.loads(html.unescape(m.group(1)))
    print("layout: %d pictures, %d legends (%d boxes), %d elements compared, %d failures"
          % (out["svgs"], out["legends"], out["entries"], out["elements"], len(out["failures"])))
    for f in out["failures"][:20]:
        print("  " + f, file=sys.stderr)
    if out["legends"] < min_legends:
        print("layout_check: %d legends measured, want at least %d" % (out["legends"], min_legends), file=sys.stderr)
        return 1
    return 1 if out["failures"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
