# The report of the shipped matmul tuning (kernels/c/matmul.c, CPU backend)
# renders in a real browser: a headless Chromium screenshot that is not
# blank and shows the plots, and the page's expected headings. Skipped
# (exit 77, "skipped: no chromium") only where chromium is not installed and
# KTUNE_REQUIRE_CHROMIUM is unset; CI installs it and sets it (.ci/run).
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
# shot HTML PNG: a screenshot, bounded in time, in a profile of its own.
shot() {
  timeout -k 5 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$TMP/profile" --screenshot="$2" --window-size=1024,1400 "file://$1" >"$TMP/chromium.log" 2>&1 ||
    { fail "chromium failed on $1"; tail -5 "$TMP/chromium.log" >&2; }
}
# A budget keeps it to seconds; the sizes are the kernel's own (@dims).
run_status 0 "$KTUNE" tune kernels/c/matmul.c --budget 10 --quiet --db "$TMP/mm.db" --report "$TMP/matmul.html"
python3 tests/report/check_report.py "$TMP/matmul.html" --heading "ktune report" \
  --heading "Winners across shapes and devices" --heading "Times of all configurations" \
  --heading "Effect of each tuned name" --heading "Search progress" --heading "The winner against the default" \
  --heading "The fastest configurations" --heading "Timeline" || fail "the report's headings"
shot "$TMP/matmul.html" "$TMP/matmul.png"
python3 tests/report/png_check.py "$TMP/matmul.png" 1024 1400 || fail "the screenshot shows no rendered report"
# The check can fail: a blank page is not a rendered report.
echo '<!DOCTYPE html><html><body></body></html>' >"$TMP/blank.html"
shot "$TMP/blank.html" "$TMP/blank.png"
python3 tests/report/png_check.py "$TMP/blank.png" 1024 1400 >/dev/null 2>&1 && fail "png_check took a blank page"
finish
