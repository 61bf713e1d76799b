// Finalists tied: U changes nothing of the work, so every configuration
// takes the same time and the finalist rounds can only tell them apart by
// noise; they stop once the others' medians lie within the leader's own
// spread (tests/e2e/finalist_rounds.sh). Two configurations only: the leader
// is the lowest of the finalists' medians, and with six identical ones some
// other median often lay beyond its interquartile range (CI once saw four
// runs in a row untied); a pair tied in 9 of 10 runs of `ktune tune
// tests/data/rounds_tied.c --json --no-db` here (the tenth apart).
// @autotune(U in [1, 2])
// @kernel idle(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 64)
void idle(const float *x, float *y, int n) {
  volatile float s = 0;
  for (int r = 0; r < 1000000 + 0 * U; r++) s += (float)r;
  for (int i = 0; i < n; i++) y[i] = x[i] + 1.0f;
}
