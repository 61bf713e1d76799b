/* KT_MISS_ONLINE: configurations verified in the helper, then timed on the
 * application's own calls (src/runtime/online.h). Every call's output is
 * compared with the reference; which configurations ran on the caller's
 * data is read from the trace ("online: timed [...]"), one line per timed
 * launch. No case asserts on wall-clock times: they wait for lines, with a
 * minute's bound. */
#include "harness.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>

#include "backend/opencl_api.h"
#include "handles/context.h"
#include "runtime/online.h"
#include "runtime/runtime.h"

__attribute__((constructor)) static void use_built_helper(void) {
  setenv("KTUNE_HELPER", KTUNE_HELPER_PATH, 0);
  setenv("KTUNE_HELPER_IDLE_S", "1", 0);
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1);
}

static kt_context *context(kt_miss_policy policy) {
  kt_options o = {0};
  o.db_path = kt_test_tmp_path("results.db");
  o.quiet = 1;
  o.miss_policy = policy;
  kt_context *ctx = NULL;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  return ctx;
}

static kt_kernel *load(kt_context *ctx, const char *label, const char *src, const char *lang) {
  kt_kernel *k = NULL;
  if (kt_kernel_load_string(ctx, label, src, lang, NULL, &k) != KT_OK)
    kt_test_fail(__FILE__, __LINE__, "load: %s", kt_errmsg(ctx));
  return k;
}

/* Rows of the case's database whose measurement record names METHOD. */
static int rows_measured(const char *method) {
  sqlite3 *db = NULL;
  ASSERT_EQ(sqlite3_open_v2(kt_test_tmp_path("results.db"), &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st = NULL;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM results WHERE measurement LIKE ?1", -1, &st, NULL), SQLITE_OK);
  char like[128];
  snprintf(like, sizeof like, "%%\"method\": \"%s\"%%", method);
  sqlite3_bind_text(st, 1, like, -1, SQLITE_TRANSIENT);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  int n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

/* y = 3x for BAD=0 (U=1 spins longer than U=2, so U=2 wins); BAD=1 is
 * wrong on every input (y[1] = 0) and fast: the helper's verification
 * rejects it, and a launch of it on the caller's data would show in the
 * caller's output. */
static const char *scale_src =
    "// @autotune(BAD in [0, 1], U in [1, 2])\n"
    "// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
    "// @dims(N = 64)\n"
    "void scale(const float *x, float *y, int n) {\n"
    "  if (!BAD) { volatile float s = 0; for (int r = 0; r < 20000 / U; r++) s += (float)r; }\n"
    "  for (int i = 0; i < n; i++) y[i] = 3.0f * x[i];\n"
    "  if (BAD) y[1] = 0;\n"
    "}\n";

enum { N = 64 };

/* One call into fresh (poisoned) outputs, checked against y = 3x. */
static void call_scale(kt_kernel *k, float *x, float *y) {
  int n = N;
  void *args[] = {x, y, &n};
  for (int i = 0; i < N; i++) y[i] = -1.0f;
  int rc = kt_launch(k, (int64_t[]){N}, args, NULL);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_launch: %s", kt_errmsg(k->ctx));
  for (int i = 0; i < N; i++)
    if (y[i] != 3.0f * x[i]) kt_test_fail(__FILE__, __LINE__, "y[%d] = %g, expected %g", i, y[i], 3.0f * x[i]);
}

/* Calls until TEXT is printed (a minute at most), every output checked. */
static void call_until(kt_kernel *k, float *x, float *y, const char *text) {
  for (int i = 0; i < 3000 && !strstr(kt_test_captured(), text); i++) {
    call_scale(k, x, y);
    if (!strstr(kt_test_captured(), "online tuning: ")) kt_test_sleep(0.02); /* the helper still verifies */
  }
  if (!strstr(kt_test_captured(), text))
    kt_test_fail(__FILE__, __LINE__, "no \"%s\" in:\n%s", text, kt_test_captured());
}

TEST(online_times_the_verified_configurations_on_the_callers_calls_then_adopts) {
  kt_context *ctx = context(KT_MISS_ONLINE);
  kt_kernel *k = load(ctx, "scale.c", scale_src, "c");
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  kt_test_capture_start();
  call_scale(k, x, y);
  ASSERT_CONTAINS(kt_test_captured(), "key [N=64]: default configuration while the configurations are verified");
  call_until(k, x, y, "online tuning's winner");
  const char *out = kt_test_captured();
  ASSERT_CONTAINS(out, "key [N=64]: verified 4 configurations (2 passed");
  ASSERT_CONTAINS(out, "online tuning: 2 verified configurations, each to be timed on 5 of the application's calls");
  /* Each verified configuration timed 5 times on the caller's calls; the
   * one that failed verification never. */
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=0 U=1]"), KT__ONLINE_SAMPLES);
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=0 U=2]"), KT__ONLINE_SAMPLES);
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=1"), 0);
  ASSERT_EQ(kt_test_count(out, "online tuning's winner"), 1);
  ASSERT_CONTAINS(out, "measure: 2 configurations on 10 of the application's calls");
  ASSERT_CONTAINS(out, "s of their launches by clock");
  /* Later calls launch the winner untimed. */
  for (int i = 0; i < 20; i++) call_scale(k, x, y);
  out = kt_test_captured();
  ASSERT_EQ(kt_test_count(out, "online: timed ["), 2 * KT__ONLINE_SAMPLES);
  ASSERT_EQ(kt_test_count(out, "online tuning's winner"), 1);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  /* Stored: both candidates' samples, marked as measured online, and the
   * winner, which a new handle finds without tuning. */
  ASSERT_EQ(rows_measured("online clock"), 2);
  ctx = context(KT_MISS_ONLINE);
  k = load(ctx, "scale.c", scale_src, "c");
  call_scale(k, x, y);
  out = kt_test_captured();
  kt_test_capture_end();
  ASSERT_CONTAINS(out, "key [N=64]: stored winner in ");
  const char *stored = strstr(out, "key [N=64]: stored winner in ");
  ASSERT_TRUE(stored && strstr(stored, ": BAD=0 U="));
  ASSERT_EQ(kt_test_count(out, "verified 4 configurations"), 1); /* no second tuning */
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* y += x: a launch changes its input, so the candidates cannot be timed
 * on the caller's data: the policy tunes as KT_MISS_BACKGROUND does. */
TEST(online_kernel_with_an_inout_tensor_tunes_in_the_background) {
  kt_context *ctx = context(KT_MISS_ONLINE);
  kt_kernel *k = load(ctx, "acc.c",
                      "// @autotune(U in [1, 2])\n"
                      "// @kernel acc(x: in tensor<f32>[N], y: inout tensor<f32>[N], n: i32 = N)\n"
                      "// @dims(N = 64)\n"
                      "void acc(const float *x, float *y, int n) {\n"
                      "  volatile float s = 0; for (int r = 0; r < 20000 / U; r++) s += (float)r;\n"
                      "  for (int i = 0; i < n; i++) y[i] += x[i];\n"
                      "}\n",
                      "c");
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 0;
  int n = N;
  void *args[] = {x, y, &n};
  kt_test_capture_start();
  int calls = 0;
  for (; calls < 600 && (calls == 0 || !strstr(kt_test_captured(), "background tuning's winner")); calls++) {
    ASSERT_EQ(kt_launch(k, (int64_t[]){N}, args, NULL), KT_OK);
    for (int i = 0; i < N; i++) ASSERT_EQ(y[i], (float)(calls + 1) * x[i]); /* applied once a call */
    kt_test_sleep(0.05);
  }
  const char *out = kt_test_captured();
  kt_test_capture_end();
  ASSERT_CONTAINS(out, "key [N=64]: default configuration while the tuning runs in the background");
  ASSERT_CONTAINS(out, "key [N=64]: tuned 2 configurations");
  ASSERT_CONTAINS(out, "background tuning's winner");
  ASSERT_EQ(kt_test_count(out, "online: timed ["), 0);
  ASSERT_EQ(kt_test_count(out, "]: verified "), 0); /* no verify-only tuning */
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* Four threads call one key while its candidates are timed: every output
 * right, each candidate timed exactly its samples, one adoption. */
typedef struct caller {
  kt_kernel *k;
  int calls;
} caller;

static void *call_many(void *arg) {
  caller *c = arg;
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i + c->calls);
  for (int i = 0; i < c->calls; i++) {
    call_scale(c->k, x, y);
    kt_test_sleep(0.002);
  }
  return NULL;
}

TEST(online_calls_from_several_threads) {
  kt_context *ctx = context(KT_MISS_ONLINE);
  kt_kernel *k = load(ctx, "scale.c", scale_src, "c");
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  kt_test_capture_start();
  call_until(k, x, y, "online tuning: 2 verified");
  caller c[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    c[i] = (caller){k, 40};
    ASSERT_EQ(pthread_create(&th[i], NULL, call_many, &c[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  call_until(k, x, y, "online tuning's winner");
  const char *out = kt_test_captured();
  kt_test_capture_end();
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=0 U=1]"), KT__ONLINE_SAMPLES);
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=0 U=2]"), KT__ONLINE_SAMPLES);
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=1"), 0);
  ASSERT_EQ(kt_test_count(out, "online tuning's winner"), 1);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* A candidate that cannot be loaded in the application (its compiler gone
 * once the helper verified it: CC=false, no binary cache) is dropped, the
 * call relaunched with the fallback, and the key adopts among the rest. */
TEST(online_candidate_that_fails_in_the_application_is_dropped) {
  kt_options o = {0};
  o.db_path = kt_test_tmp_path("results.db");
  o.quiet = 1;
  o.miss_policy = KT_MISS_ONLINE;
  o.no_binary_cache = 1; /* the application compiles what it loads */
  kt_context *ctx = NULL;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  kt_kernel *k = load(ctx, "scale.c", scale_src, "c");
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  kt_test_capture_start();
  call_until(k, x, y, "online tuning: 2 verified"); /* the fallback (BAD=0 U=1) is loaded */
  setenv("CC", "false", 1);
  call_until(k, x, y, "online tuning's winner");
  unsetenv("CC");
  const char *out = kt_test_captured();
  kt_test_capture_end();
  ASSERT_CONTAINS(out, "online: [BAD=0 U=2] failed on the application's call, dropped");
  ASSERT_EQ(kt_test_count(out, "online: [BAD=0 U=2] failed"), 1);
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=0 U=2]"), 0);
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=0 U=1]"), KT__ONLINE_SAMPLES);
  const char *winner = strstr(out, "online tuning's winner");
  ASSERT_TRUE(winner && strstr(winner, ": BAD=0 U=1\n"));
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  ASSERT_EQ(rows_measured("online clock"), 1); /* the dropped one is stored as its failure */
}

/* KTUNE_PRINT_AUTOTUNING gives a miss's phases: the tuning's line (setup,
 * compile, verify, measure) and the application's adoption. */
TEST(print_autotuning_gives_the_phases_of_a_miss) {
  kt_context *ctx = context(KT_MISS_TUNE);
  kt_kernel *k = load(ctx, "scale.c", scale_src, "c");
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  kt_test_capture_start();
  call_scale(k, x, y);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  const char *line = strstr(out, "ktune: kernel scale, key [N=64]: tuned 4 configurations (0 stored before; setup ");
  if (!line) kt_test_fail(__FILE__, __LINE__, "no tuning line with its phases in:\n%s", out);
  const char *end = strchr(line, '\n');
  const char *phases[] = {"; setup ", " s, compile ", " s, verify ", " s, measure ", " s) in "};
  for (size_t i = 0; i < sizeof phases / sizeof *phases; i++) {
    const char *at = strstr(line, phases[i]);
    if (!at || at > end)
      kt_test_fail(__FILE__, __LINE__, "no \"%s\" in the line:\n%.*s", phases[i], (int)(end - line), line);
    line = at;
  }
  ASSERT_CONTAINS(out, "key [N=64]: the tuning's winner adopted (adopt ");
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

#ifdef KTUNE_HAVE_CL_H
/* y = 3x on the device; BAD=1 writes y[1] = 0: never launched on the
 * caller's buffers. */
static const char *scale_cl = "// @autotune(BAD in [0, 1], WG in [16, 32])\n"
                              "// @kernel scale3(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
                              "// @grid(cdiv(N, WG))\n"
                              "// @block(WG)\n"
                              "// @dims(N = 256)\n"
                              "__kernel void scale3(__global const float *x, __global float *y, int n) {\n"
                              "  int i = get_global_id(0);\n"
                              "  if (i >= n) return;\n"
                              "  y[i] = 3.0f * x[i];\n"
                              "  if (BAD && i == 1) y[1] = 0;\n"
                              "}\n";

TEST(opencl_online_times_the_verified_configurations_on_the_callers_buffers) {
  kt_context *ctx = context(KT_MISS_ONLINE);
  kt_kernel *k = load(ctx, "scale3.cl", scale_cl, "cl");
  void *state = NULL;
  kt__errbuf eb;
  ASSERT_EQ(kt__runtime_device(k, &state), KT_OK);
  enum { M = 256 };
  float x[M], y[M], poison[M];
  for (int i = 0; i < M; i++) x[i] = (float)i, poison[i] = -1.0f;
  void *bx = NULL, *by = NULL;
  ASSERT_EQ(kt__be_alloc(k->backend, state, sizeof x, &bx, &eb), KT_OK);
  ASSERT_EQ(kt__be_alloc(k->backend, state, sizeof y, &by, &eb), KT_OK);
  ASSERT_EQ(kt__be_upload(k->backend, state, bx, x, sizeof x, &eb), KT_OK);
  int n = M;
  void *args[] = {bx, by, &n};
  kt_test_capture_start();
  for (int c = 0; c < 3000 && (c == 0 || !strstr(kt_test_captured(), "online tuning's winner")); c++) {
    ASSERT_EQ(kt__be_upload(k->backend, state, by, poison, sizeof poison, &eb), KT_OK);
    ASSERT_EQ(kt_launch(k, (int64_t[]){M}, args, NULL), KT_OK);
    ASSERT_EQ(kt__be_download(k->backend, state, y, by, sizeof y, &eb), KT_OK);
    for (int i = 0; i < M; i++) ASSERT_EQ(y[i], 3.0f * x[i]);
    if (!strstr(kt_test_captured(), "online tuning: ")) kt_test_sleep(0.02);
  }
  const char *out = kt_test_captured();
  kt_test_capture_end();
  ASSERT_CONTAINS(out, "key [N=256]: verified 4 configurations (2 passed");
  ASSERT_CONTAINS(out, "online tuning's winner");
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=0 WG=16]"), KT__ONLINE_SAMPLES);
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=0 WG=32]"), KT__ONLINE_SAMPLES);
  ASSERT_EQ(kt_test_count(out, "online: timed [BAD=1"), 0);
  kt__be_release(k->backend, state, bx);
  kt__be_release(k->backend, state, by);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  ASSERT_EQ(rows_measured("online clock"), 2);
}
#else
TEST(opencl_online_times_the_verified_configurations_on_the_callers_buffers) {
  kt_test_fail(__FILE__, __LINE__, "ktune was built without CL/cl.h: the OpenCL backend is unavailable");
}
#endif
