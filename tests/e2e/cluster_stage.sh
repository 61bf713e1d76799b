# The @cluster stage runs at the first stage's best few configurations, not
# only at its winner: here A=3 is the second fastest with C=1 but the
# fastest of all with C=2, so a second stage at A=2 alone would keep A=2
# C=1 (three units of work against one). On the H200, gemm_wgmma's tiles
# at M=128 N=14336 behave so (docs/BENCHMARKS.md, "The @cluster stage").
. "$(dirname "$0")/common.bash"

cat >"$TMP/c.c" <<'K'
// @autotune(A in [1, 2, 3])
// @cluster(C in [1, 2])
// @kernel f(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 100000)
#define UNITS (C == 2 && A == 3 ? 1 : A == 1 ? 6 : A == 2 ? 3 : 4)
static volatile float sink; /* stores the compiler must keep: the work */
void f(const float *x, float *y, int n) {
  for (long r = 0; r < UNITS * 1000000L; r++) sink = x[r & 1023];
  for (int i = 0; i < n; i++) y[i] = 2 * x[i];
}
K
run_status 0 "$KTUNE" tune "$TMP/c.c" --no-db --quiet --json
cp "$TMP/out" "$TMP/r.json"
expect_eq "$(json "$TMP/r.json" "(d['winner']['config']['A'], d['winner']['config']['C'])")" "(3, 2)" \
  "the cluster stage found the tile that wins only with C=2"
# The stage ran at three bases: A=1, 2, 3 with C=2, besides the first stage's three.
expect_eq "$(json "$TMP/r.json" "sorted((t['config']['A'], t['config']['C']) for t in d['configurations'])")" \
  "[(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]" "every base tried with the cluster choice"
finish
