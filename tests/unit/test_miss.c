/* Tuning on a miss through the helper process (ktune-tuner): the caller's
 * data, blocking and background policies, one tuning per key across
 * threads and processes, a helper that cannot start or is killed, no
 * process left behind, and an application that initialised OpenCL itself
 * (PoCL in CI). Every case has its own database in its own temporary
 * directory. */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/opencl_api.h"
#include "handles/context.h"
#include "handles/runtime_table.h"
#include "runtime/runtime.h"
#include "tuner/result.h"
#include "tuner/tuner.h"

/* The built helper; helpers stay warm for a second only, so that the
 * processes-left checks need not wait long (the warm cases set more). */
__attribute__((constructor)) static void use_built_helper(void) {
  setenv("KTUNE_HELPER", KTUNE_HELPER_PATH, 0);
  setenv("KTUNE_HELPER_IDLE_S", "1", 0);
}

/* ---- fixtures --------------------------------------------------------- */

static const char *tmp_path(const char *name) { return kt_test_tmp_path(name); }

static kt_context *context(kt_miss_policy policy, const kt_tune_options *tune) {
  kt_options o = {0};
  o.db_path = tmp_path("results.db");
  o.quiet = 1;
  o.miss_policy = policy;
  o.miss_tune = tune;
  kt_context *ctx = NULL;
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  return ctx;
}

static kt_kernel *load(kt_context *ctx, const char *label, const char *src, const char *lang) {
  kt_kernel *k = NULL;
  int rc = kt_kernel_load_string(ctx, label, src, lang, NULL, &k);
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "load: %s", kt_errmsg(ctx));
  return k;
}

/* Polls what was printed for NEEDLE, SECONDS x kt_test_slowdown() at most
 * (a wait for an event, not a fixed sleep): whether it came. */
static bool await_captured(const char *needle, double seconds) {
  long polls = (long)(seconds * kt_test_slowdown() / 0.01);
  for (long i = 0; i < polls && !strstr(kt_test_captured(), needle); i++) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return strstr(kt_test_captured(), needle) != NULL;
}

/* Processes whose environment holds MARK (this case's helpers, their
 * zygotes and workers, which inherit it). */
static int processes_marked(const char *mark) {
  DIR *d = opendir("/proc");
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir(d))) {
    char path[300], env[65536];
    if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == getpid()) continue;
    snprintf(path, sizeof path, "/proc/%s/environ", de->d_name);
    int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    ssize_t len = read(fd, env, sizeof env - 1);
    close(fd);
    for (ssize_t i = 0; i < len; i++)
      if (env[i] == 0) env[i] = '\n';
    env[len > 0 ? len : 0] = 0;
    if (strstr(env, mark)) n++;
  }
  if (d) closedir(d);
  return n;
}

/* Waits up to 10 s x kt_test_slowdown() for the processes marked MARK to
 * end; how many remain. */
static int processes_left(const char *mark) {
  for (int i = 0; i < 100 * kt_test_slowdown() && processes_marked(mark); i++) kt_test_sleep(0.1);
  return processes_marked(mark);
}

static const char *mark_processes(void) {
  static char mark[64];
  snprintf(mark, sizeof mark, "KT_MISS_TEST_MARK=%d-%ld", (int)getpid(), (long)time(NULL));
  putenv(mark);
  return mark;
}

/* ---- kernels ---------------------------------------------------------- */

/* y = 2x + 1 for every configuration; the default (U=1) is slow, so that a
 * tuning picks another one, and every configuration takes SPIN loops. */
static const char *slow_default_src = "// @autotune(U in [1, 2, 4, 8])\n"
                                      "// @kernel affine(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
                                      "// @dims(N = 256)\n"
                                      "void affine(const float *x, float *y, int n) {\n"
                                      "  volatile float s = 0;\n"
                                      "  for (int r = 0; r < (U == 1 ? 400000 : 20000) + SPIN; r++) s += (float)r;\n"
                                      "  for (int i = 0; i < n; i++) y[i] = 2.0f * x[i] + 1.0f;\n"
                                      "}\n";

/* The kernel above with SPIN extra loops in every configuration. */
static const char *slow_source(long spin) {
  static char src[1024];
  snprintf(src, sizeof src, "#define SPIN %ld\n%s", spin, slow_default_src);
  return src;
}

static void check_affine(const float *x, const float *y, int n) {
  for (int i = 0; i < n; i++) ASSERT_EQ(y[i], 2.0f * x[i] + 1.0f);
}

/* ---- blocking --------------------------------------------------------- */

/* BAD=1 is faster but wrong only where x[0] is 777 (a sentinel). */
static const char *sentinel_src =
    "// @autotune(BAD in [0, 1])\n"
    "// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
    "// @dims(N = 64)\n"
    "void scale(const float *x, float *y, int n) {\n"
    "  if (!BAD) { volatile float s = 0; for (int r = 0; r < 200000; r++) s += (float)r; }\n"
    "  for (int i = 0; i < n; i++) y[i] = 3.0f * x[i];\n"
    "  if (BAD && x[0] == 777.0f) y[1] = 0;\n"
    "}\n";

/* A blocking miss of the sentinel kernel on K, traced: what was printed;
 * the outputs are checked, and the tuning must have picked BAD=0, which
 * only the caller's own data (x[0] = 777) tells apart. */
static const char *sentinel_miss(kt_context *ctx, kt_kernel *k) {
  float x[64], y[64];
  for (int i = 0; i < 64; i++) x[i] = (float)i;
  x[0] = 777.0f;
  int n = 64;
  void *args[] = {x, y, &n};
  kt_test_capture_start();
  int rc = kt_launch(k, (int64_t[]){64}, args, NULL);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_launch: %s\n%s", kt_errmsg(ctx), out);
  ASSERT_CONTAINS(out, "ktune: kernel scale, key [N=64]: tuned 2 configurations");
  ASSERT_CONTAINS(out, ": BAD=0\n");
  for (int i = 0; i < 64; i++) ASSERT_EQ(y[i], 3.0f * x[i]);
  ASSERT_EQ(x[0], 777.0f);
  return out;
}

/* The caller's data reaches the helper: BAD=1 is faster but wrong only on
 * the sentinel the caller's input holds, so a tuning on generated data
 * would pick it. */
TEST(blocking_tunes_in_the_helper_on_the_callers_data) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "sentinel.c", sentinel_src, "c");
  sentinel_miss(ctx, k);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* KTUNE_MISS_TENSORS=device on the CPU backend: the helper's worker reads
 * the caller's tensors straight from its memory (process_vm_readv), the
 * request holds no copy of them, and the tuning is on the caller's data. */
TEST(blocking_miss_shares_the_callers_tensors_with_the_worker) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_MISS_TENSORS", "device", 1);
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "sentinel.c", sentinel_src, "c");
  const char *out = sentinel_miss(ctx, k);
  ASSERT_EQ(kt_test_count(out, "miss: the caller's tensors shared with the helper on the device"), 1);
  ASSERT_EQ(kt_test_count(out, "worker: tensor x copied from the application's memory"), 1);
  ASSERT_EQ(kt_test_count(out, "miss: the caller's tensors copied into the request"), 0);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* kt_launch of K on X (filled with 0, 1, 2, ...) into Y, N elements, with
 * stderr captured: its code, and what it printed (the
 * KTUNE_PRINT_AUTOTUNING lines) in *OUT. */
static int launch_affine_captured(kt_kernel *k, float *x, float *y, int n, const char **out) {
  for (int i = 0; i < n; i++) x[i] = (float)i;
  void *args[] = {x, y, &n};
  kt_test_capture_start();
  int rc = kt_launch(k, (int64_t[]){n}, args, NULL);
  *out = kt_test_captured();
  kt_test_capture_end();
  return rc;
}

/* Names a process that is gone instead of this one: the worker cannot read
 * the tensor, as where the system forbids reading another process. */
static int share_from_nowhere(void *state, void *buf, size_t bytes, kt__shared_buffer *out, kt__errbuf *eb) {
  KT__FORWARD(kt__backend_cpu.share(state, buf, bytes, out, eb));
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, NULL, 0);
  int64_t pid = gone;
  memcpy(out->handle, &pid, sizeof pid);
  return KT_OK;
}

/* A worker that cannot copy the shared tensors fails the tuning; the
 * application tunes again with them copied through host memory, on the
 * same data, and the handle's later misses do not share them any more. */
TEST(blocking_miss_tunes_through_host_memory_when_the_worker_cannot_copy) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_MISS_TENSORS", "device", 1);
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "sentinel.c", sentinel_src, "c");
  static kt__backend unreadable;
  unreadable = kt__backend_cpu;
  unreadable.share = share_from_nowhere;
  void *state;
  ASSERT_EQ(kt__runtime_device(k, &state), KT_OK); /* the handle's table, whose backend kt_launch uses */
  k->runtime->be = &unreadable;
  const char *out = sentinel_miss(ctx, k);
  ASSERT_EQ(kt_test_count(out, "miss: the caller's tensors shared with the helper on the device"), 1);
  ASSERT_EQ(kt_test_count(out, KT__SHARED_COPY_FAILED " (x)"), 1);
  ASSERT_EQ(kt_test_count(out, "tuned again with the tensors copied through host memory"), 1);
  ASSERT_EQ(kt_test_count(out, "tuned 2 configurations"), 1);
  ASSERT_EQ(kt_test_count(out, "miss: the caller's tensors copied into the request"), 1);
  /* A second key: straight through host memory. */
  float x[32], y[32];
  ASSERT_EQ(launch_affine_captured(k, x, y, 32, &out), KT_OK);
  ASSERT_EQ(kt_test_count(out, "shared with the helper"), 0);
  ASSERT_EQ(kt_test_count(out, KT__SHARED_COPY_FAILED), 0);
  ASSERT_EQ(kt_test_count(out, "miss: the caller's tensors copied into the request"), 1);
  for (int i = 0; i < 32; i++) ASSERT_EQ(y[i], 3.0f * x[i]);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* A helper that cannot start: the fallback, and the line says why. */
TEST(missing_helper_falls_back_and_says_why) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_HELPER", tmp_path("no-such-helper"), 1);
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  float x[256], y[256];
  int n = 256;
  const char *out;
  int rc = launch_affine_captured(k, x, y, n, &out);
  setenv("KTUNE_HELPER", KTUNE_HELPER_PATH, 1);
  ASSERT_EQ(rc, KT_OK);
  ASSERT_CONTAINS(out, "key [N=256]: default configuration (cannot tune: the tuning helper ");
  ASSERT_CONTAINS(out, "no-such-helper could not start: No such file or directory (set KTUNE_HELPER");
  ASSERT_CONTAINS(out, ": U=1\n");
  check_affine(x, y, n);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* Without KTUNE_PRINT_AUTOTUNING and with quiet set, a helper that cannot
 * be found is still said, once a process: else every miss of a static
 * program would run the default without a word. */
static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) n++;
  return n;
}

TEST(missing_helper_is_said_once_even_when_quiet) {
  unsetenv("KTUNE_PRINT_AUTOTUNING");
  setenv("KTUNE_HELPER", tmp_path("no-such-helper"), 1);
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  float x[256], y[256];
  const char *out;
  kt__sbuf both = {0};
  for (int n = 128; n <= 256; n += 128) { /* two sizes: two misses */
    ASSERT_EQ(launch_affine_captured(k, x, y, n, &out), KT_OK);
    kt__sbuf_printf(&both, "%s", out);
    check_affine(x, y, n);
  }
  setenv("KTUNE_HELPER", KTUNE_HELPER_PATH, 1);
  ASSERT_EQ(count_of(both.s, "ktune: kt_launch cannot tune: the tuning helper "), 1);
  ASSERT_CONTAINS(both.s, "no-such-helper could not start: No such file or directory");
  ASSERT_CONTAINS(both.s, "every miss runs its fallback");
  kt__sbuf_free(&both);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* A helper killed before it replies: the fallback, with the signal named. */
TEST(killed_helper_falls_back_with_the_signal) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  const char *script = tmp_path("killer.sh");
  FILE *f = fopen(script, "w");
  ASSERT_TRUE(f != NULL);
  fprintf(f, "#!/bin/sh\nkill -9 $$\n");
  fclose(f);
  chmod(script, 0700);
  setenv("KTUNE_HELPER", script, 1);
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  float x[256], y[256];
  int n = 256;
  const char *out;
  int rc = launch_affine_captured(k, x, y, n, &out);
  setenv("KTUNE_HELPER", KTUNE_HELPER_PATH, 1);
  ASSERT_EQ(rc, KT_OK);
  ASSERT_CONTAINS(out, "default configuration (cannot tune: the tuning helper (pid ");
  ASSERT_CONTAINS(out, ") was killed by signal 9 (Killed) before it replied)");
  check_affine(x, y, n);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* ---- the helper's tuner ------------------------------------------------ */

/* Tunes affine on the CPU with the device the application saw (as the
 * helper does), that device's arch replaced by ARCH when not NULL; returns
 * the trace. */
static const char *tune_with_device_seen(const char *arch) {
  setenv("KTUNE_TRACE", "1", 1);
  kt_context *ctx = context(KT_MISS_DEFAULT, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  void *state = NULL;
  ASSERT_EQ(kt__runtime_device(k, &state), KT_OK);
  kt__device_info seen = k->runtime->device;
  if (arch) snprintf(seen.arch, sizeof seen.arch, "%s", arch);
  kt__tune_helper_opts helper = {.device = &seen};
  ASSERT_EQ(kt_kernel_set_size(k, "N", 256), KT_OK);
  kt_result *res = NULL;
  kt_test_capture_start();
  int rc = kt__tune(k, NULL, &helper, &res);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_tune: %s\n%s", kt_errmsg(ctx), out);
  ASSERT_TRUE(res->winner >= 0);
  int ok = 0;
  for (int i = 0; i < res->ntrials; i++) ok += res->trials[i].status == KT__ST_OK;
  ASSERT_EQ(ok, 4); /* the default once, and every other configuration */
  ASSERT_EQ(kt_test_count(out, "reference: compiled"), 1);
  kt_result_destroy(res);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  return out;
}

/* The helper's tuner compiles the default while its worker opens the
 * device, for the device the application saw. */
TEST(helper_compiles_the_default_while_the_worker_starts) {
  const char *out = tune_with_device_seen(NULL);
  ASSERT_CONTAINS(out, "setup: the default's compile started before the worker is ready");
  ASSERT_TRUE(strstr(out, "compiled again") == NULL);
}

/* A worker whose device is not the one the application saw: the early
 * compile is dropped and the default compiled for the worker's device. */
TEST(helper_recompiles_the_default_for_another_device) {
  const char *out = tune_with_device_seen("another-arch");
  ASSERT_CONTAINS(out, "setup: the default's compile started before the worker is ready");
  ASSERT_CONTAINS(out, "setup: the worker's device differs from the application's: the default is compiled again");
}

/* What wait_for_the_worker saw: how often it was called, and whether the
 * worker's device was open (at its first call). */
typedef struct data_wait {
  int calls;
  bool opened;
} data_wait;

/* As the helper's wait for the application's tensors: polls the trace for
 * the worker's open device (5 s x the slowdown at most). */
static int wait_for_the_worker(void *ud, kt__errbuf *eb) {
  (void)eb;
  data_wait *w = ud;
  if (w->calls++) return KT_OK;
  w->opened = await_captured("worker: device open", 5);
  return KT_OK;
}

static int no_data_comes(void *ud, kt__errbuf *eb) {
  (void)ud;
  return kt__err(eb, KT_INTERRUPTED, "ktune-tuner: the application did not hand over its tensors");
}

/* kt_tune of affine at N = 256 on the caller's X, waiting for it with WAIT
 * as the helper does; the trace in *OUT. */
static int tune_waiting_for_data(int (*wait)(void *, kt__errbuf *), void *ud, float *x, const char **out) {
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  kt_context *ctx = context(KT_MISS_DEFAULT, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  void *args[] = {x, NULL, NULL};
  kt__tune_helper_opts helper = {.args = args, .args_wait = wait, .args_ud = ud};
  ASSERT_EQ(kt_kernel_set_size(k, "N", 256), KT_OK);
  kt_result *res = NULL;
  kt_test_capture_start();
  int rc = kt__tune(k, NULL, &helper, &res);
  *out = kt_test_captured();
  kt_test_capture_end();
  if (rc == KT_OK) ASSERT_TRUE(res && res->winner >= 0);
  kt_result_destroy(res);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  return rc;
}

/* The helper's worker opens its device while the application still writes
 * its tensors into the request (on a GPU: the download of its buffers):
 * the tuner waits for them only once the worker is launched. */
TEST(helper_opens_the_device_while_the_data_comes) {
  float x[256];
  for (int i = 0; i < 256; i++) x[i] = (float)i;
  data_wait w = {0};
  const char *out;
  ASSERT_EQ(tune_waiting_for_data(wait_for_the_worker, &w, x, &out), KT_OK);
  ASSERT_EQ(w.calls, 1);
  ASSERT_TRUE(w.opened);
  ASSERT_CONTAINS(out, "key [N=256]: tuned 4 configurations");
}

/* Data that never comes: the tuning fails with the reason, prints no
 * tuning line, and leaves no process behind. */
TEST(helper_without_data_fails_and_leaves_nothing) {
  const char *mark = mark_processes();
  float x[256] = {0};
  const char *out;
  ASSERT_EQ(tune_waiting_for_data(no_data_comes, NULL, x, &out), KT_INTERRUPTED);
  ASSERT_TRUE(strstr(out, ": tuned ") == NULL);
  ASSERT_EQ(processes_left(mark), 0);
}

/* ---- background ------------------------------------------------------- */

/* The first call launches the default at once; a later one the winner. */
TEST(background_launches_the_fallback_then_the_winner) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  const char *mark = mark_processes();
  kt_context *ctx = context(KT_MISS_BACKGROUND, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(500000), "c"); /* a millisecond a run */
  float x[256], y[256];
  for (int i = 0; i < 256; i++) x[i] = (float)i;
  int n = 256;
  void *args[] = {x, y, &n};
  kt_test_capture_start();
  ASSERT_EQ(kt_launch(k, (int64_t[]){256}, args, NULL), KT_OK);
  check_affine(x, y, n);
  ASSERT_CONTAINS(kt_test_captured(), "key [N=256]: default configuration while the tuning runs in the background");
  /* The first call did not wait for the tuning (its line comes later). */
  ASSERT_TRUE(strstr(kt_test_captured(), ": tuned ") == NULL);
  /* Later calls, until the winner is adopted (a minute at most). */
  for (int i = 0; i < 600 && !strstr(kt_test_captured(), "background tuning"); i++) {
    memset(y, 0, sizeof y);
    ASSERT_EQ(kt_launch(k, (int64_t[]){256}, args, NULL), KT_OK);
    check_affine(x, y, n);
    kt_test_sleep(0.1);
  }
  memset(y, 0, sizeof y);
  ASSERT_EQ(kt_launch(k, (int64_t[]){256}, args, NULL), KT_OK);
  check_affine(x, y, n);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  ASSERT_CONTAINS(out, "key [N=256]: tuned 4 configurations");
  ASSERT_CONTAINS(out, "key [N=256]: background tuning's winner in ");
  ASSERT_EQ(kt_test_count(out, "background tuning's winner"), 1); /* adopted once */
  ASSERT_TRUE(strstr(strstr(out, "background tuning's winner"), ": U=1\n") == NULL);
  ASSERT_EQ(processes_left(mark), 0);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* kt_kernel_prepare opens the device and the database and loads the
 * default, so that the first background call builds and opens nothing: it
 * launches the default and hands the tuning over. */
TEST(prepared_background_miss_builds_nothing) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_HELPER_IDLE_S", "1", 1); /* the helper prepare started leaves soon after */
  const char *mark = mark_processes();
  kt_context *ctx = context(KT_MISS_BACKGROUND, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  kt_test_capture_start();
  ASSERT_EQ(kt_kernel_prepare(k), KT_OK);
  const char *prepared = kt_test_captured();
  ASSERT_CONTAINS(prepared, "prepare: default configuration loaded");
  ASSERT_EQ(kt_test_count(prepared, "miss: configuration built"), 1);
  ASSERT_TRUE(k->runtime && k->runtime->state && k->runtime->device_known && ctx->store);
  ASSERT_EQ(k->runtime->nconfigs, 1);
  float x[256], y[256];
  for (int i = 0; i < 256; i++) x[i] = (float)i;
  int n = 256;
  void *args[] = {x, y, &n};
  ASSERT_EQ(kt_launch(k, (int64_t[]){256}, args, NULL), KT_OK);
  const char *out = kt_test_captured();
  ASSERT_CONTAINS(out, "key [N=256]: default configuration while the tuning runs in the background");
  ASSERT_EQ(kt_test_count(out, "miss: configuration built"), 1); /* the prepared one only */
  ASSERT_EQ(k->runtime->nconfigs, 1);
  check_affine(x, y, n);
  /* A second prepare does nothing more. */
  ASSERT_EQ(kt_kernel_prepare(k), KT_OK);
  ASSERT_EQ(k->runtime->nconfigs, 1);
  kt_test_capture_end();
  ASSERT_EQ(kt_kernel_prepare(NULL), KT_INVALID);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  ASSERT_EQ(processes_left(mark), 0);
}

/* The pid in the trace line "miss: helper spawned (pid N)", the WHICH-th. */
static int spawned_pid(const char *out, int which) {
  const char *at = out;
  for (int i = 0; i <= which; i++) {
    at = strstr(at, "miss: helper spawned (pid ");
    if (!at) return 0;
    at += strlen("miss: helper spawned (pid ");
  }
  return atoi(at);
}

/* The helper's pid once the job's thread spawned it (the call returned
 * before): from the trace line, waiting up to 10 s x the slowdown. */
static int background_helper_pid(void) {
  int pid = 0;
  for (int i = 0; i < 100 * kt_test_slowdown() && (pid = spawned_pid(kt_test_captured(), 0)) == 0; i++)
    kt_test_sleep(0.1);
  return pid;
}

/* A background helper killed mid-tuning: the application stays on the
 * fallback, says so once, and the helper's zygote and worker are gone. */
TEST(background_helper_killed_mid_tuning) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1);
  const char *mark = mark_processes();
  kt_context *ctx = context(KT_MISS_BACKGROUND, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(20000000), "c"); /* a tenth of a second a run */
  float x[256], y[256];
  for (int i = 0; i < 256; i++) x[i] = (float)i;
  int n = 256;
  void *args[] = {x, y, &n};
  kt_test_capture_start();
  ASSERT_EQ(kt_launch(k, (int64_t[]){256}, args, NULL), KT_OK);
  ASSERT_CONTAINS(kt_test_captured(), "while the tuning runs in the background (in ktune-tuner)");
  int pid = background_helper_pid();
  ASSERT_TRUE(pid > 1);
  /* Killed while it measures: once its worker verified a configuration. */
  ASSERT_TRUE(await_captured("worker: verified", 10));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  for (int i = 0; i < 100 && !strstr(kt_test_captured(), "background tuning"); i++) {
    ASSERT_EQ(kt_launch(k, (int64_t[]){256}, args, NULL), KT_OK);
    kt_test_sleep(0.1);
  }
  memset(y, 0, sizeof y);
  ASSERT_EQ(kt_launch(k, (int64_t[]){256}, args, NULL), KT_OK);
  check_affine(x, y, n);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  char want[128];
  snprintf(want, sizeof want, "background tuning failed, kept the fallback (the tuning helper (pid %d) was killed",
           pid);
  ASSERT_CONTAINS(out, want);
  ASSERT_CONTAINS(out, "signal 9 (Killed) before it replied) in ");
  ASSERT_EQ(processes_left(mark), 0);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* Runs APP, which exits (0: all went well), in a forked application
 * process with stderr captured, and expects it to exit 0 and no process of
 * MARK's to be left within 10 s (its helpers end with it or once their
 * tuning is stored); returns what the application printed. */
static const char *run_application(void (*app)(const char *mark), const char *mark) {
  kt_test_capture_start();
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) app(mark);
  int status = -1;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(processes_left(mark), 0);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  return out;
}

static void exits_while_tuning_in_the_background(const char *mark) {
  (void)mark; /* the helper is known to run from the job thread's trace */
  kt_context *ctx = context(KT_MISS_BACKGROUND, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  float x[256], y[256];
  for (int i = 0; i < 256; i++) x[i] = (float)i;
  int n = 256;
  void *args[] = {x, y, &n};
  int rc = kt_launch(k, (int64_t[]){256}, args, NULL);
  /* The call returns before the job's thread spawned the helper: the
   * application exits once the tuning started, that is once the job thread
   * has told the helper its tensors are in (its trace line, in the stderr
   * run_application captures). Exiting before that leaves the helper no
   * data, which it rightly refuses to tune on. */
  await_captured("miss: the helper told that the tensors are in", 5);
  fflush(NULL);
  _exit(rc == KT_OK ? 0 : 1); /* the tuning still running */
}

/* An application that exits while its background tuning runs: the helper
 * finishes that tuning and stores the winner, then nothing is left. */
TEST(background_tuning_finishes_after_the_application_exits) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1); /* the application waits for a trace line */
  const char *out = run_application(exits_while_tuning_in_the_background, mark_processes());
  ASSERT_CONTAINS(out, "while the tuning runs in the background");
  ASSERT_CONTAINS(out, "key [N=256]: tuned 4 configurations");
  /* The next run of the application finds the winner stored. */
  kt_context *ctx = context(KT_MISS_BACKGROUND, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  float x[256], y[256];
  for (int i = 0; i < 256; i++) x[i] = (float)i;
  int n = 256;
  void *args[] = {x, y, &n};
  kt_test_capture_start();
  ASSERT_EQ(kt_launch(k, (int64_t[]){256}, args, NULL), KT_OK);
  out = kt_test_captured();
  kt_test_capture_end();
  ASSERT_CONTAINS(out, "key [N=256]: stored winner in ");
  check_affine(x, y, n);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}

/* ---- a warm helper ------------------------------------------------------ */

/* A blocking miss of affine at N on K, its output checked; what it printed. */
static const char *miss_affine(kt_kernel *k, int n) {
  static float x[1024], y[1024];
  const char *out;
  ASSERT_EQ(launch_affine_captured(k, x, y, n, &out), KT_OK);
  check_affine(x, y, n);
  return out;
}

/* The second key of an application's kernel goes to the helper that tuned
 * the first: no new process, and its worker's device stays open (bound to
 * the new tuning, not opened again). The helper leaves when the
 * application ends, long before its idle time. */
static void tunes_two_keys(const char *mark) {
  (void)mark;
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  static float x[512], y[512];
  for (int n = 256; n <= 512; n *= 2) { /* stderr is captured already */
    for (int i = 0; i < n; i++) x[i] = (float)i;
    void *args[] = {x, y, &n};
    if (kt_launch(k, (int64_t[]){n}, args, NULL) != KT_OK) _exit(1);
    check_affine(x, y, n);
  }
  fflush(NULL);
  _exit(0); /* the warm helper still waiting */
}

TEST(warm_helper_tunes_the_next_key_with_its_device_open) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_HELPER_IDLE_S", "60", 1);
  /* No process left within 10 s, not the 60 s idle: the helper leaves with
   * the application. */
  const char *out = run_application(tunes_two_keys, mark_processes());
  ASSERT_CONTAINS(out, "key [N=256]: tuned 4 configurations");
  ASSERT_CONTAINS(out, "key [N=512]: tuned 4 configurations");
  ASSERT_EQ(kt_test_count(out, "miss: helper spawned"), 1);
  ASSERT_EQ(kt_test_count(out, "miss: handed to the warm helper"), 1);
  ASSERT_EQ(kt_test_count(out, "helper: a request of the application while warm"), 1);
  ASSERT_EQ(kt_test_count(out, "worker: device open"), 1);
  ASSERT_EQ(kt_test_count(out, "worker: bound to affine"), 1);
  ASSERT_CONTAINS(out, "helper: leaving (no more requests)");
}

/* Keys of 512, 256, 1024 and 65536 elements on one warm helper: its tuner
 * maps the caller's tensors in the request instead of copying them, its worker
 * keeps its (page-locked) scratch buffer for the smaller second key and
 * grows it for the larger ones, and its device buffers (the tensors between
 * their guard zones, the decoys) are taken from the last tuning's where
 * they are large enough, instead of being made anew for each key. */
static void tunes_four_keys(const char *mark) {
  (void)mark;
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  static float x[65536], y[65536];
  int keys[] = {512, 256, 1024, 65536};
  for (int i = 0; i < 4; i++) {
    int n = keys[i];
    for (int j = 0; j < n; j++) x[j] = (float)(j + 1000 * i); /* not the last key's data */
    void *args[] = {x, y, &n};
    if (kt_launch(k, (int64_t[]){n}, args, NULL) != KT_OK) _exit(1);
    check_affine(x, y, n);
  }
  fflush(NULL);
  _exit(0);
}

TEST(warm_worker_keeps_its_scratch_and_device_buffers_between_keys) {
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_HELPER_IDLE_S", "60", 1);
  /* The tensors through the request, whose memory is reused too (shared,
   * x would also take a buffer of the pool: worker_state.initdev). */
  setenv("KTUNE_MISS_TENSORS", "host", 1);
  const char *out = run_application(tunes_four_keys, mark_processes());
  ASSERT_EQ(kt_test_count(out, "worker: bound to affine"), 3);
  ASSERT_EQ(kt_test_count(out, "worker: scratch kept (2048 bytes)"), 1);
  ASSERT_EQ(kt_test_count(out, "worker: scratch grown from 2048 to 4096 bytes"), 1);
  ASSERT_EQ(kt_test_count(out, "worker: scratch grown from 4096 to 262144 bytes"), 1);
  /* x and y between guard zones (each zone a tensor's length rounded up to
   * 4 KiB, plus 64 KiB: one size for 256 to 1024 floats), and y's decoys. */
  ASSERT_EQ(kt_test_count(out, "worker: device buffers: 0 kept from the last tuning, 2 allocated, 0 freed"), 1);
  ASSERT_EQ(kt_test_count(out, "worker: device buffers: 2 kept from the last tuning, 0 allocated, 0 freed"), 1);
  /* 1024 floats: the decoys' 2 KiB buffer of the first key is too small */
  ASSERT_EQ(kt_test_count(out, "worker: device buffers: 2 kept from the last tuning, 0 allocated, 1 freed"), 1);
  ASSERT_EQ(kt_test_count(out, "worker: device buffers: 0 kept from the last tuning, 2 allocated, 3 freed"), 1);
  /* The helper tuned on the tensors where the application wrote them into
   * the request, not on a copy, each key: its outputs were right. */
  ASSERT_EQ(kt_test_count(out, "setup: the caller's tensors used where the application wrote them"), 4);
  /* Each later key's request is written into the last one's memfd, which
   * the warm helper kept: its pages exist for 256 and 1024 floats (one page
   * per tensor, as for 512), and the memfd grows for 65536. */
  ASSERT_EQ(kt_test_count(out, "miss: the memory of the last request reused"), 3);
  ASSERT_EQ(kt_test_count(out, "miss: the memory of the last request reused (grown from"), 1);
  ASSERT_EQ(kt_test_count(out, "miss: the request's pages for the caller's tensors mapped at once"), 4);
  /* The references' pages of the reused memfd exist: the tuner's thread
   * populates nothing there (setup.c, populate_references). */
  ASSERT_EQ(kt_test_count(out, "setup: the references' pages filled (0 bytes were missing, threads: 1)"), 2);
}

/* A reference of two parts (setup.c, REFERENCE_PART: 16 MiB): the
 * tuner's threads allocate the pages of a fresh request's reference, each
 * its share, and say once how many bytes had none. */
enum { TWO_PARTS = (16 << 20) / 4 + 1 };

static void tunes_a_reference_of_two_parts(const char *mark) {
  (void)mark;
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  static float x[TWO_PARTS], y[TWO_PARTS];
  int n = TWO_PARTS;
  for (int j = 0; j < n; j++) x[j] = (float)(j % 4096);
  void *args[] = {x, y, &n};
  if (kt_launch(k, (int64_t[]){n}, args, NULL) != KT_OK) _exit(1);
  check_affine(x, y, n);
  fflush(NULL);
  _exit(0);
}

TEST(reference_pages_of_a_fresh_request_are_allocated_by_threads) {
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_MISS_TENSORS", "host", 1);
  const char *out = run_application(tunes_a_reference_of_two_parts, mark_processes());
  ASSERT_EQ(kt_test_count(out, "setup: the references' pages filled ("), 1);
  ASSERT_EQ(kt_test_count(out, "setup: the references' pages filled (16777220 bytes were missing, threads: 2)"), 1);
}

/* The time of the first trace line holding WHAT, or -1. */
static double trace_time(const char *out, const char *what) {
  const char *at = strstr(out, what);
  if (!at) return -1;
  while (at > out && at[-1] != '\n') at--;
  return strncmp(at, "ktune-trace ", 12) == 0 ? atof(at + 12) : -1;
}

/* kt_kernel_prepare starts the warm helper: the first blocking miss is
 * handed to it, its worker having opened its device before the miss (no
 * process start, no device open on the miss's path), and no helper is
 * left once the application exits. */
static void prepares_then_misses(const char *mark) {
  (void)mark;
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  if (kt_kernel_prepare(k) != KT_OK) _exit(1);
  await_captured("helper: prepared: the worker's device is open", 10);
  static float x[256], y[256];
  int n = 256;
  for (int i = 0; i < n; i++) x[i] = (float)i;
  void *args[] = {x, y, &n};
  if (kt_launch(k, (int64_t[]){n}, args, NULL) != KT_OK) _exit(1);
  check_affine(x, y, n);
  fflush(NULL);
  _exit(0); /* the warm helper still waiting, 60 s idle */
}

TEST(prepared_kernel_first_miss_goes_to_a_helper_with_its_device_open) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_HELPER_IDLE_S", "60", 1);
  const char *out = run_application(prepares_then_misses, mark_processes()); /* none left within 10 s */
  ASSERT_CONTAINS(out, "key [N=256]: tuned 4 configurations");
  ASSERT_EQ(kt_test_count(out, "prepare: helper spawned"), 1);
  ASSERT_EQ(kt_test_count(out, "miss: helper spawned"), 0);
  ASSERT_EQ(kt_test_count(out, "miss: handed to the warm helper"), 1);
  ASSERT_EQ(kt_test_count(out, "miss: handed to the spare job thread"), 1); /* no thread created on the call */
  ASSERT_EQ(kt_test_count(out, "miss: job thread started"), 0);
  ASSERT_EQ(kt_test_count(out, "worker: device open"), 1);
  ASSERT_EQ(kt_test_count(out, "worker: bound to affine"), 1);
  double opened = trace_time(out, "helper: prepared: the worker's device is open");
  double missed = trace_time(out, "miss: a shape this handle has not launched");
  ASSERT_TRUE(opened > 0 && missed > opened);
  ASSERT_CONTAINS(out, "helper: leaving (no more requests)");
}

/* A warm helper killed between misses: the next miss notices and starts a
 * new one, which tunes. */
TEST(warm_helper_killed_between_misses_is_replaced) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  setenv("KTUNE_TRACE", "1", 1);
  /* Read when the context is created: long enough for the kill below to find
   * the helper warm, short enough that the replacement leaves within
   * processes_left's 10 s. */
  setenv("KTUNE_HELPER_IDLE_S", "4", 1);
  const char *mark = mark_processes();
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  const char *out = miss_affine(k, 256);
  ASSERT_CONTAINS(out, "key [N=256]: tuned 4 configurations");
  int pid = spawned_pid(out, 0);
  ASSERT_TRUE(pid > 1);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  out = miss_affine(k, 512);
  ASSERT_CONTAINS(out, "key [N=512]: tuned 4 configurations");
  int again = spawned_pid(out, 0);
  ASSERT_TRUE(again > 1 && again != pid);
  /* Noticed either way: dead before the miss, the handing over failed or
   * was not taken. */
  ASSERT_TRUE(strstr(out, "handed to the warm helper") == NULL || strstr(out, "is leaving") ||
              strstr(out, "ended before it took the request"));
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  ASSERT_EQ(processes_left(mark), 0);
}

/* With KTUNE_HELPER_IDLE_S=0 no helper stays: each miss starts its own. */
TEST(no_warm_helper_with_idle_zero) {
  setenv("KTUNE_TRACE", "1", 1);
  setenv("KTUNE_HELPER_IDLE_S", "0", 1);
  const char *mark = mark_processes();
  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
  const char *first = miss_affine(k, 256);
  ASSERT_EQ(kt_test_count(first, "miss: helper spawned"), 1);
  ASSERT_TRUE(strstr(first, "worker: kept") == NULL);
  const char *second = miss_affine(k, 512);
  ASSERT_EQ(kt_test_count(second, "miss: helper spawned"), 1);
  ASSERT_TRUE(strstr(second, "handed to the warm helper") == NULL);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  ASSERT_EQ(processes_left(mark), 0);
}

/* ---- one tuning per key ----------------------------------------------- */

typedef struct launcher {
  kt_context *ctx;
  kt_kernel *k;
  float x[256], y[256];
  int rc;
} launcher;

static void *launch_thread(void *arg) {
  launcher *l = arg;
  int n = 256;
  void *args[] = {l->x, l->y, &n};
  l->rc = kt_launch(l->k, (int64_t[]){256}, args, NULL);
  return NULL;
}

TEST(two_threads_missing_one_key_tune_once) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  launcher l[2];
  for (int i = 0; i < 2; i++) {
    l[i].ctx = context(KT_MISS_TUNE, NULL); /* a context and a handle per thread */
    l[i].k = load(l[i].ctx, "affine.c", slow_source(0), "c");
    for (int j = 0; j < 256; j++) l[i].x[j] = (float)(j + i);
  }
  kt_test_capture_start();
  pthread_t th[2];
  for (int i = 0; i < 2; i++) ASSERT_EQ(pthread_create(&th[i], NULL, launch_thread, &l[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(l[i].rc, KT_OK);
    check_affine(l[i].x, l[i].y, 256);
  }
  if (kt_test_count(out, ": tuned ") != 1) kt_test_fail(__FILE__, __LINE__, "expected one tuning:\n%s", out);
  /* The other thread either waited for that tuning or found its winner stored. */
  ASSERT_TRUE(strstr(out, "winner of the tuning another thread started") || strstr(out, "stored winner"));
  for (int i = 0; i < 2; i++) {
    kt_kernel_destroy(l[i].k);
    kt_context_destroy(l[i].ctx);
  }
}

TEST(two_processes_sharing_a_database_tune_once) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  const char *db = tmp_path("results.db");
  (void)db;
  kt_test_capture_start();
  pid_t pids[2];
  for (int i = 0; i < 2; i++) {
    fflush(NULL);
    pids[i] = fork();
    if (pids[i] == 0) {
      kt_context *ctx = context(KT_MISS_TUNE, NULL);
      kt_kernel *k = load(ctx, "affine.c", slow_source(0), "c");
      float x[256], y[256];
      for (int j = 0; j < 256; j++) x[j] = (float)j;
      int n = 256;
      void *args[] = {x, y, &n};
      int rc = kt_launch(k, (int64_t[]){256}, args, NULL);
      for (int j = 0; j < 256; j++)
        if (y[j] != 2.0f * x[j] + 1.0f) rc = KT_INTERNAL;
      kt_kernel_destroy(k);
      kt_context_destroy(ctx);
      fflush(NULL);
      _exit(rc == KT_OK ? 0 : 1);
    }
  }
  for (int i = 0; i < 2; i++) {
    int status = -1;
    ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const char *out = kt_test_captured();
  kt_test_capture_end();
  if (kt_test_count(out, ": tuned ") != 1) kt_test_fail(__FILE__, __LINE__, "expected one tuning:\n%s", out);
  ASSERT_EQ(kt_test_count(out, "stored winner"), 1); /* found after the lock, or before asking for it */
}

/* ---- an application that owns its OpenCL ------------------------------ */

#ifdef KTUNE_HAVE_CL_H
static const char *scale_cl = "// @autotune(WG in [16, 32, 64])\n"
                              "// @kernel twice_plus(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
                              "// @grid(cdiv(N, WG))\n"
                              "// @block(WG)\n"
                              "// @dims(N = 1024)\n"
                              "__kernel void twice_plus(__global const float *x, __global float *y, int n) {\n"
                              "  int i = get_global_id(0);\n"
                              "  if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
                              "}\n";

/* The application initialises OpenCL itself (its own platform query,
 * context and buffer) before kt_launch, then passes buffers of ktune's
 * context (until the API takes the application's own, the only ones the
 * backend can read); the miss tunes in the helper on those buffers' data. */
TEST(opencl_application_misses_and_tunes_through_the_helper) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  kt__errbuf eb;
  const kt__cl_api *cl = kt__cl_load(&eb);
  if (!cl) kt_test_fail(__FILE__, __LINE__, "OpenCL: %s", eb.msg);
  cl_platform_id platform;
  cl_device_id device;
  cl_int err;
  ASSERT_EQ(cl->clGetPlatformIDs(1, &platform, NULL), CL_SUCCESS);
  ASSERT_EQ(cl->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), CL_SUCCESS);
  cl_context own = cl->clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_mem own_buf = cl->clCreateBuffer(own, CL_MEM_READ_WRITE, 4096, NULL, &err);
  ASSERT_EQ(err, CL_SUCCESS);

  kt_context *ctx = context(KT_MISS_TUNE, NULL);
  kt_kernel *k = load(ctx, "twice_plus.cl", scale_cl, "cl");
  void *state = NULL;
  ASSERT_EQ(kt__runtime_device(k, &state), KT_OK);
  enum { N = 1000 };
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i % 97) * 0.5f;
  void *bx = NULL, *by = NULL;
  ASSERT_EQ(kt__be_alloc(k->backend, state, sizeof x, &bx, &eb), KT_OK);
  ASSERT_EQ(kt__be_alloc(k->backend, state, sizeof y, &by, &eb), KT_OK);
  ASSERT_EQ(kt__be_upload(k->backend, state, bx, x, sizeof x, &eb), KT_OK);
  int n = N;
  void *args[] = {bx, by, &n};
  kt_test_capture_start();
  int rc = kt_launch(k, (int64_t[]){N}, args, NULL);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  if (rc != KT_OK) kt_test_fail(__FILE__, __LINE__, "kt_launch: %s\n%s", kt_errmsg(ctx), out);
  ASSERT_CONTAINS(out, "ktune: kernel twice_plus, key [N=1000]: tuned 3 configurations");
  ASSERT_EQ(kt__be_download(k->backend, state, y, by, sizeof y, &eb), KT_OK);
  check_affine(x, y, N);
  kt__be_release(k->backend, state, bx);
  kt__be_release(k->backend, state, by);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  cl->clReleaseMemObject(own_buf);
  cl->clReleaseContext(own);
}

/* BAD=1 is faster (BAD=0 spins) but wrong only on the sentinel x[0] == 777:
 * a tuning that saw the input as it was at the call rejects it, one that
 * saw it after the caller overwrote x[0] would pick it. */
static const char *sentinel_cl = "// @autotune(BAD in [0, 1], WG in [16, 32])\n"
                                 "// @kernel scale3(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
                                 "// @grid(cdiv(N, WG))\n"
                                 "// @block(WG)\n"
                                 "// @dims(N = 256)\n"
                                 "__kernel void scale3(__global const float *x, __global float *y, int n) {\n"
                                 "  int i = get_global_id(0);\n"
                                 "  if (i >= n) return;\n"
                                 "  y[i] = 3.0f * x[i];\n"
                                 "  if (!BAD) {\n"
                                 "    float t = x[i];\n"
                                 "    for (int r = 0; r < 20000; r++) t = t * 0.5f + 1.0f;\n"
                                 "    if (t == -12345.0f) y[i] = 0;\n"
                                 "  }\n"
                                 "  if (BAD && i == 1 && x[0] == 777.0f) y[1] = 0;\n"
                                 "}\n";

/* The background call returns before the caller's tensors are copied (the
 * copy is a snapshot on the caller's queue): the caller overwrites its
 * input at once, and the tuning still sees it as it was at the call. */
TEST(opencl_background_tunes_on_the_input_as_it_was_at_the_call) {
  setenv("KTUNE_PRINT_AUTOTUNING", "1", 1);
  kt_context *ctx = context(KT_MISS_BACKGROUND, NULL);
  kt_kernel *k = load(ctx, "scale3.cl", sentinel_cl, "cl");
  void *state = NULL;
  kt__errbuf eb;
  ASSERT_EQ(kt__runtime_device(k, &state), KT_OK);
  enum { N = 256 };
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  x[0] = 777.0f;
  void *bx = NULL, *by = NULL;
  ASSERT_EQ(kt__be_alloc(k->backend, state, sizeof x, &bx, &eb), KT_OK);
  ASSERT_EQ(kt__be_alloc(k->backend, state, sizeof y, &by, &eb), KT_OK);
  ASSERT_EQ(kt__be_upload(k->backend, state, bx, x, sizeof x, &eb), KT_OK);
  int n = N;
  void *args[] = {bx, by, &n};
  kt_test_capture_start();
  ASSERT_EQ(kt_launch(k, (int64_t[]){N}, args, NULL), KT_OK);
  x[0] = 0; /* the caller's next input, written on its queue behind the call */
  ASSERT_EQ(kt__be_upload(k->backend, state, bx, x, sizeof x, &eb), KT_OK);
  ASSERT_CONTAINS(kt_test_captured(), "key [N=256]: default configuration while the tuning runs in the background");
  ASSERT_TRUE(strstr(kt_test_captured(), "copied them before returning") == NULL); /* the snapshot was taken */
  for (int i = 0; i < 600 && !strstr(kt_test_captured(), "background tuning"); i++) {
    ASSERT_EQ(kt_launch(k, (int64_t[]){N}, args, NULL), KT_OK);
    kt_test_sleep(0.1);
  }
  ASSERT_EQ(kt_launch(k, (int64_t[]){N}, args, NULL), KT_OK);
  const char *out = kt_test_captured();
  kt_test_capture_end();
  ASSERT_CONTAINS(out, "key [N=256]: tuned 4 configurations");
  ASSERT_CONTAINS(out, "key [N=256]: background tuning's winner in ");
  const char *winner = strstr(out, "background tuning's winner");
  const char *bad0 = winner ? strstr(winner, "BAD=0") : NULL;
  if (!bad0 || memchr(winner, '\n', (size_t)(bad0 - winner))) /* on the winner's own line */
    kt_test_fail(__FILE__, __LINE__, "the tuning did not see the input as it was at the call:\n%s", out);
  ASSERT_EQ(kt__be_download(k->backend, state, y, by, sizeof y, &eb), KT_OK);
  for (int i = 0; i < N; i++) ASSERT_EQ(y[i], 3.0f * x[i]);
  kt__be_release(k->backend, state, bx);
  kt__be_release(k->backend, state, by);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
}
#else
/* Like test_opencl: without OpenCL the case fails rather than skips. */
TEST(opencl_application_misses_and_tunes_through_the_helper) {
  kt_test_fail(__FILE__, __LINE__, "ktune was built without CL/cl.h: the OpenCL backend is unavailable");
}
TEST(opencl_background_tunes_on_the_input_as_it_was_at_the_call) {
  kt_test_fail(__FILE__, __LINE__, "ktune was built without CL/cl.h: the OpenCL backend is unavailable");
}
#endif
