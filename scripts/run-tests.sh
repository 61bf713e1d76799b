#!/bin/sh
# Runs every test through CTest, then the Python package's tests (pytest,
# scripts/python-tests.sh), and ends on one line: "N passed, N failed",
# counting each CTest case and each pytest test.
build=${1:-build}
log=$(mktemp)
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -E '^python\.pytest$' 2>&1 | tee "$log"
rc=$?
total=$(sed -n 's/.*tests failed out of \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/.*, \([0-9][0-9]*\) tests failed out of.*/\1/p' "$log" | tail -n 1)
if [ -z "$total" ]; then echo "0 passed, 1 failed"; rm -f "$log"; exit 1; fi
passed=$((total - failed))

"$(dirname "$0")/python-tests.sh" "$build" >"$log" 2>&1
py_rc=$?
cat "$log"
summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)' "$log" | tail -n 1)
count() { echo "$summary" | sed -n "s/.*\b\([0-9][0-9]*\) $1.*/\1/p"; }
py_passed=$(count passed)
py_failed=$(count failed)
py_errors=$(count error)
if [ -z "$summary" ]; then py_failed=1; fi # pytest did not run: one failure
passed=$((passed + ${py_passed:-0}))
failed=$((failed + ${py_failed:-0} + ${py_errors:-0}))
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ $rc -eq 0 ] && [ "$py_rc" -eq 0 ]
