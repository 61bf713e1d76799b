/* kt_launch inside an application that owns its device context: on OpenCL
 * (PoCL in CI) the application creates its cl_context, buffers and queue,
 * hands the context over in kt_options, and launches on its own queue; and
 * kt_launch loading a configuration from the binary cache (CPU backend and
 * OpenCL). These need a working OpenCL platform: without one they fail.
 * Every case has its own database and binary cache. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/opencl_api.h"
#include "harness.h"
#include "ktune.h"

/* A miss tunes in the helper the build made (the test is no installed program). */
__attribute__((constructor)) static void use_built_helper(void) { setenv("KTUNE_HELPER", KTUNE_HELPER_PATH, 0); }

static const char *add_c = "// @autotune(U in [1, 4])\n"
                           "// @kernel addc(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
                           "// @dims(N = 64)\n"
                           "void addc(const float *x, float *y, int n) {\n"
                           "  for (int i = 0; i < n; i++) y[i] = x[i] + (float)U;\n"
                           "}\n";

static char dir[64];

/* A private database and binary cache for the case. */
static void private_dirs(void) { kt_test_private_store("app", dir, sizeof dir); }

static kt_kernel *load(kt_context *ctx, const char *src, const char *lang) {
  kt_kernel *k;
  int rc = kt_kernel_load_string(ctx, "app", src, lang, NULL, &k);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "load: %s", kt_errmsg(ctx));
  return k;
}

#ifdef KTUNE_HAVE_CL_H
static const char *const add_cl = KT_TEST_ADDONE_CL;

/* The application's side: its own context, queue and buffers. */
typedef struct app {
  const kt__cl_api *cl;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  cl_mem x, y;
} app;

static void app_open(app *a, size_t n) {
  kt__errbuf eb;
  a->cl = kt__cl_load(&eb);
  if (!a->cl) kt_test_fail(__FILE__, __LINE__, "OpenCL: %s", eb.msg);
  cl_platform_id platform;
  cl_uint np = 0;
  ASSERT_EQ(a->cl->clGetPlatformIDs(1, &platform, &np), CL_SUCCESS);
  ASSERT_EQ(a->cl->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &a->device, NULL), CL_SUCCESS);
  cl_int rc;
  a->context = a->cl->clCreateContext(NULL, 1, &a->device, NULL, NULL, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  a->queue = a->cl->clCreateCommandQueue(a->context, a->device, 0, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  float *host = calloc(n, sizeof *host);
  for (size_t i = 0; i < n; i++) host[i] = (float)i * 0.5f;
  a->x = a->cl->clCreateBuffer(a->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float), host, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  a->y = a->cl->clCreateBuffer(a->context, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &rc);
  ASSERT_EQ(rc, CL_SUCCESS);
  free(host);
}

static void app_close(app *a) {
  a->cl->clReleaseMemObject(a->x);
  a->cl->clReleaseMemObject(a->y);
  a->cl->clReleaseCommandQueue(a->queue);
  a->cl->clReleaseContext(a->context);
}

/* y == x + 1 for the application's buffers, read on its queue. */
static void expect_added(app *a, size_t n) {
  float *y = calloc(n, sizeof *y);
  ASSERT_EQ(a->cl->clEnqueueReadBuffer(a->queue, a->y, CL_TRUE, 0, n * sizeof(float), y, 0, NULL, NULL), CL_SUCCESS);
  for (size_t i = 0; i < n; i++)
    if (y[i] != (float)i * 0.5f + 1.0f)
      kt_test_fail(__FILE__, __LINE__, "y[%zu] = %g, expected %g", i, (double)y[i], (double)i * 0.5 + 1);
  free(y);
}

static kt_context *app_context(app *a, kt_miss_policy policy) {
  kt_options o = {0};
  o.backend = KT_BACKEND_OPENCL;
  o.quiet = 1;
  o.miss_policy = policy;
  o.opencl_context = a->context;
  o.opencl_device = a->device;
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  return ctx;
}

/* The application's cl_mem buffers and command queue go straight to
 * kt_launch: the program is built in the application's context. */
static void case_opencl_launch_on_the_applications_context_buffers_and_queue(void) {
  private_dirs();
  app a;
  size_t n = 1000;
  app_open(&a, n);
  kt_context *ctx = app_context(&a, KT_MISS_DEFAULT);
  kt_kernel *k = load(ctx, add_cl, "cl");
  int nn = (int)n;
  int64_t sizes[] = {(int64_t)n};
  void *args[] = {a.x, a.y, &nn};
  int rc = kt_launch(k, sizes, args, a.queue);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_launch: %s", kt_errmsg(ctx));
  ASSERT_EQ(a.cl->clFinish(a.queue), CL_SUCCESS);
  expect_added(&a, n);
  /* Again, without a queue: the backend's own queue, in the same context. */
  ASSERT_EQ(a.cl->clEnqueueFillBuffer(a.queue, a.y, &(float){0}, sizeof(float), 0, n * sizeof(float), 0, NULL, NULL),
            CL_SUCCESS);
  ASSERT_EQ(a.cl->clFinish(a.queue), CL_SUCCESS);
  ASSERT_EQ(kt_launch(k, sizes, args, NULL), KT_OK);
  expect_added(&a, n);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  app_close(&a); /* ktune released its hold on the context: this is the last */
}

/* kt_launch with KTUNE_PRINT_AUTOTUNING=1; its first printed line into LINE. */
static int launch_printing(kt_kernel *k, const int64_t *sizes, void *const *args, void *queue, char *line, size_t len) {
  char log[128];
  snprintf(log, sizeof log, "%s/print", dir);
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  fflush(stderr);
  int saved = dup(2);
  FILE *f = freopen(log, "w", stderr);
  ASSERT_TRUE(f != NULL);
  int rc = kt_launch(k, sizes, args, queue);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  unsetenv("KTUNE_PRINT_AUTOTUNING");
  FILE *in = fopen(log, "r");
  line[0] = 0;
  ASSERT_TRUE(in && fgets(line, (int)len, in));
  fclose(in);
  return rc;
}

/* A winner tuned beforehand (`ktune tune`, here kt_tune in this process
 * before the application opens OpenCL) is found for the application's
 * device: the device's identity reads the same through its context. */
static void case_opencl_applications_context_finds_the_stored_winner(void) {
  private_dirs();
  kt_options o = {0};
  o.backend = KT_BACKEND_OPENCL;
  o.quiet = 1;
  kt_context *tctx;
  ASSERT_EQ(kt_context_create(&o, &tctx), KT_OK);
  kt_kernel *tk = load(tctx, add_cl, "cl");
  ASSERT_EQ(kt_kernel_set_size(tk, "N", 1000), KT_OK);
  kt_result *r = NULL;
  ASSERT_EQ(kt_tune(tk, NULL, &r), KT_OK);
  kt_result_destroy(r);
  kt_kernel_destroy(tk);
  kt_context_destroy(tctx);

  app a;
  app_open(&a, 1000);
  kt_context *ctx = app_context(&a, KT_MISS_DEFAULT);
  kt_kernel *k = load(ctx, add_cl, "cl");
  int nn = 1000;
  int64_t sizes[] = {1000};
  void *args[] = {a.x, a.y, &nn};
  char line[512];
  ASSERT_EQ(launch_printing(k, sizes, args, a.queue, line, sizeof line), KT_OK);
  ASSERT_EQ(a.cl->clFinish(a.queue), CL_SUCCESS);
  expect_added(&a, 1000);
  ASSERT_CONTAINS(line, "stored winner");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  app_close(&a);
}

/* A miss in the application's context tunes: the helper (a fresh process)
 * gets copies of the caller's buffers, read on the caller's queue, and the
 * winner it stores is loaded here, in the application's context. */
static void case_opencl_miss_in_the_applications_context_tunes(void) {
  private_dirs();
  app a;
  app_open(&a, 1000);
  kt_context *ctx = app_context(&a, KT_MISS_TUNE);
  kt_kernel *k = load(ctx, add_cl, "cl");
  int nn = 1000;
  int64_t sizes[] = {1000};
  void *args[] = {a.x, a.y, &nn};
  char line[512];
  int rc = launch_printing(k, sizes, args, a.queue, line, sizeof line);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_launch: %s (%s)", kt_errmsg(ctx), line);
  ASSERT_CONTAINS(line, "key [N=1000]: tuned 3 configurations");
  ASSERT_EQ(a.cl->clFinish(a.queue), CL_SUCCESS);
  expect_added(&a, 1000);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  app_close(&a);
}

/* A device that is not the context's is refused, naming the option. */
static void case_opencl_device_outside_the_context_is_refused(void) {
  private_dirs();
  app a;
  app_open(&a, 16);
  kt_context *ctx;
  kt_options o = {0};
  o.backend = KT_BACKEND_OPENCL;
  o.quiet = 1;
  o.miss_policy = KT_MISS_DEFAULT;
  o.opencl_context = a.context;
  o.opencl_device = (void *)&o; /* no device of anyone's: compared, never called */
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  kt_kernel *k = load(ctx, add_cl, "cl");
  int nn = 16;
  int64_t sizes[] = {16};
  void *args[] = {a.x, a.y, &nn};
  ASSERT_EQ(kt_launch(k, sizes, args, a.queue), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "kt_options.opencl_device is not a device of kt_options.opencl_context");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  app_close(&a);
}

#endif

/* The only entry of the case's binary cache. */
static void only_entry(struct stat *st) {
  char cmd[256], path[512] = "";
  snprintf(cmd, sizeof cmd, "ls %s/bin/*.ktbin 2>/dev/null", dir);
  FILE *p = popen(cmd, "r");
  int lines = 0;
  while (fgets(path, sizeof path, p)) lines++;
  pclose(p);
  ASSERT_EQ(lines, 1);
  path[strcspn(path, "\n")] = 0;
  ASSERT_EQ(stat(path, st), 0);
  struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}}; /* long unused: a hit touches it */
  ASSERT_EQ(utimensat(AT_FDCWD, path, old, 0), 0);
}

/* Launching LAUNCHES handles of SRC one after another: the first compiles
 * and stores, each later one loads that same entry (its inode unchanged,
 * its mtime touched: read, not written again). */
static void launches_share_one_entry(kt_context *ctx, const char *src, const char *lang, void *const *args, int64_t n,
                                     void *stream) {
  struct stat first, later;
  for (int i = 0; i < 2; i++) {
    kt_kernel *k = load(ctx, src, lang);
    int rc = kt_launch(k, &n, args, stream);
    if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_launch: %s", kt_errmsg(ctx));
    kt_kernel_destroy(k);
    if (i == 0) {
      only_entry(&first);
      continue;
    }
    char cmd[256], path[512] = "";
    snprintf(cmd, sizeof cmd, "ls %s/bin/*.ktbin", dir);
    FILE *p = popen(cmd, "r");
    ASSERT_TRUE(fgets(path, sizeof path, p) != NULL);
    pclose(p);
    path[strcspn(path, "\n")] = 0;
    ASSERT_EQ(stat(path, &later), 0);
    ASSERT_EQ(later.st_ino, first.st_ino);
    ASSERT_GE(later.st_mtime, 1000000001);
  }
}

TEST(cpu_launch_loads_from_the_binary_cache) {
  private_dirs();
  kt_options o = {0};
  o.quiet = 1;
  o.miss_policy = KT_MISS_DEFAULT;
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  float x[64], y[64];
  for (int i = 0; i < 64; i++) x[i] = (float)i;
  int n = 64;
  void *args[] = {x, y, &n};
  launches_share_one_entry(ctx, add_c, "c", args, 64, NULL);
  for (int i = 0; i < 64; i++) ASSERT_EQ(y[i], x[i] + 1);
  kt_context_destroy(ctx);
}

#ifdef KTUNE_HAVE_CL_H
static void case_opencl_launch_loads_from_the_binary_cache(void) {
  private_dirs();
  app a;
  app_open(&a, 1000);
  kt_context *ctx = app_context(&a, KT_MISS_DEFAULT);
  int nn = 1000;
  void *args[] = {a.x, a.y, &nn};
  launches_share_one_entry(ctx, add_cl, "cl", args, 1000, a.queue);
  ASSERT_EQ(a.cl->clFinish(a.queue), CL_SUCCESS);
  expect_added(&a, 1000);
  kt_context_destroy(ctx);
  app_close(&a);
}
#else
/* Built without CL/cl.h: the OpenCL cases fail (they never skip). */
static void no_opencl(void) { kt_test_fail(__FILE__, __LINE__, "built without CL/cl.h: no OpenCL to test"); }
#define case_opencl_launch_on_the_applications_context_buffers_and_queue no_opencl
#define case_opencl_applications_context_finds_the_stored_winner no_opencl
#define case_opencl_device_outside_the_context_is_refused no_opencl
#define case_opencl_launch_loads_from_the_binary_cache no_opencl
#define case_opencl_miss_in_the_applications_context_tunes no_opencl
#endif

TEST(opencl_launch_on_the_applications_context_buffers_and_queue) {
  case_opencl_launch_on_the_applications_context_buffers_and_queue();
}
TEST(opencl_applications_context_finds_the_stored_winner) {
  case_opencl_applications_context_finds_the_stored_winner();
}
TEST(opencl_device_outside_the_context_is_refused) { case_opencl_device_outside_the_context_is_refused(); }
TEST(opencl_launch_loads_from_the_binary_cache) { case_opencl_launch_loads_from_the_binary_cache(); }
TEST(opencl_miss_in_the_applications_context_tunes) { case_opencl_miss_in_the_applications_context_tunes(); }
