/* A 2-D convolution for tests/data/t1/convolution_T1.json, written for ktune:
 * output_image (ProblemSize[1] rows of ProblemSize[0]) is the input
 * correlated with a filter_height x filter_width filter, which is read from
 * the __constant__ d_filter when use_cmem is 1 and from the filter parameter
 * otherwise. Each thread computes tile_size_x x tile_size_y outputs; with
 * use_shmem the block's input tile is staged in shared memory first
 * (use_padding pads its rows by one float against bank conflicts). */
#define image_width 4096 /* the ProblemSize of convolution_T1.json */
#define image_height 4096
#define input_width (image_width + filter_width - 1)
#define input_height (image_height + filter_height - 1)
#define tile_w (block_size_x * tile_size_x + filter_width - 1)
#define tile_h (block_size_y * tile_size_y + filter_height - 1)
#define tile_pitch (tile_w + (use_padding ? 1 : 0))

__constant__ float d_filter[filter_height * filter_width];

extern "C" __global__ void convolution_kernel(float *output_image, const float *input_image, const float *filter) {
  const float *f = use_cmem ? d_filter : filter;
  const int x0 = blockIdx.x * block_size_x * tile_size_x, y0 = blockIdx.y * block_size_y * tile_size_y;
#if use_shmem
  __shared__ float tile[tile_h * tile_pitch];
  for (int y = threadIdx.y; y < tile_h; y += block_size_y)
    for (int x = threadIdx.x; x < tile_w; x += block_size_x)
      tile[y * tile_pitch + x] =
          y0 + y < input_height && x0 + x < input_width ? input_image[(y0 + y) * input_width + x0 + x] : 0.0f;
  __syncthreads();
#endif
  for (int ty = 0; ty < tile_size_y; ty++)
    for (int tx = 0; tx < tile_size_x; tx++) {
      const int lx = threadIdx.x + tx * block_size_x, ly = threadIdx.y + ty * block_size_y;
      if (x0 + lx >= image_width || y0 + ly >= image_height) continue; /* the grid rounds up */
      float sum = 0.0f;
      for (int i = 0; i < filter_height; i++)
        for (int j = 0; j < filter_width; j++) {
#if use_shmem
          const float v = tile[(ly + i) * tile_pitch + lx + j];
#else
          const float v = input_image[(y0 + ly + i) * input_width + x0 + lx + j];
#endif
          sum += v * f[i * filter_width + j];
        }
      output_image[(y0 + ly) * image_width + x0 + lx] = sum;
    }
}
