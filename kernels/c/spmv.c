/* Sparse matrix-vector product y = A x, A in CSR (row_ptr, col, val). Each
 * row is summed in LANES independent partial sums, as a GPU kernel gives a
 * row LANES threads: many lanes pay off on long rows (independent adds
 * instead of one chain), and cost a LANES-wide zeroing and reduction on
 * short ones. Which wins depends on the matrix, so tune on the real one:
 *
 *   ktune tune kernels/c/spmv.c --input row_ptr=rp.npy --input col=col.npy \
 *       --input val=val.npy --input x=x.npy
 *
 * Without files the matrix is invented: row_ptr = iota makes one element per
 * row (a permuted diagonal, since the columns are random), where one lane
 * wins. */
// @autotune(LANES in [1, 4, 16, 64])
// @kernel spmv(row_ptr: tensor<i32>[ROWS + 1] = iota, col: tensor<i32>[NNZ] = random(0, COLS), val: tensor<f32>[NNZ], x: tensor<f32>[COLS], y: out tensor<f32>[ROWS], rows: i32 = ROWS)
// @dims(ROWS = 1 << 16, NNZ = ROWS, COLS = ROWS)
// @verify(atol = 1e-3, rtol = 1e-4)
// @flops(2 * NNZ)
void spmv(const int *row_ptr, const int *col, const float *val, const float *x, float *y, int rows) {
  for (int r = 0; r < rows; r++) {
    int j = row_ptr[r], end = row_ptr[r + 1];
    float acc[LANES] = {0};
    for (; j + LANES <= end; j += LANES)
      for (int l = 0; l < LANES; l++) acc[l] += val[j + l] * x[col[j + l]];
    for (int l = 0; j < end; j++, l++) acc[l] += val[j] * x[col[j]];
    float sum = 0;
    for (int l = 0; l < LANES; l++) sum += acc[l];
    y[r] = sum;
  }
}
