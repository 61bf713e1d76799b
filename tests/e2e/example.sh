# examples/launch_matmul.c: the library used from C on the shipped matmul.
# The first run tunes shape A on a miss and checks every result against a
# naive reference; a second run with the same database tunes nothing (the
# KTUNE_PRINT_AUTOTUNING lines say "stored winner").
. "$(dirname "$0")/common.bash"
EXAMPLE=$(dirname "$KTUNE")/launch_matmul
[ -x "$EXAMPLE" ] || { echo "FAIL: $EXAMPLE not built"; exit 1; }
export KTUNE_PRINT_AUTOTUNING=1
run_status 0 "$EXAMPLE" kernels/c/matmul.c
cp "$TMP/err" "$TMP/first.err"
expect_contains "$TMP/out" "all results match the reference" "first run correct"
expect_contains "$TMP/first.err" "ktune: kernel matmul, key \[M=96 K=64 N=128\]: tuned " "first run tunes shape A"
expect_contains "$TMP/first.err" "key \[M=96 K=64 N=128\]: stored winner" "second handle gets the stored winner"
expect_contains "$TMP/first.err" "key \[M=80 K=64 N=160\]: nearest stored size \[M=96 K=64 N=128\]" "nearest size for shape B"
run_status 0 "$EXAMPLE" kernels/c/matmul.c
expect_contains "$TMP/out" "all results match the reference" "second run correct"
expect_contains "$TMP/err" "key \[M=96 K=64 N=128\]: stored winner" "second run uses the stored winner"
grep -q "tuned" "$TMP/err" && fail "second run tuned again: $(cat "$TMP/err")"
[ "$(grep -c "stored winner" "$TMP/err")" = 2 ] || fail "second run: expected two stored-winner lines: $(cat "$TMP/err")"
finish
