# The HTML report: from a tuning, from the database and from a
# replay; every page parses and carries the data (tests/report/check_report.py);
# 100,000 stored results render in under 2 s of CPU time (2 s x SLOWDOWN of
# wall-clock time) into under 5 MB; bad input gets
# exit 2, a clear message and nothing at the output path.
. "$(dirname "$0")/common.bash"
check() { python3 tests/report/check_report.py "$@" >"$TMP/check" 2>&1 || { fail "check_report $*"; cat "$TMP/check" >&2; }; }
no_leftovers() { # DIR: no temporary report files left behind
  ls "$1" | grep -q 'tmp-' && fail "a temporary file was left in $1: $(ls "$1")"
}

# A tuning's report, and the database's report of the same tuning.
run_status 0 "$KTUNE" tune kernels/c/matmul.c --dim M=96 --dim N=96 --dim K=96 --budget 12 --quiet \
  --db "$TMP/mm.db" --report "$TMP/tune.html"
check "$TMP/tune.html" --heading "Times of all configurations" --heading "Search progress" --heading "Timeline" \
  --heading "The winner against the default" --heading "Winners across shapes and devices"
expect_contains "$TMP/tune.html" "device: measure" "the timeline's legend"
run_status 0 "$KTUNE" report --db "$TMP/mm.db" --kernel matmul --key "M=96" -o "$TMP/db.html"
check "$TMP/db.html" --heading "Effect of each tuned name"
expect_contains "$TMP/err" "report written to $TMP/db.html" "report says where it wrote"

# A generated database: the counts and winners the generator made are shown.
python3 tests/report/gen_results.py 4 500 "$TMP/gen.json" >"$TMP/gen.txt"
run_status 0 "$KTUNE" cache import "$TMP/gen.json" --db "$TMP/gen.db"
run_status 0 "$KTUNE" report --db "$TMP/gen.db" -o "$TMP/gen.html"
check "$TMP/gen.html" --winner-fastest --expect "$TMP/gen.txt"
# The check can fail: a wrong count, a faster point than the winner.
sed "0,/data-status='ok' data-count='/s//&1/" "$TMP/gen.html" >"$TMP/bad1.html"
python3 tests/report/check_report.py "$TMP/bad1.html" --expect "$TMP/gen.txt" >/dev/null 2>&1 &&
  fail "check_report missed a count that does not add up"
python3 - "$TMP/gen.html" "$TMP/bad2.html" <<'EOF'
import re, sys
s = open(sys.argv[1]).read()
# One more point, below every other: faster than the winner.
s = s.replace("<g class='pt'", "<g class='pt' fill='#000'><circle cx='100' cy='299' r='2'/></g><g class='pt'", 1)
open(sys.argv[2], "w").write(s)
EOF
python3 tests/report/check_report.py "$TMP/bad2.html" --winner-fastest >/dev/null 2>&1 &&
  fail "check_report missed a point faster than the winner"

# Large: 100,000 results in 10 keys, under 2 s and 5 MB (KTUNE_REPORT_LIMIT_S:
# the sanitized build's limit, scripts/check-sanitizers.sh). The 2 s are CPU
# time, which another job on the cores hardly changes (a load of 10 made the
# wall-clock time pass 2 s); the wall-clock limit, SLOWDOWN times that,
# catches a report that waits.
limit=${KTUNE_REPORT_LIMIT_S:-2}
python3 tests/report/gen_results.py 10 10000 "$TMP/big.json" >"$TMP/big.txt"
run_status 0 "$KTUNE" cache import "$TMP/big.json" --db "$TMP/big.db"
cpu_now
cpu_start=$CPU_MS start=$(date +%s%N)
run_status 0 "$KTUNE" report --db "$TMP/big.db" -o "$TMP/big.html"
took_ms=$((($(date +%s%N) - start) / 1000000))
cpu_now
cpu_ms=$((CPU_MS - cpu_start))
bytes=$(stat -c %s "$TMP/big.html")
echo "100000 results: $cpu_ms ms of CPU time, $took_ms ms, $bytes bytes"
awk -v t="$cpu_ms" -v l="$limit" 'BEGIN { exit !(t < l * 1000) }' ||
  fail "100,000 results took $cpu_ms ms of CPU time (want under $limit s)"
awk -v t="$took_ms" -v l="$limit" -v f="$SLOWDOWN" 'BEGIN { exit !(t < l * f * 1000) }' ||
  fail "100,000 results took $took_ms ms (want under $limit s x $SLOWDOWN)"
[ "$bytes" -lt 5000000 ] || fail "100,000 results made $bytes bytes (want under 5 MB)"
check "$TMP/big.html" --winner-fastest --expect "$TMP/big.txt"

# A replay: every strategy's curve beside random search's.
run_status 0 "$KTUNE" replay tests/data/t4/convolution_A4000.json.gz --strategy random --budget 20 --repeats 2 \
  --report "$TMP/replay.html"
expect_contains "$TMP/out" "fraction of optimum" "replay still prints its summary"
check "$TMP/replay.html" --winner-fastest --heading "Search progress"
for s in random exhaustive annealing genetic ils forest forest_align; do
  expect_contains "$TMP/replay.html" ">$s" "the curve of $s"
done

# Nothing to show (exit 1) or bad input (exit 2): a clear message, nothing at the output path.
mkdir "$TMP/out.d"
run_status 1 "$KTUNE" report --db "$TMP/gen.db" --kernel nosuch -o "$TMP/out.d/r.html"
expect_contains "$TMP/err" "no stored tuning matches kernel nosuch" "no matching key"
run_status 1 "$KTUNE" report --db "$TMP/gen.db" --key "N=999" -o "$TMP/out.d/r.html"
expect_contains "$TMP/err" 'sizes "N=999"' "no matching sizes"
run_status 1 "$KTUNE" report --db "$TMP/none.db" -o "$TMP/out.d/r.html"
expect_contains "$TMP/err" "no results database at $TMP/none.db" "a missing database"
[ -e "$TMP/none.db" ] && fail "report created a database"
echo '{"format": "ktune-results", "format_version": 1, "keys": []}' >"$TMP/empty.json"
run_status 0 "$KTUNE" cache import "$TMP/empty.json" --db "$TMP/empty.db"
run_status 1 "$KTUNE" report --db "$TMP/empty.db" -o "$TMP/out.d/r.html"
expect_contains "$TMP/err" "holds no results yet" "an empty database"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); c.commit()" "$TMP/foreign.db"
run_status 2 "$KTUNE" report --db "$TMP/foreign.db" -o "$TMP/out.d/r.html"
expect_contains "$TMP/err" "foreign.db" "a foreign database is named"
[ -e "$TMP/out.d/r.html" ] && fail "a failed report left a file"
no_leftovers "$TMP/out.d"
run_status 2 "$KTUNE" report --db "$TMP/gen.db" -o "$TMP/missing/dir/r.html"
expect_contains "$TMP/err" "cannot write the report there" "an unwritable path"
run_status 2 "$KTUNE" report --db "$TMP/gen.db" -o "$TMP/out.d"
expect_contains "$TMP/err" "is a directory" "a directory as the output"
# An existing report stays as it was when a new one fails.
echo old >"$TMP/out.d/keep.html"
run_status 1 "$KTUNE" report --db "$TMP/gen.db" --kernel nosuch -o "$TMP/out.d/keep.html"
expect_eq "$(cat "$TMP/out.d/keep.html")" old "a failed report leaves the old file"
no_leftovers "$TMP/out.d"
# A write that fails (a file-size limit) leaves the old report and no temporary file.
(ulimit -f 64 && "$KTUNE" report --db "$TMP/gen.db" -o "$TMP/out.d/keep.html") >"$TMP/out" 2>"$TMP/err"
expect_eq "$?" 2 "a report over the file-size limit"
expect_contains "$TMP/err" "keep.html: the report could not be written (File too large)" "the write's failure"
expect_eq "$(cat "$TMP/out.d/keep.html")" old "a failed write leaves the old file"
no_leftovers "$TMP/out.d"
# tune and replay refuse an unwritable report before any work.
run_status 2 "$KTUNE" tune kernels/c/matmul.c --db "$TMP/mm.db" --report "$TMP/missing/r.html"
expect_contains "$TMP/err" "cannot write the report there" "tune checks the report path first"
[ -s "$TMP/out" ] && fail "tune ran although its report could not be written"
run_status 2 "$KTUNE" replay tests/data/t4/convolution_A4000.json.gz --budget 5 --report "$TMP/missing/r.html"
expect_contains "$TMP/err" "cannot write the report there" "replay checks the report path first"
run_status 2 "$KTUNE" report stray -o "$TMP/r.html"
expect_contains "$TMP/err" "unexpected argument stray" "report takes no file"
finish
