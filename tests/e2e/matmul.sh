# The shipped C matrix multiply tunes to a verified winner that beats the
# default, and a second run reuses every stored measurement.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune kernels/c/matmul.c --dim M=256 --dim N=256 --dim K=256 --autotune "TILE_M=32" --json --quiet
cp "$TMP/out" "$TMP/first.json"
expect_eq "$(json "$TMP/first.json" "d['winner']['status']")" ok "winner verified"
expect_eq "$(json "$TMP/first.json" "d['speedup_over_default'] > 1.3")" True "winner beats the default clearly"
expect_eq "$(json "$TMP/first.json" "len(set(c['status'] for c in d['configurations']) - {'ok'})")" 0 "every configuration ok"
run_status 0 "$KTUNE" tune kernels/c/matmul.c --dim M=256 --dim N=256 --dim K=256 --autotune "TILE_M=32" --json --quiet
expect_eq "$(json "$TMP/out" "d['reused'] == len(d['configurations']) - 1")" True "second run reuses all but the reference"
run_status 0 "$KTUNE" cache show --kernel matmul --format defines
expect_contains "$TMP/out" "#define TILE_M" "winner as #defines"
finish
