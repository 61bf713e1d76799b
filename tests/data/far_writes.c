/* A kernel whose fast configurations get the output right but write far
 * before the start or past the end of it, as a stride bug does (a negative
 * index times a row length), to test the guard zones on both sides
 * (tests/e2e/far_writes.sh). y is 1 MiB: 256 rows of 1024 floats.
 *   VARIANT 0  correct, slow (the default and reference)
 *   VARIANT 1  writes 8 KiB before y (row -2 of rows of 1024 floats)
 *   VARIANT 2  writes 64 KiB before y
 *   VARIANT 3  writes 1 MiB before y (row -1 of a 256 x 1024 matrix read as 1 x 262144)
 *   VARIANT 4  writes 64 KiB past the end of y
 *   VARIANT 5  correct and fast: the expected winner
 *   VARIANT 6  writes 8 MiB before y, past its guard zone: into pages that
 *              fault on the CPU backend (a crash, `runtime`) */

// @autotune(VARIANT in [0, 1, 2, 3, 4, 5, 6])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 262144)
void scale(const float *x, float *y, int n) {
  int repeat = VARIANT == 0 ? 8 : 1; /* the default redoes the work */
  for (int r = 0; r < repeat; r++)
    for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];
  volatile float *v = y;
  if (VARIANT == 1) v[-2048] = 1;
  if (VARIANT == 2) v[-16384] = 1;
  if (VARIANT == 3) v[-262144] = 1;
  if (VARIANT == 4) v[n + 16383] = 1;
  if (VARIANT == 6) v[-(1 << 21)] = 1;
}
