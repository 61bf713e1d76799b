/* kt_tune in a process that holds a GPU driver (docs/DESIGN.md, "A zygote
 * of a fresh image"): once the process has loaded the OpenCL ICD loader and
 * opened a context on PoCL, or loaded libcuda.so.1 (the CUDA toolkit's stub
 * here, as NVRTC loads the real one), kt_tune's zygote is a fresh
 * ktune-tuner image and its workers are bound to each tuning; two tunings
 * in a row, at two sizes, are both ok with a verified winner. Each case is
 * a process of its own (the harness), so the driver is loaded only where the
 * case loads it. The OpenCL cases need a working OpenCL platform and the
 * CUDA one the toolkit's stub: without them they fail (they never skip). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "device/zygote.h"
#include "harness.h"
#include "ktune.h"
#ifdef KTUNE_HAVE_CL_H
#include "backend/opencl_api.h"
#endif

/* The tuner finds the ktune-tuner the build made (the test is no installed program). */
__attribute__((constructor)) static void use_built_helper(void) { setenv("KTUNE_HELPER", KTUNE_HELPER_PATH, 0); }

static const char *add_c = "// @autotune(U in [1, 2, 4])\n"
                           "// @kernel addc(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
                           "// @dims(N = 64)\n"
                           "void addc(const float *x, float *y, int n) {\n"
                           "  for (int i = 0; i < n; i += U)\n"
                           "    for (int u = 0; u < U && i + u < n; u++) y[i + u] = x[i + u] + 1.0f;\n"
                           "}\n";

static const char *const add_cl = KT_TEST_ADDONE_CL;

static char dir[64], trace[128];

/* A private database and binary cache, and the trace into a file. */
static void private_dirs(void) {
  kt_test_private_store("zygote", dir, sizeof dir);
  snprintf(trace, sizeof trace, "%s/trace", dir);
  setenv("KTUNE_TRACE", "1", 1);
}

/* Tunes SRC (LANG) on BACKEND at N, twice over: at N and at 3 N, each in a
 * kt_tune of this process, and expects both ok with a verified winner
 * (a value for NAME and a time). The trace goes to the trace file. */
static void tune_twice(kt_backend_kind backend, const char *src, const char *lang, const char *name, int64_t n) {
  kt_options o = {0};
  o.backend = backend;
  o.quiet = 1;
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  kt_kernel *k;
  if (kt_kernel_load_string(ctx, "app", src, lang, NULL, &k) != KT_OK)
    kt_test_fail(__FILE__, __LINE__, "load: %s", kt_errmsg(ctx));
  fflush(stderr);
  int saved = dup(2);
  ASSERT_TRUE(freopen(trace, "a", stderr) != NULL);
  for (int64_t size = n; size <= 3 * n; size += 2 * n) {
    ASSERT_EQ(kt_kernel_set_size(k, "N", size), KT_OK);
    kt_result *r = NULL;
    int rc = kt_tune(k, NULL, &r);
    if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_tune at N=%lld: %s", (long long)size, kt_errmsg(ctx));
    int64_t v = 0;
    ASSERT_EQ(kt_result_winner_value(r, name, &v), KT_OK);
    ASSERT_TRUE(kt_result_winner_seconds(r) > 0);
    kt_result_destroy(r);
  }
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* The trace file's text (static: one case reads it once). */
static const char *traced(void) {
  static char text[1 << 20];
  FILE *f = fopen(trace, "r");
  ASSERT_TRUE(f != NULL);
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  return text;
}

/* Each tuning's first worker, and only that, is bound: two tunings, two
 * spawned zygotes, at least two binds. */
static void expect_spawned(const char *why) {
  const char *t = traced();
  char line[128];
  snprintf(line, sizeof line, "zygote: a fresh image (%s)", why);
  ASSERT_CONTAINS(t, line);
  int zygotes = 0, binds = 0;
  for (const char *p = t; (p = strstr(p, "ktune-tuner --zygote (pid")); p++) zygotes++;
  for (const char *p = t; (p = strstr(p, "worker: bound to")); p++) binds++;
  ASSERT_EQ(zygotes, 2);
  ASSERT_GE(binds, 2);
}

TEST(no_driver_loaded_forks_the_zygote) {
  private_dirs();
  ASSERT_TRUE(kt__zygote_driver_loaded() == NULL);
  tune_twice(KT_BACKEND_CPU, add_c, "c", "U", 64);
  ASSERT_TRUE(strstr(traced(), "zygote: a fresh image") == NULL);
}

#ifdef KTUNE_HAVE_CL_H
/* The application's side: a context, a buffer and a queue on the first
 * device, released by close_opencl (the leak check counts what is not). */
typedef struct app_cl {
  const kt__cl_api *cl;
  cl_context context;
  cl_mem buf;
  cl_command_queue q;
} app_cl;

static app_cl open_opencl(void) {
  kt__errbuf eb;
  app_cl a = {.cl = kt__cl_load(&eb)};
  const kt__cl_api *cl = a.cl;
  if (!cl) kt_test_fail(__FILE__, __LINE__, "OpenCL: %s", eb.msg);
  cl_platform_id platform;
  cl_device_id device;
  ASSERT_EQ(cl->clGetPlatformIDs(1, &platform, NULL), CL_SUCCESS);
  ASSERT_EQ(cl->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), CL_SUCCESS);
  cl_int rc;
  a.context = cl->clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  a.buf = cl->clCreateBuffer(a.context, CL_MEM_READ_WRITE, 4096, NULL, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  a.q = cl->clCreateCommandQueue(a.context, device, 0, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  ASSERT_EQ(cl->clEnqueueFillBuffer(a.q, a.buf, &(float){1}, sizeof(float), 0, 4096, 0, NULL, NULL), CL_SUCCESS);
  ASSERT_EQ(cl->clFinish(a.q), CL_SUCCESS); /* PoCL's threads are running in this process now */
  ASSERT_STREQ(kt__zygote_driver_loaded(), "libOpenCL.so.1");
  return a;
}

static void close_opencl(app_cl *a) {
  a->cl->clReleaseCommandQueue(a->q);
  a->cl->clReleaseMemObject(a->buf);
  a->cl->clReleaseContext(a->context);
}

static void case_opencl_kt_tune_after_the_process_opened_opencl(void) {
  private_dirs();
  app_cl a = open_opencl();
  tune_twice(KT_BACKEND_OPENCL, add_cl, "cl", "ITEMS", 1000);
  expect_spawned("libOpenCL.so.1");
  close_opencl(&a);
}

static void case_opencl_cpu_kt_tune_after_the_process_opened_opencl(void) {
  private_dirs();
  app_cl a = open_opencl();
  tune_twice(KT_BACKEND_CPU, add_c, "c", "U", 64);
  expect_spawned("libOpenCL.so.1");
  close_opencl(&a);
}
#else
/* Built without CL/cl.h: the OpenCL cases fail (they never skip). */
static void no_opencl(void) { kt_test_fail(__FILE__, __LINE__, "built without CL/cl.h: no OpenCL to test"); }
#define case_opencl_kt_tune_after_the_process_opened_opencl no_opencl
#define case_opencl_cpu_kt_tune_after_the_process_opened_opencl no_opencl
#endif

TEST(opencl_kt_tune_after_the_process_opened_opencl) { case_opencl_kt_tune_after_the_process_opened_opencl(); }
TEST(opencl_cpu_kt_tune_after_the_process_opened_opencl) { case_opencl_cpu_kt_tune_after_the_process_opened_opencl(); }

/* libcuda.so.1 loaded as NVRTC loads it: the toolkit's stub, whose soname
 * it is. */
static void load_libcuda(void) {
  const char *home = getenv("CUDA_HOME");
  char stub[4096];
  snprintf(stub, sizeof stub, "%s/lib64/stubs/libcuda.so", home && *home ? home : "/usr/local/cuda");
  if (!dlopen(stub, RTLD_NOW | RTLD_LOCAL))
    kt_test_fail(__FILE__, __LINE__, "the CUDA toolkit's stub: %s (set CUDA_HOME)", dlerror());
  ASSERT_STREQ(kt__zygote_driver_loaded(), "libcuda.so.1");
}

/* The zygote is spawned, and the CPU backend tunes through it. */
TEST(cpu_kt_tune_after_the_process_loaded_libcuda) {
  private_dirs();
  load_libcuda();
  tune_twice(KT_BACKEND_CPU, add_c, "c", "U", 64);
  expect_spawned("libcuda.so.1");
}

static int always_right(const kt_check_args *a) {
  (void)a;
  return 1;
}

/* kt_tune of K with the check callback above: its return code. */
static int tune_with_callback(kt_context *ctx, kt_kernel *k) {
  kt_tune_options o = {0};
  o.check = always_right;
  kt_result *r = NULL;
  int rc = kt_tune(k, &o, &r);
  kt_result_destroy(r);
  (void)ctx;
  return rc;
}

/* A check callback is a function of this process, which no worker of a
 * fresh image can call: refused where the driver is loaded (the message
 * says what to do instead), run in a forked worker where KTUNE_ZYGOTE=spawn
 * merely asked for a fresh image. */
TEST(check_callback_needs_a_forked_worker) {
  private_dirs();
  kt_options o = {0};
  o.backend = KT_BACKEND_CPU;
  o.quiet = 1;
  kt_context *ctx;
  kt_kernel *k;
  setenv("KTUNE_ZYGOTE", "spawn", 1); /* read when a context is created */
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  ASSERT_EQ(kt_kernel_load_string(ctx, "app", add_c, "c", NULL, &k), KT_OK);
  ASSERT_EQ(tune_with_callback(ctx, k), KT_OK);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  unsetenv("KTUNE_ZYGOTE");
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  ASSERT_EQ(kt_kernel_load_string(ctx, "app", add_c, "c", NULL, &k), KT_OK);
  load_libcuda();
  ASSERT_EQ(tune_with_callback(ctx, k), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "this process has loaded libcuda.so.1");
  ASSERT_CONTAINS(kt_errmsg(ctx), "cannot call a check callback (kt_tune_options.check)");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}
