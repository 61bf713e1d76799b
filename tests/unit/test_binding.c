/* The C API a binding calls beside kt_launch (include/ktune.h, "Calling a
 * kernel on a binding's arrays"): parameters, sizes read from shapes with
 * mismatches named, scalar values, kt_launch_host on the CPU backend and on
 * OpenCL (PoCL in CI: these fail, they do not skip, without a platform),
 * and kt_signals_catch/release. */
#include "harness.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "ktune.h"

static const char *TRANSPOSE_C =
    "// @autotune(T in [1, 2])\n"
    "// @kernel tr(src: in tensor<f32>[M, N], dst: out tensor<f32>[N, M], m: i32 = M, n: i32 = N)\n"
    "// @dims(M = 4, N = 4)\n"
    "void tr(const float *src, float *dst, int m, int n) {\n"
    "  for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) dst[j * m + i] = src[i * n + j];\n"
    "}\n";

static const char *HALVES_C = "// @autotune(T in [1, 2])\n"
                              "// @kernel h(x: in tensor<i32>[N], y: out tensor<i32>[cdiv(N, 2)], k: i32 = K, "
                              "s: u8 = 3, w: i32)\n"
                              "// @dims(N = 4, K = 2)\n"
                              "void h(const int *x, int *y, int k, unsigned char s, int w) {}\n";

static kt_context *context(kt_backend_kind backend) {
  kt_options o = {0};
  o.no_db = 1;
  o.quiet = 1;
  o.backend = backend;
  o.miss_policy = KT_MISS_DEFAULT;
  kt_context *ctx = NULL;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  return ctx;
}

static kt_kernel *load(kt_context *ctx, const char *src, const char *lang) {
  kt_kernel *k = NULL;
  if (kt_kernel_load_string(ctx, "test", src, lang, NULL, &k) != KT_OK)
    kt_test_fail(__FILE__, __LINE__, "load: %s", kt_errmsg(ctx));
  return k;
}

TEST(params_describe_the_kernel_line) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = load(ctx, TRANSPOSE_C, "c");
  ASSERT_EQ(kt_kernel_num_params(k), 4);
  ASSERT_STREQ(kt_kernel_backend(k), "cpu");
  kt_param_info p;
  ASSERT_EQ(kt_kernel_param(k, 0, &p), KT_OK);
  ASSERT_STREQ(p.name, "src");
  ASSERT_EQ(p.mode, KT_PARAM_IN);
  ASSERT_STREQ(p.dtype, "f32");
  ASSERT_EQ(p.elem_size, 4);
  ASSERT_EQ(p.ndims, 2);
  ASSERT_EQ(kt_kernel_param(k, 1, &p), KT_OK);
  ASSERT_EQ(p.mode, KT_PARAM_OUT);
  ASSERT_EQ(kt_kernel_param(k, 3, &p), KT_OK);
  ASSERT_EQ(p.mode, KT_PARAM_SCALAR);
  ASSERT_EQ(p.ndims, 0);
  ASSERT_EQ(p.has_value, 1);
  ASSERT_EQ(kt_kernel_param(k, 4, &p), KT_INVALID);
  ASSERT_EQ(kt_kernel_param(k, -1, &p), KT_INVALID);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* A tensor map is neither a tensor nor a scalar the caller gives: kt_launch
 * builds it (a binding passes NULL in its slot). */
TEST(params_describe_a_tensor_map) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = NULL;
  if (kt_kernel_load_file(ctx, "kernels/cuda/gemm_wgmma.cu", NULL, &k) != KT_OK)
    kt_test_fail(__FILE__, __LINE__, "load: %s", kt_errmsg(ctx));
  ASSERT_EQ(kt_kernel_num_params(k), 8);
  kt_param_info p;
  ASSERT_EQ(kt_kernel_param(k, 1, &p), KT_OK);
  ASSERT_EQ(p.mode, KT_PARAM_IN);
  for (int i = 3; i <= 4; i++) {
    ASSERT_EQ(kt_kernel_param(k, i, &p), KT_OK);
    ASSERT_STREQ(p.name, i == 3 ? "amap" : "bmap");
    ASSERT_EQ(p.mode, KT_PARAM_TENSORMAP);
    ASSERT_STREQ(p.dtype, "bf16");
    ASSERT_EQ(p.ndims, 0);
    ASSERT_EQ(p.has_value, 0);
  }
  ASSERT_EQ(kt_kernel_param(k, 5, &p), KT_OK);
  ASSERT_EQ(p.mode, KT_PARAM_SCALAR);
  ASSERT_EQ(p.has_value, 1);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

TEST(sizes_from_shapes_bind_and_check) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = load(ctx, TRANSPOSE_C, "c");
  int ranks[4] = {2, 2, 0, 0};
  int64_t a[2] = {3, 5}, b[2] = {5, 3};
  const int64_t *shapes[4] = {a, b, NULL, NULL};
  int64_t sizes[2] = {0, 0};
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, sizes), KT_OK);
  ASSERT_EQ(sizes[0], 3); /* M */
  ASSERT_EQ(sizes[1], 5); /* N */

  int64_t wrong[2] = {3, 5};
  shapes[1] = wrong;
  sizes[0] = sizes[1] = 0;
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, sizes), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx),
                  "kernel tr: parameter dst: dimension 0 is 3, expected 5 (shape [N, M] with N = 5 from src's "
                  "dimension 1)");

  ranks[0] = 1;
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, sizes), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "parameter src: expected 2 dimensions [M, N], got 1");

  ranks[0] = 2;
  int64_t empty[2] = {0, 5};
  shapes[0] = empty;
  shapes[1] = b;
  sizes[0] = sizes[1] = 0;
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, sizes), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "parameter src: dimension 0 is 0; sizes must be positive");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

TEST(sizes_no_shape_gives_and_computed_dimensions) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = load(ctx, HALVES_C, "c");
  int ranks[5] = {1, 1, 0, 0, 0};
  int64_t x[1] = {9}, y[1] = {5};
  const int64_t *shapes[5] = {x, y, NULL, NULL, NULL};
  int64_t sizes[2] = {0, 0}; /* N, K */
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, sizes), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "runtime size K is no tensor's dimension of its own");
  sizes[0] = 0, sizes[1] = 7; /* K given */
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, sizes), KT_OK);
  ASSERT_EQ(sizes[0], 9);
  ASSERT_EQ(sizes[1], 7);
  int64_t y_wrong[1] = {4};
  shapes[1] = y_wrong;
  sizes[0] = 0;
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, sizes), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "parameter y: dimension 0 is 4, expected 5 (shape [cdiv(N, 2)] with N = 9 from x's");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

TEST(scalar_values_in_the_parameters_type) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = load(ctx, HALVES_C, "c");
  int64_t sizes[2] = {9, 7};
  int32_t kv = 0;
  ASSERT_EQ(kt_kernel_scalar_value(k, 2, sizes, &kv), KT_OK);
  ASSERT_EQ(kv, 7);
  uint8_t s = 0;
  ASSERT_EQ(kt_kernel_scalar_value(k, 3, sizes, &s), KT_OK);
  ASSERT_EQ(s, 3);
  kt_param_info p;
  ASSERT_EQ(kt_kernel_param(k, 4, &p), KT_OK);
  ASSERT_EQ(p.has_value, 0);
  ASSERT_EQ(kt_kernel_scalar_value(k, 4, sizes, &kv), KT_NOTFOUND);
  ASSERT_CONTAINS(kt_errmsg(ctx), "scalar w has no expression");
  ASSERT_EQ(kt_kernel_scalar_value(k, 0, sizes, &kv), KT_INVALID);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

static void check_transposed(const float *src, const float *dst, int m, int n) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) ASSERT_EQ(dst[j * m + i], src[i * n + j]);
}

TEST(launch_host_on_the_cpu_backend) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = load(ctx, TRANSPOSE_C, "c");
  float src[15], dst[15] = {0};
  for (int i = 0; i < 15; i++) src[i] = (float)i;
  int m = 3, n = 5;
  int64_t sizes[2] = {3, 5};
  void *args[4] = {src, dst, &m, &n};
  ASSERT_EQ(kt_launch_host(k, sizes, args), KT_OK);
  check_transposed(src, dst, 3, 5);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

static const char *TRANSPOSE_CL =
    "// @autotune(T in [1, 2])\n"
    "// @kernel tr(src: in tensor<f32>[M, N], dst: out tensor<f32>[N, M], m: i32 = M, n: i32 = N)\n"
    "// @grid(M)\n"
    "// @dims(M = 4, N = 4)\n"
    "__kernel void tr(__global const float *src, __global float *dst, int m, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  for (int j = 0; j < n; j++) dst[j * m + i] = src[i * n + j];\n"
    "}\n";

TEST(launch_host_copies_through_opencl_buffers) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = load(ctx, TRANSPOSE_CL, "cl");
  ASSERT_STREQ(kt_kernel_backend(k), "opencl");
  float src[28], dst[28];
  for (int i = 0; i < 28; i++) src[i] = (float)i * 0.5f, dst[i] = -1;
  int m = 4, n = 7;
  int64_t sizes[2] = {4, 7};
  void *args[4] = {src, dst, &m, &n};
  int rc = kt_launch_host(k, sizes, args);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_launch_host: %s", kt_errmsg(ctx));
  check_transposed(src, dst, 4, 7);
  for (int i = 0; i < 28; i++) ASSERT_EQ(src[i], (float)i * 0.5f); /* an input is never copied back */
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

static volatile sig_atomic_t callers_handler_ran;
static void callers_handler(int sig) { callers_handler_ran = sig; }

static const char *TWICE_CU = "// @autotune(B in [32, 64])\n"
                              "// @kernel twice(x: inout tensor<f32>[N])\n"
                              "// @grid(cdiv(N, B))\n"
                              "// @block(B)\n"
                              "// @dims(N = 64)\n"
                              "extern \"C\" __global__ void twice(float *x) { x[threadIdx.x] *= 2; }\n";

/* A binding takes host arrays on the CPU and OpenCL backends and CUDA device
 * arrays on CUDA: the backend's table says which, loading needs no device. */
TEST(memory_kind_follows_the_backend) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  struct {
    const char *src, *lang, *backend;
    kt_memory_kind memory;
  } cases[] = {{TRANSPOSE_C, "c", "cpu", KT_MEMORY_HOST},
               {TRANSPOSE_CL, "cl", "opencl", KT_MEMORY_HOST},
               {TWICE_CU, "cu", "cuda", KT_MEMORY_CUDA}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kt_kernel *k = load(ctx, cases[i].src, cases[i].lang);
    ASSERT_STREQ(kt_kernel_backend(k), cases[i].backend);
    ASSERT_EQ(kt_kernel_memory(k), cases[i].memory);
    kt_kernel_destroy(k);
  }
  kt_context_destroy(ctx);
}

TEST(signals_interrupt_then_reach_the_callers_handler) {
  signal(SIGINT, callers_handler);
  ASSERT_EQ(kt_signals_catch(), KT_OK);
  ASSERT_EQ(kt_signals_catch(), KT_OK); /* nested */
  raise(SIGINT);
  ASSERT_EQ(callers_handler_ran, 0);  /* ktune's handler, not the caller's */
  ASSERT_EQ(kt_signals_release(), 0); /* inner: nothing restored yet */
  ASSERT_EQ(callers_handler_ran, 0);
  ASSERT_EQ(kt_signals_release(), SIGINT);
  ASSERT_EQ(callers_handler_ran, SIGINT); /* raised again, to the caller's handler */
  callers_handler_ran = 0;
  raise(SIGINT);
  ASSERT_EQ(callers_handler_ran, SIGINT); /* the caller's handler is back */
  ASSERT_EQ(kt_signals_release(), 0);     /* unbalanced: harmless */
  signal(SIGINT, SIG_DFL);
}

/* The sizes a binding checks its mirrored structs against. */
TEST(struct_sizes_for_bindings) {
  ASSERT_EQ(kt_struct_size("kt_options"), sizeof(kt_options));
  ASSERT_EQ(kt_struct_size("kt_tune_options"), sizeof(kt_tune_options));
  ASSERT_EQ(kt_struct_size("kt_labels"), sizeof(kt_labels));
  ASSERT_EQ(kt_struct_size("kt_cache_filter"), sizeof(kt_cache_filter));
  ASSERT_EQ(kt_struct_size("kt_param_info"), sizeof(kt_param_info));
  ASSERT_EQ(kt_struct_size("kt_nothing"), 0);
  ASSERT_EQ(kt_struct_size(NULL), 0);
}

static const char *MATMUL_C = "// @autotune(T in [1, 2])\n"
                              "// @kernel mm(a: tensor<f32>[M, K], b: tensor<f32>[K, N], c: out tensor<f32>[M, N])\n"
                              "// @dims(M = 4, N = 4, K = 4)\n"
                              "void mm(const float *a, const float *b, float *c) {}\n";

/* Sizes by name come out in kt_launch's order (M, K, N: the order of first
 * use), whatever order they are given in; wrong names are told. */
TEST(sizes_by_name_in_the_launch_order) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = load(ctx, MATMUL_C, "c");
  ASSERT_STREQ(kt_kernel_size_name(k, 1), "K");
  const char *names[3] = {"M", "N", "K"};
  const int64_t values[3] = {64, 16, 32};
  int64_t sizes[3] = {0, 0, 0};
  ASSERT_EQ(kt_kernel_sizes_by_name(k, 3, names, values, sizes), KT_OK);
  ASSERT_EQ(sizes[0], 64); /* M */
  ASSERT_EQ(sizes[1], 32); /* K */
  ASSERT_EQ(sizes[2], 16); /* N */
  ASSERT_EQ(kt_kernel_sizes_by_name(k, 2, names, values, sizes), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "kernel mm: size K: not given; its runtime sizes are M, K, N");
  const char *twice[3] = {"M", "M", "K"};
  ASSERT_EQ(kt_kernel_sizes_by_name(k, 3, twice, values, sizes), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "size M: given twice");
  const char *typo[3] = {"M", "n", "K"};
  ASSERT_EQ(kt_kernel_sizes_by_name(k, 3, typo, values, sizes), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "size n: no such runtime size");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* Sizes given as M, N, K where the launch order is M, K, N: the shapes
 * contradict them, and the message says they are the shapes' reordered. */
TEST(sizes_in_a_swapped_order_are_caught_by_the_shapes) {
  kt_context *ctx = context(KT_BACKEND_AUTO);
  kt_kernel *k = load(ctx, MATMUL_C, "c");
  int ranks[3] = {2, 2, 2};
  int64_t a[2] = {64, 32}, b[2] = {32, 16}, c[2] = {64, 16};
  const int64_t *shapes[3] = {a, b, c};
  int64_t swapped[3] = {64, 16, 32}; /* M, N, K */
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, swapped), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "the sizes given (M=64, K=16, N=32) are the shapes' (M=64, K=32, N=16) in another "
                                  "order: kt_launch takes them in kt_kernel_size_name order (M, K, N)");
  int64_t right[3] = {64, 32, 16};
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, right), KT_OK);
  int64_t wrong[3] = {64, 32, 17}; /* not a reordering: no such hint */
  ASSERT_EQ(kt_kernel_sizes_from_shapes(k, ranks, shapes, wrong), KT_INVALID);
  ASSERT_TRUE(strstr(kt_errmsg(ctx), "another order") == NULL);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}
