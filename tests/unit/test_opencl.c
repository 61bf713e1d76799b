/* The OpenCL backend, called in-process through the kt__be_* wrappers on the
 * first OpenCL device (PoCL's CPU device in CI). These need a working OpenCL
 * platform: without one they fail, they do not skip. */
#include "backend/backend.h"
#include "backend/opencl_api.h"
#include "harness.h"
#include "lang/diag.h"
#include "verify/verify.h"

#include <inttypes.h>
#include <math.h>

static const kt__backend *be = &kt__backend_opencl;

/* An open device and a one-kernel "file" built from a string. */
typedef struct fixture {
  void *state;
  kt__device_info info;
  kt__file file;
  kt__kernel_decl decl;
  kt__errbuf eb;
} fixture;

static void fx_open(fixture *f) {
  memset(f, 0, sizeof *f);
  int rc = kt__be_open(be, 0, &f->state, &f->info, &f->eb);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "open: %s", f->eb.msg);
}

static void fx_close(fixture *f) {
  kt__be_close(be, f->state);
  kt__source_free(&f->file.src);
}

/* Loads kernel NAME of SOURCE with -DNAMES[i]=VALUES[i]. */
static kt__status fx_load(fixture *f, const char *source, const char *name, const char *const *names,
                          const int64_t *values, int n, void **fn) {
  kt__source_free(&f->file.src);
  kt__source_from_string("test.cl", source, &f->file.src);
  f->file.lang = KT__LANG_OPENCL;
  f->decl.name = (char *)name;
  kt__build b = {.file = &f->file,
                 .decl = &f->decl,
                 .names = names,
                 .values = values,
                 .n = n,
                 .device = &f->info,
                 .timeout_s = 60};
  kt__artifact a;
  ASSERT_EQ(kt__be_compile(be, &b, &a, &f->eb), KT__ST_OK); /* compile happens at load */
  ASSERT_TRUE(a.path == NULL);
  return kt__be_load(be, f->state, &b, &a, fn, &f->eb);
}

static void *fx_buffer(fixture *f, const float *host, size_t count) {
  void *buf = NULL;
  ASSERT_EQ(kt__be_alloc(be, f->state, count * sizeof(float), &buf, &f->eb), KT_OK);
  if (host) ASSERT_EQ(kt__be_upload(be, f->state, buf, host, count * sizeof(float), &f->eb), KT_OK);
  return buf;
}

static kt__arg tensor_arg(void *buf, size_t bytes) { return (kt__arg){.buf = buf, .size = bytes, .is_tensor = true}; }

static kt__arg int_arg(int32_t v) {
  kt__arg a = {.size = sizeof v};
  memcpy(a.scalar, &v, sizeof v);
  return a;
}

static kt__launch launch_1d(const kt__arg *args, int nargs, uint64_t grid, uint64_t block) {
  return (kt__launch){.args = args, .nargs = nargs, .grid = {grid, 1, 1}, .block = {block, 1, 1}};
}

static const char scale_src[] = "__kernel void scale(__global const float *x, __global float *y, int n) {\n"
                                "  int i = get_global_id(0);\n"
                                "  if (i < n) y[i] = x[i] * FACTOR;\n"
                                "}\n";

TEST(error_names) {
  ASSERT_STREQ(kt__cl_error_name(0), "CL_SUCCESS");
  ASSERT_STREQ(kt__cl_error_name(-5), "CL_OUT_OF_RESOURCES");
  ASSERT_STREQ(kt__cl_error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
  ASSERT_STREQ(kt__cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  ASSERT_STREQ(kt__cl_error_name(-999), "CL_UNKNOWN_ERROR");
#ifdef KTUNE_HAVE_CL_H
  ASSERT_EQ(CL_INVALID_WORK_GROUP_SIZE, -54);
  ASSERT_EQ(CL_INVALID_GLOBAL_WORK_SIZE, -63);
  ASSERT_EQ(CL_INVALID_COMPILER_OPTIONS, -66);
#endif
}

TEST(list_devices) {
  kt__device_info devs[16];
  int count = 0;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__be_list_devices(be, devs, 16, &count, &eb), KT_OK);
  ASSERT_GE(count, 1);
  for (int i = 0; i < count; i++) {
    ASSERT_STREQ(devs[i].backend, "opencl");
    ASSERT_EQ(devs[i].index, i);
    ASSERT_TRUE(devs[i].name[0] != '\0');
    ASSERT_CONTAINS(devs[i].toolchain_version, "OpenCL C");
    ASSERT_CONTAINS(devs[i].driver_version, "OpenCL");
    ASSERT_GE(devs[i].max_threads_per_block, 1);
    ASSERT_GE(devs[i].compute_units, 1);
    ASSERT_GE((double)devs[i].memory_bytes, 1 << 20);
    ASSERT_GE((double)devs[i].max_shared_bytes, 1024);
  }
  ASSERT_EQ(kt__be_list_devices(be, devs, 0, &count, &eb), KT_OK); /* max 0: nothing written */
  ASSERT_EQ(count, 0);
}

TEST(open_bad_index) {
  void *state = NULL;
  kt__device_info info;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__be_open(be, 999, &state, &info, &eb), KT_NOTFOUND);
  ASSERT_TRUE(state == NULL);
  ASSERT_CONTAINS(eb.msg, "no device 999");
}

TEST(open_fills_info) {
  fixture f;
  fx_open(&f);
  ASSERT_STREQ(f.info.backend, "opencl");
  ASSERT_EQ(f.info.index, 0);
  ASSERT_TRUE(f.info.name[0] != '\0');
  ASSERT_CONTAINS(f.info.arch, "OpenCL");
  /* A CPU device (PoCL) runs on the host's cores; a GPU does not. */
  ASSERT_EQ(f.info.host_cpu, strstr(f.info.name, "pthread") != NULL || strstr(f.info.name, "cpu") != NULL);
  fx_close(&f);
}

TEST(memory_round_trip) {
  fixture f;
  fx_open(&f);
  float in[1000], out[1000];
  for (int i = 0; i < 1000; i++) in[i] = (float)i * 0.5f - 7.0f, out[i] = -1;
  void *buf = fx_buffer(&f, in, 1000);
  ASSERT_EQ(kt__be_download(be, f.state, out, buf, sizeof out, &f.eb), KT_OK);
  ASSERT_EQ(memcmp(in, out, sizeof in), 0);
  kt__be_release(be, f.state, buf);
  void *empty = NULL;
  ASSERT_EQ(kt__be_alloc(be, f.state, 0, &empty, &f.eb), KT_OK); /* empty tensors still get a handle */
  ASSERT_TRUE(empty != NULL);
  kt__be_release(be, f.state, empty);
  fx_close(&f);
}

/* Runs scale with FACTOR=factor over n elements, block BLOCK; checks y. */
static void check_scale(fixture *f, int64_t factor, int n, uint64_t block) {
  static const char *const names[] = {"FACTOR"};
  void *fn = NULL;
  ASSERT_EQ(fx_load(f, scale_src, "scale", names, &factor, 1, &fn), KT__ST_OK);
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  for (int i = 0; i < n; i++) x[i] = (float)(i % 17) - 3.0f;
  void *bx = fx_buffer(f, x, (size_t)n), *by = fx_buffer(f, NULL, (size_t)n);
  kt__arg args[] = {tensor_arg(bx, (size_t)n * 4), tensor_arg(by, (size_t)n * 4), int_arg(n)};
  kt__launch l = launch_1d(args, 3, ((uint64_t)n + block - 1) / block, block);
  ASSERT_EQ(kt__be_check(be, f->state, fn, &l, &f->eb), KT__ST_OK);
  kt__status st = kt__be_run(be, f->state, fn, &l, &f->eb);
  if (st != KT__ST_OK) kt_test_fail(__FILE__, __LINE__, "run: %s", f->eb.msg);
  ASSERT_EQ(kt__be_download(be, f->state, y, by, (size_t)n * 4, &f->eb), KT_OK);
  for (int i = 0; i < n; i++) ASSERT_NEAR(y[i], x[i] * (float)factor, 0);
  kt__be_release(be, f->state, bx);
  kt__be_release(be, f->state, by);
  kt__be_unload(be, f->state, fn);
  free(x);
  free(y);
}

TEST(load_and_run) {
  fixture f;
  fx_open(&f);
  check_scale(&f, 3, 1000, 64);
  check_scale(&f, -2, 4096, 128); /* a second option string: a second program */
  check_scale(&f, 3, 77, 32);     /* the first one again, from the cache */
  fx_close(&f);
}

TEST(launch_2d_global_is_grid_times_block) {
  static const char src[] = "__kernel void coords(__global int *out, int w) {\n"
                            "  int x = get_global_id(0), y = get_global_id(1);\n"
                            "  out[y * w + x] = (int)(get_group_id(0) * 1000 + get_local_id(1));\n"
                            "}\n";
  fixture f;
  fx_open(&f);
  void *fn = NULL;
  ASSERT_EQ(fx_load(&f, src, "coords", NULL, NULL, 0, &fn), KT__ST_OK);
  enum { W = 32, H = 12 };
  void *buf = fx_buffer(&f, NULL, W * H);
  kt__arg args[] = {tensor_arg(buf, W * H * 4), int_arg(W)};
  kt__launch l = {.args = args, .nargs = 2, .grid = {4, 3, 1}, .block = {8, 4, 1}};
  ASSERT_EQ(kt__be_run(be, f.state, fn, &l, &f.eb), KT__ST_OK);
  int out[W * H];
  ASSERT_EQ(kt__be_download(be, f.state, out, buf, sizeof out, &f.eb), KT_OK);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) ASSERT_EQ(out[y * W + x], (x / 8) * 1000 + y % 4);
  kt__be_release(be, f.state, buf);
  kt__be_unload(be, f.state, fn);
  fx_close(&f);
}

TEST(build_failure_is_compile_with_log) {
  fixture f;
  fx_open(&f);
  void *fn = NULL;
  /* FACTOR undefined: the log names it. */
  kt__status st = fx_load(&f, scale_src, "scale", NULL, NULL, 0, &fn);
  ASSERT_EQ(st, KT__ST_COMPILE);
  ASSERT_TRUE(fn == NULL);
  ASSERT_CONTAINS(f.eb.msg, "CL_BUILD_PROGRAM_FAILURE");
  ASSERT_CONTAINS(f.eb.msg, "FACTOR");
  /* The failure is cached and reported again, identically. */
  char first[sizeof f.eb.msg];
  memcpy(first, f.eb.msg, sizeof first);
  ASSERT_EQ(fx_load(&f, scale_src, "scale", NULL, NULL, 0, &fn), KT__ST_COMPILE);
  ASSERT_STREQ(f.eb.msg, first);
  fx_close(&f);
}

TEST(missing_kernel_is_compile) {
  static const char *const names[] = {"FACTOR"};
  static const int64_t one = 1;
  fixture f;
  fx_open(&f);
  void *fn = NULL;
  ASSERT_EQ(fx_load(&f, scale_src, "nosuch", names, &one, 1, &fn), KT__ST_COMPILE);
  ASSERT_CONTAINS(f.eb.msg, "CL_INVALID_KERNEL_NAME");
  fx_close(&f);
}

TEST(block_beyond_limit_is_constraint) {
  static const char *const names[] = {"FACTOR"};
  static const int64_t one = 1;
  fixture f;
  fx_open(&f);
  void *fn = NULL;
  ASSERT_EQ(fx_load(&f, scale_src, "scale", names, &one, 1, &fn), KT__ST_OK);
  void *bx = fx_buffer(&f, NULL, 1), *by = fx_buffer(&f, NULL, 1);
  kt__arg args[] = {tensor_arg(bx, 4), tensor_arg(by, 4), int_arg(0)};
  uint64_t big = (uint64_t)f.info.max_threads_per_block * 2;
  kt__launch l = launch_1d(args, 3, 1, big);
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l, &f.eb), KT__ST_CONSTRAINT);
  ASSERT_TRUE(strstr(f.eb.msg, "work-group") || strstr(f.eb.msg, "block dimension"));
  /* Launched anyway: a status from the driver, never an abort. */
  ASSERT_EQ(kt__be_run(be, f.state, fn, &l, &f.eb), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(f.eb.msg, "CL_INVALID_WORK");
  /* Within the per-dimension limit but over the group limit in total. */
  kt__launch l2 = {.args = args, .nargs = 3, .grid = {1, 1, 1}, .block = {64, 64, 64}};
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l2, &f.eb), KT__ST_CONSTRAINT);
  kt__be_release(be, f.state, bx);
  kt__be_release(be, f.state, by);
  kt__be_unload(be, f.state, fn);
  fx_close(&f);
}

/* The global size and the total of work-items must fit the device's size_t;
 * an empty extent is refused; each before any launch, naming the limit. */
TEST(global_size_beyond_size_t_is_constraint) {
  static const char *const names[] = {"FACTOR"};
  static const int64_t one = 1;
  fixture f;
  fx_open(&f);
  void *fn = NULL;
  ASSERT_EQ(fx_load(&f, scale_src, "scale", names, &one, 1, &fn), KT__ST_OK);
  void *bx = fx_buffer(&f, NULL, 1), *by = fx_buffer(&f, NULL, 1);
  kt__arg args[] = {tensor_arg(bx, 4), tensor_arg(by, 4), int_arg(0)};
  /* 2^40 x 2^40 work-items: each dimension fits 64 bits, the total does not. */
  kt__launch l = {.args = args, .nargs = 3, .grid = {(uint64_t)1 << 40, (uint64_t)1 << 40, 1}, .block = {1, 1, 1}};
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l, &f.eb), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(f.eb.msg, "work-items in total");
  ASSERT_CONTAINS(f.eb.msg, "CL_DEVICE_ADDRESS_BITS");
  /* One dimension alone past 2^64. */
  l = (kt__launch){.args = args, .nargs = 3, .grid = {(uint64_t)1 << 60, 1, 1}, .block = {32, 1, 1}};
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l, &f.eb), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(f.eb.msg, "global size in dimension 0 (grid 1152921504606846976 x block 32)");
  l = (kt__launch){.args = args, .nargs = 3, .grid = {4, 0, 1}, .block = {1, 1, 1}};
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l, &f.eb), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(f.eb.msg, "empty launch");
  /* Each dimension within CL_DEVICE_MAX_WORK_ITEM_SIZES, the group past
   * CL_DEVICE_MAX_WORK_GROUP_SIZE. */
  l = (kt__launch){.args = args, .nargs = 3, .grid = {1, 1, 1}, .block = {64, 64, 64}};
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l, &f.eb), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(f.eb.msg, "CL_DEVICE_MAX_WORK_GROUP_SIZE");
  l = launch_1d(args, 3, 16, 64);
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l, &f.eb), KT__ST_OK);
  kt__be_release(be, f.state, bx);
  kt__be_release(be, f.state, by);
  kt__be_unload(be, f.state, fn);
  fx_close(&f);
}

/* Reverses each work-group's slice through dynamic local memory. */
static const char reverse_src[] =
    "__kernel void rev(__global const float *x, __global float *y, __local float *tmp) {\n"
    "  size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0) * n;\n"
    "  tmp[l] = x[g + l];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  y[g + l] = tmp[n - 1 - l];\n"
    "}\n";

TEST(shared_bytes_go_to_trailing_local_parameter) {
  fixture f;
  fx_open(&f);
  void *fn = NULL;
  ASSERT_EQ(fx_load(&f, reverse_src, "rev", NULL, NULL, 0, &fn), KT__ST_OK);
  enum { N = 256, B = 64 };
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  void *bx = fx_buffer(&f, x, N), *by = fx_buffer(&f, NULL, N);
  kt__arg args[] = {tensor_arg(bx, sizeof x), tensor_arg(by, sizeof y)};
  kt__launch l = launch_1d(args, 2, N / B, B);
  l.shared_bytes = B * sizeof(float);
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l, &f.eb), KT__ST_OK);
  ASSERT_EQ(kt__be_run(be, f.state, fn, &l, &f.eb), KT__ST_OK);
  ASSERT_EQ(kt__be_download(be, f.state, y, by, sizeof y, &f.eb), KT_OK);
  for (int i = 0; i < N; i++) ASSERT_EQ(y[i], (i / B) * B + (B - 1 - i % B));
  /* More local memory than the device has: refused before launch. */
  l.shared_bytes = f.info.max_shared_bytes + 4;
  ASSERT_EQ(kt__be_check(be, f.state, fn, &l, &f.eb), KT__ST_CONSTRAINT);
  ASSERT_CONTAINS(f.eb.msg, "local memory");
  /* No @shared: the parameter count no longer matches @kernel. */
  l.shared_bytes = 0;
  ASSERT_EQ(kt__be_run(be, f.state, fn, &l, &f.eb), KT__ST_RUNTIME);
  ASSERT_CONTAINS(f.eb.msg, "3 parameters");
  kt__be_release(be, f.state, bx);
  kt__be_release(be, f.state, by);
  kt__be_unload(be, f.state, fn);
  fx_close(&f);
}

TEST(timing_is_positive_and_grows_with_launches) {
  static const char src[] = "__kernel void spin(__global float *y, int iters) {\n"
                            "  float v = y[get_global_id(0)];\n"
                            "  for (int i = 0; i < iters; i++) v = v * 0.999f + 0.5f;\n"
                            "  y[get_global_id(0)] = v;\n"
                            "}\n";
  fixture f;
  fx_open(&f);
  void *fn = NULL;
  ASSERT_EQ(fx_load(&f, src, "spin", NULL, NULL, 0, &fn), KT__ST_OK);
  void *buf = fx_buffer(&f, NULL, 4096);
  kt__arg args[] = {tensor_arg(buf, 4096 * 4), int_arg(2000)};
  kt__launch l = launch_1d(args, 2, 64, 64);
  /* The fastest of a few single launches, so that a busy machine delaying
   * one of them does not make it look as long as eight. */
  double one = 1e9, many = 0, t = 0;
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(kt__be_time(be, f.state, fn, &l, 1, KT_TIMING_EVENTS, false, &t, NULL, &f.eb), KT__ST_OK);
    ASSERT_TRUE(t > 0);
    one = t < one ? t : one;
  }
  ASSERT_EQ(kt__be_time(be, f.state, fn, &l, 8, KT_TIMING_EVENTS, false, &many, NULL, &f.eb), KT__ST_OK);
  ASSERT_TRUE(many > one * 2); /* eight launches take clearly longer than one */
  ASSERT_TRUE(many < 60);
  ASSERT_EQ(kt__be_time(be, f.state, fn, &l, 0, KT_TIMING_EVENTS, false, &one, NULL, &f.eb), KT__ST_RUNTIME);
  kt__be_flush_cache(be, f.state); /* must not disturb the next run */
  ASSERT_EQ(kt__be_run(be, f.state, fn, &l, &f.eb), KT__ST_OK);
  kt__be_release(be, f.state, buf);
  kt__be_unload(be, f.state, fn);
  fx_close(&f);
}

TEST(prebuild_fills_the_cache_on_threads) {
  static const char *const names[] = {"FACTOR"};
  static const int64_t factors[] = {2, 3, 5, 3};
  fixture f;
  fx_open(&f);
  kt__source_from_string("test.cl", scale_src, &f.file.src);
  f.decl.name = "scale";
  /* Four builds (one repeated) and one without FACTOR, which fails. */
  kt__build b[5];
  for (int i = 0; i < 5; i++)
    b[i] = (kt__build){.file = &f.file,
                       .decl = &f.decl,
                       .names = names,
                       .values = &factors[i % 4],
                       .n = i < 4,
                       .device = &f.info,
                       .timeout_s = 60};
  kt__be_prebuild(be, f.state, b, 5);
  check_scale(&f, 2, 300, 64);
  check_scale(&f, 5, 300, 64);
  check_scale(&f, 3, 300, 64);
  kt__artifact a = {0};
  void *fn = NULL;
  ASSERT_EQ(kt__be_load(be, f.state, &b[4], &a, &fn, &f.eb), KT__ST_COMPILE);
  ASSERT_CONTAINS(f.eb.msg, "FACTOR");
  kt__be_prebuild(be, f.state, b, 0); /* nothing to do */
  fx_close(&f);
}

/* --- the comparison on the device against the host's -------------------- */

/* Element I of BUF (type T) set to V, as kt__fill would store it. */
static void put(kt__dtype t, void *buf, uint64_t i, double v) {
  switch (t) {
  case KT__DT_F16: ((uint16_t *)buf)[i] = kt__f32_to_f16((float)v); break;
  case KT__DT_BF16: ((uint16_t *)buf)[i] = kt__f32_to_bf16((float)v); break;
  case KT__DT_F32: ((float *)buf)[i] = (float)v; break;
  case KT__DT_F64: ((double *)buf)[i] = v; break;
  case KT__DT_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
  case KT__DT_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
  case KT__DT_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
  case KT__DT_U32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
  case KT__DT_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
  case KT__DT_U64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
  default: break;
  }
}

static uint64_t lcg(uint64_t *s) { return (*s = *s * 6364136223846793005ull + 1442695040888963407ull) >> 11; }

/* WANT random, GOT near it: equal, at the tolerance's edge on either side
 * (the rounding of atol + rtol * |want| decides), NaN and infinities on
 * either side, the poison, denormals, large integers. */
static void make_case(kt__dtype t, void *got, void *want, uint64_t n, double atol, double rtol, uint64_t seed) {
  uint64_t s = seed;
  bool fl = kt__dtype_is_float(t);
  for (uint64_t i = 0; i < n; i++) {
    double w = fl ? (double)(int64_t)(lcg(&s) % 2000001 - 1000000) / 1000.0 : (double)(lcg(&s) % 100);
    put(t, want, i, w);
    w = kt__element(t, want, i);
    double tol = atol + rtol * fabs(w), g = w;
    switch (lcg(&s) % 12) {
    case 0: g = w; break;
    case 1: g = w + tol; break;
    case 2: g = w - tol; break;
    case 3: g = w + tol * (1 + 1e-7); break;
    case 4: g = w + nextafter(tol, 0); break;
    case 5: g = fl ? NAN : w + 1; break;
    case 6: g = fl ? INFINITY : w; break;
    case 7: g = w + 3; break;
    default: g = w; break;
    }
    put(t, got, i, g);
    if (i % 97 == 0 && fl) put(t, want, i, (i / 97) % 2 ? NAN : -INFINITY);
    if (i % 89 == 0) kt__poison(t, (char *)got + i * kt__dtype_size(t), 1);
  }
  if (t == KT__DT_F32 && n > 4) { /* denormals: a device that flushes them calls these equal */
    ((float *)got)[3] = 1e-40f, ((float *)want)[3] = 0;
    ((float *)got)[4] = 2e-45f, ((float *)want)[4] = 1e-45f;
  }
  if (t == KT__DT_I64 && n > 2) ((int64_t *)got)[2] = (1ll << 60) + 1, ((int64_t *)want)[2] = 1ll << 60;
  if (t == KT__DT_U64 && n > 2) ((uint64_t *)got)[2] = UINT64_MAX, ((uint64_t *)want)[2] = 0;
}

static bool same_double(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* Both comparisons of one case: the same count, first index and values. */
static void compare_both(fixture *f, kt__dtype t, uint64_t n, double atol, double rtol, uint64_t seed) {
  size_t bytes = (size_t)n * kt__dtype_size(t);
  void *got = kt__xcalloc(bytes ? bytes : 1, 1), *want = kt__xcalloc(bytes ? bytes : 1, 1);
  make_case(t, got, want, n, atol, rtol, seed);
  kt__mismatch host;
  kt__compare(t, got, want, n, atol, rtol, &host);
  void *dg = NULL, *dw = NULL;
  ASSERT_EQ(kt__be_alloc(be, f->state, bytes, &dg, &f->eb), KT_OK);
  ASSERT_EQ(kt__be_alloc(be, f->state, bytes, &dw, &f->eb), KT_OK);
  ASSERT_EQ(kt__be_upload(be, f->state, dg, got, bytes, &f->eb), KT_OK);
  ASSERT_EQ(kt__be_upload(be, f->state, dw, want, bytes, &f->eb), KT_OK);
  kt__device_mismatch dev;
  int rc = kt__be_compare(be, f->state, t, dg, dw, n, atol, rtol, &dev, &f->eb);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "compare on the device: %s", f->eb.msg);
  if (dev.count != host.count || (host.count && dev.first != host.first))
    kt_test_fail(__FILE__, __LINE__,
                 "%s, %" PRIu64 " elements, atol %g rtol %g: the device found %" PRIu64 " (first %" PRIu64
                 "), the host %" PRIu64 " (first %" PRIu64 ")",
                 kt__dtype_name(t), n, atol, rtol, dev.count, dev.first, host.count, host.first);
  if (host.count) {
    ASSERT_TRUE(same_double(kt__element(t, dev.got, 0), host.got));
    ASSERT_TRUE(same_double(kt__element(t, want, dev.first), host.want));
  }
  kt__be_release(be, f->state, dg);
  kt__be_release(be, f->state, dw);
  free(got);
  free(want);
}

TEST(device_compare_agrees_with_host_on_every_type) {
  fixture f;
  fx_open(&f);
  for (int t = 0; t < KT__DT_COUNT; t++) {
    double atol, rtol;
    kt__default_tolerance((kt__dtype)t, &atol, &rtol);
    compare_both(&f, (kt__dtype)t, 5003, atol, rtol, 1 + (uint64_t)t);
    compare_both(&f, (kt__dtype)t, 5003, 0, 0, 100 + (uint64_t)t);
    compare_both(&f, (kt__dtype)t, 5003, 0.5, 0.25, 200 + (uint64_t)t);
  }
  fx_close(&f);
}

TEST(device_compare_agrees_on_edges_and_sizes) {
  fixture f;
  fx_open(&f);
  compare_both(&f, KT__DT_F32, 0, 1e-4, 1e-3, 7);
  compare_both(&f, KT__DT_F32, 1, 1e-4, 1e-3, 8);
  compare_both(&f, KT__DT_F64, 300001, 1e-9, 1e-7, 9); /* more elements than threads: the grid-stride loop */
  compare_both(&f, KT__DT_F64, 100000, 1e-3, 1e-3, 10);
  fx_close(&f);
}

/* The decoys made on the device are the host's, bit for bit, on every type:
 * random references with NaN, infinities, huge values (an f16 decoy that
 * overflows), values whose integer decoy would be the poison, and
 * denormals; the output poisoned first, so an element left unwritten fails. */
static void decoys_both(fixture *f, kt__dtype t, uint64_t n, uint64_t seed) {
  size_t size = kt__dtype_size(t), bytes = (size_t)n * size;
  void *ref = kt__xcalloc(bytes ? bytes : 1, 1), *host = kt__xcalloc(bytes ? bytes : 1, 1),
       *dev = kt__xcalloc(bytes ? bytes : 1, 1), *scratch = kt__xcalloc(bytes ? bytes : 1, 1);
  make_case(t, scratch, ref, n, 0, 0, seed);
  for (uint64_t i = 0; i < n; i++) {
    unsigned char *e = (unsigned char *)ref + i * size;
    if (i % 7 == 1) memset(e, 0xe5, size); /* flipped by 0x40: the integer poison */
    if (i % 11 == 2 && t == KT__DT_F32) ((float *)ref)[i] = (i % 3 ? 1 : -1) * 3e38f;
    if (i % 11 == 3 && t == KT__DT_F16) ((uint16_t *)ref)[i] = 0x7bff; /* the largest f16: decoy overflows */
    if (i % 13 == 4 && t == KT__DT_F32) ((float *)ref)[i] = 1e-41f;
    if (i % 13 == 5 && t == KT__DT_F64) ((double *)ref)[i] = -INFINITY;
  }
  kt__decoy(t, host, ref, n);
  void *dref = NULL, *dout = NULL;
  ASSERT_EQ(kt__be_alloc(be, f->state, bytes, &dref, &f->eb), KT_OK);
  ASSERT_EQ(kt__be_upload(be, f->state, dref, ref, bytes, &f->eb), KT_OK);
  ASSERT_EQ(kt__be_alloc(be, f->state, bytes, &dout, &f->eb), KT_OK);
  kt__poison(t, dev, n);
  ASSERT_EQ(kt__be_upload(be, f->state, dout, dev, bytes, &f->eb), KT_OK);
  int rc = kt__be_decoy(be, f->state, t, dout, dref, n, &f->eb);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "decoys on the device: %s", f->eb.msg);
  ASSERT_EQ(kt__be_download(be, f->state, dev, dout, bytes, &f->eb), KT_OK);
  for (uint64_t i = 0; i < n; i++)
    if (memcmp((char *)dev + i * size, (char *)host + i * size, size) != 0)
      kt_test_fail(__FILE__, __LINE__,
                   "%s element %" PRIu64 " of %" PRIu64 ": the device's decoy differs from the host's",
                   kt__dtype_name(t), i, n);
  kt__be_release(be, f->state, dref);
  kt__be_release(be, f->state, dout);
  free(ref);
  free(host);
  free(dev);
  free(scratch);
}

TEST(device_decoys_are_the_hosts_on_every_type) {
  fixture f;
  fx_open(&f);
  for (int t = 0; t < KT__DT_COUNT; t++) decoys_both(&f, (kt__dtype)t, 5003, 300 + (uint64_t)t);
  decoys_both(&f, KT__DT_F32, 1, 400);
  decoys_both(&f, KT__DT_F64, 300001, 401); /* more elements than threads: the grid-stride loop */
  fx_close(&f);
}

TEST(device_compare_equal_buffers_find_nothing) {
  fixture f;
  fx_open(&f);
  enum { N = 70000 };
  float *x = kt__xcalloc(N, sizeof *x);
  for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f;
  x[17] = NAN; /* NaN against NaN matches */
  void *a = fx_buffer(&f, x, N), *b = fx_buffer(&f, x, N);
  kt__device_mismatch m;
  ASSERT_EQ(kt__be_compare(be, f.state, KT__DT_F32, a, b, N, 0, 0, &m, &f.eb), KT_OK);
  ASSERT_EQ(m.count, 0);
  x[N - 1] += 1.0f, x[40000] += 1.0f;
  ASSERT_EQ(kt__be_upload(be, f.state, a, x, N * sizeof(float), &f.eb), KT_OK);
  ASSERT_EQ(kt__be_compare(be, f.state, KT__DT_F32, a, b, N, 0, 0, &m, &f.eb), KT_OK);
  ASSERT_EQ(m.count, 2);
  ASSERT_EQ(m.first, 40000);
  float got;
  memcpy(&got, m.got, sizeof got);
  ASSERT_TRUE(got == x[40000]);
  kt__be_release(be, f.state, a);
  kt__be_release(be, f.state, b);
  free(x);
  fx_close(&f);
}

/* equal on the device (the inputs' pristine copies, the guard zones):
 * equal buffers, a difference in the whole words and one in the last bytes
 * past them, and sub-buffers as the guard zones' slices are. */
TEST(device_equal_finds_a_difference_anywhere) {
  fixture f;
  fx_open(&f);
  enum { BYTES = (1 << 20) + 5 };
  unsigned char *h = kt__xcalloc(BYTES, 1);
  for (size_t i = 0; i < BYTES; i++) h[i] = (unsigned char)(i * 131u >> 3);
  void *a = NULL, *b = NULL;
  ASSERT_EQ(kt__be_alloc(be, f.state, BYTES, &a, &f.eb), KT_OK);
  ASSERT_EQ(kt__be_alloc(be, f.state, BYTES, &b, &f.eb), KT_OK);
  ASSERT_EQ(kt__be_upload(be, f.state, a, h, BYTES, &f.eb), KT_OK);
  ASSERT_EQ(kt__be_upload(be, f.state, b, h, BYTES, &f.eb), KT_OK);
  bool same = false;
  ASSERT_EQ(kt__be_equal(be, f.state, a, b, BYTES, &same, &f.eb), KT_OK);
  ASSERT_TRUE(same);
  size_t changed[] = {0, 777777, BYTES - 6, BYTES - 5, BYTES - 1}; /* words, then the tail */
  for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
    h[changed[i]] ^= 1;
    ASSERT_EQ(kt__be_upload(be, f.state, b, h, BYTES, &f.eb), KT_OK);
    ASSERT_EQ(kt__be_equal(be, f.state, a, b, BYTES, &same, &f.eb), KT_OK);
    ASSERT_FALSE(same);
    h[changed[i]] ^= 1;
  }
  ASSERT_EQ(kt__be_upload(be, f.state, b, h, BYTES, &f.eb), KT_OK);
  /* Slices from an offset of the slice alignment: the same bytes compared. */
  void *sa = NULL, *sb = NULL;
  ASSERT_EQ(kt__be_slice(be, f.state, a, KT__SLICE_ALIGN, 4096 + 3, &sa, &f.eb), KT_OK);
  ASSERT_EQ(kt__be_slice(be, f.state, b, KT__SLICE_ALIGN, 4096 + 3, &sb, &f.eb), KT_OK);
  ASSERT_EQ(kt__be_equal(be, f.state, sa, sb, 4096 + 3, &same, &f.eb), KT_OK);
  ASSERT_TRUE(same);
  h[KT__SLICE_ALIGN + 4096 + 2] ^= 1; /* the slice's last byte */
  ASSERT_EQ(kt__be_upload(be, f.state, b, h, BYTES, &f.eb), KT_OK);
  ASSERT_EQ(kt__be_equal(be, f.state, sa, sb, 4096 + 3, &same, &f.eb), KT_OK);
  ASSERT_FALSE(same);
  h[KT__SLICE_ALIGN + 4096 + 3] ^= 1; /* past the slice: not compared */
  h[KT__SLICE_ALIGN + 4096 + 2] ^= 1;
  ASSERT_EQ(kt__be_upload(be, f.state, b, h, BYTES, &f.eb), KT_OK);
  ASSERT_EQ(kt__be_equal(be, f.state, sa, sb, 4096 + 3, &same, &f.eb), KT_OK);
  ASSERT_TRUE(same);
  kt__be_unslice(be, f.state, sa);
  kt__be_unslice(be, f.state, sb);
  kt__be_release(be, f.state, a);
  kt__be_release(be, f.state, b);
  free(h);
  fx_close(&f);
}
