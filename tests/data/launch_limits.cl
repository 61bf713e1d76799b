/* Launch shapes past the device's limits, each to be refused as a constraint
 * before the launch, naming the limit, while the rest tune as usual:
 *   SHAPE 0  64-work-item groups over N: the default, correct
 *   SHAPE 1  2^40 x 2^40 extra groups in y and z: 2^86 work-items in all,
 *            which overflows every count (PoCL used to run a fraction of it
 *            and report wrong outputs)
 *   SHAPE 2  a 128 x 64 work-group: each dimension within
 *            CL_DEVICE_MAX_WORK_ITEM_SIZES, the product past
 *            CL_DEVICE_MAX_WORK_GROUP_SIZE on PoCL (4096)
 *   SHAPE 3  16-work-item groups over N: correct
 * Kernel `over` has SHAPE 1 as its default: the tuning must fail. */

// @autotune(SHAPE in [0, 1, 2, 3])
// @kernel fill(y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64) * (1 + 3 * (SHAPE == 3)), 1 + (SHAPE == 1) * ((1 << 40) - 1), 1 + (SHAPE == 1) * ((1 << 40) - 1))
// @block(64 / (1 + 3 * (SHAPE == 3)) * (1 + (SHAPE == 2)), 1 + 63 * (SHAPE == 2))
// @dims(N = 4096)
__kernel void fill(__global float *y, int n) {
  const size_t i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (get_global_id(1) == 0 && get_global_id(2) == 0 && i < (size_t)n) y[i] = (float)i;
}

// @autotune(SHAPE in [1, 0])
// @kernel over(y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64), 1 + (SHAPE == 1) * ((1 << 40) - 1), 1 + (SHAPE == 1) * ((1 << 40) - 1))
// @block(64)
// @dims(N = 4096)
__kernel void over(__global float *y, int n) {
  const size_t i = get_global_id(0);
  if (get_global_id(1) == 0 && get_global_id(2) == 0 && i < (size_t)n) y[i] = (float)i;
}
