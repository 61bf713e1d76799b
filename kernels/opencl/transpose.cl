// Transpose dst[N][M] = src[M][N], row-major f32, through a local-memory tile.
//
// A work-group moves one TILE x TILE tile: it reads rows of src (coalesced),
// and writes rows of dst (coalesced) from the tile's columns. Its TILE x ROWS
// work-items each copy TILE / ROWS elements per phase. PAD = 1 adds a column
// to the local tile so that reading a column does not hit one memory bank
// over and over (on GPUs; on a CPU it only changes the stride). A copy: every
// configuration gives exactly the same result.
//
// @autotune(TILE in [32, 8, 16, 64], ROWS in [8, 1, 2, 4, 16, 32], PAD in [1, 0])
// @where(ROWS <= TILE)
// @where(TILE * ROWS <= 1024)
// @kernel transpose(src: in tensor<f32>[M, N], dst: out tensor<f32>[N, M], m: i32 = M, n: i32 = N)
// @grid(cdiv(N, TILE), cdiv(M, TILE))
// @block(TILE, ROWS)
// @dims(M = 2048, N = 2048)
// @bytes(8 * M * N)
__kernel void transpose(__global const float *src, __global float *dst, int m, int n) {
  __local float tile[TILE][TILE + PAD];
  const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
  const int row0 = (int)get_group_id(1) * TILE, col0 = (int)get_group_id(0) * TILE;
  for (int r = ty; r < TILE; r += ROWS) {
    const int row = row0 + r, col = col0 + tx;
    if (row < m && col < n) tile[r][tx] = src[row * n + col];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  /* Row col0 + r of dst holds column col0 + r of src. */
  for (int r = ty; r < TILE; r += ROWS) {
    const int drow = col0 + r, dcol = row0 + tx;
    if (drow < n && dcol < m) dst[drow * m + dcol] = tile[tx][r];
  }
}
