# Outputs compared on the device (the OpenCL comparison kernel, on PoCL in
# CI) give every configuration the same status and the same message as the
# comparison on the host (KTUNE_VERIFY_ON=host): within and outside the
# tolerance, NaN, an unwritten element, integers, an infinity, all wrong.
. "$(dirname "$0")/common.bash"
tune() {
  run_status 0 env KTUNE_TRACE=1 "$@" "$KTUNE" tune tests/data/opencl_verify.cl --json --quiet --no-db
  cp "$TMP/out" "$TMP/$1.json"
  cp "$TMP/err" "$TMP/$1.trace"
}
tune KTUNE_VERIFY_ON=host
tune KTUNE_VERIFY_ON=device
expect_contains "$TMP/KTUNE_VERIFY_ON=device.trace" "outputs compared on the device" "the device compared"
grep -q "outputs compared on the device" "$TMP/KTUNE_VERIFY_ON=host.trace" && fail "KTUNE_VERIFY_ON=host compared on the device"
summary() {
  json "$1" "'\n'.join('%d %s %s' % (c['config']['VARIANT'], c['status'], c.get('message', '')) for c in sorted(d['configurations'], key=lambda c: c['config']['VARIANT']))"
}
summary "$TMP/KTUNE_VERIFY_ON=host.json" >"$TMP/host.txt"
summary "$TMP/KTUNE_VERIFY_ON=device.json" >"$TMP/device.txt"
diff "$TMP/host.txt" "$TMP/device.txt" >&2 || fail "the device's comparison differs from the host's"
cat "$TMP/device.txt"
status() { awk -v v="$1" '$1 == v { print $2 }' "$TMP/device.txt"; }
expect_eq "$(status 0) $(status 1)" "ok ok" "the reference and a result within tolerance"
for v in 2 3 4 5 6 7; do expect_eq "$(status $v)" correctness "VARIANT=$v"; done
expect_contains "$TMP/device.txt" "^2 correctness y\[1000\]" "the first mismatch named"
expect_contains "$TMP/device.txt" "^3 correctness y\[100\]: got nan" "NaN named"
expect_contains "$TMP/device.txt" "^4 correctness y\[299999\]: got nan" "the unwritten element"
expect_contains "$TMP/device.txt" "^5 correctness z\[9\]: got 10, want 9 (1 of 300000" "integers exactly"
expect_contains "$TMP/device.txt" "^6 correctness y\[70000\]: got inf" "an infinity"
expect_contains "$TMP/device.txt" "(300000 of 300000 elements differ" "every element counted"
finish
