#!/bin/sh
# Runs every test through CTest and ends on one line: "N passed, N failed".
build=${1:-build}
log=$(mktemp)
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" 2>&1 | tee "$log"
rc=$?
total=$(sed -n 's/.*tests failed out of \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/.*, \([0-9][0-9]*\) tests failed out of.*/\1/p' "$log" | tail -n 1)
rm -f "$log"
if [ -z "$total" ]; then echo "0 passed, 1 failed"; exit 1; fi
echo "$((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ] && [ $rc -eq 0 ]
