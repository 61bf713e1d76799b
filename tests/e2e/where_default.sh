# A default configuration outside @where is bad input: `ktune tune` and
# `ktune space` stop with exit 2 at the @where (the default is the reference
# every configuration is verified against, so it could otherwise win, and be
# stored, from outside the space). @where sees the runtime sizes (--dim, else
# @dims). Pins that leave nothing @where allows are "no valid
# configuration" (exit 1). Nothing runs and nothing is stored in either case.
. "$(dirname "$0")/common.bash"

# kernel WHERE: a CPU kernel over B in [1, 2, 4, 8] with that @where.
kernel() {
  cat >"$TMP/w.c" <<EOF
// @autotune(B in [1, 2, 4, 8])
// @where($1)
// @kernel wk(x: out tensor<f32>[N], n: i32 = N)
// @dims(N = 64)
void wk(float *x, int n) { for (int i = 0; i < n; i++) x[i] = (float)(i * B) / B; }
EOF
}
stored() { [ -f "$KTUNE_DB" ] || { echo 0; return; }; "$KTUNE" cache list --db "$KTUNE_DB" --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)['keys']))"; }

kernel "B > 1"
for cmd in space tune; do
  run_status 2 "$KTUNE" $cmd "$TMP/w.c" --quiet
  expect_contains "$TMP/err" "w.c:2:13: error: the default configuration B=1 (the first choice of each name) violates @where(B > 1)" "$cmd: B > 1"
  expect_contains "$TMP/err" "put the values of a valid configuration first in @autotune(...), e.g. B=2 (valid)" "$cmd: the fix"
  [ -s "$TMP/out" ] && fail "$cmd: printed a result for a default outside @where: $(cat "$TMP/out")"
done
expect_eq "$(stored)" 0 "nothing stored for a default outside @where"

kernel "B > 100"
for cmd in space tune; do
  run_status 2 "$KTUNE" $cmd "$TMP/w.c" --quiet
  expect_contains "$TMP/err" "violates @where(B > 100)" "$cmd: B > 100"
  expect_contains "$TMP/err" "none of the 4 configurations satisfies it: widen the choices or relax @where" "$cmd: nothing valid"
done

# Sizes in @where: @dims(N = 64) makes the default invalid, --dim N=128 valid.
kernel "B * N > 64"
run_status 2 "$KTUNE" space "$TMP/w.c"
expect_contains "$TMP/err" "violates @where(B \* N > 64)" "@where with @dims"
run_status 0 "$KTUNE" space "$TMP/w.c" --dim N=128 --json
expect_eq "$(json "$TMP/out" "d['valid_size']")" 4 "--dim N=128: valid"
run_status 0 "$KTUNE" tune "$TMP/w.c" --dim N=128 --quiet --json
expect_eq "$(json "$TMP/out" "d['valid_size']")" 4 "tune --dim N=128: valid"
run_status 2 "$KTUNE" tune "$TMP/w.c" --dim N=32 --quiet
expect_contains "$TMP/err" "violates @where(B \* N > 64)" "@where with --dim"

# Pins that exclude every configuration @where allows: exit 1, nothing runs.
kernel "B != 4"
rm -f "$KTUNE_DB"
for cmd in space tune; do
  run_status 1 "$KTUNE" $cmd "$TMP/w.c" --autotune B=4 --quiet
  expect_contains "$TMP/err" "w.c: error: no valid configuration: none of the 1 configurations of kernel wk left by --autotune \"B=4\" satisfies @where" "$cmd: pinned out"
done
expect_eq "$(stored)" 0 "nothing stored for a space without a valid configuration"
# A valid pin tunes as before.
run_status 0 "$KTUNE" tune "$TMP/w.c" --autotune B=8 --quiet --json
expect_eq "$(json "$TMP/out" "d['valid_size']")" 1 "a valid pin"
# Pinned away from the default, the default (here the fastest) still runs
# as the reference but does not win: the winner is inside the pinned space.
cat >"$TMP/fast_default.c" <<'K'
// @autotune(B in [1, 2, 4])
// @kernel f(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 100000)
void f(const float *x, float *y, int n) {
  for (int r = 0; r < B * 5; r++)
    for (int i = 0; i < n; i++) y[i] = 2 * x[i];
}
K
run_status 0 "$KTUNE" tune "$TMP/fast_default.c" --autotune B=4 --quiet --json
expect_eq "$(json "$TMP/out" "d['winner']['config']['B']")" 4 "winner of a space pinned away from the default"
finish
