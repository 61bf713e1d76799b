// @autotune(B in [16, 64])
// @kernel k(x: out tensor<f32>[N])
// @grid(cdiv(N, B))
// @block(B)
// @shared(B * 4)
// @dims(N = 1024)
__kernel void k(__global float *x, __local float *tmp) { int i = get_global_id(0); tmp[get_local_id(0)] = i; barrier(CLK_LOCAL_MEM_FENCE); x[i] = tmp[get_local_id(0)]; }
