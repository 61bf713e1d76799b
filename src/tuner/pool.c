#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../lang/parser.h"

typedef struct job_list {
  kt__compile_job **items;
  int head, len, cap;
} job_list;

/* One compile thread and what it compiles now. */
typedef struct slot {
  kt__pool *pool;
  pthread_t thread;
  bool started;
  kt__compile_job *job; /* NULL when idle */
} slot;

struct kt__pool {
  const kt__backend *be;
  slot *slots;
  int nthreads;
  pthread_mutex_t mu;
  pthread_cond_t work_ready, job_done; /* job_done waits on CLOCK_MONOTONIC (kt__now) */
  job_list queued, done;
  int running;   /* jobs compiling that someone waits for */
  int abandoned; /* jobs compiling that nobody waits for any more */
  /* Threads not yet ended, plus one for the owner until kt__pool_free: the
   * last of them frees the pool, which may be a thread that outlived it. */
  int holders;
  bool stopping;
  double busy_s;
};

static void list_push(job_list *l, kt__compile_job *j) {
  if (l->head + l->len == l->cap) {
    if (l->head > 0) { /* compact before growing */
      for (int i = 0; i < l->len; i++) l->items[i] = l->items[l->head + i];
      l->head = 0;
    }
    if (l->len == l->cap) {
      l->cap = l->cap ? 2 * l->cap : 16;
      l->items = kt__xreallocarray(l->items, (size_t)l->cap, sizeof *l->items);
    }
  }
  l->items[l->head + l->len++] = j;
}

static kt__compile_job *list_pop(job_list *l) {
  if (l->len == 0) return NULL;
  l->len--;
  return l->items[l->head++];
}

kt__compile_job *kt__compile_job_new(uint64_t id, kt__file *file, const kt__build *b) {
  kt__compile_job *j = kt__xcalloc(1, sizeof *j);
  j->id = id;
  j->build = *b;
  j->build.n = b->n < KT__JOB_MAX_NAMES ? b->n : KT__JOB_MAX_NAMES;
  for (int i = 0; i < j->build.n; i++) {
    j->names[i] = b->names[i];
    j->values[i] = b->values[i];
  }
  if (b->device) j->device = *b->device;
  snprintf(j->tag, sizeof j->tag, "%s", b->tag ? b->tag : "");
  j->file = kt__file_retain(file);
  j->build.file = file;
  j->build.names = j->names;
  j->build.values = j->values;
  j->build.device = b->device ? &j->device : NULL;
  j->build.tag = j->tag;
  j->build.cancel = &j->cancel;
  return j;
}

void kt__compile_job_free(kt__compile_job *j) {
  if (!j) return;
  kt__artifact_free(&j->artifact);
  kt__file_free(j->file);
  free(j);
}

/* An abandoned job's output is of no use to anyone: its file goes too (the
 * workdir would remove it at exit; a long-lived process would keep it). */
static void free_abandoned(kt__compile_job *j) {
  if (j->artifact.path && unlink(j->artifact.path) != 0 && errno != ENOENT)
    kt__trace("pool: cannot remove %s: %s", j->artifact.path, strerror(errno));
  kt__compile_job_free(j);
}

static void compile_one(kt__pool *p, kt__compile_job *j) {
  j->started = kt__now();
  j->err.msg[0] = 0;
  j->status = kt__be_compile(p->be, &j->build, &j->artifact, &j->err);
  j->finished = kt__now();
}

static void destroy(kt__pool *p) {
  kt__compile_job *j;
  while ((j = list_pop(&p->queued)) != NULL || (j = list_pop(&p->done)) != NULL) kt__compile_job_free(j);
  free(p->queued.items);
  free(p->done.items);
  free(p->slots);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->work_ready);
  pthread_cond_destroy(&p->job_done);
  free(p);
}

/* Drops one holder (the caller holds the lock, which this releases). */
static void release(kt__pool *p) {
  bool last = --p->holders == 0;
  pthread_mutex_unlock(&p->mu);
  if (last) destroy(p);
}

/* Compilers yield to the process that drives the device: with every core
 * compiling, a worker waiting for the CPU leaves the GPU idle, while a
 * compile that waits a little costs nothing as long as the device has work.
 * (Linux: the nice value of a thread, by its id; a refusal changes nothing.) */
enum { COMPILE_NICE = 5 };

static void lower_priority(void) {
#ifdef SYS_gettid
  (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), COMPILE_NICE);
#endif
}

/* Files a finished job (lock held): to the done list, or, when it was
 * abandoned meanwhile, freed (the lock is released for that). */
static void file_finished(kt__pool *p, kt__compile_job *j) {
  if (atomic_load(&j->cancel)) {
    p->abandoned--;
    pthread_mutex_unlock(&p->mu);
    free_abandoned(j);
    pthread_mutex_lock(&p->mu);
    return;
  }
  p->running--;
  p->busy_s += j->finished - j->started;
  list_push(&p->done, j);
  pthread_cond_broadcast(&p->job_done);
}

static void *thread_main(void *arg) {
  slot *s = arg;
  kt__pool *p = s->pool;
  lower_priority();
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stopping && p->queued.len == 0) pthread_cond_wait(&p->work_ready, &p->mu);
    if (p->stopping) break;
    kt__compile_job *j = s->job = list_pop(&p->queued);
    p->running++;
    pthread_mutex_unlock(&p->mu);
    compile_one(p, j);
    pthread_mutex_lock(&p->mu);
    s->job = NULL;
    file_finished(p, j);
  }
  release(p);
  return NULL;
}

kt__pool *kt__pool_create(const kt__backend *be, int threads) {
  kt__pool *p = kt__xcalloc(1, sizeof *p);
  p->be = be;
  p->nthreads = threads > 0 ? threads : 1;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work_ready, NULL);
  pthread_condattr_t monotonic;
  pthread_condattr_init(&monotonic);
  pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
  pthread_cond_init(&p->job_done, &monotonic);
  pthread_condattr_destroy(&monotonic);
  p->slots = kt__xcalloc((size_t)p->nthreads, sizeof *p->slots);
  p->holders = 1;
  pthread_mutex_lock(&p->mu);
  int started = 0;
  for (int i = 0; i < p->nthreads; i++) {
    slot *s = &p->slots[i];
    s->pool = p;
    s->started = pthread_create(&s->thread, NULL, thread_main, s) == 0;
    started += s->started;
  }
  p->holders += started;
  pthread_mutex_unlock(&p->mu);
  if (started == 0) {
    kt__pool_free(p);
    return NULL;
  }
  return p;
}

void kt__pool_submit(kt__pool *p, kt__compile_job *job) {
  job->status = KT__ST_PENDING;
  pthread_mutex_lock(&p->mu);
  list_push(&p->queued, job);
  pthread_cond_signal(&p->work_ready);
  pthread_mutex_unlock(&p->mu);
}

static struct timespec timespec_of(double seconds) {
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  return ts;
}

kt__compile_job *kt__pool_wait_until(kt__pool *p, double deadline) {
  struct timespec until = timespec_of(deadline);
  pthread_mutex_lock(&p->mu);
  while (p->done.len == 0 && (p->queued.len > 0 || p->running > 0)) {
    if (deadline <= 0) pthread_cond_wait(&p->job_done, &p->mu);
    else if (pthread_cond_timedwait(&p->job_done, &p->mu, &until) == ETIMEDOUT) break;
  }
  kt__compile_job *j = list_pop(&p->done);
  pthread_mutex_unlock(&p->mu);
  return j;
}

kt__compile_job *kt__pool_wait(kt__pool *p) { return kt__pool_wait_until(p, 0); }

int kt__pool_pending(const kt__pool *p) {
  kt__pool *mp = (kt__pool *)p;
  pthread_mutex_lock(&mp->mu);
  int n = p->queued.len + p->running + p->done.len;
  pthread_mutex_unlock(&mp->mu);
  return n;
}

double kt__pool_busy_seconds(const kt__pool *p) {
  kt__pool *mp = (kt__pool *)p;
  pthread_mutex_lock(&mp->mu);
  double s = p->busy_s;
  pthread_mutex_unlock(&mp->mu);
  return s;
}

void kt__pool_cancel_queued(kt__pool *p) {
  pthread_mutex_lock(&p->mu);
  kt__compile_job *j;
  while ((j = list_pop(&p->queued)) != NULL) list_push(&p->done, j);
  pthread_cond_broadcast(&p->job_done);
  pthread_mutex_unlock(&p->mu);
}

int kt__pool_abandon(kt__pool *p) {
  pthread_mutex_lock(&p->mu);
  job_list dropped = p->queued;
  p->queued = (job_list){0};
  int n = dropped.len + p->running;
  for (int i = 0; i < p->nthreads; i++)
    if (p->slots[i].job) atomic_store(&p->slots[i].job->cancel, 1);
  p->abandoned += p->running;
  p->running = 0;
  pthread_cond_broadcast(&p->job_done);
  pthread_mutex_unlock(&p->mu);
  kt__compile_job *j;
  while ((j = list_pop(&dropped)) != NULL) kt__compile_job_free(j);
  free(dropped.items);
  return n;
}

void kt__pool_free(kt__pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stopping = true;
  pthread_cond_broadcast(&p->work_ready);
  for (int i = 0; i < p->nthreads; i++) {
    slot *s = &p->slots[i];
    if (!s->started) continue;
    /* A compile that cannot stop may take minutes: its thread is left to
     * end on its own. Any other thread ends soon (idle, or its compile was
     * asked to stop), and is waited for: a C compiler must not outlive the
     * tuner (it would run on, orphaned). */
    bool leave = s->job && atomic_load(&s->job->cancel) && !p->be->stops_on_cancel;
    pthread_mutex_unlock(&p->mu);
    if (leave) pthread_detach(s->thread);
    else pthread_join(s->thread, NULL);
    pthread_mutex_lock(&p->mu);
  }
  release(p);
}
