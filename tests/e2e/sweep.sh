# A shape sweep in one run (README, "A shape sweep"): --dim lists give their
# product, --sizes FILE one key a line; every key gets a winner in one --json
# document; a second run measures nothing stored again; the second key
# compiles nothing (the binary cache); bad keys are exit 2 with the place.
. "$(dirname "$0")/common.bash"
cat >"$TMP/scale.c" <<'EOF2'
// @autotune(U in [1, 4])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N, m: i32 = M)
void scale(const float *x, float *y, int n, int m) {
  for (int i = 0; i < n; i += U)
    for (int u = 0; u < U && i + u < n; u++) y[i + u] = 2.0f * x[i + u] + (float)(m - m);
}
EOF2
DB=$TMP/sweep.db
keys_of() { json "$TMP/out" "[k['sizes'] for k in d['keys']]"; }

# Two lists: their product, the last --dim varying fastest, a winner each.
run_status 0 "$KTUNE" tune "$TMP/scale.c" --dim N=1000,2000 --dim M=1,2,3 --db "$DB" --json
expect_eq "$(keys_of)" "['N=1000 M=1', 'N=1000 M=2', 'N=1000 M=3', 'N=2000 M=1', 'N=2000 M=2', 'N=2000 M=3']" \
  "the product of the lists"
expect_eq "$(json "$TMP/out" "all(k['winner'] is not None for k in d['keys'])")" True "a winner per key"
expect_eq "$(json "$TMP/out" "[k['binary_cache']['compiled'] for k in d['keys']][1:]")" "[0, 0, 0, 0, 0]" \
  "later keys compile nothing"
expect_eq "$(json "$TMP/out" "d['keys'][0]['binary_cache']['compiled']")" 3 "the first key compiles each configuration"
expect_contains "$TMP/err" "key 2/6: N=1000 M=2" "the progress names the key"
expect_contains "$TMP/err" "6 of 6 keys tuned, 6 with a winner" "the closing line"

# Again: every stored configuration is taken from the database (the default
# alone runs, as the reference output).
run_status 0 "$KTUNE" tune "$TMP/scale.c" --dim N=1000,2000 --dim M=1,2,3 --db "$DB" --json --quiet
expect_eq "$(json "$TMP/out" "[k['reused'] for k in d['keys']]")" "[2, 2, 2, 2, 2, 2]" "a second run measures nothing again"
[ -s "$TMP/err" ] && fail "--quiet printed: $(cat "$TMP/err")"

# Each key in a ktune process of its own (what a CUDA sweep does, since the
# first key's NVRTC loads the driver into the tuner): the same document and
# the same sharing of the binary cache and the database.
KTUNE_SWEEP_PROCESSES=1 run_status 0 "$KTUNE" tune "$TMP/scale.c" --dim N=5000,6000 --dim M=1 --db "$DB" --json
expect_eq "$(keys_of)" "['N=5000 M=1', 'N=6000 M=1']" "own processes: the keys in one document"
expect_eq "$(json "$TMP/out" "all(k['winner'] is not None for k in d['keys'])")" True "own processes: a winner per key"
expect_eq "$(json "$TMP/out" "[k['binary_cache']['compiled'] for k in d['keys']]")" "[0, 0]" \
  "own processes: the binary cache is shared"
expect_contains "$TMP/err" "key 2/2: N=6000 M=1 (in a process of its own)" "own processes: the progress says so"
expect_contains "$TMP/err" "2 of 2 keys tuned, 2 with a winner" "own processes: the closing line"

# --device all on a backend of one device is --device 0, in this process or
# in processes of their own (each given the resolved device).
run_status 0 "$KTUNE" tune "$TMP/scale.c" --dim N=5000,6000 --dim M=1 --db "$DB" --json --quiet --device all
expect_eq "$(json "$TMP/out" "[k['device']['index'] for k in d['keys']]")" "[0, 0]" "--device all: device 0"
KTUNE_SWEEP_PROCESSES=1 run_status 0 "$KTUNE" tune "$TMP/scale.c" --dim N=5000,6000 --dim M=1 --db "$DB" --json \
  --quiet --device all
expect_eq "$(json "$TMP/out" "[k['reused'] for k in d['keys']]")" "[2, 2]" "--device all, own processes: device 0's results"

# --sizes: a comment and a blank line; the table covers every key.
printf '# the shapes\nN=300 M=1\n\n  N=400   M=2  # the second\n' >"$TMP/sizes.txt"
run_status 0 "$KTUNE" tune "$TMP/scale.c" --sizes "$TMP/sizes.txt" --db "$DB" --json --quiet
expect_eq "$(keys_of)" "['N=300 M=1', 'N=400 M=2']" "--sizes keys"
run_status 0 "$KTUNE" tune "$TMP/scale.c" --sizes "$TMP/sizes.txt" --db "$DB" --quiet
expect_contains "$TMP/out" "N=300 M=1" "the table's first key"
expect_contains "$TMP/out" "N=400 M=2" "the table's second key"

# One key keeps today's document.
run_status 0 "$KTUNE" tune "$TMP/scale.c" --dim N=500 --dim M=1 --db "$DB" --json --quiet
expect_eq "$(json "$TMP/out" "'keys' not in d and d['sizes']")" "N=500 M=1" "one key: one result document"

# Bad input: exit 2, the place named, nothing tuned.
printf 'N=300 M=1\nN=400 M\n' >"$TMP/bad.txt"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --sizes "$TMP/bad.txt" --db "$TMP/bad.db"
expect_contains "$TMP/err" "bad.txt:2: 'M' is not NAME=VALUE" "a malformed line names FILE:LINE"
printf 'N=300 M=1\nN=abc M=2\n' >"$TMP/bad2.txt"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --sizes "$TMP/bad2.txt" --db "$TMP/bad.db"
expect_contains "$TMP/err" "bad2.txt:2: in this key" "a bad value names FILE:LINE"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --dim N=1000,,2000 --dim M=1 --db "$TMP/bad.db"
expect_contains "$TMP/err" "item 2 of the list is empty" "an empty --dim item"
[ -e "$TMP/bad.db" ] && fail "bad input tuned something"
finish
