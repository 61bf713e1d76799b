/* The device worker with the CPU backend, end to end: tiny C kernels parsed
 * from strings, compiled by the system compiler, run in a forked worker, and
 * every failure classified while the worker survives or is replaced. */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "lang/parser.h"
#include "launch/args.h"
#include "tuner/worker_client.h"

/* VARIANT 0 is the reference; 1 is correct too (another loop order); the
 * others fail in the ways the worker must tell apart. */
static const char *const VARIANTS =
    "#include <stdlib.h>\n"
    "// @autotune(VARIANT in [0, 1, 2, 3, 4, 5, 6, 7])\n"
    "// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
    "// @dims(N = 1000)\n"
    "void scale(const float *x, float *y, int n) {\n"
    "#if VARIANT == 3\n"
    "#error nope\n"
    "#endif\n"
    "  if (VARIANT == 2) *(volatile int *)0 = 1;  /* crashes */\n"
    "  if (VARIANT == 4) for (volatile int spin = 1; spin;) {}  /* hangs */\n"
    "  if (VARIANT == 7) abort();\n"
    "  if (VARIANT == 1) { for (int i = n - 1; i >= 0; i--) y[i] = 2 * x[i]; return; }\n"
    "  int end = VARIANT == 6 ? n - 1 : n;  /* 6 forgets the last element */\n"
    "  for (int i = 0; i < end; i++) y[i] = 2 * x[i] + (VARIANT == 5 && i == 17 ? 0.5f : 0);  /* 5 is wrong */\n"
    "}\n";

typedef struct fixture {
  kt__file *file;
  const kt__kernel_decl *decl;
  int64_t sizes[16];
  kt__env env;
  kt__argset *args;
  char workdir[64];
  kt__worker *w;
  kt__device_info info;
} fixture;

/* Parses SRC and binds the runtime sizes from @dims. */
static void parse(fixture *f, const char *src) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  f->file = kt__parse_string("test.c", src, KT__LANG_C, &d);
  if (!f->file) kt_test_fail(__FILE__, __LINE__, "parse failed:\n%s", d.errors.s ? d.errors.s : "");
  kt__diag_free(&d);
  f->decl = kt__file_kernel(f->file, NULL, "the name", NULL);
  ASSERT_TRUE(f->decl != NULL);
  ASSERT_TRUE(f->decl->nsizes <= 16);
  for (int i = 0; i < f->decl->nsizes; i++)
    for (int j = 0; j < f->decl->ndims; j++)
      if (strcmp(f->decl->dims[j].name, f->decl->sizes[i]) == 0) {
        kt__eval_error ee;
        ASSERT_EQ(kt__expr_eval(f->decl->dims[j].value, NULL, &f->sizes[i], &ee), 0);
      }
  f->env = (kt__env){(const char *const *)f->decl->sizes, f->sizes, f->decl->nsizes, NULL};
}

static void start(fixture *f, const char *src) {
  memset(f, 0, sizeof *f);
  parse(f, src);
  kt__errbuf eb = {{0}};
  if (kt__argset_map(f->decl, &f->env, 0, &f->args, &eb) != KT_OK ||
      kt__argset_fill(f->decl, 42, NULL, NULL, NULL, f->args, &eb) != KT_OK)
    kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
  snprintf(f->workdir, sizeof f->workdir, "/tmp/kt-test-worker-XXXXXX");
  ASSERT_TRUE(mkdtemp(f->workdir) != NULL);
  kt__worker_setup ws = {.backend = &kt__backend_cpu,
                         .file = f->file,
                         .decl = f->decl,
                         .sizes = &f->env,
                         .args = f->args,
                         .atol = -1,
                         .rtol = -1,
                         .workdir = f->workdir};
  if (kt__worker_start(&ws, &f->info, &f->w, &eb) != KT_OK) kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
}

static void finish(fixture *f) {
  kt__worker_stop(f->w);
  kt__argset_free(f->args);
  kt__file_free(f->file);
  /* Names first, then unlink: removing while reading may skip entries. */
  char names[64][256];
  int n = 0;
  DIR *dir = opendir(f->workdir);
  for (struct dirent *e; dir && n < 64 && (e = readdir(dir));)
    if (e->d_name[0] != '.') snprintf(names[n++], sizeof names[0], "%s", e->d_name);
  if (dir) closedir(dir);
  for (int i = 0; i < n; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%.255s", f->workdir, names[i]);
    unlink(path);
  }
  rmdir(f->workdir);
}

/* Compiles VALUE of the one tuned name in the tuner process, as the tuner's
 * compile threads do. */
static kt__status compile(const fixture *f, int64_t value, kt__artifact *a, kt__errbuf *eb) {
  char tag[32];
  snprintf(tag, sizeof tag, "v%lld", (long long)value);
  const char *names[] = {f->decl->tune[0].name};
  kt__build b = {.file = f->file,
                 .decl = f->decl,
                 .names = names,
                 .values = &value,
                 .n = 1,
                 .device = &f->info,
                 .workdir = f->workdir,
                 .tag = tag,
                 .timeout_s = 60};
  return kt__be_compile(&kt__backend_cpu, &b, a, eb);
}

/* Asks the worker about VALUE; with COMPILED the tuner compiles first. */
static kt__reply ask(fixture *f, kt__req_kind kind, int64_t value, bool compiled, double timeout_s) {
  kt__request rq = {.kind = kind, .id = (uint64_t)value, .nvalues = 1, .values = {value}, .reps = 3};
  rq.measure = (kt__measure_opts){.min_sample_s = 1e-4, .max_total_s = 0.2};
  if (compiled) {
    kt__artifact a;
    kt__errbuf eb = {{0}};
    if (compile(f, value, &a, &eb) != KT__ST_OK) kt_test_fail(__FILE__, __LINE__, "compile: %s", eb.msg);
    snprintf(rq.artifact, sizeof rq.artifact, "%s", a.path);
    kt__artifact_free(&a);
  }
  kt__reply rep;
  kt__worker_request(f->w, &rq, &rep, timeout_s);
  return rep;
}

#define ASSERT_STATUS(rep, st)                                                                                    \
  do {                                                                                                            \
    kt__reply r_ = (rep);                                                                                         \
    if (r_.status != (st))                                                                                        \
      kt_test_fail(__FILE__, __LINE__, "status %s, want %s: %s", kt__status_name(r_.status), kt__status_name(st), \
                   r_.msg);                                                                                       \
  } while (0)

TEST(reference_then_correct_config_is_timed) {
  fixture f;
  start(&f, VARIANTS);
  ASSERT_STREQ(f.info.backend, "cpu");
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 0, true, 30), KT__ST_OK);
  /* The reference is in shared memory, visible here in the parent. */
  const kt__host_tensor *x = &f.args->tensors[0], *y = &f.args->tensors[1];
  ASSERT_TRUE(y->reference != NULL && x->reference == NULL);
  for (int i = 0; i < 1000; i++) ASSERT_EQ(((float *)y->reference)[i], 2 * ((float *)x->initial)[i]);
  kt__reply r = ask(&f, KT__REQ_EVAL, 1, true, 30);
  ASSERT_STATUS(r, KT__ST_OK);
  ASSERT_TRUE(r.stats.nsamples >= 1);
  ASSERT_TRUE(r.stats.median > 0 && r.stats.median < 1e-2);
  ASSERT_TRUE(r.stats.min <= r.stats.median && r.stats.median <= r.stats.max);
  kt__reply s = ask(&f, KT__REQ_SAMPLE, 1, true, 30);
  ASSERT_STATUS(s, KT__ST_OK);
  ASSERT_TRUE(s.sample_s > 0);
  ASSERT_EQ(kt__worker_restarts(f.w), 0);
  finish(&f);
}

/* Host timings count the time the worker ran, not the time it waited for
 * the core: a kernel that sleeps 3 ms (as a preempted one waits) times at a
 * fraction of that; one that runs two threads of its own at once times at
 * its wall-clock time, not the sum of their CPU times. */
static const char *const WAITING =
    "#include <pthread.h>\n"
    "#include <time.h>\n"
    "// @autotune(HOW in [0, 1, 2])\n"
    "// @kernel waits(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)\n"
    "// @dims(N = 1000)\n"
    "static void *spin(void *arg) {\n"
    "  struct timespec t0, t;\n"
    "  clock_gettime(CLOCK_MONOTONIC, &t0);\n"
    "  do clock_gettime(CLOCK_MONOTONIC, &t); while ((t.tv_sec - t0.tv_sec) * 1e9 + (t.tv_nsec - t0.tv_nsec) < 3e6);\n"
    "  return arg;\n"
    "}\n"
    "void waits(const float *x, float *y, int n) {\n"
    "  struct timespec d = {0, 3000000};\n"
    "  if (HOW == 1) nanosleep(&d, 0);\n"
    "  if (HOW == 2) { pthread_t th; pthread_create(&th, 0, spin, 0); spin(0); pthread_join(th, 0); }\n"
    "  for (int i = 0; i < n; i++) y[i] = 2 * x[i];\n"
    "}\n";

TEST(host_timings_count_the_time_the_worker_ran) {
  fixture f;
  start(&f, WAITING);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 0, true, 30), KT__ST_OK);
  kt__reply slept = ask(&f, KT__REQ_EVAL, 1, true, 30);
  ASSERT_STATUS(slept, KT__ST_OK);
  if (!(slept.stats.median < 1e-3)) kt_test_fail(__FILE__, __LINE__, "a 3 ms sleep timed %g s", slept.stats.median);
  kt__reply threads = ask(&f, KT__REQ_EVAL, 2, true, 30);
  ASSERT_STATUS(threads, KT__ST_OK);
  /* Two threads spinning 3 ms each, side by side on two cores (6 ms of CPU
   * time) or one after the other on a busy machine: 3 to 6 ms either way. */
  if (!(threads.stats.median >= 2.9e-3 && threads.stats.median < 0.1))
    kt_test_fail(__FILE__, __LINE__, "two threads of 3 ms timed %g s", threads.stats.median);
  finish(&f);
}

TEST(wrong_result_is_correctness) {
  fixture f;
  start(&f, VARIANTS);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 0, false, 30), KT__ST_OK);
  kt__reply r = ask(&f, KT__REQ_VERIFY, 5, false, 30);
  ASSERT_STATUS(r, KT__ST_CORRECTNESS);
  ASSERT_CONTAINS(r.msg, "y[17]");
  ASSERT_CONTAINS(r.msg, "1 of 1000 elements differ");
  kt__reply e = ask(&f, KT__REQ_EVAL, 5, false, 30); /* never timed */
  ASSERT_STATUS(e, KT__ST_CORRECTNESS);
  ASSERT_EQ(e.stats.nsamples, 0);
  ASSERT_STATUS(ask(&f, KT__REQ_VERIFY, 1, false, 30), KT__ST_OK);
  finish(&f);
}

TEST(unwritten_output_element_fails) {
  fixture f;
  start(&f, VARIANTS);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 0, true, 30), KT__ST_OK);
  kt__reply r = ask(&f, KT__REQ_VERIFY, 6, true, 30);
  ASSERT_STATUS(r, KT__ST_CORRECTNESS);
  ASSERT_CONTAINS(r.msg, "y[999]: got nan");
  finish(&f);
}

TEST(crash_is_runtime_and_worker_restarts) {
  fixture f;
  start(&f, VARIANTS);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 0, true, 30), KT__ST_OK);
  kt__reply r = ask(&f, KT__REQ_EVAL, 2, true, 30);
  ASSERT_STATUS(r, KT__ST_RUNTIME);
  ASSERT_STREQ(r.msg, "worker crashed: SIGSEGV (Segmentation fault)");
  /* The next request gets a new worker that still sees the reference. */
  ASSERT_STATUS(ask(&f, KT__REQ_EVAL, 1, true, 30), KT__ST_OK);
  ASSERT_EQ(kt__worker_restarts(f.w), 1);
  kt__reply a = ask(&f, KT__REQ_VERIFY, 7, true, 30);
  ASSERT_STATUS(a, KT__ST_RUNTIME);
  ASSERT_CONTAINS(a.msg, "SIGABRT");
  ASSERT_STATUS(ask(&f, KT__REQ_VERIFY, 5, true, 30), KT__ST_CORRECTNESS);
  ASSERT_EQ(kt__worker_restarts(f.w), 2);
  finish(&f);
}

TEST(hang_is_timeout_and_worker_restarts) {
  fixture f;
  start(&f, VARIANTS);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 0, true, 30), KT__ST_OK);
  double t0 = kt__now();
  kt__reply r = ask(&f, KT__REQ_EVAL, 4, true, 1);
  double took = kt__now() - t0;
  ASSERT_STATUS(r, KT__ST_TIMEOUT);
  ASSERT_STREQ(r.msg, "exceeded 1 s");
  ASSERT_TRUE(took < 10); /* the compile is most of it */
  ASSERT_STATUS(ask(&f, KT__REQ_EVAL, 1, true, 30), KT__ST_OK);
  ASSERT_EQ(kt__worker_restarts(f.w), 1);
  finish(&f);
}

TEST(compile_failure_keeps_first_lines) {
  fixture f;
  start(&f, VARIANTS);
  kt__artifact a;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(compile(&f, 3, &a, &eb), KT__ST_COMPILE);
  ASSERT_TRUE(a.path == NULL);
  ASSERT_CONTAINS(a.log, "nope");
  ASSERT_CONTAINS(a.log, "test.c:7"); /* the user's label and line, not the copy's */
  ASSERT_CONTAINS(eb.msg, "exited with status");
  kt__artifact_free(&a);
  /* Without an artifact the worker compiles, and says the same. */
  kt__reply r = ask(&f, KT__REQ_VERIFY, 3, false, 30);
  ASSERT_STATUS(r, KT__ST_COMPILE);
  ASSERT_CONTAINS(r.msg, "nope");
  ASSERT_EQ(kt__worker_restarts(f.w), 0);
  finish(&f);
}

TEST(compiler_timeout_and_missing_compiler) {
  fixture f;
  memset(&f, 0, sizeof f);
  parse(&f, VARIANTS);
  snprintf(f.workdir, sizeof f.workdir, "/tmp/kt-test-worker-XXXXXX");
  ASSERT_TRUE(mkdtemp(f.workdir) != NULL);
  kt__artifact a;
  kt__errbuf eb = {{0}};
  setenv("CC", "kt-no-such-compiler", 1);
  ASSERT_EQ(compile(&f, 0, &a, &eb), KT__ST_COMPILE);
  ASSERT_CONTAINS(eb.msg, "cannot run the C compiler `kt-no-such-compiler`");
  kt__artifact_free(&a);
  /* A "compiler" that never finishes is killed at the build's timeout,
   * with the processes it started (as gcc starts cc1). */
  char slow[128];
  snprintf(slow, sizeof slow, "%s/slowcc", f.workdir);
  FILE *sh = fopen(slow, "w");
  ASSERT_TRUE(sh != NULL);
  fputs("#!/bin/sh\nsleep 30\ntrue\n", sh);
  fclose(sh);
  chmod(slow, 0700);
  setenv("CC", slow, 1);
  const char *names[] = {"VARIANT"};
  int64_t v = 0;
  kt__build b = {.file = f.file,
                 .decl = f.decl,
                 .names = names,
                 .values = &v,
                 .n = 1,
                 .workdir = f.workdir,
                 .tag = "slow",
                 .timeout_s = 0.5};
  double t0 = kt__now();
  ASSERT_EQ(kt__be_compile(&kt__backend_cpu, &b, &a, &eb), KT__ST_COMPILE);
  ASSERT_TRUE(kt__now() - t0 < 5);
  ASSERT_CONTAINS(eb.msg, "timeout");
  kt__artifact_free(&a);
  unsetenv("CC");
  f.w = NULL;
  finish(&f);
}

typedef struct compile_job {
  const fixture *f;
  int64_t value;
  kt__status st;
  kt__artifact a;
} compile_job;

static void *compile_thread(void *p) {
  compile_job *j = p;
  kt__errbuf eb;
  j->st = compile(j->f, j->value, &j->a, &eb);
  return NULL;
}

TEST(compiles_in_parallel_threads) {
  fixture f;
  start(&f, VARIANTS);
  compile_job jobs[6];
  pthread_t th[6];
  for (int i = 0; i < 6; i++) {
    jobs[i] = (compile_job){.f = &f, .value = i};
    ASSERT_EQ(pthread_create(&th[i], NULL, compile_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 6; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 6; i++) {
    ASSERT_EQ(jobs[i].st, i == 3 ? KT__ST_COMPILE : KT__ST_OK);
    if (i != 3) ASSERT_EQ(access(jobs[i].a.path, R_OK), 0);
    kt__artifact_free(&jobs[i].a);
  }
  finish(&f);
}

/* An accumulating kernel: timed thousands of times, yet verified from the
 * restored initial content every time. */
static const char *const ACCUMULATE =
    "// @autotune(STEP in [1, 2])\n"
    "// @kernel acc(x: in tensor<f32>[R, C], s: inout tensor<f32>[R, C], t: out tensor<f32>[R] = ones, n: i64 = R * "
    "C)\n"
    "// @dims(R = 8, C = 32)\n"
    "void acc(const float *x, float *s, float *t, long n) {\n"
    "  for (long i = 0; i < n; i += STEP) for (long k = i; k < i + STEP && k < n; k++) s[k] += x[k];\n"
    "  for (long r = 0; r < n / 32; r++) t[r] += 1;\n"
    "}\n";

TEST(inout_and_initialised_outputs_are_restored) {
  fixture f;
  start(&f, ACCUMULATE);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 1, true, 30), KT__ST_OK);
  const kt__host_tensor *x = &f.args->tensors[0], *s = &f.args->tensors[1], *t = &f.args->tensors[2];
  for (int i = 0; i < 256; i++)
    ASSERT_EQ(((float *)s->reference)[i], ((float *)s->initial)[i] + ((float *)x->initial)[i]);
  for (int i = 0; i < 8; i++) ASSERT_EQ(((float *)t->reference)[i], 2);
  kt__reply r = ask(&f, KT__REQ_EVAL, 2, true, 30);
  ASSERT_STATUS(r, KT__ST_OK);
  ASSERT_TRUE(r.stats.reps * r.stats.nsamples > 10);
  /* Verified again after all that timing: still from restored inputs. */
  ASSERT_STATUS(ask(&f, KT__REQ_VERIFY, 2, true, 30), KT__ST_OK);
  finish(&f);
}

static const char *const SCALARS =
    "#include <stdint.h>\n"
    "// @autotune(B in [3])\n"
    "// @kernel put(o: out tensor<f64>[4], a: i64 = N * B, b: f64 = N, c: u8 = 200, d: i32 = -N)\n"
    "// @dims(N = 5)\n"
    "void put(double *o, int64_t a, double b, uint8_t c, int32_t d) { o[0] = a; o[1] = b; o[2] = c; o[3] = d; }\n";

TEST(scalars_reach_the_kernel_typed) {
  fixture f;
  start(&f, SCALARS);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 3, false, 30), KT__ST_OK);
  const double *o = f.args->tensors[0].reference;
  ASSERT_EQ(o[0], 15);
  ASSERT_EQ(o[1], 5);
  ASSERT_EQ(o[2], 200);
  ASSERT_EQ(o[3], -5);
  finish(&f);
}

TEST(bad_request_is_refused) {
  fixture f;
  start(&f, VARIANTS);
  kt__request rq = {.kind = KT__REQ_VERIFY, .id = 9, .nvalues = 2};
  kt__reply rep;
  kt__worker_request(f.w, &rq, &rep, 30);
  ASSERT_STATUS(rep, KT__ST_RUNTIME);
  ASSERT_CONTAINS(rep.msg, "2 values for 1 names");
  ASSERT_EQ(kt__worker_restarts(f.w), 0);
  finish(&f);
}

TEST(list_devices_in_a_child) {
  kt__device_info d[4];
  int n = -1;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__worker_list_devices(&kt__backend_cpu, d, 4, &n, &eb), KT_OK);
  ASSERT_EQ(n, 1);
  ASSERT_STREQ(d[0].backend, "cpu");
  ASSERT_TRUE(d[0].name[0] != 0);
  ASSERT_TRUE(d[0].memory_bytes > 0);
  ASSERT_TRUE(d[0].compute_units >= 1);
  ASSERT_TRUE(d[0].host_cpu);
  ASSERT_TRUE(strstr(d[0].toolchain_version, "version unknown") == NULL);
}

TEST(copied_source_finds_headers_beside_the_file) {
  char dir[64] = "/tmp/kt-test-include-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir) != NULL);
  char header[128], label[128];
  snprintf(header, sizeof header, "%s/twice.h", dir);
  snprintf(label, sizeof label, "%s/k.c", dir); /* never written: the source is a string */
  FILE *h = fopen(header, "w");
  ASSERT_TRUE(h != NULL);
  fputs("#define TWICE(x) (2 * (x))\n", h);
  fclose(h);
  fixture f;
  memset(&f, 0, sizeof f);
  kt__diag d;
  kt__diag_init(&d, NULL);
  f.file = kt__parse_string(label,
                            "#include \"twice.h\"\n"
                            "// @autotune(U in [1])\n"
                            "// @kernel t(o: out tensor<i32>[1])\n"
                            "void t(int *o) { *o = TWICE(21); }\n",
                            KT__LANG_C, &d);
  kt__diag_free(&d);
  ASSERT_TRUE(f.file != NULL);
  f.decl = kt__file_kernel(f.file, NULL, "the name", NULL);
  snprintf(f.workdir, sizeof f.workdir, "/tmp/kt-test-worker-XXXXXX");
  ASSERT_TRUE(mkdtemp(f.workdir) != NULL);
  kt__artifact a;
  kt__errbuf eb = {{0}};
  kt__status st = compile(&f, 1, &a, &eb);
  if (st != KT__ST_OK) kt_test_fail(__FILE__, __LINE__, "%s", eb.msg);
  kt__artifact_free(&a);
  finish(&f);
  unlink(header);
  rmdir(dir);
}

/* ADDR (any value a request carries) is where the kernel stores when it is
 * not 0: the address of the shared inputs, which the worker keeps
 * read-only, so a wild store crashes instead of corrupting every later
 * configuration's inputs. */
static const char *const WILD = "#include <stdint.h>\n"
                                "// @autotune(ADDR in [0])\n"
                                "// @kernel w(x: in tensor<f32>[4], y: out tensor<f32>[4])\n"
                                "void w(const float *x, float *y) {\n"
                                "  if (ADDR) *(volatile float *)(uintptr_t)ADDR = 42;\n"
                                "  for (int i = 0; i < 4; i++) y[i] = x[i];\n"
                                "}\n";

TEST(wild_store_to_shared_inputs_faults) {
  fixture f;
  start(&f, WILD);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 0, false, 30), KT__ST_OK);
  float *initial = f.args->tensors[0].initial, before = initial[0];
  kt__reply r = ask(&f, KT__REQ_VERIFY, (int64_t)(uintptr_t)initial, false, 30);
  ASSERT_STATUS(r, KT__ST_RUNTIME);
  ASSERT_CONTAINS(r.msg, "SIGSEGV");
  ASSERT_TRUE(initial[0] == before);
  float *ref = f.args->tensors[1].reference;
  r = ask(&f, KT__REQ_VERIFY, (int64_t)(uintptr_t)ref, false, 30);
  ASSERT_CONTAINS(r.msg, "SIGSEGV");
  ASSERT_TRUE(ref[0] == before);
  finish(&f);
}

/* @verify(rtol = ...) alone: rtol from the file, atol the type's default. */
static const char *const LOOSE = "// @autotune(V in [0, 1])\n"
                                 "// @kernel l(y: out tensor<f32>[2])\n"
                                 "// @verify(rtol = 0.1)\n"
                                 "void l(float *y) { y[0] = 100 + 5 * V; y[1] = 1e-5f * V; }\n";

TEST(verify_tolerances_from_the_file) {
  fixture f;
  start(&f, LOOSE);
  ASSERT_STATUS(ask(&f, KT__REQ_REFERENCE, 0, false, 30), KT__ST_OK);
  /* 105 vs 100 is within rtol 0.1; 1e-5 vs 0 within the default atol 1e-4. */
  ASSERT_STATUS(ask(&f, KT__REQ_VERIFY, 1, false, 30), KT__ST_OK);
  finish(&f);
}
