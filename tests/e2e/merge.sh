# Per-host databases merged with `ktune cache import` (README, "Without
# MPI"): two hosts tune the same key, each into its own database; the merge
# keeps every result and chooses the winner on the merged results, in
# either order, even when the slower host's winner is the newer.
. "$(dirname "$0")/common.bash"
# The default does 10 times the work of REP=1, REP=100 a hundred times.
cat >"$TMP/rep.c" <<'EOF2'
// @autotune(REP in {10, 1, 100})
// @kernel rep(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
void rep(const float *x, float *y, int n) {
  volatile float sink = 0;
  for (int r = 0; r < REP; r++)
    for (int i = 0; i < n; i++) sink = x[i] * (float)r;
  for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];
}
EOF2
winner() { "$KTUNE" cache show --db "$1" --kernel rep --format dflags; }
# Host a measures every configuration; host b, later, only REP=100 (pinned):
# b's winner is the newer and the slower.
run_status 0 "$KTUNE" tune "$TMP/rep.c" --dim N=50000 --db "$TMP/a.db" --quiet
sleep 0.01
run_status 0 "$KTUNE" tune "$TMP/rep.c" --dim N=50000 --autotune "REP=100" --db "$TMP/b.db" --quiet
expect_eq "$(winner "$TMP/a.db")" "-DREP=1" "host a's winner"
expect_eq "$(winner "$TMP/b.db")" "-DREP=100" "host b's winner"
for h in a b; do "$KTUNE" cache export --db "$TMP/$h.db" >"$TMP/$h.json" || fail "export of host $h"; done
for order in "a b" "b a"; do
  merged="$TMP/merged-${order% *}${order#* }.db"
  for h in $order; do run_status 0 "$KTUNE" cache import "$TMP/$h.json" --db "$merged"; done
  expect_eq "$(winner "$merged")" "-DREP=1" "merged ($order): the winner on the merged results"
  expect_eq "$("$KTUNE" cache list --db "$merged" --json | python3 -c "
import json, sys
k = json.load(sys.stdin)['keys']
print(len(k), k[0]['results'])")" "1 3" "merged ($order): one key with every configuration's result"
done
finish
