# The report's plots as a browser lays them out (issue 28 item 8): headless
# Chromium loads the reports' bodies in one page with
# tests/report/layout_check.js appended and dumps the DOM; in every picture no
# legend box (its frame or an entry) covers a marker, bar, line, label or
# axis, and nothing is drawn off the picture (tests/report/layout_check.py).
# The reports: a tuning's (every plot of one key, the timeline and the
# winner against the default: 6 legends), a generated database's (a few
# hundred points per plot, up to the corners: 6) and a replay's (seven
# curves and their legend, with the other plots: 9). The check can fail: a
# legend moved onto its plot is caught. Skipped (77) without chromium unless
# KTUNE_REQUIRE_CHROMIUM=1 (CI, .ci/run).
. "$(dirname "$0")/common.bash"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  if [ "${KTUNE_REQUIRE_CHROMIUM:-0}" = 1 ]; then
    echo "FAIL: no chromium, and KTUNE_REQUIRE_CHROMIUM=1 (install Debian's chromium package)" >&2
    exit 1
  fi
  echo "skipped: no chromium (install Debian's chromium package: scripts/deps.sh)"
  exit 77
fi
# measure OUT HTML...: the reports' bodies in one page (one browser start)
# with the script appended, laid out by Chromium; its DOM in OUT.dom.
measure() {
  out=$1; shift
  python3 - "$out" tests/report/layout_check.js "$@" <<'PY'
import re, sys
out, script, pages = sys.argv[1], open(sys.argv[2]).read(), sys.argv[3:]
texts = [open(p).read() for p in pages]
bodies = [re.search(r"<body>(.*)</body>", t, re.S).group(1) for t in texts]
head = re.search(r"<head>.*</head>", texts[0], re.S).group(0)
open(out, "w").write("<!DOCTYPE html><html>" + head + "<body>" + "".join(bodies) +
                     "<script>\n" + script + "</script></body></html>")
PY
  timeout -k 5 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$TMP/profile" --window-size=1280,1000 --dump-dom "file://$out" >"$out.dom" \
    2>"$TMP/chromium.log" || { fail "chromium failed on $*"; tail -5 "$TMP/chromium.log" >&2; }
}

# A small space, tuned whole in seconds: two names, so two effect plots.
cat >"$TMP/small.c" <<'K'
// @autotune(U in [1, 2, 4], V in [1, 2])
// @kernel twice(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 4096)
void twice(const float *x, float *y, int n) {
  for (int i = 0; i < n; i += U)
    for (int u = 0; u < U && i + u < n; u++) y[i + u] = V * x[i + u] / V * 2;
}
K
run_status 0 "$KTUNE" tune "$TMP/small.c" --quiet --no-db --report "$TMP/tune.html"
python3 tests/report/gen_results.py 1 400 "$TMP/gen.json" >/dev/null
run_status 0 "$KTUNE" cache import "$TMP/gen.json" --db "$TMP/gen.db"
run_status 0 "$KTUNE" report --db "$TMP/gen.db" -o "$TMP/gen.html"
run_status 0 "$KTUNE" replay tests/data/t4/convolution_A4000.json.gz --strategy random --budget 20 --repeats 2 \
  --report "$TMP/replay.html"
for f in tune gen replay; do grep -q "class='legend'" "$TMP/$f.html" || fail "no legend in the $f report"; done
measure "$TMP/all.html" "$TMP/tune.html" "$TMP/gen.html" "$TMP/replay.html"
python3 tests/report/layout_check.py "$TMP/all.html.dom" --min-legends 13 || fail "the reports' plots (above)"

# The check can fail: the replay's legend moved down onto its curves.
sed "s/<g class='legend'/<g transform='translate(0 120)' class='legend'/" "$TMP/replay.html" >"$TMP/moved.html"
measure "$TMP/bad.html" "$TMP/moved.html"
python3 tests/report/layout_check.py "$TMP/bad.html.dom" >"$TMP/moved.txt" 2>&1 &&
  fail "layout_check took a legend moved onto the curves"
expect_contains "$TMP/moved.txt" "covers" "... and says what it covers"
finish
