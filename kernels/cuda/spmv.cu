// Sparse matrix-vector product y = A x, A in CSR (row_ptr, col, val): TPR
// threads per row (a power of two up to a warp) stride over the row's
// elements and combine their sums with warp shuffles. Short rows want one
// thread each (no idle lanes, no shuffles); long rows want a warp each
// (coalesced loads, parallel sums). Which wins depends on the matrix, so
// tune on the real one (bench/spmv_h200.sh):
//
//   ktune tune kernels/cuda/spmv.cu --input row_ptr=rp.npy --input col=col.npy \
//       --input val=val.npy --input x=x.npy
//
// Without files the matrix is invented: row_ptr = iota gives one element
// per row, at a random column.
// @autotune(TPR in [1, 2, 4, 8, 16, 32], BLOCK in [256, 128, 512, 1024])
// @kernel spmv(row_ptr: tensor<i32>[ROWS + 1] = iota, col: tensor<i32>[NNZ] = random(0, COLS), val: tensor<f32>[NNZ], x: tensor<f32>[COLS], y: out tensor<f32>[ROWS], rows: i32 = ROWS)
// @grid(cdiv(ROWS * TPR, BLOCK))
// @block(BLOCK)
// @dims(ROWS = 1 << 22, NNZ = ROWS, COLS = ROWS)
// @verify(atol = 1e-3, rtol = 1e-3)
// @flops(2 * NNZ)
// @bytes(4 * (ROWS + 1) + 8 * NNZ + 4 * COLS + 4 * ROWS)
extern "C" __global__ void __launch_bounds__(BLOCK)
    spmv(const int *row_ptr, const int *col, const float *val, const float *x, float *y, int rows) {
  long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;
  long long row = t / TPR;
  int lane = (int)(t % TPR);
  float sum = 0.0f;
  if (row < rows)
    for (int j = row_ptr[row] + lane; j < row_ptr[row + 1]; j += TPR) sum += val[j] * __ldg(&x[col[j]]);
  // Every thread of the warp takes part (none returned early): TPR lanes
  // are TPR consecutive threads, so width TPR keeps each row's sum apart.
#pragma unroll
  for (int off = TPR / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, TPR);
  if (row < rows && lane == 0) y[row] = sum;
}
