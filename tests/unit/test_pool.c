/* The compile pool with two stand-in backends: one whose compile stops
 * when its build is cancelled (as the C compiler, killed), one whose
 * compile cannot be interrupted (as NVRTC). What a time budget needs: a
 * wait that ends at a deadline, and jobs given up without waiting for them,
 * freed (with what they hold) whenever they end. Run under AddressSanitizer
 * (scripts/check-sanitizers.sh), these also check that an abandoned job
 * reads nothing freed and leaks nothing, even when the process exits first. */
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "lang/parser.h"
#include "tuner/pool.h"

static atomic_int compiles_started, compiles_ended;

/* Whether *COUNTER reaches N within SECONDS x kt_test_slowdown() (a wait
 * for an event: the pool's threads run when the machine lets them). */
static bool await_count(atomic_int *counter, int n, double seconds) {
  double end = kt__now() + seconds * kt_test_slowdown();
  while (atomic_load(counter) < n && kt__now() < end) usleep(1000);
  return atomic_load(counter) >= n;
}

/* Runs for the job's first value in milliseconds, or until cancelled. */
static kt__status stoppable_compile(const kt__build *b, kt__artifact *a, kt__errbuf *eb) {
  atomic_fetch_add(&compiles_started, 1);
  double end = kt__now() + (double)b->values[0] / 1000;
  while (kt__now() < end && !atomic_load(b->cancel)) usleep(1000);
  atomic_fetch_add(&compiles_ended, 1);
  return atomic_load(b->cancel) ? KT__ST_PENDING : KT__ST_OK;
}

/* Sleeps the job's first value in milliseconds whatever happens, then reads
 * the kernel's source (as NVRTC's error path does) and writes an artifact
 * named by the tag. */
static kt__status stubborn_compile(const kt__build *b, kt__artifact *a, kt__errbuf *eb) {
  usleep((useconds_t)b->values[0] * 1000);
  FILE *f = fopen(b->tag, "w");
  if (!f) return KT__ST_COMPILE;
  fprintf(f, "%zu\n", strlen(b->file->src.text));
  fclose(f);
  a->path = kt__xstrdup(b->tag);
  atomic_fetch_add(&compiles_ended, 1);
  return KT__ST_OK;
}

static const kt__backend stoppable = {.name = "stoppable", .compile = stoppable_compile, .stops_on_cancel = true};
static const kt__backend stubborn = {.name = "stubborn", .compile = stubborn_compile};

static kt__file *parse_kernel(void) {
  kt__diag d;
  kt__diag_init(&d, NULL);
  kt__file *f = kt__parse_string("pool.c",
                                 "// @autotune(MS in [1, 2])\n// @kernel k(x: out tensor<f32>[4])\n"
                                 "void k(float *x) { x[0] = MS; }\n",
                                 KT__LANG_C, &d);
  kt__diag_free(&d);
  ASSERT_TRUE(f != NULL);
  return f;
}

/* A job of FILE (may be NULL) that compiles for MS milliseconds, its
 * artifact (stubborn backend) at TAG. */
static kt__compile_job *job(uint64_t id, kt__file *file, int64_t ms, const char *tag) {
  static const char *const names[] = {"MS"};
  kt__build b = {.decl = file ? &file->kernels[0] : NULL, .names = names, .values = &ms, .n = 1, .tag = tag};
  return kt__compile_job_new(id, file, &b);
}

TEST(wait_until_ends_at_the_deadline) {
  kt__pool *p = kt__pool_create(&stoppable, 1);
  kt__pool_submit(p, job(1, NULL, 5000, "a"));
  double t0 = kt__now();
  ASSERT_TRUE(kt__pool_wait_until(p, t0 + 0.1) == NULL);
  ASSERT_GE(kt__now() - t0, 0.1 - 1e-3);
  ASSERT_TRUE(kt__now() - t0 < 2.5); /* far below the compile's 5 s */
  ASSERT_EQ(kt__pool_pending(p), 1); /* still compiling */
  ASSERT_EQ(kt__pool_abandon(p), 1);
  ASSERT_EQ(kt__pool_pending(p), 0);
  t0 = kt__now();
  ASSERT_TRUE(kt__pool_wait(p) == NULL); /* nothing to wait for any more */
  kt__pool_free(p);                      /* joins: the compile was asked to stop */
  ASSERT_TRUE(kt__now() - t0 < 2.5);
  ASSERT_EQ(atomic_load(&compiles_ended), 1);
}

TEST(wait_without_deadline_waits_for_every_job) {
  kt__pool *p = kt__pool_create(&stoppable, 2);
  for (int i = 0; i < 3; i++) kt__pool_submit(p, job((uint64_t)i, NULL, 20, "a"));
  int seen = 0;
  kt__compile_job *j;
  while ((j = kt__pool_wait_until(p, 0)) != NULL) {
    ASSERT_EQ(j->status, KT__ST_OK);
    kt__compile_job_free(j);
    seen++;
  }
  ASSERT_EQ(seen, 3);
  ASSERT_EQ(kt__pool_abandon(p), 0);
  kt__pool_free(p);
}

TEST(abandon_drops_queued_jobs_and_keeps_finished_ones) {
  kt__pool *p = kt__pool_create(&stoppable, 1);
  kt__pool_submit(p, job(1, NULL, 0, "a"));
  kt__pool_submit(p, job(2, NULL, 5000, "b"));
  kt__pool_submit(p, job(3, NULL, 5000, "c"));
  ASSERT_TRUE(await_count(&compiles_started, 2, 5)); /* the thread took job 2 */
  ASSERT_EQ(kt__pool_abandon(p), 2);
  kt__compile_job *j = kt__pool_wait(p);
  ASSERT_TRUE(j != NULL);
  ASSERT_EQ(j->id, 1);
  kt__compile_job_free(j);
  ASSERT_TRUE(kt__pool_wait(p) == NULL);
  kt__pool_free(p);
  ASSERT_EQ(atomic_load(&compiles_ended), 2); /* job 3 never started */
}

/* An uninterruptible compile is not waited for; it ends later, after its
 * kernel's file was released by everyone else, and its thread frees the job
 * and removes its artifact. */
TEST(abandoned_compile_that_cannot_stop_ends_on_its_own) {
  char dir[] = "/tmp/kt-test-pool-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir) != NULL);
  char artifact[64];
  snprintf(artifact, sizeof artifact, "%s/c1.out", dir);
  kt__file *f = parse_kernel();
  kt__pool *p = kt__pool_create(&stubborn, 1);
  kt__pool_submit(p, job(1, f, 3000, artifact)); /* far longer than the limit below */
  ASSERT_TRUE(kt__pool_wait_until(p, kt__now() + 0.05) == NULL);
  ASSERT_EQ(kt__pool_abandon(p), 1);
  kt__file_free(f); /* the kernel goes: the job holds the file */
  double t0 = kt__now();
  kt__pool_free(p);
  ASSERT_TRUE(kt__now() - t0 < 1.0); /* not waited for */
  ASSERT_EQ(atomic_load(&compiles_ended), 0);
  ASSERT_TRUE(await_count(&compiles_ended, 1, 5));
  /* Its thread frees the job, and removes the artifact, after the compile returns. */
  struct stat st;
  double end = kt__now() + 5.0 * kt_test_slowdown();
  while (stat(artifact, &st) == 0 && kt__now() < end) usleep(1000);
  ASSERT_TRUE(stat(artifact, &st) != 0); /* removed with the job */
  ASSERT_EQ(rmdir(dir), 0);
}

/* The process may end while such a compile runs: what it holds is still
 * reachable (LeakSanitizer reports nothing) and nothing is freed under it. */
TEST(process_may_exit_while_an_abandoned_compile_runs) {
  kt__file *f = parse_kernel();
  kt__pool *p = kt__pool_create(&stubborn, 2);
  kt__pool_submit(p, job(1, f, 2000, "/nonexistent/c1"));
  kt__pool_submit(p, job(2, f, 2000, "/nonexistent/c2"));
  kt__pool_submit(p, job(3, f, 2000, "/nonexistent/c3"));
  usleep(20000);
  ASSERT_EQ(kt__pool_abandon(p), 3);
  kt__file_free(f);
  kt__pool_free(p);
}
