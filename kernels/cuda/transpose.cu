// out = in transposed, for a rows x cols matrix of floats (row-major both).
// A TILE x TILE tile goes through shared memory so that reads and writes
// are both coalesced; blocks are TILE x ROWS threads, each thread moving
// TILE / ROWS elements. PAD = 1 shifts each shared row by one bank to avoid
// conflicts on the transposed read.

// @autotune(TILE in [32, 16, 64], ROWS in [8, 1, 2, 4, 16, 32], PAD in [1, 0])
// @where(ROWS <= TILE && TILE * ROWS <= 1024 && TILE * ROWS >= 64)
// @kernel transpose(src: in tensor<f32>[R, C], dst: out tensor<f32>[C, R], rows: i32 = R, cols: i32 = C)
// @grid(cdiv(C, TILE), cdiv(R, TILE))
// @block(TILE, ROWS)
// @bytes(8 * R * C)
// @dims(R = 8192, C = 8192)
extern "C" __global__ void __launch_bounds__(TILE * ROWS)
    transpose(const float *src, float *dst, int rows, int cols) {
  __shared__ float tile[TILE][TILE + PAD];
  int c = blockIdx.x * TILE + threadIdx.x;
  int r0 = blockIdx.y * TILE;
#pragma unroll
  for (int k = threadIdx.y; k < TILE; k += ROWS)
    if (r0 + k < rows && c < cols) tile[k][threadIdx.x] = src[(long long)(r0 + k) * cols + c];
  __syncthreads();
  // Now block (x, y) writes the tile at (y, x) of the output.
  int r = blockIdx.y * TILE + threadIdx.x;
  int c0 = blockIdx.x * TILE;
#pragma unroll
  for (int k = threadIdx.y; k < TILE; k += ROWS)
    if (c0 + k < cols && r < rows) dst[(long long)(c0 + k) * rows + r] = tile[threadIdx.x][k];
}
