# The results database through the command line: list, show (defines and -D
# flags), export/import round trip, T4 export, clear by filter, a tuner
# killed with -9 and resumed, two tuners writing one database at once.
. "$(dirname "$0")/common.bash"

# A small C kernel with a space of 42 configurations.
kernel() { # NAME
  cat <<EOF
// @autotune(U in [1, 64], B in [1, 2, 3, 4, 5, 6])
// @kernel $1(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 20000)
void $1(const float *x, float *y, int n) {
  for (int i = 0; i < n; i += U)
    for (int u = 0; u < U && i + u < n; u++) y[i + u] = (float)B * x[i + u] / (float)B;
}
EOF
}
kernel scale >"$TMP/scale.c"
kernel twice >"$TMP/twice.c"

# Nothing tuned yet: reading creates nothing.
run_status 0 "$KTUNE" cache list
expect_contains "$TMP/out" "0 stored tunings" "empty list"
[ -e "$KTUNE_DB" ] && fail "cache list created the database"

# A tuner killed at an arbitrary moment leaves a database that opens, and the
# next run reuses what was recorded.
"$KTUNE" tune "$TMP/scale.c" --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq $((50 * SLOWDOWN))); do # 5 s x SLOWDOWN for 3 results, then the kill
  sleep 0.1
  n=$("$KTUNE" cache list --json 2>/dev/null | python3 -c "import json,sys; print(sum(k['results'] for k in json.load(sys.stdin)['keys']))" 2>/dev/null)
  [ "${n:-0}" -ge 3 ] && break
done
{ kill -9 $pid && wait $pid; } 2>/dev/null
run_status 0 "$KTUNE" cache list --json --kernel scale
stored=$(json "$TMP/out" "sum(k['results'] for k in d['keys'])")
[ "$stored" -ge 1 ] && [ "$stored" -lt 42 ] || fail "not killed mid-run ($stored of 42 recorded)"
run_status 0 "$KTUNE" tune "$TMP/scale.c" --json --quiet
expect_eq "$(json "$TMP/out" "d['reused'] >= $stored - 1")" True "resumed run reuses what was stored"

# Two tuners at once on one database.
"$KTUNE" tune "$TMP/twice.c" --quiet >"$TMP/a.out" 2>"$TMP/a.err" &
a=$!
"$KTUNE" tune "$TMP/twice.c" --dim N=30000 --quiet >"$TMP/b.out" 2>"$TMP/b.err" &
b=$!
wait $a || { fail "first concurrent tuner failed"; cat "$TMP/a.err" >&2; }
wait $b || { fail "second concurrent tuner failed"; cat "$TMP/b.err" >&2; }
run_status 0 "$KTUNE" cache list --json --kernel twice
expect_eq "$(json "$TMP/out" "sorted((k['sizes'], k['results'], k['winner'] is not None) for k in d['keys'])")" \
  "[('N=20000', 42, True), ('N=30000', 42, True)]" "both tunings complete"

# show: the winner as flags and as a header.
run_status 0 "$KTUNE" cache show --kernel scale --format dflags
grep -Eq '^-DU=[0-9]+ -DB=[0-9]+$' "$TMP/out" || fail "dflags: $(cat "$TMP/out")"
run_status 0 "$KTUNE" cache show --kernel scale --format defines
expect_contains "$TMP/out" "#define U " "defines"
run_status 2 "$KTUNE" cache show --format dflags
expect_contains "$TMP/err" "stored winners match" "ambiguous show names the choice"
run_status 0 "$KTUNE" cache show --kernel twice
expect_contains "$TMP/out" "N=30000" "table shows each key"

# CSV, the table people paste: a row per result, a column per tuned name.
run_status 0 "$KTUNE" cache show --kernel scale --format csv
python3 - "$TMP/out" <<'PY' || fail "cache show --format csv: $(head -3 "$TMP/out")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows and {"U", "B", "status", "median_s", "winner"} <= set(rows[0]), rows[:1]
assert sum(r["winner"] == "1" for r in rows) == 1, "one winner"
assert all(r["kernel"] == "scale" for r in rows)
PY
run_status 0 "$KTUNE" cache export --format csv
[ "$(python3 -c "import csv,sys; print(len(list(csv.reader(open(sys.argv[1])))) - 1)" "$TMP/out")" -gt 42 ] ||
  fail "cache export --format csv: a row per result of every key"

# Export, import into a fresh database, export again: the same keys.
run_status 0 "$KTUNE" cache export
cp "$TMP/out" "$TMP/all.json"
run_status 0 "$KTUNE" cache import "$TMP/all.json" --db "$TMP/copy.db"
expect_contains "$TMP/out" "under 3 keys" "import summary"
run_status 0 "$KTUNE" cache export --db "$TMP/copy.db"
expect_eq "$(python3 -c "import json,sys; a,b=(json.load(open(f))['keys'] for f in sys.argv[1:]); print(a==b)" "$TMP/all.json" "$TMP/out")" True "export round trip"

# A configuration that is no NAME=integer list (issue 26 item 5: it was
# imported, shown and offered to kt_launch) refuses the whole import.
python3 - "$TMP/all.json" "$TMP/planted.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["keys"][0]["winner"]["config"] = "U=1 B=1 -include /etc/shadow"
json.dump(d, open(sys.argv[2], "w"))
PY
run_status 2 "$KTUNE" cache import "$TMP/planted.json" --db "$TMP/planted.db"
expect_contains "$TMP/err" '"-include" is no NAME=integer' "planted configuration refused"
[ -e "$TMP/planted.db" ] && fail "a refused import left a database"

# T4: one tuning, in the hub's schema.
run_status 0 "$KTUNE" cache export --kernel scale --format t4
expect_eq "$(json "$TMP/out" "d['schema_version']")" 1.0.0 "T4 schema version"
expect_eq "$(json "$TMP/out" "all(set(r) >= {'configuration','times','invalidity','correctness','measurements','objectives'} for r in d['results'])")" True "T4 fields"
expect_eq "$(json "$TMP/out" "sorted(d['results'][0]['configuration'])")" "['B', 'U']" "T4 configuration"
run_status 2 "$KTUNE" cache export --format t4
expect_contains "$TMP/err" "narrow" "T4 of several tunings refused"

# clear by filter: --key selects exactly the keys it names (issue 26 item 6:
# it once removed every size of the kernel); a filter that matches nothing
# says so with exit status 1, a key that is no NAME=VALUE list is bad input.
run_status 0 "$KTUNE" cache export --kernel twice --key N=30000
expect_eq "$(json "$TMP/out" "[k['sizes'] for k in d['keys']]")" "['N=30000']" "export --key"
run_status 0 "$KTUNE" cache clear --kernel twice --key N=30000
expect_contains "$TMP/out" "removed 1 tuning (42 results)" "clear --key summary"
run_status 0 "$KTUNE" cache list --json --kernel twice
expect_eq "$(json "$TMP/out" "[k['sizes'] for k in d['keys']]")" "['N=20000']" "clear --key removed only that key"
run_status 1 "$KTUNE" cache clear --kernel twice --key N=30000
expect_contains "$TMP/err" "no stored tuning matches kernel twice sizes \"N=30000\"" "clear of nothing says so"
run_status 1 "$KTUNE" cache export --kernel nosuch
run_status 2 "$KTUNE" cache clear --kernel twice --key 20000
expect_contains "$TMP/err" "is no NAME=VALUE" "malformed --key"
run_status 0 "$KTUNE" cache clear --kernel twice
expect_contains "$TMP/out" "removed 1 tuning" "clear summary"
run_status 0 "$KTUNE" cache list --json
expect_eq "$(json "$TMP/out" "[k['kernel'] for k in d['keys']]")" "['scale']" "only the other kernel left"

# A damaged file: a clear message, exit status nonzero, no crash.
head -c 4096 /dev/zero | tr '\0' 'x' >"$TMP/junk.db"
"$KTUNE" cache list --db "$TMP/junk.db" >"$TMP/out" 2>"$TMP/err"
st=$?
[ $st -ne 0 ] && [ $st -lt 128 ] || fail "damaged database: exit status $st"
expect_contains "$TMP/err" "Move it away" "damaged database message"
finish
