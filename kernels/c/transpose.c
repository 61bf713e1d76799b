#include <stddef.h>

/* Tiled out-of-place transpose, out[j][i] = in[i][j]. Reading rows and
 * writing columns thrashes the cache unless the work is done in tiles that
 * fit it; TILE_R x TILE_C is the tile. The default (1 x 1) is the naive
 * loop. */

// @autotune(TILE_R in [1, 128], TILE_C in [1, 128])
// @where(TILE_R * TILE_C <= 16384)
// @kernel transpose(in: tensor<f32>[R, C], out: out tensor<f32>[C, R], rows: i32 = R, cols: i32 = C)
// @dims(R = 2048, C = 2048)
// @bytes(8 * R * C)
void transpose(const float *in, float *out, int rows, int cols) {
  for (int i0 = 0; i0 < rows; i0 += TILE_R)
    for (int j0 = 0; j0 < cols; j0 += TILE_C) {
      int i1 = i0 + TILE_R < rows ? i0 + TILE_R : rows;
      int j1 = j0 + TILE_C < cols ? j0 + TILE_C : cols;
      for (int i = i0; i < i1; i++)
        for (int j = j0; j < j1; j++) out[(size_t)j * rows + i] = in[(size_t)i * cols + j];
    }
}
