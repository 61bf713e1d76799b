// A winner no load can hide: the default (REP=10) does 10 times the work of
// the winner (REP=1), the third 100 times; M changes nothing but the key
// (tests/e2e/mpi.sh, bench/host_timing_load.sh).
// @autotune(REP in {10, 1, 100})
// @kernel rep(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N, m: i32 = M)
void rep(const float *x, float *y, int n, int m) {
  volatile float sink = 0;
  for (int r = 0; r < REP; r++)
    for (int i = 0; i < n; i++) sink = x[i] * (float)(r + m);
  for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];
}
