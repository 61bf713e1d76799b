/* The CPU twin of launch_limits.cl: @grid and @block do not shape a CPU
 * launch, but a geometry past what any backend can count is refused on every
 * backend, as a constraint before the launch:
 *   SHAPE 0  the default, correct
 *   SHAPE 1  2^40 x 2^40 extra blocks in y and z: 2^86 work-items in all
 *   SHAPE 2  correct
 * Kernel `over` has SHAPE 1 as its default: the tuning must fail. */

// @autotune(SHAPE in [0, 1, 2])
// @kernel fill(y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64), 1 + (SHAPE == 1) * ((1 << 40) - 1), 1 + (SHAPE == 1) * ((1 << 40) - 1))
// @block(64)
// @dims(N = 4096)
void fill(float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = (float)(i * (SHAPE + 1)) / (SHAPE + 1);
}

// @autotune(SHAPE in [1, 0])
// @kernel over(y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64), 1 + (SHAPE == 1) * ((1 << 40) - 1), 1 + (SHAPE == 1) * ((1 << 40) - 1))
// @block(64)
// @dims(N = 4096)
void over(float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = (float)i;
}
