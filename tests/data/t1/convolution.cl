/* The OpenCL twin of convolution_milo.cu for convolution_opencl_T1.json:
 * the filter is a __constant pointer parameter (OpenCL C's constant data),
 * read as d_filter when use_cmem is 1 and as filter otherwise (both hold the
 * same argument here). use_read_only and use_padding change nothing on a CPU. */
#define image_width 256 /* the ProblemSize of convolution_opencl_T1.json */
#define image_height 256
#define input_width (image_width + filter_width - 1)

__kernel void convolution_kernel(__global float *output_image, __global const float *input_image,
                                 __constant float *d_filter) {
  const int x0 = get_group_id(0) * block_size_x * tile_size_x, y0 = get_group_id(1) * block_size_y * tile_size_y;
  for (int ty = 0; ty < tile_size_y; ty++)
    for (int tx = 0; tx < tile_size_x; tx++) {
      const int x = x0 + get_local_id(0) + tx * block_size_x, y = y0 + get_local_id(1) + ty * block_size_y;
      if (x >= image_width || y >= image_height) continue; /* the grid rounds up */
      float sum = 0.0f;
      for (int i = 0; i < filter_height; i++)
        for (int j = 0; j < filter_width; j++)
          sum += input_image[(y + i) * input_width + x + j] * d_filter[i * filter_width + j];
      output_image[y * image_width + x] = sum;
    }
}
